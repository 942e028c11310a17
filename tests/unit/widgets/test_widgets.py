"""The widget models, without a browser: what they hold and show for real fisk-ai journals (the vendored
corpus, tests/corpus/runstate/file), that journal content is escaped, and that the conversation token and
thinking signatures never reach a page."""

from __future__ import annotations

import base64
import itertools
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from journaltools._base.readable import readable_json, shorten_middle
from journaltools.errors import MissingDependency
from journaltools.exports.facts import RecordFacts
from journaltools.exports.html import esc, estimated_lines, id_html, long_text, markdown_text, status_badge
from journaltools.exports.markdown import is_safe_link, render_markdown
from journaltools.exports.why import banner_for
from journaltools.folding import fold
from journaltools.folding.facts import RunFacts
from journaltools.folding.phrases import ATTENTION, attention_rank
from journaltools.folding.texts import conversation_digest, record_text
from journaltools.protocol.blocks import Block, Message, TextBlock
from journaltools.protocol.decode import decode_line
from journaltools.protocol.findings import Finding
from journaltools.protocol.kinds import (
    Claim,
    Meta,
    Record,
    User,
    make_record,
)
from journaltools.sources.base import RunRead, StoredRecord
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
from journaltools.widgets._source import fold_read
from journaltools.widgets.audit import integer_ticks
from journaltools.widgets.comparison import DOCUMENTED_EXPLANATION, SEVERITY, SUMMARY_RULE_EXPLANATION
from journaltools.widgets.runs_row import RunRow
from journaltools.widgets.turns import TurnCheckpointsModel, TurnRow
from tests.browser_table import headers as table_headers
from tests.browser_table import rows as table_rows
from tests.browser_table import shown_runs, table_lines
from tests.builders import journal
from tests.paths import TESTS
from tests.widget_journals import (
    FINGERPRINT,
    SCRIPT,
    all_folds,
    assert_safe,
    assistant_at,
    corpus_fold,
    corpus_records,
    hostile_records,
    result_at,
    tool_use,
)

# -- safety -------------------------------------------------------------------------------------------


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
    badge = status_badge("error")
    assert ">error</span>" in badge and "jt-tone-error" in badge
    assert "style=" not in badge  # colours come from the theme stylesheet, never fixed inline
    assert status_badge("error") != status_badge("completed")
    # A status the stylesheet does not know is no class of its own (a journal writes its terminal reason), only text.
    assert 'class="jt-status jt-status-unknown jt-tone-muted">&lt;b&gt;<' in status_badge("<b>")


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


def test_run_browser_rows_from_folds_have_the_new_statuses_and_say_why() -> None:
    model = RunBrowserModel.from_folds(all_folds())
    assert model.status_choices == ["open", "completed", "suspended", "error", "budget", "max_iterations", "invalid"]
    rows = {row.run: row for row in model.rows}
    waiting = rows["deferred-waiting"]
    assert waiting.status == "suspended" and waiting.pending_calls == 1
    # The row's why is the one line every face says (``why_stopped``); the deferral's note is in the opened pane.
    assert waiting.reason == "waiting for an answer to 1 deferred call"
    assert "529 Overloaded" in rows["terminal-error"].reason
    assert "token budget" in rows["terminal-budget"].reason
    assert rows["call-approval-live"].reason.endswith("left 1 tool call unanswered")  # it ended: it waits for none
    assert rows["turn-in-flight"].status == "open" and "waiting" in rows["turn-in-flight"].reason
    assert rows["edge-version-2"].reason.startswith("seq 1: version_mismatch")
    assert rows["served-memory-revisions"].segments == 3
    assert rows["chat-follow-ups"].caller == "operator@bastion-2"
    fold_ = all_folds()["completed-parallel-tools"]
    assert fold_.state is not None and rows["completed-parallel-tools"].tokens == fold_.state.counters.total_tokens


def runs_table(*overrides: dict[str, object]) -> pa.Table:
    """A ``runs`` table with the columns of INTERFACES.md (built here: the tables module is not under test)."""
    row: dict[str, object] = {
        "run": "r1",
        "status": "completed",
        "created": datetime(2026, 8, 21, 21, 36, 20, tzinfo=UTC),
        "updated": None,
        "model": "claude-sonnet-5",
        "provider": "anthropic",
        "prompt": "hello",
        "interactive": False,
        "caller": None,
        "conversation": None,
        "last_seq": 9,
        "records": 9,
        "segments": 1,
        "resumes": 0,
        "stale_terminal": False,
        "terminal_reason": "completed",
        "terminal_message": None,
        "last_stop_reason": "end_turn",
        "next_iteration": 2,
        "llm_calls": 2,
        "tool_calls": 1,
        "remote_tool_calls": 0,
        "in_tokens": 100,
        "out_tokens": 20,
        "cache_read_tokens": 5,
        "cache_create_tokens": 1,
        "thinking_tokens": 0,
        "pending_calls": 0,
        "open_deferrals": 0,
        "approvals": 0,
        "call_approvals": 0,
        "memory_keys": 0,
        "task_state": None,
    }
    return pa.Table.from_pylist([{**row, **override} for override in overrides])


