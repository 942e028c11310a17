"""Arrow tables over journals: ``records``, ``runs``, ``messages``, ``tool_calls`` and ``findings``.

The tables are built directly as Arrow record batches against the explicit schemas below (no
dicts -> pandas -> Arrow round trip). Timestamps are ``timestamp[us, tz=UTC]``; the raw bytes of
every record are kept, as text, in ``records.body``. ``Tables.to_pandas()`` gives DataFrames with
Arrow-backed dtypes.

One loader for every source (a directory, ``file://``, ``nats://host:port/STREAM``, ``embedded``),
from one run to all of them::

    tables = load("data/samples", strict=False)     # lenient: good runs + every finding
    tables.runs, tables.findings                    # pyarrow.Table
    frames = tables.to_pandas()                     # pandas.DataFrame per table

Strict (the default) raises at the first bad journal: ``CorruptJournal`` for an unparsable
interior line, ``FoldError`` (``RecordRefused`` with ``fold=False``) for a broken record. A torn
tail is a warning, never an error. Lenient returns the good runs (a run is good when its journal
was read and no finding of severity ``error`` names it) plus the ``findings`` of all runs;
``keep_invalid=True`` keeps the bad runs too, with status ``invalid``.

How the work is spread (see ``iter_tables``):

* ``fold=True``: folding is Python-bound, so batches of journals go to worker processes (both
  cores); file journals are read by the workers themselves, other sources' bytes are read here
  and shipped. Results come back batch by batch, in run order, with a bounded number in flight.
* ``fold=False`` (the records table only) on file journals: the fast path (see the comment above
  ``_fast_records``). This thread reads batches of journals into two reused buffers while a helper
  thread splits each into the ``body`` column with one Arrow call; the envelope fields of every line are
  parsed with ``msgspec`` (every other field is validated and skipped without building it) and checked
  column-wise with Arrow compute, by this thread and by a second process, the co-decoder, which shares
  the batches and sends back only the checked envelope columns. A journal that does not pass cleanly (a
  line msgspec refuses, a blank line, two objects on a line, invalid UTF-8, a field of the wrong type,
  ...) goes through the file backend's own reader, and any row the column checks reject is re-checked
  with ``check_envelope``: rows, findings and errors are the reader's. One known difference: a number
  beyond the range of a double (``1e400``) in a field the envelope does not name is accepted by msgspec
  while orjson, and so the file backend, refuses the line; the fast path then keeps a journal the reader
  calls corrupt. ``fold=True`` loads and audits parse with orjson and are not affected.
"""

from __future__ import annotations

import contextlib
import mmap
import multiprocessing
import os
import queue
import signal
import sys
import threading
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from journaltools._perf import paused_gc
from journaltools.backends.base import Backend, RunRead
from journaltools.backends.file import FileBackend, scan_journal
from journaltools.backends.registry import open_source
from journaltools.errors import FoldError, JournalError, RecordRefused, RunNotFound, SourceError, VersionMismatch
from journaltools.fold import FoldResult, fold, text_of
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import TIMESTAMP_PATTERN, RawRecord, check_envelope, decode_record
from journaltools.protocol.runid import validate_run_id

try:  # the envelope parser of the fast records path; without it every journal takes the exact path
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; this keeps the loader working without it
    msgspec = None  # type: ignore[assignment]

TIMESTAMP: Final = pa.timestamp("us", tz="UTC")

RECORDS_SCHEMA = pa.schema(
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
    metadata={"description": "one row per record: envelope fields, the raw bytes as text, where it was read"},
)

RUNS_SCHEMA = pa.schema(
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
        pa.field("tool_errors", pa.int64()),
        pa.field("deferrals", pa.int64()),
        pa.field("skipped_optional", pa.int64()),
        pa.field("waiting_for", pa.string()),
        pa.field("task", pa.string()),
        pa.field("error_findings", pa.int64(), nullable=False),
        pa.field("warning_findings", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    metadata={
        "description": "one row per run: the fold's status and counters. status 'invalid' = an error finding "
        "names the run (kept only with keep_invalid); pending_calls = unanswered calls of the trailing turn, "
        "deferred_calls = those of them that are deferred, deferrals = every deferral record of the run"
    },
)

MESSAGES_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("index", pa.int64(), nullable=False),
        pa.field("role", pa.string(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("tool_use_count", pa.int64(), nullable=False),
        pa.field("tool_result_count", pa.int64(), nullable=False),
    ],
    metadata={"description": "one row per folded message (Messages API shape); text = its text blocks joined"},
)

TOOL_CALLS_SCHEMA = pa.schema(
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
    metadata={"description": "one row per tool call; input is JSON text; latency_s = result ts - call ts"},
)

FINDINGS_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string()),
        pa.field("seq", pa.int64()),
        pa.field("code", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ],
    metadata={"description": "one row per finding (INTERFACES.md finding codes)"},
)


def _with_pandas_metadata(schema: pa.Schema) -> pa.Schema:
    """The schema plus pandas metadata naming Arrow-backed dtypes, so that ``pd.read_parquet`` and a plain
    ``Table.to_pandas()`` give ``int64[pyarrow]``, ``timestamp[us, tz=UTC][pyarrow]``, ... instead of float64
    for nullable integers."""
    frame = schema.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    pandas = pa.Schema.from_pandas(frame, preserve_index=False).metadata[b"pandas"]
    return schema.with_metadata({**(schema.metadata or {}), b"pandas": pandas})


RECORDS_SCHEMA = _with_pandas_metadata(RECORDS_SCHEMA)
RUNS_SCHEMA = _with_pandas_metadata(RUNS_SCHEMA)
MESSAGES_SCHEMA = _with_pandas_metadata(MESSAGES_SCHEMA)
TOOL_CALLS_SCHEMA = _with_pandas_metadata(TOOL_CALLS_SCHEMA)
FINDINGS_SCHEMA = _with_pandas_metadata(FINDINGS_SCHEMA)

TABLE_NAMES: Final = ("records", "runs", "messages", "tool_calls", "findings")
TableName = Literal["records", "runs", "messages", "tool_calls", "findings"]
SCHEMAS: Final[dict[str, pa.Schema]] = {
    "records": RECORDS_SCHEMA,
    "runs": RUNS_SCHEMA,
    "messages": MESSAGES_SCHEMA,
    "tool_calls": TOOL_CALLS_SCHEMA,
    "findings": FINDINGS_SCHEMA,
}

# The protocol's patterns in RE2 form. ``[0-9]`` rather than ``\d``: Python's ``\d`` also matches other
# Unicode digits, so RE2 accepting implies Python accepting; rows RE2 rejects are re-checked in Python.
_TS_RE2: Final = TIMESTAMP_PATTERN  # written for both re and RE2
_INT64_MAX: Final = (1 << 63) - 1


# -- the tables ----------------------------------------------------------------------------------


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

    def items(self) -> Iterator[tuple[str, pa.Table]]:
        for name in TABLE_NAMES:
            yield name, self[name]

    def to_pandas(self) -> PandasTables:
        """Every table as a DataFrame with Arrow-backed dtypes."""
        return PandasTables(**{name: to_pandas(table) for name, table in self.items()})

    @classmethod
    def empty(cls) -> Tables:
        return cls(**{name: empty_table(name) for name in TABLE_NAMES})

    @classmethod
    def concat(cls, parts: Iterable[Tables]) -> Tables:
        """One Tables from many (row order kept; no copy, each part becomes chunks)."""
        collected = list(parts)
        if not collected:
            return cls.empty()
        return cls(**{name: pa.concat_tables([part[name] for part in collected]) for name in TABLE_NAMES})


# -- column helpers --------------------------------------------------------------------------------


def _parse_ts_python(text: str) -> datetime | None:
    try:
        fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
        return datetime.strptime(text, fmt).replace(tzinfo=UTC)
    except ValueError:
        return None


