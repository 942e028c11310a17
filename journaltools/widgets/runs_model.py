"""The run browser's model, pure: one ``RunRow`` per run (from a ``Tables`` or from folds), the columns and their
priorities, the search text each row answers to, the filter, the sort and the pages. It opens no source;
``load_source`` reads one into a model for the view (``widgets.runs.RunBrowser``).

The search box takes plain words or a filter expression over the runs table's columns (``status == "error" and
model ~ "sonnet"``): the one filter of ``ls --where`` and ``load(where=)`` (``tables.where``), evaluated by the same
compiled expression over the rows' runs-table values (``runs_search``: ``SearchQuery``, docs/filter.md)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from journaltools.errors import InvalidFilter
from journaltools.exports.facts import Prices, Tokens, check_prices
from journaltools.exports.html import esc, id_html, status_badge, themed
from journaltools.folding import STATUSES, FoldResult
from journaltools.folding.phrases import (
    Ending,
    attention_rank,
    ending_of,
    ending_of_row,
    problem_text,
    why_of,
)
from journaltools.folding.texts import searchable_words
from journaltools.protocol.generations import generation_of_version
from journaltools.tables.costs import total_tokens
from journaltools.widgets.runs_row import (
    COLUMNS,
    DEFAULT_ROWS_PER_PAGE,
    SORT_KEYS,
    Column,
    RunRow,
    with_writers,
)
from journaltools.widgets.runs_search import SearchQuery, verdicts_by_row

if TYPE_CHECKING:
    from journaltools.stores.tasks import TaskStore
    from journaltools.tables import Tables
    from journaltools.tables.where import RunFilter


#: run id → its lenient fold (None when the source has no such run), used to open a conversation.
RunLoader = Callable[[str], FoldResult | None]


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
    """What the search looks through in a fold (``folding.texts.searchable_words``: the places ``grep`` reads)."""
    return _search_text(*searchable_words(result))


def texts_by_run(table: Any, column: str) -> dict[str, list[str]]:
    """run → the non-empty values of ``column`` of a ``messages`` or ``tool_calls`` table, in order."""
    found: dict[str, list[str]] = {}
    if table is None or column not in table.column_names:
        return found
    for run, text in zip(table.column("run").to_pylist(), table.column(column).to_pylist(), strict=True):
        if text:
            found.setdefault(str(run), []).append(str(text))
    return found


def first_errors(findings_table: Any) -> dict[str, str]:
    """run → its first error finding as text, from a ``findings`` table (or rows of that shape)."""
    rows = findings_table.to_pylist() if hasattr(findings_table, "to_pylist") else list(findings_table)
    first: dict[str, str] = {}
    for row in rows:
        run = row.get("run")
        if run is None or run in first or row.get("severity") != "error":
            continue
        first[str(run)] = problem_text(row.get("seq"), str(row["code"]), row.get("message") or "")
    return first


def _ending_of_row(item: Mapping[str, Any], problem: str | None) -> Ending:
    """A table row's ending when the table has no ``why`` of its own (an older audit's): a reopened run is said to
    be reopened, though not by whom (the row does not hold it)."""
    terminal_reason = item.get("terminal_reason")
    reopened = bool(item.get("reopened")) and item["status"] == "open" and terminal_reason is not None
    return ending_of_row(item, problem=problem, reopening=f"{terminal_reason}, then reopened" if reopened else None)


def row_of_fold(run: str, result: FoldResult, status: str | None = None) -> RunRow:
    """A row from a run's fold (``status`` overrides the fold's, e.g. with a listing's own)."""
    state = result.state
    shown = status or result.status
    return RunRow(
        run=run,
        status=shown,
        created=None,  # the fold carries no creation time; the runs table does
        model=state.fingerprint.model if state is not None else None,
        llm_calls=state.counters.llm_calls if state is not None else None,
        tokens=state.counters.total_tokens if state is not None else None,
        pending_calls=len(result.pending_calls) if state is not None else None,
        last_seq=result.last_seq,
        reason=why_of(replace(ending_of(result), status=shown)),
        caller=(state.caller or None) if state is not None else None,
        segments=len(result.segments) if state is not None else None,
        stale_terminal=result.stale_terminal,
        token_parts=_fold_tokens(result),
        search_text=_search_text(run, shown, fold_search_text(result)),
        prompt=(state.prompt or None) if state is not None else None,
        agent=(state.agent or None) if state is not None else None,
        generation=_generation_name(state.version) if state is not None else None,
    )


