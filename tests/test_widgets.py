"""The widget models, without a browser: which rows, flags and texts they hold, and that content is escaped."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from journaltools.audit import audit_sources
from journaltools.backends.base import RunSummary
from journaltools.backends.registry import open_source
from journaltools.errors import MissingDependency
from journaltools.fold import fold
from journaltools.listing import summarize_by_fold, summarize_two_records
from journaltools.protocol.findings import Finding
from journaltools.tables import load
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
from journaltools.widgets._html import esc, estimated_lines, long_text, markdown_text, status_badge
from journaltools.widgets._markdown import is_safe_link, render_markdown
from journaltools.widgets._source import RunFolds
from journaltools.widgets.audit import integer_ticks
from journaltools.widgets.comparison import DOCUMENTED_EXPLANATION, SEVERITY, SUMMARY_RULE_EXPLANATION
from journaltools.widgets.runs import RunRow
from tests.builders import JournalBuilder, two_record_listing

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
SCRIPT = "<script>window.pwned = 1</script>"


@pytest.fixture(scope="module")
def samples() -> tuple[RunBrowserModel, RunFolds]:
    model, loader = load_source(str(SAMPLES), progress=False)
    assert isinstance(loader, RunFolds)
    return model, loader


# -- safety -----------------------------------------------------------------------------------


def test_esc_and_long_text_escape_and_clamp_in_place() -> None:
    assert esc('<b onmouseover="x">') == "&lt;b onmouseover=&quot;x&quot;&gt;"
    short = long_text("<i>hi</i>", limit=100)
    assert "jt-expand" not in short and "&lt;i&gt;hi&lt;/i&gt;" in short
    text = "<script>" + "x" * 1000 + "END"
    cut = long_text(text, limit=50)
    assert 'class="jt-expand"' in cut and "show all (1,011 characters)" in cut and "show less" in cut
    assert cut.count("END") == 1  # the whole value once: the toggle lifts a clamp, it adds no second copy
    assert "<script>" not in cut


def test_expand_threshold_follows_the_estimated_height() -> None:
    assert estimated_lines("a\nb\nc") == 3 and estimated_lines("x" * 181) == 3
    assert "jt-expand" not in long_text("x" * 401, limit=400)  # five lines fit in the six shown
    assert "jt-expand" in long_text("\n".join(["line"] * 7), limit=400)


def test_status_badge_carries_the_word_and_a_theme_tone() -> None:
    badge = status_badge("failed")
    assert ">failed</span>" in badge and "jt-tone-error" in badge
    assert "style=" not in badge  # colours come from the theme stylesheet, never fixed inline
    assert status_badge("failed") != status_badge("completed")
    assert "jt-status-&lt;b&gt;" in status_badge("<b>")


def test_markdown_renders_and_keeps_journal_html_as_text() -> None:
    html = render_markdown("**bold** and `code`\n\n```py\nprint(1)\n```\n\n- a\n- b")
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert '<pre><code class="language-py">print(1)' in html and "<li>a</li>" in html
    hostile = render_markdown(f'{SCRIPT} <img src=x onerror="alert(1)"> <b>b</b>')
    assert "<script" not in hostile and "<img" not in hostile and "<b>" not in hostile
    assert "&lt;script&gt;" in hostile and "onerror=&quot;alert(1)&quot;" in hostile


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JAVASCRIPT:alert(1))",
        "[x]( javascript:alert(1))",
        "[x](java&#9;script:alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](vbscript:msgbox)",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "![x](javascript:alert(1))",
    ],
)
def test_markdown_never_makes_an_active_link(source: str) -> None:
    html = render_markdown(source)
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(href.startswith(("http://", "https://", "mailto:")) for href in hrefs), html


def test_markdown_links_open_safely_and_images_are_never_loaded() -> None:
    html = render_markdown("[docs](https://example.com/a?b=1) ![chart](https://example.com/c.png)")
    assert '<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer nofollow">docs</a>' in html
    assert "<img" not in html and "[image: chart]" in html
    assert is_safe_link("mailto:a@example.com") and not is_safe_link("mailto:") and not is_safe_link("/relative")


@given(st.text(alphabet=st.sampled_from(list("<>\"'&/=:;()[]!*`\n aJsScripton")), max_size=80))
def test_markdown_output_never_holds_a_tag_from_the_input(text: str) -> None:
    html = markdown_text(text, limit=10_000)
    tags = set(re.findall(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)", html))
    # only the tags the renderer writes itself; never script, img, iframe or an event attribute
    assert tags <= {"div", "p", "em", "strong", "code", "pre", "a", "ul", "ol", "li", "blockquote", "br", "hr",
                    "h1", "h2", "h3", "h4", "h5", "h6", "s", "table", "thead", "tbody", "tr", "th", "td", "details",
                    "summary", "span"}  # fmt: skip
    assert not re.search(r"<[^>]*\son\w+\s*=", html)


# -- RunBrowser ---------------------------------------------------------------------------------


def test_run_browser_rows_from_the_samples(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, _ = samples
    rows = {row.run: row for row in model.rows}
    assert len(rows) == 14  # lenient: every journal is a row, the broken ones invalid
    assert rows["turn-in-flight"].status == "open"
    assert rows["turn-in-flight"].pending_calls == 2
    assert rows["suspended-approval"].status == "suspended"
    assert rows["completed-with-tools"].turns == 2
    assert rows["completed-with-tools"].tokens is not None and rows["completed-with-tools"].tokens > 0
    assert rows["corrupt-interior"].status == "invalid" and rows["corrupt-interior"].turns is None


def test_run_browser_rows_say_why_each_run_stopped(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, _ = samples
    reasons = {row.run: row.reason for row in model.rows}
    assert reasons["failed-provider"] == "provider error: overloaded: 3 retries exhausted"
    assert reasons["cancelled-by-user"] == "cancelled by alice@example.com: wrong repository"
    assert reasons["schema-violation"].startswith("seq 3: schema_violation")
    assert reasons["corrupt-interior"].startswith("corrupt_line")
    assert reasons["turn-in-flight"] == "waiting for the results of 2 tool calls"
    assert reasons["suspended-approval"] == "waiting for an answer to a deferred call"
    assert reasons["completed-with-tools"] == "stop reason: end_turn"
    assert "task" not in [column.key for column in model.columns]  # no task store: no task column


def test_run_browser_filters_sorts_and_pages(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, _ = samples
    failed = model.with_filter(statuses={"failed", "cancelled"}).visible()
    assert {row.run for row in failed} == {"failed-provider", "cancelled-by-user"}
    assert [row.run for row in model.with_filter(text="DEFERRAL").visible()] == [
        "approved-deferral",
        "answered-deferral",
    ]  # default sort: by created, oldest first
    assert [row.run for row in model.with_filter(text="overloaded").visible()] == ["failed-provider"]
    by_pending = model.sorted_by("pending_calls", descending=True).visible()
    assert by_pending[0].run == "turn-in-flight"
    assert by_pending[-1].pending_calls is None  # unknown values sort last in either direction
    assert model.sorted_by("pending_calls").visible()[-1].pending_calls is None
    with pytest.raises(ValueError, match="cannot sort"):
        model.sorted_by("colour")
    toggled = model.toggle_sort("turns")
    assert (toggled.sort_key, toggled.descending) == ("turns", False)
    assert toggled.toggle_sort("turns").descending is True
    assert toggled.header_label(toggled.columns[5]) == "turns ▲"
    paged = RunBrowserModel(model.rows, page_size=5)
    assert paged.page_count == 3 and len(paged.page_rows()) == 5
    assert paged.with_page(2).page_text() == "runs 11-14 of 14" and len(paged.with_page(2).page_rows()) == 4
    assert paged.with_page(99).page == 2 and paged.with_page(-1).page == 0
    assert paged.with_filter(statuses={"invalid"}).page_text() == "runs 1-3 of 3 (14 in all)"
    last = paged.visible()[-1].run
    assert paged.page_of(last) == 2 and paged.neighbour(last, 1) is None
    assert paged.neighbour(paged.visible()[0].run, 1) == paged.visible()[1].run


def test_run_browser_table_escapes_and_marks_the_selection() -> None:
    summary = RunSummary("run-1", "open", "2026", 3, 3, "<img src=x onerror=alert(1)>")
    html = RunBrowserModel.from_summaries([summary]).to_html(selected="run-1")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'class="jt-selected"' in html and ">open</span>" in html
    assert 'aria-sort="ascending"' in html  # the sorted column says so


def test_run_browser_from_runs_table_with_task_states() -> None:
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
            "stop_reason": ["end_turn", "tool_use"],
            "end_reason": [None, "runner error: <b>disk full</b>"],
            "task_state": ["succeeded", "failed"],
        }
    )
    model = RunBrowserModel.from_runs_table(table)
    assert [(row.run, row.tokens, row.turns) for row in model.sorted_by("tokens", True).visible()] == [
        ("b", 22, 2),
        ("a", 11, 1),
    ]
    rows = {row.run: row for row in model.rows}
    assert rows["b"].reason == "runner error: <b>disk full</b>" and rows["a"].reason == "stop reason: end_turn"
    assert rows["b"].task_state == "failed" and "task_state" in [column.key for column in model.columns]
    html = model.to_html()
    assert "<b>disk full" not in html and "&lt;b&gt;disk full" in html and ">succeeded</td>" in html


def test_run_browser_from_a_source_with_a_task_store_shows_task_states(tmp_path: Path) -> None:
    from journaltools.tasks import FileTaskStore
    from tests.task_store_contract import error, request, result

    journals = tmp_path / "journals"
    journals.mkdir()
    for run, task in (("done", "task-1"), ("broke", "task-2"), ("waiting", "task-3"), ("loose", None)):
        journal = JournalBuilder(run).user("hi")
        if task is not None:
            journal.bodies[0]["task"] = task
        (journals / f"{run}.jsonl").write_bytes(journal.bytes())
    store = FileTaskStore(tmp_path / "tasks")
    for task in ("task-1", "task-2", "task-3"):
        store.submit(request(task))
    store.complete("task-1", result("task-1"))
    store.complete("task-2", error("task-2", "disk full"))
    expected = {"done": "completed", "broke": "completed", "waiting": "submitted", "loose": None}
    browser = RunBrowser.from_source(str(journals), progress=False, task_store=str(tmp_path / "tasks"))
    try:
        assert {row.run: row.task_state for row in browser.model.rows} == expected
        assert "task_state" in [column.key for column in browser.model.columns]
        assert ">completed</td>" in browser.model.to_html()
    finally:
        browser.close()
    model, loader = load_source(str(journals), progress=False, task_store=store)  # a store object, too
    assert {row.run: row.task_state for row in model.rows} == expected
    loader.close()  # type: ignore[attr-defined]


def test_clicking_a_row_opens_its_conversation_with_the_reason(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, loader = samples
    browser = RunBrowser(model, loader, rows_per_page=5)
    browser.filter_box.value = "cancel"
    assert browser._row_runs[0] == "cancelled-by-user" and browser._row_runs[1] is None
    assert browser.row_widgets[1].layout.display == "none"
    browser.row_cells[0][2].click()  # a click on any cell of the row opens it
    assert browser.selected == "cancelled-by-user" and "jt-selected" in browser.row_widgets[0]._dom_classes
    header = browser.detail.children[1].children[0].value
    assert "Cancelled at seq 4" in header and "cancelled by alice@example.com: wrong repository" in header
    body = browser.detail.children[1].children[2].value
    assert 'class="jt-event jt-tone-muted" data-seq="4"' in body  # the cancel record, in its place at the end
    close = browser.detail.children[0].children[2]
    close.click()
    assert browser.selected is None and browser.detail.children == ()


def test_clicking_a_header_sorts_and_again_reverses(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, loader = samples
    browser = RunBrowser(model, loader, rows_per_page=20)
    turns = next(i for i, column in enumerate(browser.columns) if column.key == "turns")
    browser.headers[turns].click()
    assert browser.headers[turns].description == "turns ▲"
    shown = [run for run in browser._row_runs if run is not None]
    by_run = {row.run: row for row in model.rows}
    counts = [by_run[run].turns for run in shown]
    known = [count for count in counts if count is not None]
    assert known == sorted(known) and counts[-1] is None  # unknown last
    browser.headers[turns].click()
    assert browser.headers[turns].description == "turns ▼"
    again = [by_run[run].turns for run in browser._row_runs if run is not None]
    assert [c for c in again if c is not None] == sorted(known, reverse=True)


def test_paging_keeps_a_fixed_pool_of_row_widgets(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, loader = samples
    browser = RunBrowser(model, loader, rows_per_page=4)
    assert len(browser.row_widgets) == 4 and browser.previous_page.disabled
    first = list(browser._row_runs)
    browser.next_page.click()
    assert browser.model.page == 1 and browser._row_runs != first and not browser.previous_page.disabled
    assert "page 2 of 4" in browser.page_label.value
    browser.select(model.sorted_by("created").visible()[-1].run)  # opening a run shows its page
    assert browser.model.page == 3 and browser.next_page.disabled


def test_status_chips_filter_and_count(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, loader = samples
    browser = RunBrowser(model, loader)
    assert browser.chips["invalid"].description == "invalid 3"
    browser.chips["invalid"].value = True
    shown = {run for run in browser._row_runs if run is not None}
    assert shown == {"corrupt-interior", "schema-violation", "version-mismatch"}


def test_ten_thousand_runs_page_without_rendering_them_all() -> None:
    rows = [
        RunRow(f"run-{i:05}", ("completed", "failed", "open")[i % 3], f"2026-01-01T00:{i % 60:02}:00Z", "m", i % 7,
               i * 10, i % 2, i, "reason")
        for i in range(10_000)
    ]  # fmt: skip
    started = time.perf_counter()
    browser = RunBrowser(RunBrowserModel(rows), rows_per_page=25)
    for _ in range(3):
        browser.next_page.click()
    browser.headers[0].click()
    elapsed = time.perf_counter() - started
    assert len(browser.row_widgets) == 25 and "of 10,000" in browser.page_label.value
    assert browser._row_runs[0] == "run-00000"
    assert elapsed < 5.0, f"building and paging 10,000 runs took {elapsed:.1f}s"


def test_load_source_reads_a_conversation_only_when_it_is_opened(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    fresh = RunFolds(loader.backend)
    assert fresh("failed-provider") is fresh("failed-provider")  # read once, then kept
    assert fresh("no-such-run") is None and "no-such-run" in fresh.errors
    assert fresh("../escape") is None  # an id that cannot name a run is reported, never raised


# -- every view agrees on a run's status ---------------------------------------------------------


def test_ls_the_runs_table_and_every_view_agree_on_each_sample(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    model, loader = samples
    listed = json.loads(
        subprocess.run(
            [sys.executable, "-m", "journaltools", "ls", str(SAMPLES), "--json"], capture_output=True, check=True
        ).stdout
    )
    ls_status = {row["run"]: row["status"] for row in listed}
    runs_table = load(str(SAMPLES), strict=False, progress=False).runs
    table_status = dict(zip(runs_table.column("run").to_pylist(), runs_table.column("status").to_pylist(), strict=True))
    browser_status = {row.run: row.status for row in model.rows}
    assert ls_status == table_status == browser_status and len(ls_status) == 14
    # An invalid run's row says what its records say, the same way in both (a refused or newer journal too).
    table_rows = {row["run"]: row for row in runs_table.to_pylist()}
    for row in listed:
        table_row = table_rows[row["run"]]
        created = datetime.fromisoformat(row["created"]) if row["created"] is not None else None
        assert (created, row["last_seq"], row["records"], row["model"], row["status"]) == (
            table_row["created"],
            table_row["last_seq"],
            table_row["records"],
            table_row["model"],
            table_row["status"],
        ), row["run"]
    assert table_rows["version-mismatch"]["model"] is not None and table_rows["corrupt-interior"]["model"] is not None
    for run, status in ls_status.items():
        result = loader(run)
        assert result is not None, run
        conversation = ConversationModel.from_fold(result)
        assert conversation.status == status, run
        assert f"jt-status-{status}" in conversation.header_html(), run
        with open_source(str(SAMPLES)) as backend:
            read = backend.read_run(run, strict=False)
        if read.complete:
            last = TimeTravelModel(run, read.records).snapshot(len(read.records) - 1)
            assert last.status == status, run
    broken = ConversationModel.from_fold(loader("schema-violation"))  # type: ignore[arg-type]
    assert broken.status == "invalid" and broken.fold_status in ("open", "completed")  # the lenient fold alone
    assert broken.banner is not None and f"the fold says {broken.fold_status}" in broken.banner.note
    assert "Why did the journal" in broken.to_html()  # the broken turn is shown, not dropped


# -- ConversationView ---------------------------------------------------------------------------


def test_conversation_pairs_calls_with_results_and_shows_the_header(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    model = ConversationModel.from_fold(loader("completed-with-tools"))  # type: ignore[arg-type]
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
    assert "<code>total</code> rounds to one decimal" in html  # Markdown: backticks become code


def test_failed_run_has_a_banner_and_the_error_record_in_place(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    model = ConversationModel.from_fold(loader("failed-provider"))  # type: ignore[arg-type]
    assert model.banner is not None and model.banner.tone == "error"
    assert model.banner.title == "Failed at seq 5"
    assert model.banner.detail == "provider error: overloaded: 3 retries exhausted"
    assert model.banner.note == "last stop reason: tool_use"
    header = model.header_html()
    assert header.index("jt-banner") < header.index("<h3>")  # the banner comes first
    body = model.page_html(0)
    assert body.rindex('data-seq="5"') > body.rindex("jt-msg")  # the error record after the messages
    assert "message: <b>overloaded: 3 retries exhausted</b>" in body
    assert [m.kind for m in model.markers] == ["end"]


@pytest.mark.parametrize(
    ("run", "tone", "title", "detail"),
    [
        ("cancelled-by-user", "muted", "Cancelled at seq 4", "cancelled by alice@example.com: wrong repository"),
        ("schema-violation", "error", "Invalid journal", "seq 3: schema_violation — assistant: usage: Field required"),
        ("suspended-approval", "warn", "Suspended", "waiting for an answer: deploy (toolu_21), deferred for approval"),
        ("turn-in-flight", "info", "Open", "waiting for the results of 2 tool calls: run_tests (toolu_11), "
         "read_file (toolu_12)"),
        ("completed-with-tools", "ok", "Completed", "last stop reason: end_turn"),
    ],
)  # fmt: skip
def test_every_status_has_a_banner_that_says_why(
    samples: tuple[RunBrowserModel, RunFolds], run: str, tone: str, title: str, detail: str
) -> None:
    _, loader = samples
    banner = ConversationModel.from_fold(loader(run)).banner  # type: ignore[arg-type]
    assert banner is not None and (banner.tone, banner.title, banner.detail) == (tone, title, detail)


def test_conversation_pending_batch_deferral_and_claim_marker(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    suspended = ConversationModel.from_fold(loader("suspended-approval"))  # type: ignore[arg-type]
    assert [(c.id, c.deferred, c.approval) for c in suspended.pending] == [("toolu_21", "approval", None)]
    assert suspended.pending[0].flags == ["pending", "deferred: approval", "awaiting approval"]
    assert "pending batch (1 unanswered)" in suspended.to_html()
    assert suspended.header["waiting_for"] == "answer"

    resumed = ConversationModel.from_fold(loader("resumed-after-crash"))  # type: ignore[arg-type]
    assert [(m.seq, m.percent) for m in resumed.markers] == [(4, 60.0)]
    assert 'class="jt-marker" style="left:calc(60.0% - 1.80px)"' in resumed.header_html()


def test_conversation_escapes_a_script_in_a_message(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    html = ConversationModel.from_fold(loader("optional-unknown-record")).to_html()  # type: ignore[arg-type]
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html or "&lt;script&gt;alert('xss')" in html


def test_conversation_escapes_tool_results_and_clamps_long_values() -> None:
    huge = SCRIPT + "y" * 5000
    records = JournalBuilder().user().assistant("c1").result("c1", huge).assistant(text="</pre><b>bold</b>").raw()
    model = ConversationModel.from_fold(fold(records), limit=100)
    html = model.to_html()
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "show all (5,033 characters)" in html and html.count("y" * 5000) == 1


def test_conversation_pages_thousands_of_messages() -> None:
    builder = JournalBuilder()
    for i in range(1500):
        builder.user(f"question {i}").assistant(text=f"answer {i}")
    model = ConversationModel.from_fold(fold(builder.raw()), page_size=100)
    assert len(model.messages) == 3000 and model.page_count == 30
    last = model.page_html(29)
    assert "answer 1499" in last and "question 1450" in last and "question 1449" not in last
    assert len(model.page_html(0)) < 60_000  # one page rendered, not the run
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


def test_time_travel_finds_where_the_failed_sample_went_wrong_and_why() -> None:
    with open_source(str(SAMPLES)) as backend:
        records = backend.read_run("failed-provider").records
    model = TimeTravelModel("failed-provider", records)
    assert model.status_changes() == [(5, "open", "failed")]
    before = model.snapshot(model.index_of_seq(4))
    assert before.status == "open" and before.counters["tool_errors"] == 1
    assert "out of memory" in before.last_messages[-1][1]
    after = model.snapshot(4)
    assert after.banner is not None and after.banner.text.startswith("Failed at seq 5 — provider error: overloaded")
    html = model.snapshot_html(4)
    assert "after seq 5" in html and ">failed</span>" in html and "jt-banner jt-tone-error" in html
    view = TimeTravel(model)
    assert view.slider is not None
    view.slider.value = 1
    assert "after seq 2" in view.output.value
    view.changes.children[1].click()  # the jump to the status change
    assert view.slider.value == 4 and "Failed at seq 5" in view.output.value
    with pytest.raises(IndexError):
        model.fold_at(99)


def test_time_travel_escapes_and_handles_an_unreadable_run() -> None:
    model = TimeTravelModel("r", JournalBuilder().user(SCRIPT).raw())
    assert "<script>" not in model.snapshot_html(1) and "&lt;script&gt;" in model.snapshot_html(1)
    empty = TimeTravel(TimeTravelModel("corrupt-interior", []))
    assert empty.slider is None and "no readable records" in empty.output.value
    refused = TimeTravel.from_source(str(SAMPLES), "corrupt-interior")
    assert "Refused by the reader" in refused.widget.children[0].value and "corrupt_line" in (
        refused.widget.children[0].value
    )


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
    assert rows["only-file"].verdict == "missing_b" and rows["<script>only-js"].verdict == "missing_a"
    assert rows["wrong"].severity > rows["in-flight"].severity > rows["same"].severity
    assert rows["in-flight"].flag == "⚑ documented" and rows["wrong"].flag == "✖ DISCREPANCY"
    html = model.to_html()
    assert 'class="jt-row jt-verdict-documented"' in html and 'class="jt-row jt-verdict-discrepancy"' in html
    assert "<script>only-js" not in html and "&lt;script&gt;only-js" in html
    assert model.counts()["documented"] == 1 and "1 discrepancy" in model.summary_text()


def test_a_summary_rule_verdict_is_expected_not_red() -> None:
    rows = [
        {"run": "noted", "status_a": "completed", "status_b": "open", "verdict": "summary_rule", "explanation": ""},
        {"run": "bad", "status_a": "open", "status_b": "failed", "verdict": "discrepancy", "explanation": "x"},
    ]
    model = ListingComparisonModel.from_rows(rows)
    noted, bad = model.row("noted"), model.row("bad")
    assert noted.flag == "≈ summary rule" and noted.explanation == SUMMARY_RULE_EXPLANATION
    assert noted.severity < bad.severity and noted.severity == model.row("noted").severity == 1
    assert model.summary_text() == "1 discrepancy, 1 summary_rule"
    html = model.to_html()
    assert 'class="jt-flag jt-flag-summary_rule"' in html
    css = re.search(r"\.jt-flag-discrepancy, [^{]*\{([^}]*)\}", html)
    assert css is not None and "summary_rule" not in css.group(0)  # the loud red rule leaves it out


def test_a_summary_rule_row_from_two_listings_is_explained_and_expected() -> None:
    records = JournalBuilder("ends-in-note").user().assistant().add("note", text="seen", optional=True).raw()
    file_rows = [summarize_by_fold("ends-in-note", records)]
    js_rows = [summarize_two_records("ends-in-note", records[0], records[-1])]
    model = ListingComparisonModel.from_listings(file_rows, js_rows, "file", "jetstream")
    row = model.row("ends-in-note")
    assert (row.status_a, row.status_b, row.verdict) == ("completed", "open", "summary_rule")
    assert row.flag == "≈ summary rule" and row.severity == SEVERITY["documented"] < SEVERITY["discrepancy"]
    assert "not an error" in row.explanation and "a trailing note is inert" in row.explanation
    html = model.to_html()
    assert 'class="jt-row jt-verdict-summary_rule"' in html and "1 summary_rule" in model.summary_text()


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
    assert model.row("schema-violation").verdict == "summary_rule"


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


def test_the_chart_axis_counts_in_whole_numbers() -> None:
    assert integer_ticks(1) == [0, 1] and integer_ticks(3) == [0, 1, 2, 3]
    assert integer_ticks(7) == [0, 2, 4, 6, 8] and integer_ticks(250) == [0, 50, 100, 150, 200, 250]
    for top in range(1, 2000, 7):
        ticks = integer_ticks(top)
        assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 6
        assert all(isinstance(t, int) for t in ticks) and len({b - a for a, b in itertools.pairwise(ticks)}) == 1
    svg = AuditSummaryModel([Finding.of("r", 2, "seq_gap", "gap"), Finding.of("r", 3, "torn_tail", "t")]).chart_svg()
    labels = re.findall(r'<text class="jt-tick"[^>]*>([^<]*)</text>', svg)
    assert labels == ["0", "1"]  # one finding each: an axis of 0 and 1, never 0.0 … 1.0


def test_the_png_chart_has_an_integer_axis() -> None:
    from matplotlib.ticker import MaxNLocator

    model = AuditSummaryModel([Finding.of("r", 2, "seq_gap", "gap")])
    locator = MaxNLocator(integer=True)
    assert all(float(t).is_integer() for t in locator.tick_values(0, 1))
    assert model.chart_png().startswith(b"\x89PNG")


def test_audit_summary_needs_no_matplotlib_and_chart_png_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from journaltools.protocol.findings import Finding\n"
        "from journaltools.widgets import AuditSummary, AuditSummaryModel\n"
        "model = AuditSummaryModel([Finding.of('r', 2, 'seq_gap', 'gap')])\n"
        "view = AuditSummary(model)\n"
        "assert '<svg' in view.chart.value\n"
        "try:\n    model.chart_png()\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "journaltools[notebook]"' in result.stdout and "matplotlib" in result.stdout
    assert issubclass(MissingDependency, ImportError)


def test_audit_summary_escapes_and_opens_affected_runs(samples: tuple[RunBrowserModel, RunFolds]) -> None:
    _, loader = samples
    model = AuditSummaryModel.from_rows(
        [
            {"run": "torn-tail", "seq": 4, "code": "torn_tail", "severity": "warning", "message": SCRIPT},
            {"run": "no-such-run", "seq": 3, "code": "corrupt_line", "severity": "error", "message": "bad"},
        ]
    )
    assert "<script>" not in model.to_html() and "&lt;script&gt;" in model.to_html()
    assert "<script>" not in model.chart_svg()
    view = AuditSummary(model, loader)
    assert [button.description for button in view.buttons] == ["no-such-run", "torn-tail"]
    view.buttons[1].click()
    assert len(view.detail.children) == 2 and "torn-tail" in view.detail.children[1].children[0].value
    view.buttons[0].click()
    assert "No journal for this run" in view.detail.children[1].value


def test_audit_summary_from_findings_values() -> None:
    model = AuditSummaryModel([Finding.of("r", 2, "seq_gap", "gap"), Finding.of("r", 3, "seq_gap", "gap")])
    assert [(c.code, c.count) for c in model.by_code()] == [("seq_gap", 2)]
    assert model.findings_for("r")[0].seq == 2