def timestamps(values: pa.Array | Sequence[str | None], *, matches: pa.Array | None = None) -> pa.Array:
    """RFC 3339 UTC strings (the protocol's ``ts``) as ``timestamp[us, tz=UTC]``.

    Strings that break the protocol's pattern, and impossible dates (a 13th month, a 61st second),
    become null; more than six fractional digits are truncated to microseconds. The result of each
    string depends only on that string, whatever else is in the column.
    """
    strings = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    if len(strings) == 0:
        return pa.array([], TIMESTAMP)
    if matches is None:
        matches = pc.match_substring_regex(strings, _TS_RE2)
    valid = strings if pc.all(matches).as_py() else pc.if_else(matches, strings, pa.scalar(None, pa.string()))
    # "YYYY-MM-DDTHH:MM:SS.ffffffZ" is 27 characters: keep at most microseconds.
    if (pc.max(pc.binary_length(valid)).as_py() or 0) > 27:
        long = pc.greater(pc.binary_length(valid), 27)
        valid = pc.if_else(long, pc.binary_join_element_wise(pc.utf8_slice_codeunits(valid, 0, 26), "Z", ""), valid)
    try:
        return pc.cast(valid, TIMESTAMP)
    except pa.ArrowInvalid:  # an impossible date somewhere: decide string by string
        return pa.array([None if v is None else _parse_ts_python(v) for v in valid.to_pylist()], TIMESTAMP)


def _int64s(values: Sequence[int | None]) -> pa.Array:
    try:
        return pa.array(values, pa.int64())
    except (OverflowError, pa.ArrowInvalid):  # a seq beyond int64: valid for the protocol, not storable
        return pa.array([v if v is None or -_INT64_MAX <= v <= _INT64_MAX else None for v in values], pa.int64())


def _array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    return _int64s(values) if type_ == pa.int64() else pa.array(values, type_)


# "YYYY-MM-DDTHH:MM:SS.ffffffZ", the form writers use: byte positions of its digits and fixed characters.
_TS_WIDTH: Final = 27
_TS_DIGITS: Final = np.array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 24, 25])
_TS_FIXED: Final = {4: ord("-"), 7: ord("-"), 10: ord("T"), 13: ord(":"), 16: ord(":"), 19: ord("."), 26: ord("Z")}


def _timestamp_matches(strings: pa.Array) -> pa.Array:
    """``match_substring_regex(strings, _TS_RE2)``, vectorised for the usual case (no nulls, every string
    27 bytes): a byte-wise check with numpy, about ten times cheaper than the regex. Otherwise the regex."""
    n = len(strings)
    if n == 0 or strings.null_count or strings.type != pa.string():
        return pc.match_substring_regex(strings, _TS_RE2)
    offsets = np.frombuffer(strings.buffers()[1], np.int32, count=n + 1, offset=strings.offset * 4)
    if not (np.diff(offsets) == _TS_WIDTH).all():
        return pc.match_substring_regex(strings, _TS_RE2)
    start = int(offsets[0])
    chars = np.frombuffer(strings.buffers()[2], np.uint8, count=n * _TS_WIDTH, offset=start).reshape(n, _TS_WIDTH)
    digits = chars[:, _TS_DIGITS] - np.uint8(48)  # wraps below "0": not a digit is then > 9
    ok = (digits <= 9).all(axis=1)
    for column, char in _TS_FIXED.items():
        ok &= chars[:, column] == char
    two = digits[:, 4:14].astype(np.int16)  # month, day, hour, minute, second: two digits each
    month, day, hour, minute, second = (two[:, 2 * i] * 10 + two[:, 2 * i + 1] for i in range(5))
    ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31) & (hour <= 23) & (minute <= 59) & (second <= 60)
    return pa.array(ok, pa.bool_())


def _strings_repeated(values: Sequence[str], counts: Sequence[int] | np.ndarray) -> pa.Array:
    """``values[i]`` repeated ``counts[i]`` times, as a plain string column."""
    if len(values) == 1:
        return pa.repeat(pa.scalar(values[0], pa.string()), int(counts[0]))
    indices = pa.array(np.repeat(np.arange(len(values), dtype=np.int32), counts), pa.int32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(values, pa.string())).cast(pa.string())


def _with_source(finding: Finding, source: str) -> Finding:
    if finding.source:
        return finding
    return Finding(finding.run, finding.seq, finding.code, finding.severity, finding.message, source)


# -- building tables from records and folds (exact path; used by every backend) -----------------------


@dataclass(slots=True)
class _RecordColumns:
    run: list[str] = field(default_factory=list)
    seq: list[int | None] = field(default_factory=list)
    type: list[str | None] = field(default_factory=list)
    ts: list[str | None] = field(default_factory=list)
    optional: list[bool] = field(default_factory=list)
    body: list[bytes] = field(default_factory=list)
    position: list[int] = field(default_factory=list)

    def add(self, run: str, records: Sequence[RawRecord]) -> None:
        for record in records:
            body = record.body
            kind = body.get("type")
            ts = body.get("ts")
            self.type.append(kind if isinstance(kind, str) else None)
            self.seq.append(record.seq)
            self.ts.append(ts if isinstance(ts, str) else None)
            self.optional.append(body.get("optional") is True)
            self.body.append(record.raw)
            self.position.append(record.position)
        self.run.extend([run] * len(records))

    def batch(self, source: str) -> pa.RecordBatch:
        bodies = pa.array(self.body, pa.large_binary()).view(pa.large_string())  # orjson accepted: valid UTF-8
        return pa.RecordBatch.from_arrays(
            [
                pa.array(self.run, pa.string()),
                _int64s(self.seq),
                pa.array(self.type, pa.string()),
                timestamps(self.ts),
                pa.array(self.optional, pa.bool_()),
                pc.binary_length(bodies.view(pa.large_binary())),
                bodies,
                _strings_repeated([source], [len(self.run)]),
                pa.array(self.position, pa.int64()),
            ],
            schema=RECORDS_SCHEMA,
        )


def _count_blocks(content: Any, kind: str) -> int:
    if isinstance(content, str):
        return 0
    return sum(1 for block in content if isinstance(block, dict) and block.get("type") == kind)


