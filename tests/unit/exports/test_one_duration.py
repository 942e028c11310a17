"""A call's duration is decided once (``folding.facts``: to the record that ended its wait, from the record before
it), and the report and the widgets say what the tables and the runtime's ``stats`` say, on every real journal of
both generations; no view shows a negative duration."""

from __future__ import annotations

from pathlib import Path

import pytest

import journaltools as jt
from journaltools.exports.facts import facts_of_read
from journaltools.exports.report import report_of_read
from journaltools.folding.run import fold_run
from journaltools.sources.registry import open_source
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

FOLDERS = [CORPUS / "file", NEWEST_CORPUS / "file", NEWEST_CORPUS / "random"]
#: A newest run whose deferred call a resuming worker answered with an earlier clock: timed from the call to its
#: answer, it "took -1124 ms"; the runtime times it to its deferral, 3.0 s.
RESUMED_ON_ANOTHER_CLOCK = "3MtgeRBxFqFRdJsUaqqP0IVU8fy"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_the_views_time_every_call_as_the_tables_do(folder: Path) -> None:
    tables = jt.load(folder, strict=False)
    table_seconds = {
        (row["run"], row["call_id"], row["call_seq"]): (
            None if row["duration"] is None else row["duration"].total_seconds()
        )
        for row in tables.tool_calls.to_pylist()
    }
    compared = 0
    with open_source(folder) as source:
        for run in source.list_runs():
            read = source.read_run(run, strict=False)
            facts = facts_of_read(read, fold_run(read).facts())
            for call in facts.run.calls:
                key = (run, call.tool_use_id, call.made_seq)
                if key not in table_seconds:
                    continue  # a call id the journal repeats: the table keeps each, the views the first
                shown = facts.call_seconds(call.tool_use_id)
                assert shown is None or shown >= 0
                if facts.call_made.get(call.tool_use_id) == call.made_seq:
                    assert (
                        shown == pytest.approx(table_seconds[key]) if shown is not None else table_seconds[key] is None
                    )
                    compared += 1
    assert compared > 0


def test_a_call_answered_on_another_clock_takes_the_runtime_time_in_the_report() -> None:
    with open_source(NEWEST_CORPUS / "file") as source:
        read = source.read_run(RESUMED_ON_ANOTHER_CLOCK, strict=False)
    html = report_of_read(read).html
    assert "took -" not in html and "took 3.0 s" in html


def test_a_conversation_from_a_source_keeps_every_time_the_records_keep() -> None:
    from journaltools.exports.conversation import ConversationModel

    model = ConversationModel.from_source(NEWEST_CORPUS / "file", RESUMED_ON_ANOTHER_CLOCK)
    assert model.facts is not None and model.facts.dated_by_records
    assert model.facts.times and model.last_activity() is not None
    html = model.to_html()
    assert "took 3.0 s" in html and "own time, as the runtime dated it" in html


@pytest.mark.parametrize("folder", FOLDERS[1:], ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_no_view_spans_record_times_that_run_backwards(folder: Path) -> None:
    """Where the fold finds a record dated before the one before it, the report and the conversation header name
    the seqs and show no first-to-last span; elsewhere they show one."""
    from journaltools.exports.conversation import ConversationModel

    spanned = backwards = 0
    with open_source(folder) as source:
        for run in source.list_runs()[:40]:
            read = source.read_run(run, strict=False)
            folded = fold_run(read)
            seqs = [f.seq for f in folded.findings if f.code == "times_out_of_order"]
            header = ConversationModel.from_source(folder, run).times_html()
            report = report_of_read(read).html
            if seqs:
                said = f"record times run backwards at seq {', '.join(map(str, seqs))}"
                assert f"first to last record <b>unknown</b>: {said}" in header and f"no span: {said}" in report
                backwards += 1
            else:
                assert "run backwards" not in header + report
                spanned += "first to last record <b>" in header
    assert backwards and spanned
