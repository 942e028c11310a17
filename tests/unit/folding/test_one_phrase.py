"""A run the newest line reopened (records after its last terminal) is said to be so, in the same words, by every
face: ls, the run browser (from folds and from the tables), the conversation's banner, the offline report and
show. No one-line face calls it "no ending recorded" or shows the old ending's message as if it still stood (the
last process run, the one that reopened it, may still have no ending of its own). An ended run's
unanswered calls are what it left, never what it waits for."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import journaltools as jt
from journaltools.cli import main
from journaltools.exports.report import report_of_read
from journaltools.exports.why import banner_for
from journaltools.folding.phrases import reopening_text, why_stopped
from journaltools.folding.run import fold_run
from journaltools.sources.registry import open_source
from journaltools.widgets.runs_model import RunBrowserModel, row_of_fold
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

FOLDERS = [CORPUS / "file", NEWEST_CORPUS / "file", NEWEST_CORPUS / "random", NEWEST_CORPUS / "version3"]
#: The same, for the tests that render every face: the 147 random runs through every face are left to `make test`,
#: the fast lane renders the real files alone.
FACE_FOLDERS = [
    pytest.param(folder, marks=pytest.mark.slow) if folder.name == "random" else folder for folder in FOLDERS
]


def _faces(folder: Path) -> dict[str, dict[str, str]]:
    """run → face → what that face says of the run's state, for every run of ``folder``."""
    said: dict[str, dict[str, str]] = {}
    table_rows = {row.run: row.reason for row in RunBrowserModel.from_tables(jt.load(folder, strict=False)).rows}
    with open_source(folder) as source:
        listing = {summary.run: summary.why or "" for summary in source.listing()}
        for run in source.list_runs():
            read = source.read_run(run, strict=False)
            folded = fold_run(read)
            result = folded.as_fold_result()
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown):
                main(["show", "--lenient", str(folder), run])
            said[run] = {
                "phrase": reopening_text(result) or "",
                "ls": listing.get(run, ""),
                "browser (folds)": row_of_fold(run, result).reason,
                "browser (tables)": table_rows.get(run, ""),
                "banner": banner_for(result).detail,
                "report": report_of_read(read).html,
                "show": shown.getvalue(),
                "why": why_stopped(result),
            }
    return said


@pytest.mark.parametrize("folder", FACE_FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_every_face_says_a_reopened_run_was_reopened(folder: Path) -> None:
    reopened = 0
    for run, faces in _faces(folder).items():
        phrase = faces.pop("phrase")
        if not phrase:
            continue
        reopened += 1
        for face, text in faces.items():
            assert phrase in text, (run, face, text)
            if face not in ("report", "show"):  # whole documents: their process-run tables may say it of a run
                assert "no ending recorded" not in text, (run, face)
    if "newest" in str(folder) and "version3" not in str(folder):
        assert reopened > 0
    else:
        assert reopened == 0  # the August build lists a run by its last terminal: it never reopens one


def test_an_ended_run_left_its_calls_unanswered_and_waits_for_nothing() -> None:
    for folder in FOLDERS:
        with open_source(folder) as source:
            for run in source.list_runs():
                result = fold_run(source.read_run(run, strict=False)).as_fold_result()
                calls = [call for call in result.pending_calls if call.deferred is None]
                if result.status in ("open", "invalid") or not calls:
                    continue
                for text in (why_stopped(result), banner_for(result).detail):
                    assert "waiting for the results" not in text and "unanswered" in text, (run, text)


def test_time_travel_says_an_ended_run_waits_for_nothing() -> None:
    from journaltools.widgets.timetravel import TimeTravelModel

    with open_source(CORPUS / "file") as source:
        for run in source.list_runs():
            read = source.read_run(run, strict=False)
            model = TimeTravelModel(run, [stored.record for stored in read.records])
            last = model.snapshot(len(model) - 1)
            html = model.snapshot_html(len(model) - 1)
            if last.status not in ("open", "invalid"):
                assert "waiting for" not in html.split("</h4>")[0].split("after seq")[1], (run, last.status)
                assert "ended" in html


@pytest.mark.parametrize("folder", FACE_FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_every_face_states_the_status_and_why_the_fold_decided(folder: Path) -> None:
    """For every run: ls, the run browser (tables and folds), the conversation, TimeTravel's last step, the report,
    show and diff say the status the fold decided, and the one-line faces its why, word for word."""
    from journaltools.exports.conversation import ConversationModel
    from journaltools.widgets.timetravel import TimeTravelModel

    table_rows = {row.run: row for row in RunBrowserModel.from_tables(jt.load(folder, strict=False)).rows}
    with open_source(folder) as source:
        ls_status = {summary.run: summary.status for summary in source.listing()}  # what ls prints
        for run in source.list_runs():
            read = source.read_run(run, strict=False)
            result = fold_run(read).as_fold_result()
            status, why = result.status, why_stopped(result)
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown):
                main(["show", "--lenient", str(folder), run])
            travel = TimeTravelModel(run, [stored.record for stored in read.records])
            said = {
                "ls": ls_status[run],
                "browser (tables)": table_rows[run].status,
                "browser (folds)": row_of_fold(run, result).status,
                "conversation": ConversationModel.from_fold(result).status,
                "time travel": travel.snapshot(len(travel) - 1).status if result.status != "invalid" else "invalid",
                "show": shown.getvalue().splitlines()[0].rsplit(": ", 1)[1],
                "diff": jt.diff(str(folder), run, strict=False).a.ending.split(": ", 1)[0],
            }
            assert set(said.values()) == {status}, (run, said)
            assert f">{status}</span>" in report_of_read(read).html, run
            assert row_of_fold(run, result).reason == table_rows[run].reason == why, (run, table_rows[run].reason, why)


def test_standing_approvals_name_each_tool_once_with_how_many_decisions_approved_it() -> None:
    from journaltools.folding.phrases import approvals_text

    assert approvals_text([]) == ""
    assert approvals_text(["a", "b"]) == "a, b"
    assert approvals_text(["server_run", "stream_rm", "server_run", "server_run"]) == "server_run (3 times), stream_rm"