class TablesBuilder:
    """Accumulates runs (their records, fold and findings) and emits one record batch per table.

    Pure: no I/O. ``add_run`` decides whether a run is good; ``finish`` returns the batch's ``Tables``.
    """

    def __init__(self, source: str, *, records: bool = True, keep_invalid: bool = False) -> None:
        self.source = source
        self.want_records = records
        self.keep_invalid = keep_invalid
        self._records = _RecordColumns()
        self._runs: dict[str, list[Any]] = {f.name: [] for f in RUNS_SCHEMA}
        self._messages: dict[str, list[Any]] = {f.name: [] for f in MESSAGES_SCHEMA}
        self._calls: dict[str, list[Any]] = {f.name: [] for f in TOOL_CALLS_SCHEMA}
        self._findings: list[Finding] = []
        self.runs_seen = 0
        self.records_seen = 0
        self.bad_runs: list[tuple[str, Finding]] = []  # (run, its first error finding), in order

    def add_findings(self, findings: Iterable[Finding]) -> None:
        self._findings.extend(_with_source(finding, self.source) for finding in findings)

    def add_run(self, read: RunRead, result: FoldResult | None) -> bool:
        """Add one run read leniently and folded leniently (``result`` None: the journal was refused).

        Returns whether the run is good (no error finding names it).
        """
        run = read.run
        findings = list(read.findings) + (list(result.findings) if result is not None else [])
        self.add_findings(findings)
        self.runs_seen += 1
        self.records_seen += len(read.records)
        first_error = next((f for f in findings if f.severity == "error"), None)
        good = result is not None and first_error is None  # a refused journal always has its corrupt_line
        if first_error is not None:
            self.bad_runs.append((run, first_error))
        if not good and not self.keep_invalid:
            return good
        if self.want_records:
            self._records.add(run, read.records)
        self._add_run_row(read, result, findings, good)
        if result is not None:
            self._add_messages(run, result)
            self._add_calls(run, result)
        return good

    def add_records_only(self, read: RunRead) -> None:
        """Add one run's records without folding it (the ``fold=False`` load of a non-file source)."""
        findings, first_error = _records_only(read, self._records, self.keep_invalid)
        self.add_findings(findings)
        self.runs_seen += 1
        self.records_seen += len(read.records)
        if first_error is not None:
            self.bad_runs.append((read.run, first_error))

    def _add_run_row(self, read: RunRead, result: FoldResult | None, findings: list[Finding], good: bool) -> None:
        row = self._runs
        errors = sum(1 for f in findings if f.severity == "error")
        warnings = sum(1 for f in findings if f.severity == "warning")
        row["run"].append(read.run)
        row["error_findings"].append(errors)
        row["warning_findings"].append(warnings)
        row["source"].append(self.source)
        if result is None:
            for name in row:
                if name not in ("run", "error_findings", "warning_findings", "source"):
                    row[name].append("invalid" if name == "status" else None)
            return
        counters = result.counters
        meta = result.meta
        row["status"].append(result.status if good else "invalid")
        row["created"].append(meta.ts if meta is not None else None)
        row["last_seq"].append(result.resume.last_seq)
        row["last_ts"].append(result.last_ts)
        row["records"].append(len(read.records))
        row["model"].append(result.model)
        row["turns"].append(counters.turns)
        row["tool_calls"].append(counters.tool_calls)
        row["input_tokens"].append(counters.input_tokens)
        row["output_tokens"].append(counters.output_tokens)
        row["pending_calls"].append(len(result.pending))
        row["deferred_calls"].append(sum(1 for call in result.pending if call.deferred is not None))
        row["claims"].append(counters.claims)
        row["errors"].append(counters.errors)
        row["tool_errors"].append(counters.tool_errors)
        row["deferrals"].append(counters.deferrals)
        row["skipped_optional"].append(counters.skipped_optional)
        row["waiting_for"].append(result.resume.waiting_for)
        row["task"].append(meta.task if meta is not None else None)

    def _add_messages(self, run: str, result: FoldResult) -> None:
        columns = self._messages
        for index, message in enumerate(result.messages):
            content = message["content"]
            columns["run"].append(run)
            columns["index"].append(index)
            columns["role"].append(message["role"])
            columns["text"].append(text_of(content))
            columns["tool_use_count"].append(_count_blocks(content, "tool_use"))
            columns["tool_result_count"].append(_count_blocks(content, "tool_result"))

    def _add_calls(self, run: str, result: FoldResult) -> None:
        columns = self._calls
        for trace in result.tool_calls:
            columns["run"].append(run)
            columns["call_id"].append(trace.call_id)
            columns["name"].append(trace.name)
            columns["input"].append(orjson.dumps(trace.input).decode())
            columns["call_seq"].append(trace.call_seq)
            columns["result_seq"].append(trace.result_seq)
            columns["is_error"].append(trace.is_error)
            columns["deferred"].append(trace.deferred)
            columns["approval"].append(trace.approval)
            columns["call_ts"].append(trace.call_ts)
            columns["result_ts"].append(trace.result_ts)
            columns["latency_s"].append(None)  # from the parsed timestamps, in finish()

    def finish(self) -> Tables:
        runs = self._runs
        run_arrays = []
        for f in RUNS_SCHEMA:
            values = runs[f.name]
            run_arrays.append(timestamps(values) if f.type == TIMESTAMP else _array(values, f.type))
        calls = self._calls
        call_ts = timestamps(calls["call_ts"])
        result_ts = timestamps(calls["result_ts"])
        latency = pc.divide(
            pc.cast(pc.subtract(result_ts, call_ts), pa.int64()).cast(pa.float64()), pa.scalar(1_000_000.0)
        )
        call_arrays = []
        for f in TOOL_CALLS_SCHEMA:
            if f.name == "call_ts":
                call_arrays.append(call_ts)
            elif f.name == "result_ts":
                call_arrays.append(result_ts)
            elif f.name == "latency_s":
                call_arrays.append(latency)
            else:
                call_arrays.append(_array(calls[f.name], f.type))
        messages = self._messages
        message_arrays = [_array(messages[f.name], f.type) for f in MESSAGES_SCHEMA]
        tables = Tables(
            records=pa.Table.from_batches([self._records.batch(self.source)], RECORDS_SCHEMA)
            if self.want_records
            else empty_table("records"),
            runs=pa.Table.from_arrays(run_arrays, schema=RUNS_SCHEMA),
            messages=pa.Table.from_arrays(message_arrays, schema=MESSAGES_SCHEMA),
            tool_calls=pa.Table.from_arrays(call_arrays, schema=TOOL_CALLS_SCHEMA),
            findings=findings_table(self._findings),
        )
        return tables


def findings_of(table: pa.Table) -> list[Finding]:
    """The ``Finding`` values of a ``findings`` table (the inverse of ``findings_table``)."""
    return [
        Finding(row["run"], row["seq"], row["code"], row["severity"], row["message"], row["source"])
        for row in table.to_pylist()
    ]


def findings_table(findings: Sequence[Finding]) -> pa.Table:
    """The ``findings`` table of a list of findings."""
    return pa.Table.from_arrays(
        [
            pa.array([f.run for f in findings], pa.string()),
            _int64s([f.seq for f in findings]),
            pa.array([f.code for f in findings], pa.string()),
            pa.array([f.severity for f in findings], pa.string()),
            pa.array([f.message for f in findings], pa.string()),
            pa.array([f.source for f in findings], pa.string()),
        ],
        schema=FINDINGS_SCHEMA,
    )


def tables_of_runs(
    reads: Iterable[tuple[RunRead, FoldResult | None]],
    source: str,
    *,
    records: bool = True,
    keep_invalid: bool = False,
) -> Tables:
    """The five tables of runs already read and folded (leniently). Pure; handy for notebooks and tests."""
    builder = TablesBuilder(source, records=records, keep_invalid=keep_invalid)
    for read, result in reads:
        builder.add_run(read, result)
    return builder.finish()


# -- batches of work ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchJob:
    """A batch of runs to load, read by whoever runs the job: file journals by path, runs of a source the job
    opens itself (a Dask worker connecting to the NATS server), or reads shipped with the job."""

    source: str  # the source URL, for the tables' source column
    runs: tuple[str, ...]
    root: str | None = None  # file backend root: the job reads the journals itself
    url: str | None = None  # a source URL the job opens and reads ``runs`` from
    reads: tuple[tuple[str, tuple[tuple[bytes, int], ...], tuple[Finding, ...], bool], ...] = ()
    fold: bool = True
    records: bool = True
    keep_invalid: bool = False


@dataclass(slots=True)
class BatchOutput:
    tables: Tables
    runs: int
    records: int
    bad_runs: list[tuple[str, Finding]]
    failed: list[tuple[str, str]]  # (run, error text): a JournalError raised while reading; redone by the caller


def _reads_of(job: BatchJob) -> Iterator[RunRead | tuple[str, JournalError]]:
    if job.root is not None:
        backend = FileBackend(job.root)
        for run in job.runs:
            try:
                yield backend.read_run_now(run, strict=False)
            except JournalError as exc:
                yield run, exc
        return
    if job.url is not None:
        with open_source(job.url) as source:
            for run in job.runs:
                try:
                    yield source.read_run(run, strict=False)
                except JournalError as exc:
                    yield run, exc
        return
    for run, raws, findings, complete in job.reads:
        with paused_gc():
            records = [decode_record(raw, position) for raw, position in raws]
        yield RunRead(run, records, list(findings), job.source, complete)


def run_batch(job: BatchJob) -> BatchOutput:
    """Load one batch of runs, leniently: read, fold, build the tables. Runs in a worker process or here."""
    builder = TablesBuilder(job.source, records=job.records, keep_invalid=job.keep_invalid)
    failed: list[tuple[str, str]] = []
    for item in _reads_of(job):
        if isinstance(item, tuple):
            failed.append((item[0], str(item[1])))
            continue
        result = fold(item.records, strict=False, run=item.run) if item.complete and job.fold else None
        if job.fold:
            builder.add_run(item, result)
        else:
            builder.add_records_only(item)
    return BatchOutput(builder.finish(), builder.runs_seen, builder.records_seen, builder.bad_runs, failed)


