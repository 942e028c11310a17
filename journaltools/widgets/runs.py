"""RunBrowser: a table of runs you sort by clicking a column header and open by clicking a row.

``RunBrowserModel`` is pure (rows, filter, sort, paging, HTML) and is built from a ``Tables`` (its ``runs``
and ``findings``) or from folds; it opens no source. ``RunBrowser`` is the ipywidgets view over it. The view
renders one page of rows at a time from a fixed pool of row widgets, so ten thousand runs page as fast as
ten: sorting or paging only changes the cells' text. Each row says why its run stopped (the terminal's
message, the deferrals it waits on, the pending calls, the first error of an ``invalid`` journal).

It fits the notebook: columns have priorities and the least needed ones step aside as the notebook narrows
(CSS container queries; "all columns" brings them back, scrolling sideways), the run id stays pinned on the
left, and the reason wraps to two lines. A click opens the run in a pane **above** the table, and the pane's
bar takes the keyboard focus, which makes the browser scroll it into view: the opened run's header is where
the reader looks, whichever row they clicked. Newest runs come first. One search box looks through run id,
prompt, caller, model, status, dates, tool names and inputs, message text and thinking (every word must
match), and the status chips count what the search leaves. The pane's **report** button writes the opened
run's report (``journaltools report``: one self-contained HTML file) next to the notebook with a download link;
**compare with…** opens ``RunDiff`` of the opened run against another run of the list.
"""

from __future__ import annotations

import base64
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journaltools._base.readable import shorten_middle
from journaltools._base.text import for_page
from journaltools.exports.facts import Prices, Tokens, check_prices, cost_text
from journaltools.exports.html import STATUS_TONES, STYLE, esc, id_html, status_badge, status_class, themed
from journaltools.exports.why import Why, reason_text
from journaltools.folding import STATUSES, FoldResult
from journaltools.folding.phrases import attention_rank
from journaltools.protocol.blocks import Message

if TYPE_CHECKING:
    from journaltools.exports.report import RunReport
    from journaltools.stores.tasks import TaskStore
    from journaltools.tables import Tables

#: run id → its lenient fold (None when the source has no such run), used to open a conversation.
RunLoader = Callable[[str], FoldResult | None]


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    numeric: bool = False
    #: 1 is always shown; a higher number steps aside sooner as the notebook narrows (see BROWSER_STYLE).
    priority: int = 1
    tooltip: str = ""


COLUMNS: tuple[Column, ...] = (
    Column("run", "run"),
    Column("status", "status"),
    Column("reason", "why it stopped"),
    Column("created", "created (UTC)", tooltip="meta.created, the journal's own time"),
    Column("tokens", "tokens", numeric=True, tooltip="input, output and both cache tiers"),
    Column("cost", "cost", numeric=True, tooltip="by the price table you passed"),
    Column("pending_calls", "pending", numeric=True, tooltip="calls of the turn in flight without a result"),
    Column("model", "model", priority=2),
    Column("llm_calls", "model calls", numeric=True, priority=3),
    Column("segments", "segments", numeric=True, priority=4, tooltip="process runs: the first and each resume"),
    Column("caller", "caller", priority=5),
    Column("updated", "updated (UTC)", priority=6, tooltip="the file's mtime, or the last message's time"),
    Column("task_state", "task", priority=6),
)
SORT_KEYS: tuple[str, ...] = (*(column.key for column in COLUMNS), "last_seq")

#: A run id longer than this is shortened in its middle in the table (the whole id in the tooltip).
RUN_SHOWN = 28

#: Rows shown per page unless the caller says otherwise.
DEFAULT_ROWS_PER_PAGE = 25


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of the browser. Numbers are None where the source does not know them."""

    run: str
    status: str
    created: str | None
    model: str | None
    llm_calls: int | None
    tokens: int | None
    pending_calls: int | None
    last_seq: int
    reason: str = ""
    caller: str | None = None
    segments: int | None = None
    stale_terminal: bool = False
    task_state: str | None = None
    updated: str | None = None
    cost: float | None = None
    #: The tokens by kind (for the cost); None when unknown.
    token_parts: Tokens | None = None
    #: Everything the search box looks through, lower-cased: prompt, tool names, message text...
    search_text: str = ""

    def cell(self, key: str) -> str:
        """The cell's text as shown (``—`` for unknown)."""
        value = getattr(self, key)
        if value is None or value == "":
            return "—"
        if key in ("created", "updated"):
            return str(value)[:16].replace("T", " ")
        if key == "tokens":
            return f"{value:,}"
        if key == "cost":
            return cost_text(value)
        if key == "status" and self.stale_terminal:
            return for_page(f"{value} (next turn in flight)")
        return for_page(str(value))


