"""The seven Arrow schemas (``records``, ``runs``, ``segments``, ``messages``, ``tool_calls``, ``responses``,
``findings``) and ``Tables``.

Strings that repeat row after row are dictionary-encoded (``dictionary<values=string, indices=int32>``; ``int8``
indices for ``records.kind``, whose values are the ten kinds): ``records.run``, ``source``,
``protocol`` and ``kind``, and the ``run`` of ``messages``, ``tool_calls`` and ``segments``, ``messages.role``,
``tool_calls.name`` and ``segments.ending``. A run's id is held once per table chunk instead of once per record:
on 106 MB of generated journals ``records`` takes 116 MB instead of 140 MB, nearly all the rest being the bodies
(docs/interfaces.md, "Tables").
pandas gets them as ``category`` (``Tables.to_pandas`` sorts the categories, so sorting by such a column is by
its text), Parquet keeps them dictionary-encoded, and DuckDB reads them as ``VARCHAR``.

Times are ``timestamp[us, tz=UTC]`` (Go writes nanoseconds; a column keeps microseconds, the raw ``records.body``
keeps the text). Sequence numbers are ``uint64``, as the runtime's are: a journal may hold a seq beyond int64.
Each schema carries pandas metadata naming Arrow-backed dtypes, so ``Table.to_pandas()``, ``pd.read_parquet`` and
``Tables.to_pandas()`` all give ``uint64[pyarrow]`` and the like (nullable integers stay integers).

No column holds ``meta.conversation_token``: ``runs.conversation`` is the first 12 hex characters of its SHA-256,
and only ``records.body`` (the journal's own bytes) contains it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Final, Literal

import pandas as pd
import pyarrow as pa

TIMESTAMP: Final = pa.timestamp("us", tz="UTC")
SEQ: Final = pa.uint64()
#: A string column whose values repeat (a run's id on every one of its records): each chunk holds each value once,
#: in the order of its first row, and an index per row.
REPEATED: Final = pa.dictionary(pa.int32(), pa.string())
#: The same for a column of a few fixed values (the ten record kinds). A journal's own strings (a role, a protocol id
#: the runtime does not know) are never one: a hostile journal may hold more distinct ones than int8 can index.
FEW: Final = pa.dictionary(pa.int8(), pa.string())


def _pandas_dtype(arrow_type: pa.DataType) -> pd.api.extensions.ExtensionDtype | None:
    """Arrow-backed dtypes, but pandas' own ``category`` for a dictionary column (None: pyarrow's conversion):
    pyarrow cannot sort or rank a dictionary array, which would leave an Arrow-backed one unsortable in pandas."""
    return None if pa.types.is_dictionary(arrow_type) else pd.ArrowDtype(arrow_type)


def _with_pandas_metadata(schema: pa.Schema) -> pa.Schema:
    frame = schema.empty_table().to_pandas(types_mapper=_pandas_dtype)
    pandas = json.loads(pa.Schema.from_pandas(frame, preserve_index=False).metadata[b"pandas"])
    for column in pandas["columns"]:
        # pandas cannot parse a nested Arrow dtype's name back ("list<item: string>[pyarrow]"): such columns
        # convert as plain objects, every other column keeps its Arrow-backed dtype.
        if "<" in str(column.get("numpy_type")):
            column["numpy_type"] = "object"
    return schema.with_metadata({**(schema.metadata or {}), b"pandas": json.dumps(pandas).encode()})


def _schema(fields: list[pa.Field], description: str) -> pa.Schema:
    return _with_pandas_metadata(pa.schema(fields, metadata={"description": description}))


def _strings() -> pa.DataType:
    return pa.list_(pa.string())


RECORDS_SCHEMA: Final = _schema(
    [
        pa.field("run", REPEATED, nullable=False),
        pa.field("seq", SEQ, nullable=False),
        pa.field("protocol", REPEATED, nullable=False),
        pa.field("kind", FEW),
        pa.field("optional", pa.bool_(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("time", TIMESTAMP),
        pa.field("body", pa.large_binary(), nullable=False),
        pa.field("noncanonical", pa.string()),
        pa.field("source", REPEATED, nullable=False),
        pa.field("position", pa.int64(), nullable=False),
    ],
    "one row per decodable record: seq, protocol id, kind (null for an unknown protocol), size and the "
    "journal's own bytes (body, the only place meta.conversation_token appears), time = the JetStream message "
    "time (null for files), noncanonical = what differs from the Go encoder's bytes (null when nothing), "
    "position = file line number or stream sequence",
)

RUNS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("generation", pa.string()),
        pa.field("created", TIMESTAMP),
        pa.field("updated", TIMESTAMP),
        pa.field("ended", TIMESTAMP),
        pa.field("wall_clock", pa.duration("ns")),
        pa.field("model", pa.string()),
        pa.field("provider", pa.string()),
        pa.field("prompt", pa.large_string()),
        pa.field("interactive", pa.bool_()),
        pa.field("agent", pa.string()),
        pa.field("caller", pa.string()),
        pa.field("conversation", pa.string()),
        pa.field("last_seq", SEQ, nullable=False),
        pa.field("records", pa.int64(), nullable=False),
        pa.field("segments", pa.int64(), nullable=False),
        pa.field("resumes", pa.int64(), nullable=False),
        pa.field("stale_terminal", pa.bool_(), nullable=False),
        pa.field("reopened", pa.bool_()),
        pa.field("turns", pa.int64()),
        pa.field("context_tokens", pa.int64()),
        pa.field("terminal_reason", pa.string()),
        pa.field("terminal_message", pa.large_string()),
        pa.field("last_stop_reason", pa.string()),
        pa.field("next_iteration", pa.int64()),
        pa.field("waiting_for", pa.string()),
        pa.field("why", pa.large_string()),
        pa.field("llm_calls", pa.int64()),
        pa.field("tool_calls", pa.int64()),
        pa.field("remote_tool_calls", pa.int64()),
        pa.field("mcp_tool_calls", pa.int64()),
        pa.field("tool_errors", pa.int64()),
        pa.field("in_tokens", pa.int64()),
        pa.field("out_tokens", pa.int64()),
        pa.field("cache_read_tokens", pa.int64()),
        pa.field("cache_create_tokens", pa.int64()),
        pa.field("thinking_tokens", pa.int64()),
        pa.field("tool_calls_by_kind", pa.map_(pa.string(), pa.int64())),
        pa.field("pending_calls", pa.int64()),
        pa.field("open_deferrals", pa.int64()),
        pa.field("approvals", _strings()),
        pa.field("call_approvals", _strings()),
        pa.field("memory_keys", _strings()),
        pa.field("task_state", pa.string()),
        pa.field("error_findings", pa.int64(), nullable=False),
        pa.field("warning_findings", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    "one row per journal: status = by its generation's rule (august: the last terminal's reason; newest: "
    "Ending(), open again when anything follows the last terminal), open, or invalid (refused by the runtime's "
    "read or fold); generation = newest or august (null without a known meta.version); updated = the newest "
    "line's last record's time, else the file's mtime or the stream's time; ended = when the ending terminal was "
    "journaled (newest line, null when open or undated); wall_clock = from the run's creation (meta.created, "
    "else the meta record's time) to its last dated record, as the runtime's Stats.WallClock (null when either "
    "is missing: every August journal); reopened, turns, context_tokens = the newest fold's "
    "(computed for august journals too); tool_calls_by_kind = results per provider kind token; the counters "
    "are the folded state's (null when the journal was not folded: no meta, or "
    "its read was refused); conversation = 12 hex of SHA-256 of meta.conversation_token (null without one); "
    "resumes = claims; approvals = standing approvals (tool names, journal order); call_approvals = the tool "
    "use ids of the live one-shot approvals; memory_keys = the keys of the last memory_revisions, sorted; "
    "tool_errors = the calls whose result is an error (null when not folded); "
    "pending_calls / open_deferrals = of the turn in flight; task_state = the task store's state of the task "
    "with the run's id, when a task store was given",
)

SEGMENTS_SCHEMA: Final = _schema(
    [
        pa.field("run", REPEATED, nullable=False),
        pa.field("segment", pa.int64(), nullable=False),
        pa.field("first_seq", SEQ, nullable=False),
        pa.field("last_seq", SEQ, nullable=False),
        pa.field("claimed_by", pa.string()),
        pa.field("claimed_at", TIMESTAMP),
        pa.field("started_at", TIMESTAMP),
        pa.field("ended_at", TIMESTAMP),
        pa.field("ending", REPEATED, nullable=False),
        pa.field("terminal_message", pa.large_string()),
        pa.field("llm_calls", pa.int64(), nullable=False),
        pa.field("tool_calls", pa.int64(), nullable=False),
        pa.field("in_tokens", pa.int64(), nullable=False),
        pa.field("out_tokens", pa.int64(), nullable=False),
    ],
    "one row per process run within a journal (split at claims): started_at / ended_at = the own times of its "
    "first and last record (newest line; null when undated); ending = a terminal reason, crashed (no terminal "
    "and a later claim) or running (the last segment, no terminal yet)",
)

MESSAGES_SCHEMA: Final = _schema(
    [
        pa.field("run", REPEATED, nullable=False),
        pa.field("index", pa.int64(), nullable=False),
        pa.field("seq", SEQ, nullable=False),
        pa.field("role", REPEATED, nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("thinking_chars", pa.int64(), nullable=False),
        pa.field("tool_use_count", pa.int64(), nullable=False),
        pa.field("tool_result_count", pa.int64(), nullable=False),
        pa.field("provider_blocks", pa.int64(), nullable=False),
        pa.field("pending", pa.bool_(), nullable=False),
    ],
    "one row per folded message (the runtime's neutral model); text = its text blocks joined by newlines; "
    "pending = the assistant message of the turn in flight, which the runtime has not committed (one row, last)",
)

TOOL_CALLS_SCHEMA: Final = _schema(
    [
        pa.field("run", REPEATED, nullable=False),
        pa.field("call_id", pa.string(), nullable=False),
        pa.field("name", REPEATED, nullable=False),
        pa.field("input", pa.large_string(), nullable=False),
        pa.field("call_seq", SEQ, nullable=False),
        pa.field("result_seq", SEQ),
        pa.field("is_error", pa.bool_()),
        pa.field("remote", pa.bool_()),
        pa.field("kind", pa.string()),
        pa.field("dispatched", pa.bool_()),
        pa.field("made_at", TIMESTAMP),
        pa.field("answered_at", TIMESTAMP),
        pa.field("duration", pa.duration("ns")),
        pa.field("timed", pa.bool_(), nullable=False),
        pa.field("deferred", pa.bool_(), nullable=False),
        pa.field("deferred_note", pa.large_string()),
        pa.field("deferred_handle", pa.string()),
        pa.field("call_approved", pa.bool_(), nullable=False),
        pa.field("result_chars", pa.int64()),
    ],
    "one row per tool_use block of an assistant record, in journal order, paired as the runtime's Calls pairs "
    "them (a result answers the most recent unanswered call with its id): result_seq / is_error / remote / "
    "result_chars from that result (null while unanswered); kind = the provider's token and dispatched = whether "
    "the call ran, by the fold's rule (an August result: remote, else unknown); made_at / answered_at = the "
    "records' own times (newest line; null when undated); duration = from the record before the one that ended "
    "the call (its deferral, else its result) to it, timed = whether both were dated; deferred and its note and "
    "handle from a deferred record; call_approved = a call_approval record names it; input = the call's raw JSON",
)

RESPONSES_SCHEMA: Final = _schema(
    [
        pa.field("run", REPEATED, nullable=False),
        pa.field("seq", SEQ, nullable=False),
        pa.field("iteration", pa.int64(), nullable=False),
        pa.field("time", TIMESTAMP),
        pa.field("stop_reason", pa.string()),
        pa.field("in_tokens", pa.int64(), nullable=False),
        pa.field("out_tokens", pa.int64(), nullable=False),
        pa.field("cache_read_tokens", pa.int64(), nullable=False),
        pa.field("cache_create_tokens", pa.int64(), nullable=False),
        pa.field("thinking_tokens", pa.int64(), nullable=False),
    ],
    "one row per model response (an assistant record), in journal order, as the runtime's Stats lists them: seq "
    "of the record, its iteration, its own time (newest line; null when undated), stop_reason (null when empty) "
    "and the five token tiers (thinking_tokens is part of out_tokens)",
)

FINDINGS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string()),
        pa.field("seq", SEQ),
        pa.field("code", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    "one row per finding (the finding codes of docs/interfaces.md)",
)

TableName = Literal["records", "runs", "segments", "messages", "tool_calls", "responses", "findings"]
TABLE_NAMES: Final[tuple[TableName, ...]] = (
    "records",
    "runs",
    "segments",
    "messages",
    "tool_calls",
    "responses",
    "findings",
)
SCHEMAS: Final[dict[str, pa.Schema]] = {
    "records": RECORDS_SCHEMA,
    "runs": RUNS_SCHEMA,
    "segments": SEGMENTS_SCHEMA,
    "messages": MESSAGES_SCHEMA,
    "tool_calls": TOOL_CALLS_SCHEMA,
    "responses": RESPONSES_SCHEMA,
    "findings": FINDINGS_SCHEMA,
}


#: The cost columns a load given prices adds to ``runs`` and ``responses`` (``tables.costs``), after their others:
#: the cost of each priced tier and the total, float64 in the price table's currency, null where no price applies.
COST_COLUMNS: Final = ("cost_input", "cost_output", "cost_cache_read", "cost_cache_create", "cost")
PRICED_TABLES: Final = ("runs", "responses")
_COST_DESCRIPTION: Final = (
    "; with prices (load(prices=...), --prices FILE): cost_input, cost_output, cost_cache_read, cost_cache_create = "
    "the tier's tokens times the table's price per million (0 for no tokens of a tier the table leaves out), cost = "
    "their sum, in the table's currency; every cost null when the table has no price for the run's model, and cost "
    "null when a tier with tokens has no price"
)
PRICED_SCHEMAS: Final[dict[str, pa.Schema]] = {
    name: _schema(
        [*SCHEMAS[name], *(pa.field(column, pa.float64()) for column in COST_COLUMNS)],
        SCHEMAS[name].metadata[b"description"].decode() + _COST_DESCRIPTION,
    )
    for name in PRICED_TABLES
}


def schema_of(name: str, *, priced: bool = False) -> pa.Schema:
    """The schema of the table ``name``: with its cost columns when ``priced`` (only ``runs`` and ``responses``
    have any)."""
    return PRICED_SCHEMAS[name] if priced and name in PRICED_SCHEMAS else SCHEMAS[name]


def is_priced(schema: pa.Schema) -> bool:
    """Whether a table (or a Parquet file's schema) carries the cost columns."""
    return COST_COLUMNS[-1] in schema.names


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """A DataFrame with Arrow-backed dtypes (``pd.ArrowDtype``): nulls, uint64 and UTC timestamps survive. A
    dictionary-encoded column is a ``category`` whose categories are sorted, so that ordering by it is by text (an
    unordered category sorts by its categories' order, which would be the order runs were read in)."""
    frame = table.to_pandas(types_mapper=_pandas_dtype)
    for field in table.schema:
        if pa.types.is_dictionary(field.type):
            column = frame[field.name]
            frame[field.name] = column.cat.reorder_categories(sorted(column.cat.categories))
    return frame


def with_plain_strings(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary-encoded columns decoded to plain strings, the rows unchanged. Two loads of the
    same journals give the same rows, but not always the same dictionaries (each chunk has its own, in the order
    its rows were built): compare loads this way, row by row, not by their encoding."""
    fields = [
        pa.field(field.name, field.type.value_type, field.nullable) if pa.types.is_dictionary(field.type) else field
        for field in table.schema
    ]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


@cache
def empty_table(name: str) -> pa.Table:
    """The table ``name`` with no rows: made once (an Arrow table never changes), as every batch asks for some."""
    return SCHEMAS[name].empty_table()


@dataclass(frozen=True, slots=True)
class PandasTables:
    records: pd.DataFrame
    runs: pd.DataFrame
    segments: pd.DataFrame
    messages: pd.DataFrame
    tool_calls: pd.DataFrame
    responses: pd.DataFrame
    findings: pd.DataFrame


@dataclass(frozen=True, slots=True)
class Tables:
    """The seven tables of one load. Tables that were not asked for are empty (with their schema)."""

    records: pa.Table
    runs: pa.Table
    segments: pa.Table
    messages: pa.Table
    tool_calls: pa.Table
    responses: pa.Table
    findings: pa.Table

    def __getitem__(self, name: str) -> pa.Table:
        if name not in TABLE_NAMES:
            raise KeyError(name)
        table: pa.Table = getattr(self, name)
        return table

    def items(self) -> Iterator[tuple[TableName, pa.Table]]:
        for name in TABLE_NAMES:
            yield name, self[name]

    def to_pandas(self) -> PandasTables:
        """Every table as a DataFrame with Arrow-backed dtypes."""
        return PandasTables(**{name: to_pandas(table) for name, table in self.items()})

    @classmethod
    def empty(cls, *, priced: bool = False) -> Tables:
        """Every table empty; ``priced``: ``runs`` and ``responses`` with their cost columns."""
        return cls(**{name: schema_of(name, priced=priced).empty_table() for name in TABLE_NAMES})

    @classmethod
    def of(cls, **tables: pa.Table) -> Tables:
        """Tables from those given; the others empty."""
        return cls(**{name: tables.get(name, empty_table(name)) for name in TABLE_NAMES})

    @classmethod
    def concat(cls, parts: Iterable[Tables]) -> Tables:
        """One Tables from many (row order kept; no copy, each part becomes chunks)."""
        collected = list(parts)
        if not collected:
            return cls.empty()
        return cls(**{name: pa.concat_tables([part[name] for part in collected]) for name in TABLE_NAMES})

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{name}</code></td><td>{table.num_rows:,}</td><td>{table.num_columns}</td></tr>"
            for name, table in self.items()
        )
        return f"<table><tr><th>table</th><th>rows</th><th>columns</th></tr>{rows}</table>"