def _records_only(read: RunRead, columns: _RecordColumns, keep_invalid: bool) -> tuple[list[Finding], Finding | None]:
    """The exact records path of one run: the reader's findings, envelope findings per record, no fold.

    Adds the run's records to ``columns`` unless an error finding names it (and ``keep_invalid`` is off);
    returns the findings and the first error among them.
    """
    findings = list(read.findings)
    for record in read.records:
        finding = check_envelope(record, expected_run=read.run)
        if finding is not None:
            findings.append(finding)
    first_error = next((f for f in findings if f.severity == "error"), None)
    if first_error is None or keep_invalid:
        columns.add(read.run, read.records)
    return findings, first_error


# -- the fast records path (file journals, fold=False) ------------------------------------------------
#
# Batch by batch (about batch_bytes of journals each):
#   1a. this thread reads the batch into one of two reused buffers;
#   1b. a helper thread splits it into lines (the body column) with one Arrow call that releases the GIL;
#   2.  the envelope fields of every line are parsed with msgspec and checked column-wise: the envelope work;
#   3.  this thread re-checks any row the column checks rejected and assembles the record batch.
# Everything that needs the GIL often stays in this thread on purpose: a helper thread that has to win the
# GIL back for every file read waits behind msgspec, which holds it while parsing, and stalls the pipeline.
#
# Stage 2 is most of the work and is bound to one core by the GIL, so a second process, the co-decoder,
# shares it: it maps a batch's journals itself (from the page cache), checks their UTF-8 and sends back
# only the checked envelope columns, a few percent of the bytes. This thread claims batches in order as it
# reaches them; the co-decoder claims the furthest unclaimed one within _WINDOW batches of this thread (in
# shared memory, under a lock): the two work from opposite ends of the window and meet wherever their speeds
# put them, and results wait here for at most one window, even while a load is paused.
# A co-decoder result is used only if the co-decoder saw the same bytes (per journal: size, line count,
# CRC-32 of the last 4 KiB; the rest of an append-only journal never changes); otherwise, or once the
# co-decoder has died, this thread does the batch's envelope work itself.
#
# Dropped after measuring on a 1 GB corpus with 2 cores: whole batches in worker processes with the body
# column handed back through /dev/shm (0.97x pyarrow's read_json: the copy back cost what the parse saved);
# reading in the helper thread (it waits for the GIL behind msgspec); mmap instead of reads in this
# process (a journal truncated during a load would kill it with SIGBUS; the co-decoder may die that way);
# splitting lines with Arrow's CSV reader, with a uint8 filter, or in C (0.21 s/GB against split_pattern's
# 0.33: too little for a compiled extension); attrgetter, zip and struct-array column builds, per-journal
# Literal decoders, a shorter switch interval, and batches of 4, 8 or 32 MB (no gain).
# Where the time goes now (perf, 2-core VM): about a third of all CPU is the kernel zeroing the fresh pages
# the body column is copied into (clear_page_erms under the split's memmove), a cost pyarrow's read_json,
# which keeps no raw bytes, does not pay; msgspec's parse and Arrow's split come next.

if msgspec is not None:

    class _Envelope(msgspec.Struct, gc=False):
        """Only the envelope: msgspec skips every other field without building it."""

        type: str | None = None
        run: str | None = None
        seq: int | None = None
        ts: str | None = None
        optional: bool | msgspec.UnsetType = msgspec.UNSET  # "optional": null fails here: exact path

    _ENVELOPE_DECODER: Any = msgspec.json.Decoder(_Envelope)

_TAIL_BYTES: Final = 4096  # the co-decoder and this thread compare a CRC-32 of each journal's last bytes
_WINDOW: Final = 64  # the co-decoder claims only among the next this many batches from where this thread is
# Batches (of 16 MB by default) from which a load starts a co-decoder by default. Measured against none: 5-15%
# slower from 50 to 250 MB, 5% faster at 500 MB, about 20% at 1 GB. Without fork (another thread runs, as in
# Jupyter) the first co-decoder of a session also starts the forkserver, about 1.2 s.
_CO_DECODER_FROM: Final = {"fork": 32, "forkserver": 128}
_RESULT_DEADLINE: Final = 60.0  # seconds this thread waits for one co-decoder result before it gives up on it
_UNCLAIMED, _CLAIMED_HERE, _CLAIMED_BY_CO_DECODER = 0, 1, 2
_MAP_POPULATE: Final = getattr(mmap, "MAP_POPULATE", 0)  # fault the pages in with one call (Linux)
_OPEN_BRACE, _CLOSE_BRACE = ord("{"), ord("}")


@dataclass(frozen=True, slots=True)
class _Journal:
    run: str
    path: str
    size: int


@dataclass(slots=True)
class _PreparedBatch:
    """Stage 1's output: a batch of journals read and split into lines."""

    journals: list[_Journal]
    data: memoryview  # the journals' bytes, each ending in a newline (a view of a reused buffer)
    starts: np.ndarray  # byte offset of each journal in data
    lines: pa.LargeBinaryArray  # every line, without its newline
    first_line: np.ndarray  # index in lines of each journal's first line
    counts: np.ndarray  # lines per journal
    framed: np.ndarray  # per journal: it has lines, and every one starts with "{" and ends with "}"
    utf8: bool | None  # whether the whole batch is UTF-8; None: not checked (the co-decoder checks its own)

    def spans(self) -> list[tuple[int, int]]:
        """Each journal's (start, end) in ``data``."""
        starts = self.starts.tolist()
        return list(zip(starts, [*starts[1:], len(self.data)], strict=True))


@dataclass(slots=True)
class _Checked:
    """Stage 2's output for a stretch of journals msgspec took whole: the checked envelope columns."""

    first: int  # index in the batch of the stretch's first journal
    counts: np.ndarray  # lines per journal
    kinds: pa.Array
    seqs: pa.Array
    ts: pa.Array  # timestamp[us, UTC]; null where the string breaks the protocol's pattern
    optional: pa.Array
    suspects: list[int]  # rows (of the stretch) the column checks rejected or could not decide


@dataclass(slots=True)
class _BatchEnvelopes:
    """Stage 2's output for a batch: checked stretches, and journals (by index) for the exact reader."""

    items: list[_Checked | int]
    sizes: list[int]  # bytes per journal as parsed (a missing final newline added); the co-decoder's only
    tails: list[int]  # CRC-32 of each journal's last bytes; the co-decoder's only


@dataclass(slots=True)
class _RecordsPart:
    batch: pa.RecordBatch
    findings: list[Finding]
    bad: list[tuple[str, Finding]]  # (run, its first error finding), in journal order


def _read_journals(journals: Sequence[_Journal], buffer: np.ndarray) -> tuple[memoryview, np.ndarray]:
    """Read journals into ``buffer`` (large enough), each followed by a newline if it lacks one."""
    view = memoryview(buffer.data)
    starts = np.empty(len(journals), np.int64)
    position = 0
    for index, journal in enumerate(journals):
        starts[index] = position
        # Read what the journal held when listed: a record appended since is not part of this load.
        with open(journal.path, "rb", buffering=0) as handle:
            got = 0
            while got < journal.size:
                n = handle.readinto(view[position + got : position + journal.size])
                if not n:
                    break
                got += n
        position += got
        if got and buffer[position - 1] != 0x0A:
            buffer[position] = 0x0A
            position += 1
    return view[:position], starts


def _buffer_for(journals: Sequence[_Journal], buffer: np.ndarray) -> np.ndarray:
    """``buffer``, or a new one if it is too small for the batch.

    Never resized in place: an older batch may still view the old one. numpy rather than bytearray: numpy
    asks for transparent huge pages for large arrays, which makes the copy from the page cache (and every
    later pass over the bytes) cheaper.
    """
    need = sum(j.size for j in journals) + len(journals)
    return buffer if len(buffer) >= need else np.empty(need, np.uint8)


