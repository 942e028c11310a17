"""Column helpers shared by the table builders: Go times, values that fit their columns, digests, strings repeated
per run, findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
import pyarrow as pa

from journaltools.goencoding.json import GoJSONError

# Defined beside the wire format's other time readers, where the command line finds it without pyarrow; named
# here too for the table builders.
from journaltools.goencoding.time import canonical_go_time

# Defined beside the wire format's other time readers, where the command line finds it without pyarrow; named
# here too for the table builders.
from journaltools.goencoding.time import go_time as go_time
from journaltools.protocol.findings import Finding
from journaltools.tables.schema import FINDINGS_SCHEMA

#: The pool the table builders turn Python lists into Arrow arrays with: the C library's allocator. Arrow's default
#: pool (mimalloc) keeps, for reuse, what a conversion's growing buffers freed on the way, and a load converts a
#: list per column per batch: at 107 MB of journals the default pool left a load's peak memory 33 MB higher (the
#: load's time was the same within noise). Only journaltools' own conversions use it; the user's pool is left alone.
TABLE_MEMORY_POOL: Final = pa.system_memory_pool()


#: What a duration column (Arrow ``duration[ns]``) holds: int64 nanoseconds, some 292 years either way.
_DURATION_NS_RANGE: Final = (-(1 << 63), (1 << 63) - 1)


class ValueFit:
    """The one rule for a journal's values and the columns they land in, for every path that tables a journal.

    Go accepts values a column cannot hold: a time in years 0 to 9999 at any offset up to a day (a column's time is
    a Python datetime to every reader of the table, years 1 to 9999 in UTC), and a gap between two such times of up
    to ten thousand years (a duration column holds int64 nanoseconds, some 292 years). Such a value becomes null,
    and the journal gets one ``value_out_of_range`` finding naming each column and the first value it could not
    hold: the other values and runs load as ever. Counts need no check: the fold wraps them at int64 as the runtime
    does, and sequence numbers are uint64 in both. The native walk gives back every journal holding such a value
    (``folding/_native.c``: ``read_time``, ``gap``), so only values it computes in Python pass here."""

    __slots__ = ("_unfit", "run")

    def __init__(self, run: str) -> None:
        self.run = run
        #: column -> (the seq of the first record whose value it could not hold, that value as written)
        self._unfit: dict[str, tuple[int | None, str]] = {}

    def time(self, column: str, text: str | None, seq: int | None = None) -> datetime | None:
        """``text`` (a time as Go writes it) as the column holds it: None when absent, and when Go reads it but
        the column cannot hold it (noted)."""
        value = go_time(text)
        if value is None and text and _go_reads(text):
            self._note(column, seq, text)
        return value

    def duration(self, column: str, nanos: int | None, seq: int | None = None) -> int | None:
        """``nanos`` as a duration column holds it: None when absent, and when beyond int64 (noted)."""
        if nanos is None or _DURATION_NS_RANGE[0] <= nanos <= _DURATION_NS_RANGE[1]:
            return nanos
        self._note(column, seq, f"{nanos:,} ns")
        return None

    def _note(self, column: str, seq: int | None, written: str) -> None:
        self._unfit.setdefault(column, (seq, written))

    def finding(self) -> Finding | None:
        """The journal's ``value_out_of_range`` finding, None when every value fit."""
        if not self._unfit:
            return None
        named = "; ".join(
            f"{column} {written}" + (f" (seq {seq})" if seq is not None else "")
            for column, (seq, written) in self._unfit.items()
        )
        seqs = [seq for seq, _ in self._unfit.values() if seq is not None]
        return Finding.of(
            self.run,
            min(seqs) if seqs else None,
            "value_out_of_range",
            f"values the runtime accepts that their columns cannot hold are null (a time outside years 1-9999 UTC, "
            f"a duration beyond int64 nanoseconds, some 292 years): {named}",
        )


def _go_reads(text: str) -> bool:
    try:
        canonical_go_time(text)
    except GoJSONError:
        return False
    return True


def _is_text(arrow_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_dictionary(arrow_type) or pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    )


