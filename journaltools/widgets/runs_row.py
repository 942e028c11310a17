"""One row of the run browser and its columns: what each cell of a run shows and its tooltip says (the browser's
model, ``runs_model``, sorts, filters and pages these; both front ends draw them with ``runs_page.table_html``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from journaltools._base.readable import shorten_end, shorten_middle
from journaltools._base.text import for_page
from journaltools.exports.facts import Tokens, cost_text
from journaltools.folding.phrases import STORE_UPDATED, shown_time
from journaltools.sources.liveness import WRITER_WORDS


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    numeric: bool = False
    #: 1 is always shown; a higher number steps aside sooner as the notebook narrows (``runs.BROWSER_STYLE``).
    priority: int = 1
    tooltip: str = ""


COLUMNS: tuple[Column, ...] = (
    Column("run", "run"),
    Column("status", "status"),
    # Runs made in the same minute have ids that differ in a few middle characters; their prompts tell them apart
    # (what ``ls`` shows), so the prompt stays at any width. The pending count steps aside first for it: the
    # reason already says what a run waits for.
    Column("prompt", "prompt", tooltip="meta.prompt, what the run was asked (whole in each cell's tooltip)"),
    Column("reason", "why it stopped"),
    Column("created", "created (UTC)", tooltip="meta.created, the journal's own time"),
    Column("tokens", "tokens", numeric=True, tooltip="input, output and both cache tiers"),
    Column("cost", "cost", numeric=True, tooltip="by the price table you passed"),
    Column(
        "pending_calls", "pending", numeric=True, priority=2, tooltip="calls of the turn in flight without a result"
    ),
    Column("model", "model", priority=3),
    Column("llm_calls", "model calls", numeric=True, priority=4),
    Column("segments", "segments", numeric=True, priority=5, tooltip="process runs: the first and each resume"),
    Column("caller", "caller", priority=6),
    Column("agent", "agent", priority=7, tooltip="meta.agent (the newest line's journals name it)"),
    Column("generation", "generation", priority=7, tooltip="the build that wrote the journal: newest or august"),
    Column("updated", "updated (UTC)", priority=7, tooltip="the file's mtime, or the last message's time"),
    Column("task_state", "task", priority=7),
    Column(
        "writer", "writer", priority=7, tooltip="whether a process holds the run's lock now (the kernel's lock table)"
    ),
)

SORT_KEYS: tuple[str, ...] = (*(column.key for column in COLUMNS), "last_seq")

#: A run id longer than this is shortened in its middle in the table (the whole id in the tooltip).
RUN_SHOWN = 28

#: Rows shown per page unless the caller says otherwise.
DEFAULT_ROWS_PER_PAGE = 25

#: A prompt cell holds at most this many characters: two wrapped lines show fewer, and every row's text travels in
#: the widget's state.
PROMPT_SHOWN = 200

#: A tooltip holds at most this many characters of a prompt (a prompt can be a whole document, which no tooltip
#: shows); the opened run shows it whole.
TOOLTIP_CHARS = 2_000

#: What a status says when a new turn follows the ending it names (``stale_terminal``).
STALE_DETAIL = "next turn in flight"


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
    prompt: str | None = None
    agent: str | None = None
    generation: str | None = None  # newest or august (None when the journal names no version a build writes)
    writer: str | None = None  # held, free or unknown (sources.liveness); None where the source has no locks
    #: The run's row of the ``runs`` table, column by column as ``Table.to_pylist`` gives it ({} for a row made from
    #: a fold): what a filter expression in the search box reads (``filter_values``).
    table_values: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def status_detail(self) -> str:
        """What qualifies the status (``next turn in flight``), or ``""``."""
        return STALE_DETAIL if self.stale_terminal else ""

    def cell(self, key: str) -> str:
        """The cell's text, whole and on one line (``—`` for unknown)."""
        value = getattr(self, key)
        if value is None or value == "":
            return "—"
        if key in ("created", "updated"):
            return str(value)[:16].replace("T", " ")
        if key == "tokens":
            return f"{value:,}"
        if key == "cost":
            return cost_text(value)
        if key == "status" and self.status_detail:
            return for_page(f"{value} ({self.status_detail})")
        if key == "prompt":
            return for_page(" ".join(str(value).split()))
        return for_page(str(value))

    def shown(self, key: str) -> str:
        """What the browser's cell shows: a long run id shortened in its middle (ids share prefixes), a prompt's
        start, and a status's detail on a second line, so the status word itself is never the part cut off."""
        text = self.cell(key)
        if key == "run":
            return shorten_middle(text, RUN_SHOWN)
        if key == "prompt":
            return shorten_end(text, PROMPT_SHOWN)
        if key == "status" and self.status_detail:
            return f"{for_page(self.status)}\n{self.status_detail}"
        return text

    def tooltip(self, key: str) -> str:
        """The cell's tooltip: its whole text (the run named before a reason; a prompt with its line breaks, cut
        only past ``TOOLTIP_CHARS``)."""
        if key == "reason":
            return f"{for_page(self.run)}: {self.cell(key)}"
        if key == "prompt" and self.prompt:
            prompt = for_page(self.prompt)
            if len(prompt) <= TOOLTIP_CHARS:
                return prompt
            more = len(prompt) - TOOLTIP_CHARS
            return f"{prompt[:TOOLTIP_CHARS]} … ({more:,} more characters: open the run to read it whole)"
        if key == "writer" and self.writer:
            return WRITER_WORDS.get(self.writer, self.writer)
        if key in ("created", "updated") and getattr(self, key):
            # The cell keeps the minute; the tooltip has the time in every face's spelling, and says when
            # "updated" is the store's time because the journal dates no record (the August build's).
            when = shown_time(getattr(self, key)) or ""
            if key == "updated" and self.generation == "august":
                return f"{when}: {STORE_UPDATED}"
            return when
        return self.cell(key)


def with_writers(rows: list[RunRow], backend: Any) -> list[RunRow]:
    """``rows`` with whether a process holds each run's lock now (``sources.liveness``: the kernel's lock table,
    read once, never the lock itself). A source without lock files (a stream) leaves them as they are."""
    from journaltools.sources.liveness import SourceLocks

    locks = SourceLocks.of(backend)
    if locks.root is None:
        return rows
    return [replace(row, writer=locks.writer(row.run)) for row in rows]