def _split_lines(data: memoryview) -> pa.LargeBinaryArray:
    """The lines of newline-terminated bytes, without their newlines, copied into one Arrow buffer."""
    whole = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, len(data)], np.int64)), pa.py_buffer(data)]
    )
    values = pc.split_pattern(whole, "\n").values
    return values.slice(0, len(values) - 1)  # the piece after the final newline is always empty


def _is_utf8(data: Any) -> bool:
    """Whether bytes are UTF-8 (msgspec does not check the strings it skips). A newline is never part of a
    multi-byte sequence, so the lines of UTF-8 bytes are UTF-8 too."""
    buffer = pa.py_buffer(data)
    text = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(buffer)], np.int64)), buffer)
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _framed_journals(lines: pa.LargeBinaryArray, first_line: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per journal: whether it has lines and each starts with ``{`` and ends with ``}``.

    With every line framed so, no JSON value can run on from one line into the next (what follows a ``}``
    inside a value is never a ``{``), so msgspec's count of values equals the number of lines only if each
    line holds exactly one: the envelopes then match the lines row by row. A blank or whitespace-only line,
    or whitespace around a record, sends the journal to the exact reader.
    """
    offsets = np.frombuffer(lines.buffers()[1], np.int64, count=len(lines) + 1, offset=lines.offset * 8)
    data = np.frombuffer(lines.buffers()[2], np.uint8) if lines.buffers()[2] is not None else np.zeros(0, np.uint8)
    framed = np.diff(offsets) >= 2
    if len(data):
        last = len(data) - 1
        framed &= data[np.minimum(offsets[:-1], last)] == _OPEN_BRACE
        framed &= data[np.clip(offsets[1:] - 1, 0, last)] == _CLOSE_BRACE
    else:
        framed[:] = False
    unframed = np.concatenate([[0], np.cumsum(~framed)])
    per_journal: np.ndarray = (unframed[first_line + counts] == unframed[first_line]) & (counts > 0)
    return per_journal


def _split_batch(journals: list[_Journal], data: memoryview, starts: np.ndarray, *, check_utf8: bool) -> _PreparedBatch:
    """Stage 1b (helper thread, mostly without the GIL): split a batch into lines and frame-check them; check
    UTF-8 too if asked (with a co-decoder, only batches this thread claims need it, known only later)."""
    lines = _split_lines(data)
    offsets = np.frombuffer(lines.buffers()[1], np.int64, count=len(lines) + 1)
    line_starts = offsets[:-1] + np.arange(len(lines), dtype=np.int64)  # each earlier line lost one newline
    first_line = np.searchsorted(line_starts, starts)
    counts = np.diff(np.append(first_line, len(lines)))
    framed = _framed_journals(lines, first_line, counts)
    return _PreparedBatch(
        journals, data, starts, lines, first_line, counts, framed, _is_utf8(data) if check_utf8 else None
    )


def _decode_journal(data: Any) -> list[Any] | None:
    """The envelopes of one journal's lines, or None if msgspec refuses one of them."""
    if msgspec is None:
        return None
    try:
        decoded: list[Any] = _ENVELOPE_DECODER.decode_lines(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
        return None
    return decoded


def _check_stretch(journals: Sequence[_Journal], first: int, counts: list[int], decoded: list[Any]) -> _Checked:
    """The envelope columns of a stretch of journals, with the rows the column checks reject."""
    kinds = pa.array([e.type for e in decoded], pa.string())
    seqs = _int64s([e.seq for e in decoded])
    ts = pa.array([e.ts for e in decoded], pa.string())
    ts_ok = _timestamp_matches(ts)
    ok = pc.and_kleene(pc.greater(pc.binary_length(kinds), 0), pc.greater_equal(seqs, 1))
    runs = [e.run for e in decoded]
    expected = list(chain.from_iterable(repeat(j.run, count) for j, count in zip(journals, counts, strict=True)))
    if runs != expected:  # usually every line names its own run, and no Arrow column is built to check it
        ok = pc.and_kleene(ok, pc.equal(pa.array(runs, pa.string()), pa.array(expected, pa.string())))
    ok = pc.fill_null(pc.and_kleene(ok, ts_ok), False)  # a missing field (null) is not ok
    suspects = [] if pc.all(ok).as_py() else np.flatnonzero(~ok.to_numpy(zero_copy_only=False)).tolist()
    return _Checked(
        first,
        np.array(counts, np.int64),
        kinds,
        seqs,
        timestamps(ts, matches=ts_ok),
        pa.array([e.optional is True for e in decoded], pa.bool_()),
        suspects,
    )


def _envelope_work(
    journals: Sequence[_Journal],
    decode: Callable[[int], list[Any] | None],
    counts: Sequence[int] | None = None,
) -> list[_Checked | int]:
    """Stage 2 for a batch: checked envelope columns for every stretch of journals whose envelopes
    ``decode(index)`` gives, and the index of every other journal (for the exact reader).

    A journal goes to the exact reader too when its envelopes differ in number from ``counts`` (lines per
    journal, from the split: this thread's). The co-decoder, which has not split the batch, passes no
    counts; this thread compares its counts with the split's.
    """
    items: list[_Checked | int] = []
    stretch: list[int] = []
    stretch_counts: list[int] = []
    decoded: list[Any] = []

    def close_stretch() -> None:
        if stretch:
            items.append(_check_stretch(journals[stretch[0] : stretch[-1] + 1], stretch[0], stretch_counts, decoded))
            stretch.clear()
            stretch_counts.clear()
            decoded.clear()

    for index in range(len(journals)):
        envelopes = decode(index)
        if not envelopes or (counts is not None and len(envelopes) != counts[index]):
            close_stretch()
            items.append(index)
        else:
            stretch.append(index)
            stretch_counts.append(len(envelopes))
            decoded.extend(envelopes)
    close_stretch()
    return items


def _local_envelopes(prepared: _PreparedBatch) -> _BatchEnvelopes:
    """Stage 2 in this thread."""
    data, spans = prepared.data, prepared.spans()
    batch_utf8 = prepared.utf8 if prepared.utf8 is not None else _is_utf8(data)

    def decode(index: int) -> list[Any] | None:
        start, end = spans[index]
        chunk = data[start:end]
        if not prepared.framed[index] or not (batch_utf8 or _is_utf8(chunk)):
            return None
        return _decode_journal(chunk)

    return _BatchEnvelopes(_envelope_work(prepared.journals, decode, prepared.counts.tolist()), [], [])


def _agrees(envelopes: _BatchEnvelopes, prepared: _PreparedBatch) -> bool:
    """Whether the co-decoder's stage 2 holds for this thread's bytes of the batch: the same sizes, tails and
    line counts, and every journal of a checked stretch framed (the co-decoder checked UTF-8 itself)."""
    data, spans = prepared.data, prepared.spans()
    if envelopes.sizes != [end - start for start, end in spans]:
        return False
    if envelopes.tails != [zlib.crc32(data[max(start, end - _TAIL_BYTES) : end]) for start, end in spans]:
        return False
    for item in envelopes.items:
        if isinstance(item, _Checked):
            stretch = slice(item.first, item.first + len(item.counts))
            if not (np.array_equal(item.counts, prepared.counts[stretch]) and prepared.framed[stretch].all()):
                return False
    return True


def _mapped_envelopes(journal: _Journal) -> tuple[list[Any] | None, int, int]:
    """The co-decoder's stage 2 input for one journal: its envelopes (None: not UTF-8, or msgspec refuses a
    line), with the size and tail CRC-32 the reading thread's layout gives it (a missing final newline
    added). The journal is mapped, not read, and unmapped before this returns. Raises OSError for a journal
    that is gone or shorter than listed: this thread's own read then decides."""
    if journal.size == 0:
        return None, 0, zlib.crc32(b"")
    with open(journal.path, "rb", buffering=0) as handle:
        if os.fstat(handle.fileno()).st_size < journal.size:
            raise OSError(f"{journal.path} is shorter than listed")
        mapped = mmap.mmap(handle.fileno(), journal.size, flags=mmap.MAP_SHARED | _MAP_POPULATE, prot=mmap.PROT_READ)
    with mapped:
        size = journal.size
        if mapped[size - 1] == 0x0A:
            tail = zlib.crc32(mapped[max(0, size - _TAIL_BYTES) : size])
        else:
            tail = zlib.crc32(b"\n", zlib.crc32(mapped[max(0, size + 1 - _TAIL_BYTES) : size]))
            size += 1
        envelopes = _decode_journal(mapped) if _is_utf8(mapped) else None
    return envelopes, size, tail


@dataclass(frozen=True, slots=True)
class _CoDecoderPlan:
    """How the co-decoder shares the work. The defaults are the loader's; the others serve the tests."""

    takes_all: bool = False  # every batch is the co-decoder's, claimed before this thread starts
    exit_after: int | None = None  # it dies holding the batch it claims after this many


@dataclass(frozen=True, slots=True)
class _Shared:
    """What this thread and the co-decoder share: who owns each batch, where this thread is, and a
    semaphore released each time it moves on (the co-decoder waits on it when it has nothing to claim)."""

    owners: Any  # multiprocessing RawArray of _UNCLAIMED, _CLAIMED_HERE, _CLAIMED_BY_CO_DECODER
    position: Any  # multiprocessing RawValue: the batch this thread is at
    lock: Any
    advanced: Any
    parent: int  # this process's pid: the co-decoder stops once it is gone


def _parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a pid reused by another user's process
        return False
    return True


def _claims(count: int, shared: _Shared, plan: _CoDecoderPlan) -> Iterator[int]:
    """The batches the co-decoder takes: the furthest unclaimed one within ``_WINDOW`` of this thread, so
    the two work from opposite ends and results never pile up far ahead (even if the load is paused)."""
    if plan.takes_all:
        yield from reversed(range(count))
        return
    while True:
        while not shared.lock.acquire(timeout=1.0):
            if not _parent_alive(shared.parent):
                return
        try:
            start = shared.position.value
            window = range(start, min(start + _WINDOW, count))
            number = next((k for k in reversed(window) if shared.owners[k] == _UNCLAIMED), None)
            if number is not None:
                shared.owners[number] = _CLAIMED_BY_CO_DECODER
        finally:
            shared.lock.release()
        if number is not None:
            yield number
        elif window.stop == count:
            return  # every batch left is claimed
        else:
            while not shared.advanced.acquire(timeout=1.0):
                if not _parent_alive(shared.parent):
                    return


def _co_decode_batch(journals: list[_Journal]) -> _BatchEnvelopes:
    """The co-decoder's stage 2 for one batch."""
    sizes: list[int] = []
    tails: list[int] = []

    def decode(index: int) -> list[Any] | None:
        envelopes, size, tail = _mapped_envelopes(journals[index])
        sizes.append(size)
        tails.append(tail)
        return envelopes

    items = _envelope_work(journals, decode)
    return _BatchEnvelopes(items, sizes, tails)


def _co_decoder_main(
    batches: list[list[_Journal]], shared: _Shared, results: Any, unused_end: Any, plan: _CoDecoderPlan
) -> None:
    """The co-decoder process: stage 2 of the batches it claims, each result sent as soon as it is done.

    It maps the journals instead of reading them: a journal truncated while mapped kills this process
    with SIGBUS, and the reading thread, seeing it gone, does the remaining batches itself.
    """
    # Ctrl-C is for the loading process, which stops this one; SIGTERM must end it whatever the parent set.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    unused_end.close()  # with the loading process gone, a send then fails instead of blocking
    # A sender thread, so parsing never waits for the loading process to drain the pipe (its reader
    # thread needs the GIL for that, which msgspec there holds in long stretches).
    outbox: queue.SimpleQueue[tuple[int, _BatchEnvelopes | None] | None] = queue.SimpleQueue()
    sender = threading.Thread(target=_send_all, args=(outbox, results), daemon=True)
    sender.start()
    with paused_gc():
        for done, number in enumerate(_claims(len(batches), shared, plan)):
            if done == plan.exit_after:
                os._exit(3)
            if not sender.is_alive():
                break  # the loading process is gone
            try:
                envelopes = _co_decode_batch(batches[number])
            except OSError:
                envelopes = None
            outbox.put((number, envelopes))
    outbox.put(None)
    sender.join()


def _send_all(outbox: queue.SimpleQueue[tuple[int, _BatchEnvelopes | None] | None], results: Any) -> None:
    """The co-decoder's sender thread: results to the loading process, in the order they were done."""
    with contextlib.suppress(BrokenPipeError):  # the loading process is gone
        while (item := outbox.get()) is not None:
            results.send(item)


def _can_fork() -> bool:
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def _multiprocessing_context() -> Any:
    """``fork`` when this process runs no other Python thread: fast to start, and scripts need no
    ``if __name__ == "__main__"`` guard. Otherwise (e.g. the NATS loop thread is running) ``forkserver``:
    forking a process while another thread may hold a lock can deadlock the child.
    """
    if _can_fork():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["journaltools.tables"])
    return context


class _CoDecoder:
    """The co-decoder process and this thread's side of it (see the comment above).

    Results come over a one-way pipe that a reader thread here drains as they arrive, so the co-decoder
    never blocks on a full pipe; the end of the pipe (the co-decoder exited or died) ends the reader.
    """

    def __init__(self, batches: list[list[_Journal]], plan: _CoDecoderPlan) -> None:
        context = _multiprocessing_context()
        owners = context.RawArray("b", len(batches))
        if plan.takes_all:
            owners[:] = [_CLAIMED_BY_CO_DECODER] * len(batches)
        self._shared = _Shared(owners, context.RawValue("q", 0), context.Lock(), context.Semaphore(0), os.getpid())
        self._results, sending_end = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_co_decoder_main,
            args=(batches, self._shared, sending_end, self._results, plan),
            name="journaltools-co-decoder",
            daemon=True,
        )
        self._process.start()
        sending_end.close()  # the co-decoder holds the only sending end: its exit ends the pipe
        self._received: dict[int, _BatchEnvelopes | None] = {}
        self._ended = False
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="journaltools-co-decoder-results", daemon=True)
        self._reader.start()
        self.alive = True

    @classmethod
    def start(cls, batches: list[list[_Journal]], plan: _CoDecoderPlan) -> _CoDecoder | None:
        """A co-decoder, or None where no process can be started (a daemonic worker of a pool or of Dask
        may not have children; a sandbox may have no shared memory for the lock): this thread does all."""
        if multiprocessing.current_process().daemon:
            return None
        try:
            return cls(batches, plan)
        except (OSError, ValueError, AssertionError):
            return None

    def _read(self) -> None:
        try:
            while True:
                number, envelopes = self._results.recv()
                with self._arrived:
                    self._received[number] = envelopes
                    self._arrived.notify_all()
        except (EOFError, OSError):
            with self._arrived:
                self._ended = True
                self._arrived.notify_all()

    def take(self, number: int, prepared: _PreparedBatch) -> _BatchEnvelopes | None:
        """The co-decoder's stage 2 of batch ``number``, or None if this thread is to do it."""
        if not self.alive or self._claim_here(number):
            return None
        envelopes = self._wait_for(number)
        return envelopes if envelopes is not None and _agrees(envelopes, prepared) else None

    def _claim_here(self, number: int) -> bool:
        shared = self._shared
        shared.position.value = number
        # A timeout, not a plain acquire: a co-decoder killed while holding the lock never releases it.
        while not shared.lock.acquire(timeout=0.5):
            if not self._process.is_alive():
                self.alive = False
                return True
        try:
            mine = shared.owners[number] == _UNCLAIMED
            if mine:
                shared.owners[number] = _CLAIMED_HERE
        finally:
            shared.lock.release()
        shared.advanced.release()
        return bool(mine)

    def _wait_for(self, number: int) -> _BatchEnvelopes | None:
        with self._arrived:
            arrived = self._arrived.wait_for(lambda: number in self._received or self._ended, timeout=_RESULT_DEADLINE)
            if arrived and number in self._received:
                return self._received.pop(number)
        # It died on this batch, or is stuck: from now on this thread does every batch.
        self.alive = False
        self._process.kill()
        return None

    def stop(self) -> None:
        """End the co-decoder (if it has not ended) and the reader thread. Never waits long."""
        self._process.terminate()
        self._process.join(timeout=5)
        if self._process.exitcode is None:
            self._process.kill()
            self._process.join()
        self._reader.join()  # the co-decoder's exit ended the pipe
        self._results.close()
        self._process.close()


