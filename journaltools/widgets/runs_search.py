"""What the run browser's search box holds, read once: words to look for, or a filter expression over the runs
table's columns (``status == "error" and model ~ "sonnet"``), the one filter of ``ls --where`` and
``load(where=)`` (``tables.where``, docs/filter.md), and what a browser row gives such a filter to read.

``RunBrowserModel`` (``runs_model``) asks ``SearchQuery.of`` what its text is and ``filter_values`` for each row's
values; the filter itself is compiled and evaluated by ``tables.where`` alone, so the box and ``load(where=)`` keep
the same runs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from journaltools.errors import InvalidFilter

if TYPE_CHECKING:
    from journaltools.tables.where import RunFilter
    from journaltools.widgets.runs_row import RunRow


def filter_values(row: RunRow) -> dict[str, Any]:
    """The runs-table values a filter expression reads for ``row``: the row of the ``runs`` table it was made from,
    as ``load(where=)`` reads it; for what a fold has told since (a followed run's status, counts and tokens, the
    cost by the browser's prices), the row's own newer values; for a row made from a fold alone, the columns the fold
    gives (the others unknown, null)."""
    values = dict(row.table_values)
    refreshed = values.get("status") != row.status or values.get("last_seq") != row.last_seq
    if refreshed or not values:
        values.update(
            status=row.status,
            last_seq=row.last_seq,
            llm_calls=row.llm_calls,
            pending_calls=row.pending_calls,
            segments=row.segments,
            stale_terminal=row.stale_terminal,
            why=row.reason or None,
        )
        if row.token_parts is not None:
            parts = row.token_parts
            values.update(
                in_tokens=parts.input,
                out_tokens=parts.output,
                cache_read_tokens=parts.cache_read,
                cache_create_tokens=parts.cache_create,
                thinking_tokens=parts.thinking,
            )
    if not row.table_values:
        values.update(
            run=row.run,
            model=row.model,
            caller=row.caller,
            prompt=row.prompt,
            agent=row.agent,
            generation=row.generation,
            task_state=row.task_state,
        )
    if row.cost is not None:
        values["cost"] = row.cost
    return values


def verdicts_by_row(rows: Sequence[RunRow], run_filter: RunFilter) -> dict[int, bool]:
    """``id(row)`` → whether the filter keeps it, for every row at once (one Arrow evaluation of the filter's one
    expression); ``InvalidFilter`` when the rows' values do not fit the runs table's types."""
    verdicts = run_filter.kept([filter_values(row) for row in rows])
    return {id(row): kept for row, kept in zip(rows, verdicts, strict=True)}


#: A comparison or ``~`` right after a word (``tokens > 1000``, ``model~x``, ``status in [``): with a field named in
#: the error, or a column named in the text, a text meant as a filter expression, whose error the browser shows rather
#: than searching for its words (``<script>`` is words: it names no column).
_LOOKS_LIKE_A_FILTER: Final = re.compile(r"[A-Za-z_]\w*\s*(==|!=|<=|>=|<|>|~|=(?!=)|\s+(?:not\s+)?in\s*[\[(])")
#: The words and symbols that make a text an expression rather than words to look for (a lone column name such as
#: ``interactive`` is a word to search for, though it parses as a condition).
_EXPRESSION_MARKS: Final = re.compile(r"==|!=|<|>|~|\b(?:and|or|not|in|is)\b")
_WORD: Final = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What the search box holds: nothing, words to look for, a filter expression over the runs table's columns, or
    a text meant as an expression that cannot be one (``error``: the browser shows it and no runs)."""

    text: str
    run_filter: RunFilter | None = None
    error: InvalidFilter | None = None

    @classmethod
    def of(cls, text: str, *, priced: bool = False) -> SearchQuery:
        """``text`` read as the search box reads it: an expression when it parses as one over the runs table's columns
        (``priced``: with its cost columns) and uses an operator or ``and``, ``or``, ``not``, ``in``, ``is``;
        else, when it still looks meant as one (a comparison after a word, and a column or a field named), the
        filter's error; else words."""
        if not text.strip() or not _EXPRESSION_MARKS.search(text):
            return cls(text)
        from journaltools.tables.schema import schema_of
        from journaltools.tables.where import parse_filter

        schema = schema_of("runs", priced=priced)
        try:
            return cls(text, run_filter=parse_filter(text, schema))
        except InvalidFilter as exc:
            names_a_field = exc.field is not None or any(word in schema.names for word in _WORD.findall(text))
            meant = names_a_field and _LOOKS_LIKE_A_FILTER.search(text) is not None
            return cls(text, error=exc) if meant else cls(text)

    @property
    def words(self) -> list[str]:
        """The lower-cased words a plain search looks for ([] for an expression, broken or not)."""
        return self.text.lower().split() if self.run_filter is None and self.error is None else []

    @property
    def summary(self) -> str:
        """Which search applied, for the browser's summary line (``""`` when the box is empty)."""
        if self.run_filter is not None:
            return f"filter: {self.text.strip()}"
        if self.error is not None:
            return f"not a filter: {self.error.reason}"
        return "text search" if self.text.strip() else ""