class ColumnBuffer:
    """One column of a table being built, laid out as Arrow lays it out: 8-byte integers (ints, seqs, timestamps in
    microseconds, durations in nanoseconds) or 1-byte booleans in ``values``, or text (each row's end offset in
    ``values``, its UTF-8 in ``data``), and a validity byte per row in ``valid``.

    The native fold (``folding.native``) appends a journal's rows to the three bytearrays in C, with no Python object
    per value. The Python path's values (``extend``) wait in a list until ``flush`` converts them all at once with
    Arrow. ``to_arrow`` wraps the bytes as the column's Arrow array; ``rows_in_order`` joins the rows of two buffers
    (the native fold's and the Python path's) in the order their journals came."""

    __slots__ = ("_pending", "arrow_type", "data", "valid", "values")

    def __init__(self, arrow_type: pa.DataType) -> None:
        self.arrow_type = arrow_type
        self.values = bytearray()
        self.valid = bytearray()
        self.data: bytearray | None = bytearray() if _is_text(arrow_type) else None
        self._pending: list[Any] = []

    def native(self) -> tuple[bytearray, bytearray, bytearray | None]:
        """The buffers as the native fold takes them (flush first when the Python path added values)."""
        return self.values, self.valid, self.data

    def __len__(self) -> int:
        return len(self.valid) + len(self._pending)

    def extend(self, items: Iterable[Any]) -> None:
        """Add ``items`` (None for a null; a ``datetime`` for a timestamp) after the rows already there."""
        self._pending.extend(items)

    def flush(self) -> None:
        """Move the values ``extend`` added into the buffers, converted by Arrow in one go."""
        items, self._pending = self._pending, []
        if not items:
            return
        rows = len(items)
        arrow_type = self.arrow_type
        if self.data is not None:
            converted = pa.array(items, pa.large_string(), memory_pool=TABLE_MEMORY_POOL)
            _, offsets_buffer, data_buffer = converted.buffers()
            offsets = np.frombuffer(offsets_buffer, np.int64, rows + 1)
            base = len(self.data)
            if data_buffer is not None:
                self.data += memoryview(data_buffer)[offsets[0] : offsets[-1]]
            self.values += (offsets[1:] - offsets[0] + base).tobytes()
        elif pa.types.is_boolean(arrow_type):
            converted = pa.array(items, arrow_type, memory_pool=TABLE_MEMORY_POOL)
            self.values += converted.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint8).tobytes()
        else:
            converted = pa.array(items, arrow_type, memory_pool=TABLE_MEMORY_POOL)
            self.values += memoryview(converted.buffers()[1])[: 8 * rows]
        if converted.null_count:
            self.valid += converted.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8).tobytes()
        else:
            self.valid += b"\x01" * rows

    def to_arrow(self) -> pa.Array:
        """The column as an Arrow array of its type (the buffers are shared, not copied: build nothing after)."""
        return self.typed(self.stored())

    def typed(self, stored: pa.Array) -> pa.Array:
        """An array laid out as ``stored`` gives it, as an array of the column's type."""
        arrow_type = self.arrow_type
        if self.data is None or pa.types.is_large_string(arrow_type):
            return stored
        if pa.types.is_dictionary(arrow_type):
            return stored.dictionary_encode().cast(arrow_type)
        return stored.cast(arrow_type)

    def stored(self) -> pa.Array:
        """The rows as they lie in the buffers: text as ``large_string``, anything else of the column's type."""
        self.flush()
        rows = len(self.valid)
        valid = np.frombuffer(self.valid, np.bool_)
        nulls = rows - int(np.count_nonzero(valid))
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
        arrow_type = self.arrow_type
        if self.data is not None:
            offsets = np.zeros(rows + 1, np.int64)
            offsets[1:] = np.frombuffer(self.values, np.int64)
            return pa.Array.from_buffers(
                pa.large_string(), rows, [bitmap, pa.py_buffer(offsets), pa.py_buffer(self.data)], nulls
            )
        if pa.types.is_boolean(arrow_type):
            flags = pa.py_buffer(np.packbits(np.frombuffer(self.values, np.bool_), bitorder="little"))
            return pa.Array.from_buffers(arrow_type, rows, [bitmap, flags], nulls)
        return pa.Array.from_buffers(arrow_type, rows, [bitmap, pa.py_buffer(self.values)], nulls)


def rows_in_order(first: ColumnBuffer, second: ColumnBuffer, order: np.ndarray | None) -> pa.Array:
    """The rows of ``first`` and then of ``second`` (of one type), taken in ``order`` (indices into the two
    joined; None: as they are), as an array of their type: one gather per column, instead of converting the
    Python path's values at every switch between it and the native fold."""
    if not len(second):
        return first.to_arrow()
    if not len(first):
        return second.to_arrow()
    joined = pa.concat_arrays([first.stored(), second.stored()])
    return first.typed(joined if order is None else joined.take(pa.array(order, pa.int64())))


def strings_repeated(values: Sequence[str], counts: Sequence[int] | np.ndarray) -> pa.Array:
    """``values[i]`` repeated ``counts[i]`` times, dictionary-encoded (``schema.REPEATED``): each distinct value
    once, in the order of its first row, and an index per row made in one C loop (no Python list of rows). That
    order makes the encoding of a column one and the same however its rows were split into chunks: Arrow joins
    chunks' dictionaries in order, so the chunks of a batched load combine into this very array."""
    first: dict[str, int] = {}
    codes = [first.setdefault(value, len(first)) for value in values]
    indices = np.repeat(np.asarray(codes, np.int32), counts)
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(list(first), pa.string()))


def with_source(finding: Finding, source: str) -> Finding:
    if finding.source:
        return finding
    return Finding(finding.run, finding.seq, finding.code, finding.severity, finding.message, source)


def findings_table(findings: Sequence[Finding]) -> pa.Table:
    """The ``findings`` table of a list of findings."""
    return pa.Table.from_arrays(
        [
            pa.array([f.run for f in findings], pa.string()),
            pa.array([f.seq for f in findings], pa.uint64()),
            pa.array([f.code for f in findings], pa.string()),
            pa.array([f.severity for f in findings], pa.string()),
            pa.array([f.message for f in findings], pa.string()),
            pa.array([f.source for f in findings], pa.string()),
        ],
        schema=FINDINGS_SCHEMA,
    )


def findings_of(table: pa.Table) -> list[Finding]:
    """The ``Finding`` values of a ``findings`` table (the inverse of ``findings_table``)."""
    return [
        Finding(row["run"], row["seq"], row["code"], row["severity"], row["message"], row["source"])
        for row in table.to_pylist()
    ]