def _co_decoder_pays(batches: Sequence[Sequence[_Journal]], workers: int | None) -> bool:
    """Whether to start a co-decoder: ``workers=1`` never, ``workers`` > 1 whenever there are two batches to
    share, and by default once the load is large enough to repay starting one (see ``_CO_DECODER_FROM``)."""
    if msgspec is None:
        return False
    if workers is not None:
        return workers > 1 and len(batches) >= 2
    if default_workers() < 2:
        return False
    return len(batches) >= _CO_DECODER_FROM["fork" if _can_fork() else "forkserver"]


def _fast_part(
    checked: _Checked, journals: Sequence[_Journal], text: pa.LargeStringArray, source: str, keep_invalid: bool
) -> _RecordsPart:
    """Stage 3 for a stretch: re-check the suspect rows and assemble the record batch.

    A suspect row is re-checked with ``check_envelope`` on the orjson-parsed line, so the findings are
    exactly the exact path's.
    """
    counts = checked.counts
    n = len(text)
    findings: list[Finding] = []
    first_error: dict[int, Finding] = {}
    if checked.suspects:
        owner = np.repeat(np.arange(len(journals)), counts)
        for row in checked.suspects:
            journal = int(owner[row])
            record = decode_record(text[row].as_py().encode())
            finding = check_envelope(record, expected_run=journals[journal].run)
            if finding is not None:
                findings.append(_with_source(finding, source))
                if finding.severity == "error":
                    first_error.setdefault(journal, finding)
    first_line = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    positions = np.arange(n, dtype=np.int64) - np.repeat(first_line, counts) + 1
    batch = pa.RecordBatch.from_arrays(
        [
            _strings_repeated([j.run for j in journals], counts),  # valid run ids, checked by the loader
            checked.seqs,
            checked.kinds,
            checked.ts,
            checked.optional,
            pc.binary_length(text.view(pa.large_binary())),
            text,
            _strings_repeated([source], [n]),
            pa.array(positions, pa.int64()),
        ],
        schema=RECORDS_SCHEMA,
    )
    if first_error and not keep_invalid:
        keep = np.ones(len(journals), bool)
        keep[list(first_error)] = False
        batch = batch.filter(pa.array(np.repeat(keep, counts)))
    bad = [(journals[index].run, first_error[index]) for index in sorted(first_error)]
    return _RecordsPart(batch, findings, bad)


