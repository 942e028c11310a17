"""The five Arrow schemas (``records``, ``runs``, ``messages``, ``tool_calls``, ``findings``) and ``Tables``.

Timestamps are ``timestamp[us, tz=UTC]``. Each schema carries pandas metadata naming Arrow-backed dtypes, so
``Table.to_pandas()``, ``pd.read_parquet`` and ``Tables.to_pandas()`` all give ``int64[pyarrow]`` and the like
(nullable integers stay integers).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Literal

import pandas as pd
import pyarrow as pa

TIMESTAMP: Final = pa.timestamp("us", tz="UTC")


def _with_pandas_metadata(schema: pa.Schema) -> pa.Schema:
    frame = schema.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    pandas = pa.Schema.from_pandas(frame, preserve_index=False).metadata[b"pandas"]
    return schema.with_metadata({**(schema.metadata or {}), b"pandas": pandas})


def _schema(fields: list[pa.Field], description: str) -> pa.Schema:
    return _with_pandas_metadata(pa.schema(fields, metadata={"description": description}))


RECORDS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("seq", pa.int64()),
        pa.field("type", pa.string()),
        pa.field("ts", TIMESTAMP),
        pa.field("optional", pa.bool_(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("body", pa.large_string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
    ],
    "one row per parseable record: envelope fields (null where a field breaks the envelope rule), the raw "
    "bytes as text, where it was read (line number or stream sequence)",
)

RUNS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("created", TIMESTAMP),
        pa.field("last_seq", pa.int64()),
        pa.field("last_ts", TIMESTAMP),
        pa.field("records", pa.int64()),
        pa.field("model", pa.string()),
        pa.field("turns", pa.int64()),
        pa.field("tool_calls", pa.int64()),
        pa.field("input_tokens", pa.int64()),
        pa.field("output_tokens", pa.int64()),
        pa.field("pending_calls", pa.int64()),
        pa.field("deferred_calls", pa.int64()),
        pa.field("claims", pa.int64()),
        pa.field("errors", pa.int64()),
        pa.field("stop_reason", pa.string()),
        pa.field("end_reason", pa.string()),
        pa.field("task_state", pa.string()),
        pa.field("tool_errors", pa.int64()),
        pa.field("deferrals", pa.int64()),
        pa.field("skipped_optional", pa.int64()),
        pa.field("waiting_for", pa.string()),
        pa.field("task", pa.string()),
        pa.field("error_findings", pa.int64(), nullable=False),
        pa.field("warning_findings", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    "one row per run: the fold's status and counters. status 'invalid' = an error finding names the run; "
    "pending_calls = unanswered calls of the trailing turn, deferred_calls = those of them that are deferred, "
    "deferrals = every deferral record of the run; stop_reason = the last assistant record's; end_reason = the "
    "fatal error's where and message, or the cancel's by and reason; task_state = the task store's state of "
    "the meta's task, when a task store was given",
)

MESSAGES_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("index", pa.int64(), nullable=False),
        pa.field("role", pa.string(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("tool_use_count", pa.int64(), nullable=False),
        pa.field("tool_result_count", pa.int64(), nullable=False),
    ],
    "one row per folded message (Messages API shape); text = its text blocks joined by newlines",
)

TOOL_CALLS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("call_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("input", pa.large_string(), nullable=False),
        pa.field("call_seq", pa.int64(), nullable=False),
        pa.field("result_seq", pa.int64()),
        pa.field("is_error", pa.bool_()),
        pa.field("deferred", pa.string()),
        pa.field("approval", pa.string()),
        pa.field("latency_s", pa.float64()),
        pa.field("call_ts", TIMESTAMP),
        pa.field("result_ts", TIMESTAMP),
    ],
    "one row per tool call; input is compact JSON text; latency_s = result ts - call ts",
)

FINDINGS_SCHEMA: Final = _schema(
    [
        pa.field("run", pa.string()),
        pa.field("seq", pa.int64()),
        pa.field("code", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    "one row per finding (the finding codes of docs/interfaces.md)",
)

TableName = Literal["records", "runs", "messages", "tool_calls", "findings"]
TABLE_NAMES: Final[tuple[TableName, ...]] = ("records", "runs", "messages", "tool_calls", "findings")
SCHEMAS: Final[dict[str, pa.Schema]] = {
    "records": RECORDS_SCHEMA,
    "runs": RUNS_SCHEMA,
    "messages": MESSAGES_SCHEMA,
    "tool_calls": TOOL_CALLS_SCHEMA,
    "findings": FINDINGS_SCHEMA,
}


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """A DataFrame with Arrow-backed dtypes (``pd.ArrowDtype``): nulls, int64 and UTC timestamps survive."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def empty_table(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()


@dataclass(frozen=True, slots=True)
class PandasTables:
    records: pd.DataFrame
    runs: pd.DataFrame
    messages: pd.DataFrame
    tool_calls: pd.DataFrame
    findings: pd.DataFrame


@dataclass(frozen=True, slots=True)
class Tables:
    """The five tables of one load. Tables that were not asked for are empty (with their schema)."""

    records: pa.Table
    runs: pa.Table
    messages: pa.Table
    tool_calls: pa.Table
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
    def empty(cls) -> Tables:
        return cls(**{name: empty_table(name) for name in TABLE_NAMES})

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