def _utc_text(value: Any) -> str | None:
    """A ``created`` value as UTC ISO text (the table's timestamps are UTC; a naive one is taken as UTC)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).isoformat()
    return str(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _token_parts(item: Mapping[str, Any]) -> Tokens | None:
    names = ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens")
    parts = [item.get(name) for name in names]
    if all(part is None for part in parts):
        return None
    return Tokens(*(int(part or 0) for part in parts))


def _search_text(*parts: object) -> str:
    """The lower-cased haystack of a row (None parts left out)."""
    return "\n".join(str(part) for part in parts if part is not None and part != "").lower()


def fold_search_text(result: FoldResult) -> str:
    """What the search looks through in a fold: prompt, caller, agent, generation, model, and in every message
    (the pending one too) its text, thinking, tool names, tool inputs and results: the places ``grep`` reads."""
    state = result.state
    if state is None:
        return ""
    messages: list[Message] = list(state.messages)
    if state.pending is not None:
        messages.append(state.pending.assistant)
    words: list[str] = [state.prompt, state.caller, state.agent, state.generation.name, state.fingerprint.model]
    for message in messages:
        for block in message.content or ():
            if block.text is not None:
                words.append(block.text.text)
            elif block.thinking is not None:
                words.append(block.thinking.text)
            elif block.tool_use is not None:
                words.extend((block.tool_use.name, bytes(block.tool_use.input).decode("utf-8", "replace")))
            elif block.tool_result is not None:
                words.append(block.tool_result.content)
    return _search_text(*words)


def texts_by_run(table: Any, column: str) -> dict[str, list[str]]:
    """run → the non-empty values of ``column`` of a ``messages`` or ``tool_calls`` table, in order."""
    found: dict[str, list[str]] = {}
    if table is None or column not in table.column_names:
        return found
    for run, text in zip(table.column("run").to_pylist(), table.column(column).to_pylist(), strict=True):
        if text:
            found.setdefault(str(run), []).append(str(text))
    return found


def _total_tokens(item: Mapping[str, Any]) -> int | None:
    """The runtime CLI's total: input, output and both cache tiers (thinking is already inside output)."""
    parts = [item.get(name) for name in ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens")]
    if all(part is None for part in parts):
        return None
    return sum(int(part or 0) for part in parts)


def first_errors(findings_table: Any) -> dict[str, str]:
    """run → its first error finding as text, from a ``findings`` table (or rows of that shape)."""
    rows = findings_table.to_pylist() if hasattr(findings_table, "to_pylist") else list(findings_table)
    first: dict[str, str] = {}
    for row in rows:
        run = row.get("run")
        if run is None or run in first or row.get("severity") != "error":
            continue
        where = f"seq {row['seq']}: " if row.get("seq") is not None else ""
        first[str(run)] = f"{where}{row['code']} — {row.get('message') or ''}"
    return first


def row_of_fold(run: str, result: FoldResult, status: str | None = None) -> RunRow:
    """A row from a run's fold (``status`` overrides the fold's, e.g. with a listing's own)."""
    state = result.state
    shown = status or result.status
    why = Why.of(result, shown)
    return RunRow(
        run=run,
        status=shown,
        created=None,  # the fold carries no creation time; the runs table does
        model=state.fingerprint.model if state is not None else None,
        llm_calls=state.counters.llm_calls if state is not None else None,
        tokens=state.counters.total_tokens if state is not None else None,
        pending_calls=len(result.pending_calls) if state is not None else None,
        last_seq=result.last_seq,
        reason=why.detail() or why.note() or shown,
        caller=(state.caller or None) if state is not None else None,
        segments=len(result.segments) if state is not None else None,
        stale_terminal=result.stale_terminal,
        token_parts=_fold_tokens(result),
        search_text=_search_text(run, shown, fold_search_text(result)),
    )


def _fold_tokens(result: FoldResult) -> Tokens | None:
    if result.state is None:
        return None
    c = result.state.counters
    return Tokens(c.in_tokens, c.out_tokens, c.cache_read_tokens, c.cache_create_tokens, c.thinking_tokens)


def with_costs(rows: list[RunRow], prices: Prices | None) -> list[RunRow]:
    """The rows with their cost by the user's price table (None where the table has no row for the model)."""
    if prices is None:
        return rows
    return [
        replace(row, cost=row.token_parts.cost(prices, row.model) if row.token_parts is not None else None)
        for row in rows
    ]


@dataclass(slots=True)
class RunBrowserModel:
    """All rows, plus the current filter, sort and page. ``visible()`` is every row that passes the filter, in
    order; ``page_rows()`` the ones on the current page."""

    rows: list[RunRow]
    text_filter: str = ""
    statuses: frozenset[str] = field(default_factory=frozenset)  # empty: every status
    # Newest first: a post-mortem starts from what just happened.
    sort_key: str = "created"
    descending: bool = True
    page: int = 0
    page_size: int = DEFAULT_ROWS_PER_PAGE
    prices: Prices | None = None

    @classmethod
    def from_folds(cls, folds: Mapping[str, FoldResult], prices: Prices | None = None) -> RunBrowserModel:
        """From folds alone (run → lenient fold), each row with the fold's status."""
        prices = check_prices(prices)
        return cls(with_costs([row_of_fold(run, result) for run, result in folds.items()], prices), prices=prices)

    @classmethod
    def from_runs_table(
        cls,
        table: Any,
        findings: Any = None,
        messages: Any = None,
        tool_calls: Any = None,
        prices: Prices | None = None,
    ) -> RunBrowserModel:
        """From the ``runs`` Arrow table of ``journaltools.tables`` (columns of INTERFACES.md), and optionally its
        ``findings`` table, which names the first error of each ``invalid`` run, and its ``messages`` and
        ``tool_calls`` tables, whose text and tool names the search looks through. Columns a table lacks are
        unknown (shown ``—``), so a narrower table (a listing's, say) still browses."""
        prices = check_prices(prices)
        problems = first_errors(findings) if findings is not None else {}
        texts = texts_by_run(messages, "text")
        tools = texts_by_run(tool_calls, "name")
        inputs = texts_by_run(tool_calls, "input")
        rows = []
        for item in table.to_pylist():
            status = str(item["status"])
            pending = _int_or_none(item.get("pending_calls"))
            run = str(item["run"])
            created, updated = _utc_text(item.get("created")), _utc_text(item.get("updated"))
            rows.append(
                RunRow(
                    run=str(item["run"]),
                    status=status,
                    created=created,
                    model=item.get("model"),
                    llm_calls=_int_or_none(item.get("llm_calls")),
                    tokens=_total_tokens(item),
                    pending_calls=pending,
                    last_seq=int(item.get("last_seq") or 0),
                    reason=reason_text(
                        status,
                        terminal_message=item.get("terminal_message"),
                        last_stop_reason=item.get("last_stop_reason"),
                        pending_calls=pending or 0,
                        open_deferrals=int(item.get("open_deferrals") or 0),
                        stale_terminal=bool(item.get("stale_terminal")),
                        problem=problems.get(str(item["run"])),
                    ),
                    caller=item.get("caller") or None,
                    segments=_int_or_none(item.get("segments")),
                    stale_terminal=bool(item.get("stale_terminal")),
                    task_state=item.get("task_state"),
                    updated=updated,
                    token_parts=_token_parts(item),
                    search_text=_search_text(
                        run,
                        status,
                        created,
                        updated,
                        item.get("model"),
                        item.get("agent"),
                        item.get("generation"),
                        item.get("caller"),
                        item.get("prompt"),
                        item.get("terminal_message"),
                        *tools.get(run, ()),
                        *inputs.get(run, ()),
                        *texts.get(run, ()),
                    ),
                )
            )
        return cls(with_costs(rows, prices), prices=prices)

    @classmethod
    def from_tables(cls, tables: Tables, prices: Prices | None = None) -> RunBrowserModel:
        """From a ``journaltools.tables.Tables`` (its ``runs`` and ``findings``; ``messages`` and ``tool_calls``
        for the search)."""
        return cls.from_runs_table(tables.runs, tables.findings, tables.messages, tables.tool_calls, prices)

    # -- what is shown ---------------------------------------------------------------------------

    @property
    def columns(self) -> list[Column]:
        """The columns shown: ``task`` only when some row has a task state, ``cost`` only with a price table,
        ``updated`` only when some row knows it."""
        has = {
            "task_state": any(row.task_state is not None for row in self.rows),
            "cost": self.prices is not None,
            "updated": any(row.updated is not None for row in self.rows),
        }
        return [column for column in COLUMNS if has.get(column.key, True)]

    @property
    def status_choices(self) -> list[str]:
        """The statuses present, in PROTOCOL 5's order (an unknown terminal reason after them)."""
        present = {row.status for row in self.rows}
        return [s for s in STATUSES if s in present] + sorted(present - set(STATUSES))

    def matches(self, row: RunRow) -> bool:
        """Whether ``row`` passes the search: every word of it appears in the run id, status, reason, dates,
        model, caller, prompt, tool names or message text."""
        words = self.text_filter.lower().split()
        if not words:
            return True
        haystack = row.search_text or _search_text(row.run, row.status, row.model, row.caller)
        return all(word in haystack or word in row.reason.lower() for word in words)

    def status_counts(self) -> dict[str, int]:
        """Runs per status among those the search leaves (the chips' counts follow the search box)."""
        counts = Counter(row.status for row in self.rows if self.matches(row))
        return {status: counts[status] for status in sorted(counts)}

    def visible(self) -> list[RunRow]:
        kept = [row for row in self.rows if (not self.statuses or row.status in self.statuses) and self.matches(row)]
        key = self.sort_key if self.sort_key in SORT_KEYS else "run"
        # Unknown values (None) always sort last, whichever the direction.
        known = [row for row in kept if getattr(row, key) is not None]
        unknown = [row for row in kept if getattr(row, key) is None]
        if key == "status":  # by what needs a person first (invalid, error, open, ...), not A to Z
            known.sort(key=lambda row: (attention_rank(row.status), row.run), reverse=self.descending)
        else:
            known.sort(key=lambda row: (getattr(row, key), row.run), reverse=self.descending)
        return known + sorted(unknown, key=lambda row: row.run)

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.visible()) // self.page_size))

    def page_rows(self) -> list[RunRow]:
        """The rows of the current page (the page is kept within range)."""
        visible = self.visible()
        last_page = max(0, -(-len(visible) // self.page_size) - 1)
        start = min(max(0, self.page), last_page) * self.page_size
        return visible[start : start + self.page_size]

    def page_text(self) -> str:
        """``runs 26-50 of 10,000`` (``of 14 (10,000 in all)`` when a filter hides some)."""
        total = len(self.visible())
        if total == 0:
            return f"no runs match (of {len(self.rows):,})"
        page = min(max(0, self.page), self.page_count - 1)
        first = page * self.page_size + 1
        last = min(total, first + self.page_size - 1)
        hidden = f" ({len(self.rows):,} in all)" if total != len(self.rows) else ""
        return f"runs {first:,}-{last:,} of {total:,}{hidden}"

    # -- changes (each returns a new model) --------------------------------------------------------

    def with_filter(self, text: str = "", statuses: Iterable[str] = ()) -> RunBrowserModel:
        return replace(self, text_filter=text, statuses=frozenset(statuses), page=0)

    def sorted_by(self, key: str, descending: bool = False) -> RunBrowserModel:
        if key not in SORT_KEYS:
            raise ValueError(f"cannot sort by {key!r}; choose one of {', '.join(SORT_KEYS)}")
        return replace(self, sort_key=key, descending=descending, page=0)

    def toggle_sort(self, key: str) -> RunBrowserModel:
        """A header click: sort by ``key`` (dates and numbers biggest first, text A to Z), or flip the direction
        when already sorted by it."""
        if key == self.sort_key:
            return self.sorted_by(key, not self.descending)
        column = next((c for c in COLUMNS if c.key == key), None)
        biggest_first = key in ("created", "updated") or (column is not None and column.numeric)
        return self.sorted_by(key, biggest_first)

    def with_page(self, page: int) -> RunBrowserModel:
        return replace(self, page=min(max(0, page), self.page_count - 1))

    def page_of(self, run: str) -> int | None:
        """The page that shows ``run`` under the current filter and sort, or None when it is filtered out."""
        for index, row in enumerate(self.visible()):
            if row.run == run:
                return index // self.page_size
        return None

    def neighbour(self, run: str, step: int) -> str | None:
        """The run ``step`` rows after ``run`` (before, when negative) in the visible order."""
        order = [row.run for row in self.visible()]
        if run not in order:
            return None
        index = order.index(run) + step
        return order[index] if 0 <= index < len(order) else None

    def header_label(self, column: Column) -> str:
        arrow = (" ▼" if self.descending else " ▲") if column.key == self.sort_key else ""
        return column.label + arrow

    # -- HTML (escaped): the current page as a plain table, for static output -----------------------

    def to_html(self, selected: str | None = None) -> str:
        columns = self.columns
        head = "".join(
            f'<th data-sort="{esc(column.key)}" aria-sort="'
            f'{("descending" if self.descending else "ascending") if column.key == self.sort_key else "none"}">'
            f"{esc(self.header_label(column))}</th>"
            for column in columns
        )
        body = []
        for row in self.page_rows():
            cells = []
            for column in columns:
                if column.key == "run":
                    cells.append(f"<td>{id_html(row.run)}</td>")
                elif column.key == "status":
                    cells.append(f"<td>{status_badge(row.status)}</td>")
                else:
                    cells.append(f"<td>{esc(row.cell(column.key))}</td>")
            marker = ' class="jt-selected"' if row.run == selected else ""
            body.append(f'<tr data-run="{esc(row.run)}"{marker}>{"".join(cells)}</tr>')
        count = f'<p class="jt-muted">{esc(self.page_text())}</p>'
        return themed(f'{count}<table class="jt-table jt-runs"><tr>{head}</tr>{"".join(body)}</table>')


def load_source(
    url: str,
    progress: bool | None = None,
    task_store: str | os.PathLike[str] | TaskStore | None = None,
) -> tuple[RunBrowserModel, RunLoader]:
    """Open a source, load its ``runs`` table leniently (every run, broken ones ``invalid``; a progress bar in
    a notebook), and give the model plus a loader that reads and folds a run when it is opened.

    ``task_store`` (a store, or its URL as ``load`` takes it) fills the ``task`` column with the state of the task
    each run's meta names."""
    from journaltools.sources.registry import open_source
    from journaltools.tables import load
    from journaltools.widgets._source import RunFolds

    backend = open_source(url)
    try:
        tables = load(backend, strict=False, records=False, progress=progress, task_store=task_store)
    except BaseException:
        backend.close()
        raise
    return RunBrowserModel.from_tables(tables), RunFolds(backend, owned=True)


#: A report up to this size also gets a download link (a ``data:`` URL, which JupyterLab serves offline); the link
#: travels in the widget's state, so a bigger report is only written to its file.
REPORT_LINK_BYTES = 2_000_000

#: How many other runs "compare with…" offers (the search narrows the list to reach the rest).
COMPARE_CHOICES = 1_000


def report_file_name(run: str) -> str:
    """The report's file name for ``run``: ``report-<run>.html``, any character a file name should not hold made
    ``_`` (a run id is the journal's own text)."""
    return "report-" + re.sub(r"[^A-Za-z0-9._-]", "_", run)[:150] + ".html"


def report_written_html(made: RunReport) -> str:
    """Where the report went, its size, what its size bound left out, and a download link when it is small."""
    where = f"report written to <code>{esc(made.path)}</code>: {esc(made.contents())}"
    if made.path is not None and made.size <= REPORT_LINK_BYTES:
        data = base64.b64encode(made.html.encode("utf-8", "replace")).decode("ascii")
        where += (
            f' · <a class="jt-report-download" download="{esc(made.path.name)}" '
            f'href="data:text/html;base64,{data}">download it</a>'
        )
    else:
        where += " · open it from the file browser (too big for a download link)"
    return f'<div class="jt-report-note">{where}</div>'


#: Escape closes the opened run when the keyboard focus is inside the browser: one fixed handler (no journal text
#: in it), installed once per page by an image that cannot load (an HTML widget runs no <script>), which clicks
#: the opened pane's close button.
ESCAPE_CLOSES = (
    '<img alt="" hidden src="data:," onerror="if (!window.__jtEscapeCloses) { window.__jtEscapeCloses = true; '
    "document.addEventListener('keydown', function (event) { if (event.key !== 'Escape') return; "
    "var inside = event.target &amp;&amp; event.target.closest ? event.target.closest('.jt-browser') : null; "
    "var close = inside ? inside.querySelector('.jt-detail .jt-close') : null; "
    'if (close &amp;&amp; close.offsetParent) { event.stopPropagation(); close.click(); } }, true); }">'
)

#: The browser's own styles: buttons made to look and behave like the cells of a table. Column widths fit
#: their label plus the sort arrow; the container queries hide columns by priority as the notebook narrows.
BROWSER_STYLE = """<style>
.jt-browser { max-width: 100%; container-type: inline-size; container-name: jt-browser; }
.jt-browser .jt-toolbar { align-items: center; gap: 6px; flex-wrap: wrap; overflow: visible; }
.jt-browser .jt-chip.jupyter-button { height: 24px; line-height: 22px; border-radius: 12px; padding: 0 10px;
    font-size: 12px; color: var(--jt-fg); background: transparent; border: 1px solid var(--jt-border-strong);
    width: auto; margin: 0 2px; }
.jt-browser .jt-chip.jupyter-button.mod-active { background: var(--jt-surface-2); border-color: var(--jt-brand);
    box-shadow: inset 0 0 0 1px var(--jt-brand); }
.jt-browser .jt-rows { overflow-x: auto; overflow-y: visible; }
.jt-browser .jt-thead, .jt-browser .jt-tr { min-width: min-content; width: 100%; overflow: visible;
    border-bottom: 1px solid var(--jt-border); align-items: stretch; }
.jt-browser .jt-thead { background: var(--jt-surface-2); border-bottom: 1px solid var(--jt-border-strong); }
.jt-browser .jt-tr { cursor: pointer; }
.jt-browser .jt-tr:hover { background: rgba(33, 150, 243, 0.08);
    background: color-mix(in srgb, var(--jt-brand) 9%, transparent); }
.jt-browser .jt-tr.jt-selected { background: rgba(33, 150, 243, 0.16);
    background: color-mix(in srgb, var(--jt-brand) 18%, transparent); box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser .jupyter-button.jt-td, .jt-browser .jupyter-button.jt-th { background: transparent; color: var(--jt-fg);
    text-align: left; padding: 0 8px; margin: 0; height: 32px; line-height: 32px; border-radius: 0;
    box-shadow: none; font-size: 12px; min-width: 0; width: auto; outline-offset: -2px; }
.jt-browser .jupyter-button.jt-td:focus:not(:focus-visible),
.jt-browser .jupyter-button.jt-th:focus:not(:focus-visible) { outline: none; box-shadow: none; }
.jt-browser .jupyter-button.jt-th { font-weight: 700; text-overflow: clip; }
.jt-browser .jupyter-button.jt-th:hover { text-decoration: underline; }
.jt-browser .jupyter-button.jt-td.jt-col-run { font-family: var(--jt-mono); }
.jt-browser .jupyter-button.jt-num { text-align: right; font-variant-numeric: tabular-nums; }
/* The run id stays on screen when the table scrolls sideways (after sorting by a far column, say). */
.jt-browser .jupyter-button.jt-col-run { position: sticky; left: 0; z-index: 2; background: var(--jt-surface);
    box-shadow: 1px 0 0 var(--jt-border); }
.jt-browser .jt-thead .jupyter-button.jt-col-run { background: var(--jt-surface-2); }
.jt-browser .jt-tr.jt-selected .jupyter-button.jt-col-run { background: rgba(33, 150, 243, 0.3);
    background: color-mix(in srgb, var(--jt-brand) 18%, var(--jt-surface));
    box-shadow: inset 3px 0 0 var(--jt-brand), 1px 0 0 var(--jt-border); }
/* The reason wraps to two lines rather than being cut: its start is what differs between runs. */
.jt-browser .jupyter-button.jt-td.jt-col-reason { white-space: normal; line-height: 15px; padding-top: 1px;
    padding-bottom: 1px; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2;
    line-clamp: 2; overflow: hidden; text-overflow: ellipsis; overflow-wrap: anywhere; align-self: center;
    height: auto; max-height: 32px; }
.jt-browser .jt-col-run { flex: 0 0 18.5em; }
.jt-browser .jt-col-status { flex: 0 0 10em; }
.jt-browser .jt-col-reason { flex: 1 1 16em; }
.jt-browser .jt-col-created { flex: 0 0 11em; }
.jt-browser .jt-col-tokens { flex: 0 0 7.5em; }
.jt-browser .jt-col-cost { flex: 0 0 6.5em; }
.jt-browser .jt-col-pending_calls { flex: 0 0 7.5em; }
.jt-browser .jt-col-model { flex: 0 0 11em; }
.jt-browser .jt-col-llm_calls { flex: 0 0 9em; }
.jt-browser .jt-col-segments { flex: 0 0 8em; }
.jt-browser .jt-col-caller { flex: 0 0 9em; }
.jt-browser .jt-col-updated { flex: 0 0 11em; }
.jt-browser .jt-col-task_state { flex: 0 0 7em; }
.jt-browser .jt-col-reason { min-width: 14em; }
/* Beats the cells' min-width: 0 (more specific): with "all columns" the reason keeps a readable width instead of
   being squeezed to a sliver, and every row (and the header) is as wide as the next, so they stay aligned. */
.jt-browser .jupyter-button.jt-col-reason { min-width: 16em; }
.jt-browser .jupyter-button:focus-visible { outline: 2px solid var(--jt-brand); outline-offset: -2px;
    box-shadow: none; }
.jt-browser .jt-tr:focus-within { box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser .jupyter-button.jt-td.jt-col-status::before { content: ""; display: inline-block; width: 8px;
    height: 8px; border-radius: 50%; margin-right: 6px; background: var(--jt-tone); }
.jt-browser .jt-report-note { font-size: 12px; margin: 2px 0 4px; overflow-wrap: anywhere; }
.jt-browser .jt-report-note a { color: var(--jt-link); }
.jt-browser .jt-pager { align-items: center; gap: 6px; overflow: visible; flex-wrap: wrap; }
.jt-browser .jt-pager .jupyter-button { width: auto; height: 24px; line-height: 24px; font-size: 12px; }
.jt-browser .jt-detail { border: 2px solid var(--jt-brand); border-radius: 4px; margin: 6px 0; padding: 4px 8px;
    overflow: visible; }
.jt-browser .jt-detail-bar { align-items: center; gap: 6px; overflow: visible; flex-wrap: wrap; }
.jt-browser .jt-detail-bar .jupyter-button { width: auto; height: 24px; line-height: 24px; font-size: 12px; }
@container jt-browser (max-width: 1392px) { .jt-browser:not(.jt-all-columns) .jt-prio-6 { display: none; } }
@container jt-browser (max-width: 1257px) { .jt-browser:not(.jt-all-columns) .jt-prio-5 { display: none; } }
@container jt-browser (max-width: 1142px) { .jt-browser:not(.jt-all-columns) .jt-prio-4 { display: none; } }
@container jt-browser (max-width: 1047px) { .jt-browser:not(.jt-all-columns) .jt-prio-3 { display: none; } }
@container jt-browser (max-width: 952px) { .jt-browser:not(.jt-all-columns) .jt-prio-2 { display: none; } }
</style>"""


class RunBrowser:
    """The view: a search box, status chips, the opened run's pane, the table (click a header to sort, a row to
    open) and a pager. The pane sits above the table with previous/next to step through the runs in table
    order; opening a run focuses its bar, so the browser scrolls the run's header into view."""

    def __init__(
        self,
        model: RunBrowserModel,
        loader: RunLoader | None = None,
        rows_per_page: int | None = None,
        conversation_page_size: int = 50,
        prices: Prices | None = None,
        report_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        import ipywidgets as w

        if rows_per_page is not None:
            model = replace(model, page_size=max(1, rows_per_page), page=0)
        if prices is not None:
            prices = check_prices(prices)
            model = replace(model, rows=with_costs(model.rows, prices), prices=prices)
        self.model = model
        self.loader = loader
        self.conversation_page_size = conversation_page_size
        self.selected: str | None = None
        self.columns = model.columns
        self.conversation: Any = None
        self._conversation_view: Any = None
        self._shown_once = False

        self.filter_box = w.Text(
            placeholder="search runs, prompts, tools, messages, dates…",
            layout=w.Layout(width="24em"),
            continuous_update=True,
        )
        self.filter_box.observe(self._on_filter, names="value")
        self.chips = {status: w.ToggleButton(value=False) for status in model.status_choices}
        for status, chip in self.chips.items():
            chip.add_class("jt-chip")
            chip.tooltip = f"show only {status} runs (several may be chosen)"
            chip.observe(self._on_filter, names="value")
        self.all_columns = w.ToggleButton(value=False, description="all columns", tooltip="show every column")
        self.all_columns.add_class("jt-chip")
        self.all_columns.observe(self._on_all_columns, names="value")
        self.summary = w.HTML()
        toolbar = w.HBox([self.filter_box, *self.chips.values(), self.all_columns, self.summary])
        toolbar.add_class("jt-toolbar")

        self.headers = [self._cell_button("jt-th", column) for column in self.columns]
        for column, button in zip(self.columns, self.headers, strict=True):
            button.on_click(lambda _button, key=column.key: self.sort_by_header(key))
        head = w.HBox(self.headers)
        head.add_class("jt-thead")

        self.row_widgets: list[Any] = []
        self.row_cells: list[list[Any]] = []
        self._row_runs: list[str | None] = []
        for index in range(model.page_size):
            cells = [self._cell_button("jt-td", column) for column in self.columns]
            for cell in cells:
                cell.on_click(lambda _button, i=index: self._on_row_click(i))
                # One tab stop per row (its run id; Enter opens it): a row of seven stops made the pager 163
                # presses away from the search box.
                cell.tabbable = cell is cells[0]
            row = w.HBox(cells)
            row.add_class("jt-tr")
            self.row_widgets.append(row)
            self.row_cells.append(cells)
            self._row_runs.append(None)

        self.previous_page = w.Button(description="← previous", tooltip="previous page")
        self.next_page = w.Button(description="next →", tooltip="next page")
        self.previous_page.on_click(lambda _button: self.go_to_page(self.model.page - 1))
        self.next_page.on_click(lambda _button: self.go_to_page(self.model.page + 1))
        self.page_label = w.Label()
        pager = w.HBox([self.previous_page, self.page_label, self.next_page])
        pager.add_class("jt-pager")

        # The pane's bar is made once and kept: a focus message reaches a view that is already on the page
        # (one sent to a widget made in the same step could arrive before its view exists).
        self.previous_run = w.Button(description="← previous run")
        self.next_run = w.Button(description="next run →")
        self.close_button = w.Button(description="close", tooltip="close this run and go back to the list")
        self.previous_run.on_click(lambda _button: self._step(-1))
        self.next_run.on_click(lambda _button: self._step(1))
        self.close_button.on_click(lambda _button: self.select(None))
        self.close_button.add_class("jt-close")
        keys = w.HTML(ESCAPE_CLOSES)
        keys.layout.display = "none"
        self.detail_title = w.HTML()
        # The opened run's report (``journaltools report``), written next to the notebook unless ``report_dir`` says
        # where, and its comparison with another run of the list (``RunDiff``), which reads both journals again.
        self.report_dir = report_dir
        self.last_report: RunReport | None = None
        self.comparison: Any = None
        self.report_button = w.Button(
            description="report", tooltip="write this run's report: one self-contained HTML file to read offline"
        )
        self.report_button.on_click(lambda _button: self.write_report())
        self.compare_button = w.Button(description="compare with…", tooltip="compare this run with another run")
        self.compare_button.on_click(lambda _button: self._toggle_compare())
        if not callable(getattr(loader, "folded", None)):
            self.compare_button.disabled = True
            self.compare_button.tooltip = "a comparison reads both journals: open the browser on a source"
        self.report_note = w.HTML()
        self.compare_choice = w.Dropdown(options=[], description="with", layout=w.Layout(width="30em"))
        self.compare_go = w.Button(description="compare", tooltip="compare the opened run (A) with this one (B)")
        self.compare_go.on_click(lambda _button: self.compare_with(self.compare_choice.value))
        self.compare_close = w.Button(description="close the comparison", layout=w.Layout(width="auto"))
        self.compare_close.on_click(lambda _button: self._close_comparison())
        self.compare_bar = w.HBox([self.compare_choice, self.compare_go])
        self.compare_bar.layout.display = "none"
        self.comparison_box = w.VBox()
        bar = w.HBox(
            [
                self.close_button,
                self.previous_run,
                self.next_run,
                self.report_button,
                self.compare_button,
                self.detail_title,
            ]
        )
        bar.add_class("jt-detail-bar")
        self.detail_body = w.VBox()
        self.detail = w.VBox([bar, self.report_note, self.compare_bar, self.comparison_box, self.detail_body])
        self.detail.add_class("jt-detail")
        self.detail.layout.display = "none"
        style = w.HTML(STYLE + BROWSER_STYLE)
        style.layout.display = "none"  # a <style> applies wherever it sits in the page
        table = w.VBox([head, *self.row_widgets])
        table.add_class("jt-rows")  # header and rows scroll sideways together when the notebook is narrow
        # The pager sits right under the toolbar, before the opened run and the rows, so the keyboard reaches it
        # in a few presses from the search box (and it stays put above a long opened run).
        self.widget = w.VBox([style, toolbar, pager, self.detail, table, keys])
        self.widget.add_class("jt")
        self.widget.add_class("jt-browser")
        self._render()

    @staticmethod
    def _cell_button(kind: str, column: Column) -> Any:
        import ipywidgets as w

        button = w.Button()
        button._dom_classes = RunBrowser._cell_classes(kind, column)
        return button

    @staticmethod
    def _cell_classes(kind: str, column: Column, *extra: str) -> tuple[str, ...]:
        numeric = ("jt-num",) if column.numeric else ()
        return (kind, f"jt-col-{column.key}", f"jt-prio-{column.priority}", *numeric, *extra)

    @classmethod
    def from_source(
        cls,
        url: str | None = None,
        progress: bool | None = None,
        rows_per_page: int | None = None,
        task_store: str | os.PathLike[str] | TaskStore | None = None,
        prices: Prices | None = None,
        report_dir: str | os.PathLike[str] | None = None,
    ) -> RunBrowser:
        """Load a source's runs (a progress bar in a notebook) and browse them; no ``url`` reads the runtime's
        own directory, as ``journaltools ls`` does (``journaltools.default_source()``); ``task_store`` as for
        ``load_source``; ``prices`` (model → price per million tokens of ``input``, ``output``, ``cache_read``,
        ``cache_create``: your own table, none is bundled) adds a cost column; ``report_dir`` is where the opened
        run's **report** button writes its file (default: the notebook's own directory)."""
        if url is None:
            from journaltools.sources.registry import default_source

            url = str(default_source())
        model, loader = load_source(url, progress=progress, task_store=task_store)
        return cls(model, loader, rows_per_page=rows_per_page, prices=prices, report_dir=report_dir)

    @classmethod
    def from_tables(cls, tables: Any, loader: RunLoader | None = None, **options: Any) -> RunBrowser:
        return cls(RunBrowserModel.from_tables(tables), loader, **options)

    # -- events ------------------------------------------------------------------------------------

    def _on_filter(self, _change: object) -> None:
        chosen = [status for status, chip in self.chips.items() if chip.value]
        self.model = self.model.with_filter(self.filter_box.value, chosen)
        self._render()

    def _on_all_columns(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.widget.add_class("jt-all-columns")
        else:
            self.widget.remove_class("jt-all-columns")

    def _on_row_click(self, index: int) -> None:
        run = self._row_runs[index]
        if run is not None:
            self.select(run)

    def _step(self, step: int) -> None:
        if self.selected is not None:
            target = self.model.neighbour(self.selected, step)
            if target is not None:
                self.select(target)

    def sort_by_header(self, key: str) -> None:
        """What a click on a column header does: sort by it, or flip the direction."""
        self.model = self.model.toggle_sort(key)
        if self.selected is not None:
            self.model = self.model.with_page(self.model.page_of(self.selected) or 0)
        self._render()

    def go_to_page(self, page: int) -> None:
        self.model = self.model.with_page(page)
        self._render()

    # -- rendering ---------------------------------------------------------------------------------

    def _render(self) -> None:
        model = self.model
        for column, button in zip(self.columns, self.headers, strict=True):
            button.description = model.header_label(column)
            button.tooltip = f"sort by {column.label}" + (f" ({column.tooltip})" if column.tooltip else "")
        counts = model.status_counts()
        for status, chip in self.chips.items():
            chip.description = f"{status} {counts.get(status, 0):,}"
        rows = model.page_rows()
        for index, (row_widget, cells) in enumerate(zip(self.row_widgets, self.row_cells, strict=True)):
            row = rows[index] if index < len(rows) else None
            self._row_runs[index] = row.run if row is not None else None
            row_widget.layout.display = "" if row is not None else "none"
            if row is None:
                continue
            row_widget._dom_classes = ("jt-tr", "jt-selected") if row.run == self.selected else ("jt-tr",)
            for column, cell in zip(self.columns, cells, strict=True):
                text = row.cell(column.key)
                # A long run id keeps both ends (ids share prefixes); the whole id is in the tooltip.
                cell.description = shorten_middle(text, RUN_SHOWN) if column.key == "run" else text
                cell.tooltip = f"{row.run}: {text}" if column.key == "reason" else text
                if column.key == "status":
                    tone = STATUS_TONES.get(row.status, "muted")
                    cell._dom_classes = self._cell_classes(
                        "jt-td", column, f"jt-tone-{tone}", f"jt-status-{status_class(row.status)}"
                    )
        self.page_label.value = f"{model.page_text()} · page {min(model.page, model.page_count - 1) + 1} of " + (
            f"{model.page_count:,}"
        )
        self.previous_page.disabled = model.page <= 0
        self.next_page.disabled = model.page >= model.page_count - 1
        order = "newest first" if (model.sort_key, model.descending) == ("created", True) else ""
        self.summary.value = f'<span class="jt-muted">{len(model.rows):,} runs{", " + order if order else ""}</span>'

    def select(self, run: str | None) -> None:
        """Open ``run`` in the pane above the table (``None`` closes it); its row is marked and its page shown,
        and the pane's bar takes the focus so the browser brings the run's header into view."""
        from journaltools.exports.conversation import ConversationModel
        from journaltools.widgets.conversation import ConversationView

        closed, self.selected = self.selected, run
        self.report_note.value = ""
        self._close_comparison()
        self.compare_bar.layout.display = "none"
        if run is None:
            self.detail_body.children = ()
            self.detail.layout.display = "none"
            self.conversation = None
            self._render()
            # The keyboard goes back to the row of the run just closed (or the search box), not to the page top.
            if closed in self._row_runs:
                self.row_cells[self._row_runs.index(closed)][0].focus()
            else:
                self.filter_box.focus()
            return
        page = self.model.page_of(run)
        if page is not None and page != self.model.page:
            self.model = self.model.with_page(page)
        self._render()
        row = next((row for row in self.model.rows if row.run == run), None)
        status = row.status if row is not None else None
        result = self.loader(run) if self.loader is not None else None
        facts_of = getattr(self.loader, "facts", None)
        facts = facts_of(run) if callable(facts_of) and result is not None else None
        if result is None:
            import ipywidgets as w

            body: Any = w.HTML(
                themed(f"<p>No conversation for <code>{esc(run)}</code>: the source has no readable journal.</p>")
            )
        else:
            model = ConversationModel.from_fold(
                result, page_size=self.conversation_page_size, status=status, facts=facts, prices=self.model.prices
            )
            # One view, reused: its widgets are already on the page when the next run opens, so the focus
            # message below reaches them (a new widget's view may not exist yet when it arrives).
            if self._conversation_view is None:
                self._conversation_view = ConversationView(model)
            else:
                self._conversation_view.show_model(model)
            body = self._conversation_view.widget
        self.conversation = self._conversation_view if result is not None else None
        previous_run, next_run = self.model.neighbour(run, -1), self.model.neighbour(run, 1)
        self.previous_run.disabled, self.previous_run.tooltip = previous_run is None, previous_run or ""
        self.next_run.disabled, self.next_run.tooltip = next_run is None, next_run or ""
        # A long id is shortened here too, with its copy button (the header below shows it whole).
        self.detail_title.value = themed(f"<b>opened</b> {id_html(run, 40)}")
        self.detail_body.children = (body,)
        self.detail.layout.display = ""
        if self.conversation is not None and self._shown_once:
            self.conversation.focus()
        else:
            self.close_button.focus()
        self._shown_once = self.conversation is not None

    # -- the opened run's report and comparison ------------------------------------------------------------------

    def write_report(self) -> Path | None:
        """Write the opened run's report (``journaltools report``: one self-contained HTML file) into ``report_dir``,
        by default the notebook's own directory, and say where, with a download link when it is small. None when
        no run is open or it could not be written (said in the pane, in one line)."""
        from journaltools.errors import JournalError
        from journaltools.exports.report import render_report, report_of_read, write_report

        run = self.selected
        if run is None:
            return None
        read_of = getattr(self.loader, "read", None)
        try:
            if callable(read_of):
                # The journal as stored, with its records' times: the report the command line writes.
                made = report_of_read(read_of(run), source=self._source_url(), prices=self.model.prices)
            else:
                result = self.loader(run) if self.loader is not None else None
                if result is None:
                    self.report_note.value = themed(f"<p>No journal to report for <code>{esc(run)}</code>.</p>")
                    return None
                facts_of = getattr(self.loader, "facts", None)
                facts = facts_of(run) if callable(facts_of) else None
                made = render_report(result, facts, prices=self.model.prices)
            folder = Path(self.report_dir) if self.report_dir is not None else Path.cwd()
            written = write_report(made, folder / report_file_name(run))
        except (JournalError, OSError) as error:
            self.report_note.value = themed(f'<div class="jt-report-note">report not written: {esc(error)}</div>')
            return None
        self.last_report = written
        self.report_note.value = themed(report_written_html(written))
        return written.path

    def _source_url(self) -> str:
        """The URL of the source the loader reads (``""`` for a browser of folds alone)."""
        return str(getattr(getattr(self.loader, "backend", None), "url", ""))

    def _toggle_compare(self) -> None:
        showing = self.compare_bar.layout.display != "none"
        self.compare_bar.layout.display = "none" if showing else ""
        if showing or self.selected is None:
            return
        others = [row for row in self.model.visible() if row.run != self.selected][:COMPARE_CHOICES]
        self.compare_choice.options = [
            (f"{shorten_middle(row.run, RUN_SHOWN)} · {row.status}", row.run) for row in others
        ]
        self.compare_choice.value = others[0].run if others else None

    def compare_with(self, other: str | None) -> Any:
        """Open the comparison (``RunDiff``) of the opened run (A) with ``other`` (B) under the pane's bar, both read
        again from the source; the comparison, or None when it cannot be made (said in the pane)."""
        import ipywidgets as w

        from journaltools.analyses.rundiff import diff_sides, side_of
        from journaltools.errors import JournalError
        from journaltools.widgets.rundiff import RunDiff, RunDiffModel

        run = self.selected
        folded_of = getattr(self.loader, "folded", None)
        if run is None or other is None or not callable(folded_of):
            return None
        source = self._source_url()
        try:
            comparison = diff_sides(side_of(folded_of(run), source), side_of(folded_of(other), source))
        except JournalError as error:
            self.comparison_box.children = (w.HTML(themed(f"<p>No comparison: {esc(error)}</p>")),)
            return None
        self.comparison = RunDiff(RunDiffModel(comparison))
        title = w.HTML(themed(f"<b>A</b> {id_html(run)} compared with <b>B</b> {id_html(other)}"))
        self.comparison_box.children = (w.HBox([title, self.compare_close]), self.comparison.widget)
        return self.comparison

    def _close_comparison(self) -> None:
        self.comparison = None
        self.comparison_box.children = ()

    def close(self) -> None:
        """Close the source the loader reads from, when the browser opened it."""
        closer = getattr(self.loader, "close", None)
        if callable(closer):
            closer()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