def _exact_part(journal: _Journal, source: str, keep_invalid: bool) -> _RecordsPart:
    """The file backend's reader, for a journal the fast path cannot take as it is."""
    with open(journal.path, "rb") as handle:
        data = handle.read(journal.size)
    scanned = scan_journal(data, journal.run, journal.path)
    read = RunRead(journal.run, scanned.records, scanned.findings, source, scanned.corrupt is None)
    columns = _RecordColumns()
    findings, first_error = _records_only(read, columns, keep_invalid)
    return _RecordsPart(
        columns.batch(source),
        [_with_source(f, source) for f in findings],
        [(journal.run, first_error)] if first_error is not None else [],
    )


def _finish_batch(
    prepared: _PreparedBatch, envelopes: _BatchEnvelopes, source: str, keep_invalid: bool
) -> list[_RecordsPart]:
    """Stage 3 for a batch."""
    parts = []
    for item in envelopes.items:
        if isinstance(item, int):
            parts.append(_exact_part(prepared.journals[item], source, keep_invalid))
            continue
        journals = prepared.journals[item.first : item.first + len(item.counts)]
        line = int(prepared.first_line[item.first])
        text = prepared.lines.slice(line, int(item.counts.sum())).view(pa.large_string())
        parts.append(_fast_part(item, journals, text, source, keep_invalid))
    return parts


def _file_journals(backend: FileBackend, runs: Sequence[str]) -> list[_Journal]:
    journals = []
    for run in runs:
        path = backend.path_of(run)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            raise RunNotFound(run, str(backend.root)) from None
        journals.append(_Journal(run, str(path), size))
    return journals


def _batches_by_size(journals: Sequence[_Journal], target: int) -> list[list[_Journal]]:
    batches: list[list[_Journal]] = []
    current: list[_Journal] = []
    size = 0
    for journal in journals:
        if current and size + journal.size > target:
            batches.append(current)
            current, size = [], 0
        current.append(journal)
        size += journal.size
    if current:
        batches.append(current)
    return batches


def _fast_records(
    backend: FileBackend,
    runs: Sequence[str],
    *,
    strict: bool,
    keep_invalid: bool,
    batch_bytes: int,
    workers: int | None,
    tick: Callable[[int], None],
    co_decoder_plan: _CoDecoderPlan | None = None,
) -> Generator[Tables, None, None]:
    """The records table of file journals, batch by batch (see the comment at the top of this section)."""
    batches = _batches_by_size(_file_journals(backend, runs), batch_bytes)
    if not batches:
        return
    source = backend.url
    buffers = [np.empty(0, np.uint8), np.empty(0, np.uint8)]

    def read(number: int) -> tuple[memoryview, np.ndarray]:
        slot = number % 2
        buffers[slot] = _buffer_for(batches[number], buffers[slot])
        return _read_journals(batches[number], buffers[slot])

    # Started before the helper thread: with no other thread running, the co-decoder can be forked.
    plan = co_decoder_plan or _CoDecoderPlan()
    wanted = co_decoder_plan is not None or _co_decoder_pays(batches, workers)
    co_decoder = _CoDecoder.start(batches, plan) if wanted else None
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="journaltools-records") as helper:
            check_utf8 = co_decoder is None
            splitting = helper.submit(_split_batch, batches[0], *read(0), check_utf8=check_utf8)
            for number in range(len(batches)):
                prepared = splitting.result()
                following = number + 1
                if following < len(batches):
                    # Read the next batch into the other buffer; the helper splits it while this one is parsed.
                    data, starts = read(following)
                    splitting = helper.submit(_split_batch, batches[following], data, starts, check_utf8=check_utf8)
                    del data
                with paused_gc():
                    envelopes = co_decoder.take(number, prepared) if co_decoder is not None else None
                    parts = _finish_batch(prepared, envelopes or _local_envelopes(prepared), source, keep_invalid)
                del prepared  # frees the buffer for the batch after next
                bad = [entry for part in parts for entry in part.bad]
                if strict and bad:
                    splitting.result()  # let the helper finish before the error unwinds
                    _raise_for(backend, bad[0], fold_runs=False)
                tick(len(batches[number]))
                yield Tables(
                    records=pa.Table.from_batches([part.batch for part in parts], RECORDS_SCHEMA),
                    runs=empty_table("runs"),
                    messages=empty_table("messages"),
                    tool_calls=empty_table("tool_calls"),
                    findings=findings_table([f for part in parts for f in part.findings]),
                )
    finally:
        if co_decoder is not None:
            co_decoder.stop()


def _raise_for(backend: Backend, bad: tuple[str, Finding], *, fold_runs: bool) -> None:
    """Strict mode: redo the first bad run here, strictly, so the genuine exception is raised."""
    run, finding = bad
    read = backend.read_run(run, strict=True)  # raises CorruptJournal for a corrupt journal
    if fold_runs:
        fold(read.records, strict=True, run=run)  # raises FoldError / VersionMismatch
    else:
        for record in read.records:
            problem = check_envelope(record, expected_run=run)
            if problem is not None and problem.severity == "error":
                raise RecordRefused(problem.run or run, problem.seq, problem.code, problem.message)
    error_type = VersionMismatch if finding.code == "version_mismatch" else FoldError
    raise error_type(run, finding.seq, finding.code, finding.message)