def test_run_browser_from_the_runs_table() -> None:
    no_counts = dict.fromkeys(("llm_calls", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens"))
    table = runs_table(
        {},
        {"run": "r2", "status": "suspended", "pending_calls": 1, "open_deferrals": 1, "terminal_message": "waits"},
        {"run": "r3", "stale_terminal": True, "caller": SCRIPT, "task_state": "submitted"},
        {"run": "r4", "status": "invalid", "created": None, **no_counts},
    )
    findings = pa.Table.from_pylist(
        [{"run": "r4", "seq": 3, "code": "unknown_protocol", "severity": "error", "message": "bad", "source": ""}]
    )
    model = RunBrowserModel.from_runs_table(table, findings)
    rows = {row.run: row for row in model.rows}
    assert rows["r1"].tokens == 126 and rows["r1"].created == "2026-08-21T21:36:20+00:00"
    assert rows["r1"].reason == "stop reason: end_turn"
    assert rows["r2"].reason == "waits; waiting for an answer to 1 deferred call"
    assert rows["r3"].cell("status") == "completed (next turn in flight)" and rows["r3"].reason.endswith(
        "a new turn follows the last terminal"
    )
    assert rows["r4"].reason == "seq 3: unknown_protocol: bad" and rows["r4"].cell("tokens") == "—"
    assert [c.key for c in model.columns][-1] == "task_state"  # shown: a row has a task state
    html = model.to_html()
    assert SCRIPT not in html and esc(SCRIPT) in html  # the caller column, escaped
    assert model.with_filter("script").visible()[0].run == "r3"  # the filter reads the caller


def test_run_browser_filters_sorts_and_pages() -> None:
    model = RunBrowserModel.from_folds(all_folds())
    only = model.with_filter(statuses={"suspended", "error"}).visible()
    assert only and {row.status for row in only} == {"suspended", "error"}
    assert [r.run for r in model.with_filter("529").visible()] == ["terminal-error"]
    by_calls = model.sorted_by("llm_calls", descending=True).visible()
    assert by_calls[0].run == "long-run"
    paged = RunBrowserModel(model.rows, page_size=10)
    assert paged.page_count == 4 and len(paged.with_page(3).page_rows()) == len(model.rows) - 30
    assert paged.with_page(99).page == 3 and paged.page_text() == f"runs 1-10 of {len(model.rows)}"
    with pytest.raises(ValueError, match="cannot sort by"):
        model.sorted_by("nope")


def test_run_browser_from_a_source_with_a_task_store_shows_task_states(tmp_path: Path) -> None:
    from journaltools.stores.tasks import FileTaskStore
    from tests.task_store_contract import error, request, result

    journals = tmp_path / "journals"
    journals.mkdir()
    for run in ("done", "broke", "waiting", "loose"):
        built = journal(run)
        built.user("hi")
        (journals / f"{run}.json").write_bytes(built.journal_bytes())
    store = FileTaskStore(tmp_path / "tasks")
    for task in ("done", "broke", "waiting"):
        store.submit(request(task))
    store.complete("done", result("done"))
    store.complete("broke", error("broke", "disk full"))
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


def test_run_browser_view_opens_a_conversation_sorts_and_draws_a_page_as_one_widget() -> None:
    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=8)
    assert len(table_rows(browser)) == 8
    browser.select("terminal-error")
    body = browser.detail_body.children[0].children[0].value  # the conversation's header
    assert "Ended in error" in body and "529 Overloaded" in body
    children = list(browser.widget.children)
    table = browser.table
    assert children.index(browser.detail) < children.index(table)  # the pane sits above the table
    # The keyboard: the search box ends the pager's line, right before the rows, which are one tab stop (the first
    # row's run id; the arrows move between rows).
    pager = next(child for child in children if "jt-pager" in child._dom_classes)
    assert children.index(browser.detail) < children.index(pager) == children.index(table) - 1
    assert pager.children[-1] is browser.filter_box
    tabbable = [cell for cells in table_rows(browser) for cell in cells if cell.tabbable]
    assert tabbable == [table_rows(browser)[0][0]] and not any(header.tabbable for header in table_headers(browser))
    assert any("jt-selected" in line.classes for line in table_lines(browser)[1:])
    browser.sort_by_header("run")
    runs = shown_runs(browser)
    assert runs == sorted(runs)
    browser.sort_by_header("run")
    assert browser.model.descending
    chips = {status: chip.description for status, chip in browser.chips.items()}
    assert chips["invalid"] == "invalid 3"
    browser.chips["invalid"].value = True
    shown = shown_runs(browser)
    assert set(shown) == {"edge-version-2", "edge-unknown-required-protocol", "edge-result-before-assistant"}
    browser.select(None)
    assert browser.detail_body.children == () and browser.detail.layout.display == "none"


def test_the_search_reads_prompt_tools_messages_and_dates_and_the_counts_follow_it() -> None:
    model = RunBrowserModel.from_folds(all_folds())
    assert (model.sort_key, model.descending) == ("created", True)  # newest first
    deferred = all_folds()["deferred-waiting"]
    assert deferred.state is not None
    tool = deferred.pending_calls[0].name
    assert "deferred-waiting" in [r.run for r in model.with_filter(tool).visible()]
    words = deferred.state.prompt.split()[:2]
    assert "deferred-waiting" in [r.run for r in model.with_filter(" ".join(words)).visible()]
    searched = model.with_filter("529")
    assert searched.status_counts() == {"error": 1}  # the chips count what the search leaves
    table = runs_table(
        {}, {"run": "r2", "prompt": "summarise the invoices", "created": datetime(2025, 1, 2, tzinfo=UTC)}
    )
    messages = pa.Table.from_pylist([{"run": "r1", "text": "the rounding bug"}])
    calls = pa.Table.from_pylist([{"run": "r1", "name": "grep_logs", "input": '{"pattern": "ledger-7"}'}])
    by_table = RunBrowserModel.from_runs_table(table, messages=messages, tool_calls=calls)
    assert [r.run for r in by_table.visible()] == ["r1", "r2"]  # newest first
    assert [r.run for r in by_table.with_filter("rounding").visible()] == ["r1"]
    assert [r.run for r in by_table.with_filter("GREP_logs").visible()] == ["r1"]
    assert [r.run for r in by_table.with_filter("ledger-7").visible()] == ["r1"]  # a tool's input
    assert [r.run for r in by_table.with_filter("invoices 2025-01").visible()] == ["r2"]
    assert [r.run for r in by_table.with_filter("completed hello").visible()] == ["r1"]


def test_the_search_reads_what_grep_reads_thinking_and_tool_inputs_too() -> None:
    folds = {"hostile": fold(hostile_records(), strict=False), **all_folds()}
    model = RunBrowserModel.from_folds(folds)
    assert [r.run for r in model.with_filter("pondering").visible()] == ["hostile"]  # its thinking alone says it
    assert [r.run for r in model.with_filter("1.50e3").visible()] == ["hostile"]  # a tool's input alone
    assert model.with_filter("SIGNATURE-BYTES").visible() == []  # a thinking block's signature is not its text


def test_a_price_table_adds_a_cost_column_and_nothing_is_bundled() -> None:
    table = runs_table({}, {"run": "r2", "model": "unpriced"})
    plain = RunBrowserModel.from_runs_table(table)
    assert "cost" not in [c.key for c in plain.columns]
    priced = RunBrowserModel.from_runs_table(table, prices={"claude-sonnet-5": {"input": 3, "output": 15}})
    rows = {row.run: row for row in priced.rows}
    assert rows["r1"].cost is None  # r1 read 5 cached tokens and the table prices no cache read: never a guessed 0
    prices = {"claude-sonnet-5": {"input": 3, "output": 15, "cache_read": 0.3, "cache_create": 3.75}}
    priced = RunBrowserModel.from_runs_table(table, prices=prices)
    rows = {row.run: row for row in priced.rows}
    assert rows["r1"].cost == pytest.approx((100 * 3 + 20 * 15 + 5 * 0.3 + 1 * 3.75) / 1e6) and rows["r2"].cost is None
    assert "cost" in [c.key for c in priced.columns] and rows["r2"].cell("cost") == "—"
    with pytest.raises(ValueError, match="per million tokens"):
        RunBrowserModel.from_runs_table(table, prices={"m": {"output_tokens": 1}})


def test_the_columns_have_priorities_and_the_run_id_is_pinned() -> None:
    from journaltools.widgets.runs import BROWSER_STYLE
    from journaltools.widgets.runs_row import COLUMNS

    priorities = {column.key: column.priority for column in COLUMNS}
    assert {key for key, p in priorities.items() if p == 1} >= {"run", "status", "prompt", "reason", "tokens"}
    # The reason says what a run waits for, so its pending count is the first to step aside for the prompt.
    assert priorities["pending_calls"] == 2 == min(p for p in priorities.values() if p > 1)
    assert "position: sticky" in BROWSER_STYLE and "-webkit-line-clamp: 2" in BROWSER_STYLE
    browser = RunBrowser(RunBrowserModel.from_folds(all_folds()), rows_per_page=4)
    headers = table_headers(browser)
    assert all(f"jt-prio-{c.priority}" in h.classes for c, h in zip(browser.columns, headers, strict=True))


def test_ten_thousand_runs_page_without_rendering_them_all() -> None:
    rows = [RunRow(f"run-{i:05}", "completed", None, "m", i % 7, i, 0, 3) for i in range(10_000)]
    browser = RunBrowser(RunBrowserModel(rows), rows_per_page=25)
    browser.go_to_page(399)
    assert table_rows(browser)[0][0].text == "run-09975" and len(table_rows(browser)) == 25


# -- ConversationView -----------------------------------------------------------------------------


def test_calls_sit_next_to_their_results_with_errors_marked() -> None:
    model = ConversationModel.from_fold(corpus_fold("completed-parallel-tools"))
    calls = [part.call for message in model.messages for part in message.parts if part.call is not None]
    assert len(calls) == 5 and all(call.state == "answered" for call in calls)
    assert sum(call.is_error for call in calls) == 1
    html = model.to_html()
    assert html.count('data-call="') == 5 and "jt-call-error" in html
    assert model.header["llm_calls"] == 3 and model.header["remote_tool_calls"] == 1


def test_thinking_is_collapsed_without_its_signature_and_provider_blocks_keep_their_raw_json() -> None:
    records = corpus_records("thinking-and-provider-blocks")
    model = ConversationModel.from_fold(fold(records))
    kinds = [part.kind for message in model.messages for part in message.parts]
    assert "thinking" in kinds and "provider" in kinds
    providers = {part.label: part.text for m in model.messages for part in m.parts if part.kind == "provider"}
    assert {"redacted_thinking", "server_tool_use", "tool_search_tool_result"} <= set(providers)
    stored = {
        block.provider.kind: bytes(block.provider.raw).decode()
        for record in records
        if record.assistant is not None
        for block in record.assistant.message.content or ()
        if block.provider is not None
    }
    assert providers == stored  # verbatim, never decoded and encoded again
    html = model.to_html()
    assert '<details class="jt-thinking">' in html
    signatures = [
        block.thinking.signature
        for record in records
        if record.assistant is not None
        for block in record.assistant.message.content or ()
        if block.thinking is not None and block.thinking.signature
    ]
    assert signatures
    for signature in signatures:
        assert base64.b64encode(signature).decode() not in html and signature.decode("utf-8", "replace") not in html


def test_the_pending_turn_shows_each_calls_state() -> None:
    waiting = ConversationModel.from_fold(corpus_fold("deferred-waiting"))
    assert waiting.pending is not None
    states = sorted(call.state for call in waiting.pending.calls)
    assert states == ["answered", "answered", "deferred"]
    deferred = next(call for call in waiting.pending.calls if call.state == "deferred")
    assert deferred.note == "waiting on security approval" and deferred.handle
    html = waiting.to_html()
    assert "turn in flight" in html and esc(deferred.handle) in html and 'data-state="deferred"' in html
    assert "waiting on security approval" in waiting.why.banner().text
    live = ConversationModel.from_fold(corpus_fold("call-approval-live"))
    assert live.pending is not None and [c.state for c in live.pending.calls] == ["approved once"]
    in_flight = ConversationModel.from_fold(corpus_fold("turn-in-flight"))
    assert in_flight.pending is not None
    assert sorted(c.state for c in in_flight.pending.calls) == ["answered", "waiting"]
    assert ConversationModel.from_fold(corpus_fold("completed-parallel-tools")).pending is None


def test_why_it_stopped_for_every_terminal_reason() -> None:
    expected = {
        "completed-parallel-tools": ("Completed", "ok"),
        "deferred-waiting": ("Suspended", "warn"),
        "terminal-error": ("Ended in error", "error"),
        "terminal-budget": ("Token budget exhausted", "warn"),
        "terminal-max-iterations": ("Iteration cap reached", "warn"),
        "turn-in-flight": ("Open", "info"),
        "edge-result-before-assistant": ("Invalid journal", "error"),
    }
    for scenario, (title, tone) in expected.items():
        banner = banner_for(corpus_fold(scenario))
        assert (banner.title, banner.tone) == (title, tone), scenario
    assert "max iterations (3)" in banner_for(corpus_fold("terminal-max-iterations")).detail
    assert banner_for(corpus_fold("paused-turn")).note == "last stop reason: pause_turn"
    assert "result_outside_turn" in banner_for(corpus_fold("edge-result-before-assistant")).detail


def test_segments_fingerprint_caller_and_the_conversation_digest() -> None:
    result = corpus_fold("served-memory-revisions")
    model = ConversationModel.from_fold(result)
    assert len(model.segments) == 3 and model.segments[1].claimed_by
    html = model.header_html()
    assert html.count('class="jt-segment ') == 3 and esc(model.segments[1].claimed_by or "") in html
    state = result.state
    assert state is not None and state.conversation_token and state.caller
    digest = conversation_digest(state.conversation_token)
    assert digest is not None and len(digest) == 12 and digest in html
    assert state.conversation_token not in html and state.conversation_token not in model.to_html()
    assert esc(state.caller) in html and "memory" in html
    chat = ConversationModel.from_fold(corpus_fold("chat-follow-ups"))
    assert chat.header["interactive"] is True and "interactive <b>yes</b>" in chat.header_html()
    assert "provider <b>anthropic</b>" in chat.header_html()


def test_every_corpus_journal_renders_without_its_token() -> None:
    for scenario, result in all_folds().items():
        html = ConversationModel.from_fold(result).to_html()
        token = result.state.conversation_token if result.state is not None else ""
        assert not token or token not in html, scenario


def test_a_hostile_journal_is_escaped_everywhere() -> None:
    records = hostile_records()
    result = fold(records, strict=False)
    model = ConversationModel.from_fold(result)
    html = model.to_html()
    assert_safe(html)
    for text in ("note", "handle", "by", "caller", "prompt", "answer", "output", "message"):
        assert esc(f"{text} {SCRIPT}") in html or f"{text} &lt;script&gt;" in html, text
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "1.50e3" in html  # the tool input's own spelling
    follow_up = make_record(7, User(message=Message(role="user", content=[Block(text=TextBlock(text="more"))])))
    stale = fold([*records, follow_up], strict=False)
    assert stale.stale_terminal and "next turn is in flight" in banner_for(stale).note
    travel = TimeTravelModel("hostile", records)
    for index in range(len(travel)):
        assert_safe(travel.snapshot_html(index))
    assert_safe(RunBrowserModel.from_folds({"<b>hostile</b>": result}).to_html())
    assert_safe(ConversationView(model).body.value)


def test_conversation_pages_thousands_of_messages() -> None:
    model = ConversationModel.from_fold(corpus_fold("long-run"), page_size=40)
    assert model.page_count == -(-len(model.messages) // 40) and model.page_count > 3
    assert len(model.page(0)) == 40 and model.page(999) == model.page(model.page_count - 1)
    view = ConversationView(model)
    view.show_page(2)
    assert 'data-index="80"' in view.body.value and 'data-index="0"' not in view.body.value
    assert view.page_label.value.startswith("messages 81-120 of 302") and "(page 3 of 8)" in view.page_label.value
    view.following.click()
    assert "(page 4 of 8)" in view.page_label.value  # the label and the page agree (no 0-based slider)


def test_every_message_carries_its_records_seq() -> None:
    result = corpus_fold("completed-parallel-tools")
    model = ConversationModel.from_fold(result)
    assert [m.seq for m in model.messages] == result.message_seqs
    html = model.to_html()
    for message in model.messages:
        assert f'data-seq="{message.seq}"' in html and f"{message.role} · seq {message.seq}" in html
    assert "assistant #0" not in html and "user #0" not in html


def test_the_pending_turn_shows_its_last_words_thinking_and_calls() -> None:
    result = fold(hostile_records(), strict=False)
    model = ConversationModel.from_fold(result)
    pending = model.pending
    assert pending is not None and pending.seq == 2
    assert pending.text == f"answer {SCRIPT}" and pending.thinking == ["pondering <b>"]
    assert [c.state for c in pending.calls] == ["answered", "deferred"]
    html = model.pending_html()
    assert esc(f"answer {SCRIPT}") in html and '<details class="jt-thinking">' in html
    assert "pondering &lt;b&gt;" in html and esc(f"note {SCRIPT}") in html and esc(f"handle {SCRIPT}") in html
    assert "turn in flight" in html and "not committed yet" in html
    assert result.messages == result.state.messages and all(m.role != "assistant" for m in result.messages)


def test_jumps_reach_a_seq_the_ending_each_segment_and_finding() -> None:
    model = ConversationModel.from_fold(corpus_fold("long-run"), page_size=40)
    view = ConversationView(model)
    labels = [t.label for t in model.targets()]
    assert labels[0].startswith("the ending") and any(label.startswith("process run #0") for label in labels)
    target = model.messages[200]
    view.jump_to_seq(target.seq)
    # A message of tool results opens with the message holding their calls just before it, so both show.
    first = model.messages[view.start]
    assert view.start in (200, target.paired_from) and view.start <= 200
    assert view.body.value.index(f'data-seq="{first.seq}"') < view.body.value.index('class="jt-msg ', 0) + 200
    assert f'data-seq="{target.seq}"' in view.body.value
    assert "jt-target" in view.body.value
    view.jump.value = 0  # the ending
    assert f'data-seq="{model.messages[-1].seq}"' in view.body.value and view.jump.value == -1
    edge = ConversationModel.from_fold(corpus_fold("edge-stray-and-duplicate-results"))
    html = edge.header_html()
    # The stray and the duplicate result, and the meta record's run id (not the scenario name it is folded under).
    assert html.count('class="jt-seq-link"') == 3
    for finding in edge.finding_values:
        assert f'href="#{edge.anchor(finding.seq or 0)}"' in html
        assert f'id="{edge.anchor(finding.seq or 0)}"' in edge.to_html()
    in_flight = ConversationModel.from_fold(fold(hostile_records(), strict=False))
    assert in_flight.index_of_seq(5) is None and in_flight.anchor_seq(5) == 2  # the deferral is in the turn


def test_the_header_stays_a_few_lines_for_many_process_runs() -> None:
    records: list[Record] = [*corpus_records("completed-parallel-tools")]
    seq = records[-1].seq
    for index in range(30):
        seq += 1
        records.append(make_record(seq, Claim(by=f"host-{index}", claimed="2026-08-22T08:00:00Z")))
    model = ConversationModel.from_fold(fold(records, strict=False))
    header = model.header_html()
    assert header.count('class="jt-segment ') == 31
    assert header.count('<div class="jt-segments">') == 1  # one bar, one line (CSS nowrap), chips link to runs
    many = [Finding("r", n, "duplicate_result", "warning", f"dup {n}") for n in range(5)]
    model.finding_values = many
    assert '<details class="jt-findings-box"><summary>5 findings</summary>' in model.header_html()


def test_times_tokens_and_costs_come_from_the_records_and_a_price_table() -> None:
    from datetime import timedelta

    from journaltools.exports.facts import RecordFacts

    records = hostile_records()
    base = datetime(2026, 8, 22, 8, 0, tzinfo=UTC)
    times = [base + timedelta(seconds=index * 2.5) for index in range(len(records))]
    facts = RecordFacts.of(RunFacts.of(records), times, store="jetstream")
    assert facts.turn_seconds(2) == 2.5 and facts.call_seconds("c1") == 2.5
    # c2 deferred: its wait ended at the deferral (seq 5), timed from the record before it (the claim, seq 4), as
    # the tables' duration and the runtime's stats time it; never from the call to an answer on another clock.
    assert facts.call_seconds("c2") == 2.5 and facts.run.calls[1].deferred_seq == 5
    prices = {FINGERPRINT.model: {"input": 3.0, "output": 15.0}}
    model = ConversationModel.from_fold(fold(records, strict=False), facts=facts, prices=prices)
    html = model.to_html()
    assert "took 2.5 s" in html and "JetStream message time" in html
    assert model.run_cost() == pytest.approx((10 * 3.0 + 5 * 15.0) / 1e6) and "your price table" in html
    files = ConversationModel.from_fold(
        fold(records, strict=False), facts=RecordFacts.of(RunFacts.of(records), store="file")
    )
    assert "keeps no time per record" in files.to_html() and "took" not in files.to_html()
    assert "cost" not in files.to_html()  # no price table: no cost, never a bundled one
    with pytest.raises(ValueError, match="the kinds are"):
        ConversationModel.from_fold(fold(records, strict=False), prices={"m": {"inptu": 1.0}})


def test_a_huge_value_sends_a_bounded_prefix_and_the_rest_on_demand() -> None:
    from journaltools.exports.html import SENT_CHARS

    huge = "x" * 3_000_000 + "THE END"
    records = [*corpus_records("completed-parallel-tools")]
    first_result = next(r for r in records if r.tool_result is not None)
    records = [
        result_at(r.seq, r.tool_result.tool_use_id, huge) if r is first_result and r.tool_result is not None else r
        for r in records
    ]
    view = ConversationView(ConversationModel.from_fold(fold(records, strict=False)))
    assert len(view.body.value) < 4 * SENT_CHARS + 200_000 and "THE END" not in view.body.value
    assert "more characters" in view.body.value and view.rest_choice.options
    for _ in range(20):
        view.show_rest()
        if "THE END" in view.rest.value:
            break
    assert "THE END" in view.rest.value and len(view.rest.value) < 2 * view.CHUNK


def test_markdown_time_is_bounded_per_page() -> None:
    from journaltools.exports.html import RenderBudget

    budget = RenderBudget(seconds=0.05)
    slow = "![" * 10_000
    first = markdown_text(slow, budget=budget)
    assert "jt-md" in first and budget.spent()
    later = markdown_text("**bold**", budget=budget)
    assert "plain text" in later and "<strong>" not in later and budget.skipped == 1


# -- TimeTravel -----------------------------------------------------------------------------------


def test_time_travel_folds_each_prefix() -> None:
    records = corpus_records("follow-up-after-error")
    model = TimeTravelModel("follow-up-after-error", records)
    assert model.seqs == [record.seq for record in records]
    assert model.snapshot(0).status == "open" and model.snapshot(len(records) - 1).status == "completed"
    assert model.status_changes() == [(2, "open", "error"), (6, "error", "completed")]
    after_follow_up = model.snapshot(3)  # the user record after the error: the status still names the error
    assert after_follow_up.status == "error" and after_follow_up.stale_terminal
    assert model.fold_at(1) is model.fold_at(1)  # cached
    with pytest.raises(IndexError):
        model.fold_at(len(records))
    view = TimeTravel(model)
    assert view.slider is not None and "after seq" in view.output.value
    view.show(0)
    assert "seq 1 · io.choria.fisk-ai.v1.session.meta" in view.output.value


def test_time_travel_shows_the_meta_record_without_its_token() -> None:
    records = corpus_records("chat-follow-ups")
    meta = records[0].meta
    assert meta is not None and meta.conversation_token
    text = record_text(records[0])
    assert meta.conversation_token not in text and conversation_digest(meta.conversation_token) in text
    assert meta.conversation_token not in TimeTravelModel("c", records).snapshot_html(0)


def test_time_travel_of_nothing_and_a_reader_refusal() -> None:
    empty = TimeTravel(TimeTravelModel("<b>x</b>", []))
    assert empty.slider is None and "&lt;b&gt;x&lt;/b&gt;" in empty.output.value
    noted = TimeTravel.from_records("r", corpus_records("meta-only"), reader_note=SCRIPT)
    banner = noted.widget.children[0].value
    assert "Refused by the reader" in banner and "<script>" not in banner


# -- reading a run for a view -----------------------------------------------------------------------


def test_a_journal_the_reader_refused_is_invalid_with_the_readers_findings_first() -> None:
    records = corpus_records("completed-parallel-tools")
    stored = [StoredRecord(record, b"", position) for position, record in enumerate(records, 1)]
    corrupt = Finding.of("r", None, "corrupt_line", "line 4 is not JSON")
    result = fold_read("r", RunRead("r", stored, [corrupt], "file", complete=False))
    assert result.status == "invalid" and result.findings[0] == corrupt
    whole = fold_read("r", RunRead("r", stored, [], "file"))
    assert whole.status == "completed"


# -- ListingComparison --------------------------------------------------------------------------------

COMPARE_ROWS = [
    {"run": "a", "status_a": "completed", "status_b": "completed", "verdict": "agree", "explanation": ""},
    {"run": "b", "status_a": "completed", "status_b": "open", "verdict": "documented", "explanation": ""},
    {"run": "c", "status_a": "completed", "status_b": "open", "verdict": "summary_rule", "explanation": ""},
    {"run": "d", "status_a": "suspended", "status_b": "open", "verdict": "discrepancy", "explanation": SCRIPT},
    {"run": "e", "status_a": None, "status_b": "open", "verdict": "missing_a", "explanation": "only in b"},
    {"run": "<f>", "status_a": "error", "status_b": None, "verdict": "missing_b", "explanation": "only in a"},
]


def test_listing_comparison_verdicts_and_explanations() -> None:
    model = ListingComparisonModel.from_rows(COMPARE_ROWS)
    counts = model.counts()
    assert all(counts[verdict] == 1 for verdict in counts)
    assert model.row("b").explanation == DOCUMENTED_EXPLANATION and "says open" in DOCUMENTED_EXPLANATION
    assert model.row("c").explanation == SUMMARY_RULE_EXPLANATION and "memory revisions" in SUMMARY_RULE_EXPLANATION
    assert model.row("d").severity > model.row("e").severity > model.row("b").severity == SEVERITY["summary_rule"]
    assert model.summary_text() == "1 discrepancy, 1 missing_a, 1 missing_b, 1 documented, 1 summary_rule, 1 agree"
    html = model.to_html()
    assert "<script>" not in html and "&lt;f&gt;" in html and 'data-verdict="documented"' in html
    assert "✖ DISCREPANCY" in html and "<i>missing</i>" in html


def test_listing_comparison_from_a_table_and_the_view_hides_agreeing_rows() -> None:
    view = ListingComparison(ListingComparisonModel.from_table(pa.Table.from_pylist(COMPARE_ROWS), "file", "js"))
    assert 'data-run="a"' in view.table.value and "file vs js" in view.table.value
    view.only_problems.value = True
    assert 'data-run="a"' not in view.table.value and 'data-run="b"' in view.table.value


# -- AuditSummary ---------------------------------------------------------------------------------------


def test_audit_summary_counts_by_code_and_severity() -> None:
    findings = [finding for result in all_folds().values() for finding in result.findings]
    findings.append(Finding.of("torn", 4, "torn_tail", "dropped"))
    model = AuditSummaryModel(findings)
    counts = {(c.code, c.severity): c for c in model.by_code()}
    assert counts[("torn_tail", "warning")].runs == ("torn",)
    assert counts[("version_mismatch", "error")].runs == ("edge-version-2",)
    assert model.by_code()[0].severity == "error"  # worst first
    assert "edge-result-before-assistant" in model.affected_runs()


def test_the_chart_axis_counts_in_whole_numbers() -> None:
    assert integer_ticks(1) == [0, 1] and integer_ticks(3) == [0, 1, 2, 3]
    assert integer_ticks(7) == [0, 2, 4, 6, 8] and integer_ticks(250) == [0, 50, 100, 150, 200, 250]
    for top in range(1, 2000, 7):
        ticks = integer_ticks(top)
        assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 6
        assert all(isinstance(t, int) for t in ticks) and len({b - a for a, b in itertools.pairwise(ticks)}) == 1
    svg = AuditSummaryModel(
        [Finding.of("r", 2, "noncanonical_line", "case"), Finding.of("r", 3, "torn_tail", "t")]
    ).chart_svg()
    labels = re.findall(r'<text class="jt-tick"[^>]*>([^<]*)</text>', svg)
    assert labels == ["0", "1"]  # one finding each: an axis of 0 and 1, never 0.0 … 1.0


def test_the_png_chart_has_an_integer_axis() -> None:
    from matplotlib.ticker import MaxNLocator

    model = AuditSummaryModel([Finding.of("r", 2, "noncanonical_line", "case")])
    locator = MaxNLocator(integer=True)
    assert all(float(t).is_integer() for t in locator.tick_values(0, 1))
    assert model.chart_png().startswith(b"\x89PNG")


def test_audit_summary_needs_no_matplotlib_and_chart_png_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from journaltools.protocol.findings import Finding\n"
        "from journaltools.widgets import AuditSummary, AuditSummaryModel\n"
        "model = AuditSummaryModel([Finding.of('r', 2, 'noncanonical_line', 'gap')])\n"
        "view = AuditSummary(model)\n"
        "assert '<svg' in view.chart.value\n"
        "try:\n    model.chart_png()\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "journaltools[notebook]"' in result.stdout and "matplotlib" in result.stdout
    assert issubclass(MissingDependency, ImportError)


def test_audit_summary_escapes_and_opens_affected_runs() -> None:
    folds = all_folds()
    model = AuditSummaryModel.from_rows(
        [
            {"run": "terminal-error", "seq": 4, "code": "torn_tail", "severity": "warning", "message": SCRIPT},
            {"run": "no-such-run", "seq": 3, "code": "corrupt_line", "severity": "error", "message": "bad"},
        ]
    )
    assert "<script>" not in model.to_html() and "&lt;script&gt;" in model.to_html()
    assert "<script>" not in model.chart_svg()
    view = AuditSummary(model, folds.get)
    assert [button.description for button in view.buttons] == ["no-such-run", "terminal-error"]
    view.buttons[1].click()
    assert len(view.detail.children) == 2 and "terminal-error" in view.detail.children[1].children[0].value
    view.buttons[0].click()
    assert "No journal for this run" in view.detail.children[1].value


def test_audit_summary_and_listing_comparison_page_their_output() -> None:
    findings = [Finding.of(f"run-{n:06}", 2, "torn_tail", f"dropped {n}") for n in range(100_000)]
    model = AuditSummaryModel(findings)
    html = model.to_html()
    assert len(html) < 100_000 and "findings 1-50 of 100,000" in html and "and 99,995 more" in html
    view = AuditSummary(model)
    assert len(view.buttons) == 24 and view.runs_label.value == "runs 1-24 of 100,000"
    view.next_runs.click()
    assert view.buttons[0].description == "run-000024"
    view.next_findings.click()
    assert "findings 51-100 of 100,000" in view.findings.value
    rows = [{"run": f"r{n:06}", "status_a": "open", "status_b": "open", "verdict": "agree"} for n in range(100_000)]
    rows.append({"run": "zz", "status_a": "completed", "status_b": None, "verdict": "missing_b"})
    comparison = ListingComparison(ListingComparisonModel.from_rows(rows))
    assert len(comparison.table.value) < 200_000 and comparison.page_label.value == "page 1 of 1,001"
    comparison.only_problems.value = True
    assert 'data-run="zz"' in comparison.table.value and comparison.page_label.value == "page 1 of 1"


def test_audit_summary_from_findings_values() -> None:
    model = AuditSummaryModel([Finding.of("r", 2, "torn_tail", "t"), Finding.of("r", 3, "torn_tail", "t")])
    assert [(c.code, c.count) for c in model.by_code()] == [("torn_tail", 2)]
    assert model.findings_for("r")[0].seq == 2


# -- issue 26: views that hold on real data ----------------------------------------------------------------------

LONG_TASK = "wksp-2026-08-21-production-billing/" + "t" * 40 + "-rotate-credentials-for-the-billing-service"


def test_a_run_with_no_terminal_has_no_ending_recorded_not_running() -> None:
    result = corpus_fold("turn-in-flight")
    model = ConversationModel.from_fold(result)
    html = model.header_html()
    assert "running" not in html and "no ending recorded" in html
    assert not any("running" in target.label for target in model.targets())
    assert model.targets()[0].label.startswith("the last record")
    records = corpus_records("meta-only")
    heard = datetime(2026, 8, 22, 0, 40, tzinfo=UTC)
    facts = RecordFacts.of(RunFacts.of(records), updated=heard)
    quiet = ConversationModel.from_fold(fold(records, strict=False), facts=facts)
    header = quiet.header_html()
    # The file's modification time is all the store says of this undated journal: called what it is.
    assert "no ending recorded" in header and "· file modified 2026-08-22T00:40:00.000Z" in header
    row = RunBrowserModel.from_folds({"meta-only": fold(records, strict=False)}).rows[0]
    assert row.reason.startswith("no ending recorded") or "waiting for the model" in row.reason


def test_a_newest_run_is_updated_when_its_last_record_is_dated_not_when_its_file_was_touched() -> None:
    newest = sorted((TESTS / "corpus" / "runstate" / "newest" / "file").glob("*.json"))
    records = [decode_line(line).record for line in newest[0].read_bytes().splitlines()]
    assert records[-1].time, "the newest line dates every record"
    touched = datetime(2030, 1, 1, tzinfo=UTC)
    facts = RecordFacts.of(RunFacts.of(records), updated=touched)
    assert facts.updated == facts.times[records[-1].seq] < touched
    header = ConversationModel.from_fold(fold(records, strict=False), facts=facts).header_html()
    assert "2030-01-01" not in header
    august = corpus_records("meta-only")
    assert RecordFacts.of(RunFacts.of(august), updated=touched).updated == touched, (
        "an undated journal keeps the store's time"
    )


def test_the_ending_names_the_terminal_not_the_claim_after_it() -> None:
    records = corpus_records("ends-on-claim")
    terminal = max(record.seq for record in records if record.kind == "terminal")
    assert records[-1].kind == "claim" and records[-1].seq > terminal
    for facts in (RecordFacts.of(RunFacts.of(records)), None):
        model = ConversationModel.from_fold(fold(records, strict=False), facts=facts)
        ending = model.targets()[0]
        assert ending.seq == terminal and ending.label.endswith(f"(seq {terminal})"), ending


def test_jumping_to_the_ending_of_an_errored_run_shows_the_call_its_results_answer() -> None:
    view = ConversationView.from_fold(corpus_fold("terminal-error"))
    view.jump.value = 0  # the ending
    body = view.body.value
    assert "data-call=" in body  # the call, with its error result beside it
    assert "shown beside its call above" not in body or body.index("data-call=") < body.index("shown beside")
    model = ConversationModel.from_fold(corpus_fold("long-run"), page_size=7)
    for start in range(0, len(model.messages), 7):  # a page that starts at a results message shows them
        page = model.window_html(start)
        first = model.messages[start]
        if first.paired_results and (first.paired_from or 0) < start:
            assert "its call is in an earlier message" in page and "shown beside" not in page.split("jt-msg")[1]


def test_tool_inputs_read_as_a_person_reads_them() -> None:
    assert readable_json(r'{"expr": "1 -\u003e 3 \u0026 \u003cb\u003e"}') == '{"expr": "1 -> 3 & <b>"}'
    assert readable_json(r'"\ud83d\ude00 \u00e9"') == '"😀 é"'
    # Control characters, quotes, backslashes and bidirectional overrides stay escaped; so does "\\u003e".
    kept = r'"\u0000 \u001b \u0022 \u005c \u202e \u2028 \\u003e"'
    assert readable_json(kept) == kept
    records = [
        make_record(
            1, Meta(version=3, run_id="go", created="2026-08-21T23:36:20Z", fingerprint=FINGERPRINT, prompt="calc")
        ),
        assistant_at(2, 0, tool_use("c1", "calc", rb'{"expr":"1 -\u003e 3"}')),
    ]
    html = ConversationModel.from_fold(fold(records, strict=False)).to_html()
    assert "1 -&gt; 3" in html and "\\u003e" not in html


def test_status_sorts_by_what_needs_attention() -> None:
    model = RunBrowserModel.from_folds(all_folds()).sorted_by("status")
    ranks = [attention_rank(row.status) for row in model.visible()]
    assert ranks == sorted(ranks) and model.visible()[0].status == "invalid"
    assert model.visible()[-1].status == "completed"
    assert [s for s in ATTENTION[:4]] == ["invalid", "error", "open", "suspended"]


def test_long_ids_are_shortened_in_the_middle_with_a_tooltip_and_a_copy_button() -> None:
    shown = id_html(LONG_TASK)
    assert f'title="{esc(LONG_TASK)}"' in shown and f'data-copy="{esc(LONG_TASK)}"' in shown
    assert f">{esc(shorten_middle(LONG_TASK, 28))}</code>" in shown and "…" in shown
    assert id_html("short") == '<code class="jt-id">short</code>' and id_html(None) == "—"
    hostile = id_html('"><script>x</script>' + "a" * 40)
    assert "<script>" not in hostile and "&lt;script&gt;" in hostile
    row = TurnRow(LONG_TASK, "ws-" + "w" * 60, LONG_TASK, "awaiting_tool", 3, "host-" + "h" * 50, 5.0, 1, True, (), ())
    html = TurnCheckpointsModel("store", [row], []).to_html()
    assert html.count('class="jt-copy"') == 3 and f"<code>{esc(LONG_TASK)}</code>" not in html
    served = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"
    comparison = ListingComparisonModel.from_rows(
        [{"run": served, "status_a": "completed", "status_b": None, "verdict": "missing_b", "explanation": "x"}],
        "file",
        "jetstream",
    )
    assert comparison.rows[0].flag == "✖ MISSING in jetstream"
    assert f"<code>{served}</code>" not in comparison.to_html() and f'data-copy="{served}"' in comparison.to_html()
    browser = RunBrowser(RunBrowserModel.from_folds({served: all_folds()["completed-parallel-tools"]}))
    cell = table_rows(browser)[0][0]
    assert cell.text == shorten_middle(served, 28) and cell.title == served
    assert f'data-copy="{served}"' in browser.model.to_html()  # the static table too


def test_audit_findings_without_a_seq_say_no_seq() -> None:
    rows = [{"run": "r" * 70, "seq": None, "code": "not_a_journal", "severity": "info", "message": "matched"}]
    model = AuditSummaryModel.from_rows(rows)
    html = model.findings_html()
    assert "<td>—</td>" in html and "seq :" not in html
    codes = model.codes_html()  # the runs named per code: shortened, whole in the tooltip
    assert f'title="{"r" * 70}"' in codes and f">{'r' * 70}<" not in codes
    summary = AuditSummary(model, lambda _run: None)
    summary.open_run("r" * 70)
    assert (
        "at seq" not in summary.detail.children[0].value
        and "not_a_journal: matched" in summary.detail.children[0].value
    )


def test_the_browser_reads_the_runtimes_directory_when_given_no_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from journaltools.samples import write_samples

    runs = tmp_path / "state" / "fisk-ai" / "runs"
    written = write_samples(str(runs))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    browser = RunBrowser.from_source(progress=False)
    try:
        assert len(browser.model.rows) == len(written)
    finally:
        browser.close()


def test_the_seq_box_follows_what_is_shown() -> None:
    model = ConversationModel.from_fold(corpus_fold("long-run"), page_size=40)
    view = ConversationView(model)
    assert view.seq_box.value == model.messages[0].seq
    view.show_page(2)
    assert view.seq_box.value == model.messages[80].seq and view.page_label.value.endswith("(page 3 of 8)")
    view.jump_to_seq(model.messages[123].seq)
    assert view.seq_box.value == model.messages[123].seq


def test_every_finding_lists_the_worst_first() -> None:
    from journaltools.widgets import AuditSummaryModel

    rows = [
        {"run": f"r{n}", "seq": n, "code": "degraded_analysis", "severity": "info", "message": "i"} for n in range(5)
    ]
    rows += [{"run": "bad", "seq": 1, "code": "version_mismatch", "severity": "error", "message": "e"}]
    rows += [{"run": "odd", "seq": 2, "code": "duplicate_result", "severity": "warning", "message": "w"}]
    html = AuditSummaryModel.from_rows(rows).findings_html(page_size=3)
    assert html.index("version_mismatch") < html.index("duplicate_result") < html.index("degraded_analysis")
    assert html.count("degraded_analysis") == 1  # the first page: the error, the warning, one info row


def test_the_chart_scales_with_the_output_area_and_leaves_room_for_every_code() -> None:
    findings = [Finding("r", n, "task_result_before_submission", "warning", "x") for n in range(1234)]
    svg = AuditSummaryModel([*findings, Finding.of("r", 1, "torn_tail", "t")]).chart_svg(width=460)
    assert 'width="100%"' in svg and "max-width: 460px" in svg and 'height="' not in svg.split(">")[0]
    left = min(float(x) for x in re.findall(r'<rect class="jt-bar[^"]*" x="([0-9.]+)"', svg))
    assert left >= 7 * len("task_result_before_submission")  # the longest label fits left of the bars