def _generation_name(version: int) -> str | None:
    """The build that writes ``meta.version`` ``version``, by name, as the ``runs`` table's ``generation`` says it
    (None for a version no build writes, though the fold read it by the newest line's rules)."""
    generation = generation_of_version(version)
    return generation.name if generation is not None else None


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
    #: The search box read (``SearchQuery``), for ``text_filter``; worked out when first asked for.
    _query: SearchQuery | None = field(default=None, init=False, repr=False, compare=False)
    #: A filter expression's verdict on each row, for the rows list it was worked out for (rows arriving later
    #: or followed make a new list, and so a new verdict).
    _verdicts: tuple[list[RunRow], dict[int, bool]] | None = field(default=None, init=False, repr=False, compare=False)

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
        # What a deferral says its run waits on (the fold path's search reads the open ones; a table keeps each).
        notes = texts_by_run(tool_calls, "deferred_note")
        handles = texts_by_run(tool_calls, "deferred_handle")
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
                    tokens=total_tokens(item),
                    pending_calls=pending,
                    last_seq=int(item.get("last_seq") or 0),
                    # The table's own ``why`` (the fold's words); a narrower table's row is worded from its columns.
                    reason=item.get("why") or why_of(_ending_of_row(item, problems.get(run))),
                    caller=item.get("caller") or None,
                    segments=_int_or_none(item.get("segments")),
                    stale_terminal=bool(item.get("stale_terminal")),
                    task_state=item.get("task_state"),
                    updated=updated,
                    token_parts=_token_parts(item),
                    prompt=item.get("prompt") or None,
                    agent=item.get("agent") or None,
                    generation=item.get("generation") or None,
                    table_values=item,
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
                        *notes.get(run, ()),
                        *handles.get(run, ()),
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
            "writer": any(row.writer is not None for row in self.rows),
        }
        return [column for column in COLUMNS if has.get(column.key, True)]

    @property
    def status_choices(self) -> list[str]:
        """The statuses present, in PROTOCOL 5's order (an unknown terminal reason after them)."""
        present = {row.status for row in self.rows}
        return [s for s in STATUSES if s in present] + sorted(present - set(STATUSES))

    @property
    def query(self) -> SearchQuery:
        """The search box read: words, a filter expression, or an expression's error (``SearchQuery``)."""
        if self._query is None or self._query.text != self.text_filter:
            self._query = SearchQuery.of(self.text_filter, priced=self.prices is not None)
        return self._query

    @property
    def search_summary(self) -> str:
        """Which search applied (``filter: status == "error"``, ``text search``, ``not a filter: ...``), or ``""``."""
        return self.query.summary

    def matches(self, row: RunRow) -> bool:
        """Whether ``row`` passes the search: a filter expression's verdict on its runs-table values (the one filter
        of ``load(where=)``; none for an expression that cannot be one), else every word of the text appears in the
        run id, status, reason, dates, model, caller, prompt, tool names or message text."""
        query = self.query
        if query.error is not None:
            return False
        if query.run_filter is not None:
            return self._verdict_of(row, query.run_filter)
        words = query.words
        if not words:
            return True
        haystack = row.search_text or _search_text(row.run, row.status, row.model, row.caller)
        return all(word in haystack or word in row.reason.lower() for word in words)

    def _verdict_of(self, row: RunRow, run_filter: RunFilter) -> bool:
        """The filter's verdict on ``row``: worked out for every row at once (one Arrow evaluation), kept until the
        rows list is replaced (the view replaces it as rows arrive or change, never changing it in place)."""
        if self._verdicts is None or self._verdicts[0] is not self.rows:
            try:
                self._verdicts = (self.rows, verdicts_by_row(self.rows, run_filter))
            except InvalidFilter as exc:  # rows whose values the column's type cannot hold (a narrower table's)
                self._query = replace(self.query, run_filter=None, error=exc)
                return False
        known = self._verdicts[1].get(id(row))
        return known if known is not None else verdicts_by_row([row], run_filter)[id(row)]

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
        """``runs 26-50 of 10,000`` (``of 14 (10,000 in all)`` when a filter hides some), then which search applied
        when the box holds one (`` · filter: status == "error"``, `` · text search``, `` · not a filter: ...``)."""
        searched = f" · {self.search_summary}" if self.search_summary else ""
        total = len(self.visible())
        if total == 0:
            return f"no runs match (of {len(self.rows):,}){searched}"
        page = min(max(0, self.page), self.page_count - 1)
        first = page * self.page_size + 1
        last = min(total, first + self.page_size - 1)
        hidden = f" ({len(self.rows):,} in all)" if total != len(self.rows) else ""
        return f"runs {first:,}-{last:,} of {total:,}{hidden}{searched}"

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
                    detail = f" {esc(row.status_detail)}" if row.status_detail else ""
                    cells.append(f"<td>{status_badge(row.status)}{detail}</td>")
                elif column.key == "prompt":
                    cells.append(f'<td title="{esc(row.tooltip("prompt"))}">{esc(row.shown("prompt"))}</td>')
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
    model = RunBrowserModel.from_tables(tables)
    return replace(model, rows=with_writers(model.rows, backend)), RunFolds(backend, owned=True)