# -- the loader --------------------------------------------------------------------------------------


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (not merely when IPython or ipykernel has been imported)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def _progress_enabled(progress: bool | None, quiet: bool) -> bool:
    if quiet or progress is False:
        return False
    if progress:
        return True
    if _in_notebook():  # tqdm.auto draws a widget there
        return True
    stream = sys.stderr
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()


class _Progress:
    """A tqdm bar over runs (tqdm.auto: a widget in notebooks), or nothing."""

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            class Bar(tqdm):  # type: ignore[misc]
                # No monitor thread: with no other thread running, the loader can still fork its processes.
                monitor_interval = 0

            self._bar = Bar(total=total, desc=description, unit="run", leave=False, file=sys.stderr)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for folding (started as ``_multiprocessing_context`` says)."""
    return ProcessPoolExecutor(workers, mp_context=_multiprocessing_context())


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def jobs_for(
    backend: Backend,
    runs: Sequence[str],
    *,
    fold_runs: bool,
    records: bool,
    keep_invalid: bool,
    batch_bytes: int,
) -> Iterator[BatchJob]:
    """The batches of work for ``runs``: about ``batch_bytes`` of journal bytes each, in run order.

    File journals are named by path (the worker reads them); other backends' runs are read here.
    """
    if isinstance(backend, FileBackend):
        for batch in _batches_by_size(_file_journals(backend, runs), batch_bytes):
            yield BatchJob(
                backend.url,
                tuple(j.run for j in batch),
                root=str(backend.root),
                fold=fold_runs,
                records=records,
                keep_invalid=keep_invalid,
            )
        return
    # Other backends: read here (their I/O is async and connection-bound), ship the bytes.
    group: list[RunRead] = []
    size = 0
    for start in range(0, len(runs), 64):
        for read in backend.read_runs(list(runs[start : start + 64]), strict=False):
            group.append(read)
            size += sum(len(r.raw) for r in read.records)
            if size >= batch_bytes:
                yield _shipped(backend.url, group, fold_runs, records, keep_invalid)
                group, size = [], 0
    if group:
        yield _shipped(backend.url, group, fold_runs, records, keep_invalid)


def _shipped(source: str, reads: list[RunRead], fold_runs: bool, records: bool, keep_invalid: bool) -> BatchJob:
    return BatchJob(
        source,
        tuple(read.run for read in reads),
        reads=tuple(
            (read.run, tuple((r.raw, r.position) for r in read.records), tuple(read.findings), read.complete)
            for read in reads
        ),
        fold=fold_runs,
        records=records,
        keep_invalid=keep_invalid,
    )


def _run_jobs(jobs: Iterator[BatchJob], executor: Executor | None, in_flight: int) -> Iterator[BatchOutput]:
    """Results in job order, at most ``in_flight`` jobs submitted ahead: memory stays bounded."""
    if executor is None:
        for job in jobs:
            yield run_batch(job)
        return
    window: list[Future[BatchOutput]] = []
    for job in jobs:
        window.append(executor.submit(run_batch, job))
        if len(window) >= in_flight:
            yield window.pop(0).result()
    while window:
        yield window.pop(0).result()


def iter_tables(
    source: str | Path | Backend,
    runs: Sequence[str] | str | None = None,
    *,
    strict: bool = True,
    fold: bool = True,
    records: bool = True,
    keep_invalid: bool = False,
    workers: int | None = None,
    batch_bytes: int = 16 << 20,
    progress: bool | None = None,
    quiet: bool = False,
) -> Iterator[Tables]:
    """The tables of a source batch by batch (in run order), so a caller can stream them to disk.

    Memory holds a few batches, never the whole source. Arguments as for ``load``.
    """
    backend, owned = (source, False) if isinstance(source, Backend) else (open_source(source), True)
    try:
        wanted = [runs] if isinstance(runs, str) else list(runs) if runs is not None else backend.list_runs()
        wanted = [validate_run_id(run) for run in wanted]
        bar = _Progress(len(wanted), _progress_enabled(progress, quiet), "journaltools load")
        try:
            if not fold and isinstance(backend, FileBackend):
                yield from _fast_records(
                    backend,
                    wanted,
                    strict=strict,
                    keep_invalid=keep_invalid,
                    batch_bytes=batch_bytes,
                    workers=workers,
                    tick=bar.update,
                )
                return
            yield from _iter_batches(
                backend, wanted, strict, fold, records, keep_invalid, workers, batch_bytes, bar.update
            )
        finally:
            bar.close()
    finally:
        if owned and not isinstance(backend, FileBackend):  # a file backend holds nothing (and its close()
            backend.close()  # would start the background event loop thread, which rules out fork later)


def _iter_batches(
    backend: Backend,
    runs: list[str],
    strict: bool,
    fold_runs: bool,
    records: bool,
    keep_invalid: bool,
    workers: int | None,
    batch_bytes: int,
    tick: Callable[[int], None],
) -> Iterator[Tables]:
    jobs = jobs_for(
        backend, runs, fold_runs=fold_runs, records=records, keep_invalid=keep_invalid, batch_bytes=batch_bytes
    )
    count = workers if workers is not None else default_workers()
    # By default a source smaller than one batch is loaded here: a pool would cost more than it saves.
    use_processes = count > 1 and (workers is not None or _larger_than(backend, runs, batch_bytes))
    executor = _process_pool(count) if use_processes else None
    try:
        for output in _run_jobs(jobs, executor, in_flight=2 * count):
            for run, text in output.failed:
                backend.read_run(run, strict=False)  # raises the genuine error (e.g. RunNotFound) here
                raise SourceError(f"run {run!r} could not be read: {text}")
            if strict and output.bad_runs:
                _raise_for(backend, output.bad_runs[0], fold_runs=fold_runs)
            tick(output.runs)
            yield output.tables
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


def _larger_than(backend: Backend, runs: Sequence[str], limit: int) -> bool:
    if not isinstance(backend, FileBackend):
        return len(runs) > 64
    total = 0
    for run in runs:
        try:
            total += os.stat(backend.path_of(run)).st_size
        except OSError:
            continue
        if total > limit:
            return True
    return False


def load(
    source: str | Path | Backend,
    runs: Sequence[str] | str | None = None,
    *,
    strict: bool = True,
    fold: bool = True,
    records: bool = True,
    keep_invalid: bool = False,
    workers: int | None = None,
    batch_bytes: int = 16 << 20,
    progress: bool | None = None,
    quiet: bool = False,
) -> Tables:
    """Load the tables of a source: one run (``runs="r1"``), some, or all (``runs=None``).

    ``source``: a directory, ``file://`` URL, ``nats://host:port/STREAM``, ``embedded``, or an open backend.
    ``strict``: raise at the first bad journal (``CorruptJournal``, ``FoldError``); lenient returns the good
    runs and every finding. ``fold=False``: only ``records`` and ``findings`` (envelope checks, torn tails,
    corrupt lines) via the fast records path. ``records=False``: skip the records table. ``keep_invalid``:
    lenient mode keeps bad runs too (status ``invalid``). ``workers``: processes for folding (default: one
    per core once the source holds more than one batch; 1 = in this process); with ``fold=False``, a
    co-decoder process shares the parsing of large loads (32 batches or more), unless ``workers=1``.
    ``batch_bytes``: journal bytes per batch of work. ``progress``: a tqdm bar (default: only on a terminal
    or in a notebook); ``quiet=True`` silences it.
    """
    return Tables.concat(
        iter_tables(
            source,
            runs,
            strict=strict,
            fold=fold,
            records=records,
            keep_invalid=keep_invalid,
            workers=workers,
            batch_bytes=batch_bytes,
            progress=progress,
            quiet=quiet,
        )
    )
