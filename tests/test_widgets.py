"""The widget models, without a browser: which rows, flags and texts they hold, and that content is escaped."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from journaltools.audit import audit_sources
from journaltools.backends.base import RunSummary
from journaltools.backends.registry import open_source
from journaltools.fold import fold
from journaltools.protocol.findings import Finding
from journaltools.widgets import (
    AuditSummary,
    AuditSummaryModel,
    ConversationModel,
    ConversationView,
    ListingComparison,
    ListingComparisonModel,
    RunBrowser,
    RunBrowserModel,
    TimeTravel,
    TimeTravelModel,
    load_source,
)
from journaltools.widgets._html import esc, long_text, status_badge
from journaltools.widgets.comparison import DOCUMENTED_EXPLANATION
from tests.builders import JournalBuilder, two_record_listing

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
SCRIPT = "<script>window.pwned = 1</script>"


@pytest.fixture(scope="module")
def samples() -> tuple[RunBrowserModel, object]:
    return load_source(str(SAMPLES))


# -- safety -----------------------------------------------------------------------------------


def test_esc_and_long_text_escape_and_cut_with_a_way_to_see_everything() -> None:
    assert esc('<b onmouseover="x">') == "&lt;b onmouseover=&quot;x&quot;&gt;"
    short = long_text("<i>hi</i>", limit=100)
    assert "<details" not in short and "&lt;i&gt;hi&lt;/i&gt;" in short
    text = "<script>" + "x" * 1000 + "END"
    cut = long_text(text, limit=50)
    assert "<details" in cut and "show all (1,011 characters)" in cut
    assert cut.count("END") == 1  # the whole value only inside the <details>
    assert "<script>" not in cut


def test_status_badge_carries_the_word_not_only_a_colour() -> None:
    badge = status_badge("failed")
    assert ">failed</span>" in badge and "background:" in badge
    assert status_badge("failed") != status_badge("completed")


# -- RunBrowser ---------------------------------------------------------------------------------


def test_run_browser_rows_from_the_samples(samples: tuple[RunBrowserModel, object]) -> None:
    model, _ = samples
    rows = {row.run: row for row in model.rows}
    assert len(rows) == 14
    assert rows["turn-in-flight"].status == "open"
    assert rows["turn-in-flight"].pending_calls == 2
    assert rows["suspended-approval"].status == "suspended"
    assert rows["completed-with-tools"].turns == 2
    assert rows["completed-with-tools"].tokens is not None and rows["completed-with-tools"].tokens > 0
    assert rows["corrupt-interior"].status == "invalid" and rows["corrupt-interior"].turns is None


def test_run_browser_filters_and_sorts(samples: tuple[RunBrowserModel, object]) -> None:
    model, _ = samples
    failed = model.with_filter(statuses={"failed", "cancelled"}).visible()
    assert {row.run for row in failed} == {"failed-provider", "cancelled-by-user"}
    assert [row.run for row in model.with_filter(text="DEFERRAL").visible()] == [
        "approved-deferral",
        "answered-deferral",
    ]  # default sort: by created, oldest first
    by_pending = model.sorted_by("pending_calls", descending=True).visible()
    assert by_pending[0].run == "turn-in-flight"
    assert by_pending[-1].pending_calls is None  # unknown values sort last in either direction
    assert model.sorted_by("pending_calls").visible()[-1].pending_calls is None
    with pytest.raises(ValueError, match="cannot sort"):
        model.sorted_by("colour")


def test_run_browser_table_escapes_and_marks_the_selection() -> None:
    summary = RunSummary("run-1", "open", "2026", 3, 3, "<img src=x onerror=alert(1)>")
    html = RunBrowserModel.from_summaries([summary]).to_html(selected="run-1")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'class="jt-selected"' in html and ">open</span>" in html


def test_run_browser_from_runs_table() -> None:
    table = pa.table(
        {
            "run": ["a", "b"],
            "status": ["completed", "failed"],
            "created": ["2026-01-01", "2026-01-02"],
            "last_seq": [4, 5],
            "model": ["m", "m"],
            "turns": [1, 2],
            "input_tokens": [10, 20],
            "output_tokens": [1, 2],
            "pending_calls": [0, 0],
        }
    )
    model = RunBrowserModel.from_runs_table(table)
    assert [(row.run, row.tokens, row.turns) for row in model.sorted_by("tokens", True).visible()] == [
        ("b", 22, 2),
        ("a", 11, 1),
    ]


def test_run_browser_view_opens_the_selected_conversation(samples: tuple[RunBrowserModel, object]) -> None:
    model, loader = samples
    browser = RunBrowser(model, loader)  # type: ignore[arg-type]
    browser.filter_box.value = "flight"
    assert browser.picker.options == ("turn-in-flight",)
    browser.picker.value = "turn-in-flight"
    html = browser.detail.children[0].children[0].value
    assert "turn-in-flight" in html and "waiting for <b>tools</b>" in html
    browser.select("corrupt-interior")
    assert "not readable" in browser.detail.children[0].value


# -- ConversationView ---------------------------------------------------------------------------


def test_conversation_pairs_calls_with_results_and_shows_the_header(samples: tuple[RunBrowserModel, object]) -> None:
    _, loader = samples
    model = ConversationModel.from_fold(loader("completed-with-tools"))  # type: ignore[operator]
    calls = [part.call for message in model.messages for part in message.parts if part.call is not None]
    assert [call.id for call in calls] == ["toolu_01", "toolu_02"]
    assert calls[0].state == "answered" and "FAILED billing" in (calls[0].result_text or "")
    assert calls[0].call_seq == 3 and calls[0].result_seq == 4
    # results are shown next to their call, not again as a separate message part
    assert not any(part.kind == "result" for message in model.messages for part in message.parts)
    text = model.header_text()
    assert "completed" in text and "2 turns" in text and "resume after seq 6" in text
    html = model.to_html()
    assert 'class="jt-call"' in html and "FAILED billing" in html


def test_conversation_pending_batch_deferral_and_claim_marker(samples: tuple[RunBrowserModel, object]) -> None:
    _, loader = samples
    suspended = ConversationModel.from_fold(loader("suspended-approval"))  # type: ignore[operator]
    assert [(c.id, c.deferred, c.approval) for c in suspended.pending] == [("toolu_21", "approval", None)]
    assert suspended.pending[0].flags == ["pending", "deferred: approval", "awaiting approval"]
    assert "pending batch (1 unanswered)" in suspended.to_html()
    assert suspended.header["waiting_for"] == "answer"

    resumed = ConversationModel.from_fold(loader("resumed-after-crash"))  # type: ignore[operator]
    assert [(m.seq, m.percent) for m in resumed.markers] == [(4, 60.0)]
    assert 'class="jt-marker" style="left:60.0%"' in resumed.header_html()


def test_conversation_escapes_a_script_in_a_message(samples: tuple[RunBrowserModel, object]) -> None:
    _, loader = samples
    html = ConversationModel.from_fold(loader("optional-unknown-record")).to_html()  # type: ignore[operator]
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html


def test_conversation_escapes_tool_results_and_collapses_long_values() -> None:
    huge = SCRIPT + "y" * 5000
    records = JournalBuilder().user().assistant("c1").result("c1", huge).assistant(text="</pre><b>bold</b>").raw()
    model = ConversationModel.from_fold(fold(records), limit=100)
    html = model.to_html()
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "<details open><summary>tool call tool (c1)</summary>" in html  # long call: collapsible
    assert "show all (5,033 characters)" in html


def test_conversation_pages_thousands_of_messages() -> None:
    builder = JournalBuilder()
    for i in range(1500):
        builder.user(f"question {i}").assistant(text=f"answer {i}")
    model = ConversationModel.from_fold(fold(builder.raw()), page_size=100)
    assert len(model.messages) == 3000 and model.page_count == 30
    last = model.page_html(29)
    assert "answer 1499" in last and "question 1450" in last and "question 1449" not in last
    assert len(model.page_html(0)) < 40_000  # one page rendered, not the run
    assert model.page(99) == model.page(29)  # out of range: clamped
    view = ConversationView(model)
    view.pager.value = 3
    assert "answer 150" in view.body.value and "page 4 of 30" in view.page_label.value


# -- TimeTravel ---------------------------------------------------------------------------------


def test_time_travel_steps_through_prefixes() -> None:
    model = TimeTravelModel("run-1", JournalBuilder().user().assistant("c1").raw())
    assert model.seqs == [1, 2, 3]
    at_turn = model.snapshot(2)
    assert at_turn.status == "open" and at_turn.waiting_for == "tools" and at_turn.pending[0]["id"] == "c1"
    assert model.snapshot(1).waiting_for == "model"
    assert model.status_changes() == []  # open all along (meta only, user, turn in flight)


def test_time_travel_finds_where_the_failed_sample_went_wrong() -> None:
    with open_source(str(SAMPLES)) as backend:
        records = backend.read_run("failed-provider").records
    model = TimeTravelModel("failed-provider", records)
    assert model.status_changes() == [(5, "open", "failed")]
    before = model.snapshot(model.index_of_seq(4))
    assert before.status == "open" and before.counters["tool_errors"] == 1
    assert "out of memory" in before.last_messages[-1][1]
    html = model.snapshot_html(4)
    assert "after seq 5" in html and ">failed</span>" in html and "overloaded" in html
    view = TimeTravel(model)
    assert view.slider is not None
    view.slider.value = 1
    assert "after seq 2" in view.output.value
    with pytest.raises(IndexError):
        model.fold_at(99)


def test_time_travel_escapes_and_handles_an_unreadable_run() -> None:
    model = TimeTravelModel("r", JournalBuilder().user(SCRIPT).raw())
    assert "<script>" not in model.snapshot_html(1) and "&lt;script&gt;" in model.snapshot_html(1)
    empty = TimeTravel(TimeTravelModel("corrupt-interior", []))
    assert empty.slider is None and "no readable records" in empty.output.value


# -- ListingComparison --------------------------------------------------------------------------


def _summary(run: str, status: str, last_type: str = "assistant", calls: bool = False) -> RunSummary:
    return RunSummary(run, status, "2026", 3, None, "m", last_type, calls)  # type: ignore[arg-type]


def test_listing_comparison_verdicts_and_explanations() -> None:
    file_rows = [
        _summary("same", "completed"),
        _summary("in-flight", "open", "assistant", True),
        _summary("wrong", "open", "user"),
        _summary("only-file", "completed"),
    ]
    js_rows = [
        _summary("same", "completed"),
        _summary("in-flight", "completed", "assistant", True),
        _summary("wrong", "failed", "error"),
        _summary("<script>only-js", "open"),
    ]
    model = ListingComparisonModel.from_listings(file_rows, js_rows, "file", "jetstream")
    rows = {row.run: row for row in model.rows}
    assert rows["same"].verdict == "agree"
    assert rows["in-flight"].verdict == "documented"
    assert "says open" in rows["in-flight"].explanation and "says completed" in rows["in-flight"].explanation
    assert rows["wrong"].verdict == "discrepancy"
    assert "file says open but jetstream says failed" in rows["wrong"].explanation
    assert rows["only-file"].verdict == "missing_b" and rows["<script>only-js"].verdict == "missing_a"
    assert rows["wrong"].severity > rows["in-flight"].severity > rows["same"].severity
    assert rows["in-flight"].flag == "⚑ documented" and rows["wrong"].flag == "✖ DISCREPANCY"
    html = model.to_html()
    assert 'class="jt-row jt-verdict-documented"' in html and 'class="jt-row jt-verdict-discrepancy"' in html
    assert "<script>only-js" not in html and "&lt;script&gt;only-js" in html
    assert model.counts()["documented"] == 1 and "1 discrepancy" in model.summary_text()


def test_listing_comparison_from_compare_table_rows_and_view_toggle() -> None:
    table = pa.table(
        {
            "run": ["a", "b"],
            "status_a": ["open", "completed"],
            "status_b": ["completed", "completed"],
            "verdict": ["documented", "agree"],
            "explanation": ["", ""],
        }
    )
    model = ListingComparisonModel.from_table(table)
    assert model.row("a").explanation == DOCUMENTED_EXPLANATION  # a documented row always explains itself
    view = ListingComparison(model)
    assert 'data-run="b"' in view.table.value
    view.only_problems.value = True
    assert 'data-run="b"' not in view.table.value and 'data-run="a"' in view.table.value


def test_listing_comparison_from_listings_flags_the_turn_in_flight_sample() -> None:
    with open_source(str(SAMPLES)) as backend:
        file_rows = backend.listing()
    model = ListingComparisonModel.from_listings(file_rows, two_record_listing(str(SAMPLES)))
    assert model.row("turn-in-flight").verdict == "documented"
    assert model.row("completed-with-tools").verdict == "agree"
    assert model.row("corrupt-interior").verdict == "missing_b"


# -- AuditSummary -------------------------------------------------------------------------------


def test_audit_summary_counts_by_code_and_severity() -> None:
    model = AuditSummaryModel(audit_sources([str(SAMPLES)]).findings)
    counts = {(c.code, c.severity): c for c in model.by_code()}
    assert counts[("torn_tail", "warning")].runs == ("torn-tail",)
    assert counts[("corrupt_line", "error")].count == 1
    assert model.by_code()[0].severity == "error"  # worst first
    assert model.by_severity()["warning"] >= 1
    assert "corrupt-interior" in model.affected_runs()
    assert model.chart_png().startswith(b"\x89PNG")


def test_audit_summary_escapes_and_opens_affected_runs(samples: tuple[RunBrowserModel, object]) -> None:
    _, loader = samples
    model = AuditSummaryModel.from_rows(
        [
            {"run": "torn-tail", "seq": 4, "code": "torn_tail", "severity": "warning", "message": SCRIPT},
            {"run": "corrupt-interior", "seq": 3, "code": "corrupt_line", "severity": "error", "message": "bad"},
        ]
    )
    assert "<script>" not in model.to_html() and "&lt;script&gt;" in model.to_html()
    view = AuditSummary(model, loader)  # type: ignore[arg-type]
    assert [button.description for button in view.buttons] == ["corrupt-interior", "torn-tail"]
    view.buttons[1].click()
    assert len(view.detail.children) == 2 and "torn-tail" in view.detail.children[1].children[0].value
    view.buttons[0].click()
    assert "could not be folded" in view.detail.children[1].value


def test_audit_summary_from_findings_values() -> None:
    model = AuditSummaryModel([Finding.of("r", 2, "seq_gap", "gap"), Finding.of("r", 3, "seq_gap", "gap")])
    assert [(c.code, c.count) for c in model.by_code()] == [("seq_gap", 2)]
    assert model.findings_for("r")[0].seq == 2
