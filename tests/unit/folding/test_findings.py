"""The findings table: every finding of the reader and the fold, with its code's severity and the source."""

from __future__ import annotations

import pytest

from journaltools.folding import fold
from journaltools.folding.facts import RunFacts, degraded_analysis
from journaltools.goencoding.time import parse_go_time
from journaltools.protocol.findings import FINDING_SEVERITY
from journaltools.protocol.kinds import ZERO_TIME
from journaltools.sources.registry import open_source
from journaltools.tables import findings_of, findings_table, load
from tests.runstate_corpus import CORPUS, expected


@pytest.mark.parametrize("corpus", ["file", "newest/file", "newest/random"])
def test_the_findings_table_holds_the_readers_and_the_folds_findings_in_order(corpus: str) -> None:
    """... and, for a folded journal, what analysis it cannot do for want of the newest line's fields (whichever
    fold, native or Python, tabled the journal)."""
    source = CORPUS / corpus
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


@pytest.mark.parametrize("corpus", ["newest/file", "newest/random"])
def test_a_record_dated_before_the_dated_record_before_it_is_a_finding_naming_both(corpus: str) -> None:
    with open_source(CORPUS / corpus) as backend:
        for run in backend.list_runs():
            records = backend.read_run(run, strict=False).typed()
            # The oracle: Go's own parse of each time, compared with the last record dated a time Go does not call
            # zero (the fold's rule), independently of the fold's reader.
            want, last = [], None
            for record in records:
                if record.time and record.time != ZERO_TIME:
                    moment = parse_go_time(record.time).unix_ns
                    if last is not None and moment < last[1]:
                        want.append((record.seq, last[0]))
                    last = (record.seq, moment)
            found = [f for f in fold(records, run=run, strict=False).findings if f.code == "times_out_of_order"]
            assert [f.seq for f in found] == [seq for seq, _ in want], run
            for finding, (seq, before) in zip(found, want, strict=True):
                assert finding.severity == "warning"
                assert (
                    finding.message.startswith(f"seq {seq} is dated ") and f" before seq {before} (" in finding.message
                )
