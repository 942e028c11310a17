"""The findings table: every finding of the reader and the fold, with its code's severity and the source."""

from __future__ import annotations

from journaltools.folding import fold
from journaltools.folding.facts import RunFacts, degraded_analysis
from journaltools.protocol.findings import FINDING_SEVERITY
from journaltools.sources.registry import open_source
from journaltools.tables import findings_of, findings_table, load
from tests.runstate_corpus import CORPUS, expected


def test_the_findings_table_holds_the_readers_and_the_folds_findings_in_order() -> None:
    """... and, for a folded journal, what analysis it cannot do for want of the newest line's fields."""
    source = CORPUS / "file"
    tables = load(source, strict=False, workers=1)
    want: list[tuple[str | None, int | None, str]] = []
    with open_source(source) as backend:
        for run in backend.list_runs():
            read = backend.read_run(run, strict=False)
            want.extend((f.run, f.seq, f.code) for f in read.findings)
            if read.complete:
                want.extend((f.run, f.seq, f.code) for f in fold(read.typed(), run=run, strict=False).findings)
                records = read.typed()
                degraded = degraded_analysis(run, records, RunFacts.of(records))
                want.extend([(degraded.run, degraded.seq, degraded.code)] if degraded is not None else [])
        url = backend.url
    got = [(row["run"], row["seq"], row["code"]) for row in tables.findings.to_pylist()]
    assert got == want
    assert set(tables.findings["source"].to_pylist()) == {url}
    for row in tables.findings.to_pylist():
        assert row["severity"] == FINDING_SEVERITY[row["code"]]


def test_every_refused_journal_has_an_error_naming_it() -> None:
    tables = load(CORPUS / "file", strict=False, workers=1)
    errors = {row["run"] for row in tables.findings.to_pylist() if row["severity"] == "error"}
    refused = {entry["store_id"] for entry in expected("file") if not entry["ok"]}
    assert errors == refused


def test_findings_round_trip_through_the_table() -> None:
    findings = findings_of(load(CORPUS / "file", strict=False, workers=1).findings)
    assert findings_of(findings_table(findings)) == findings
