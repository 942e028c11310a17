"""Column helpers shared by the table builders: timestamps, strings repeated per run, findings as a table."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from journaltools.protocol.envelope import seq_array, timestamp_mask
from journaltools.protocol.findings import Finding
from journaltools.tables.schema import FINDINGS_SCHEMA, TIMESTAMP

#: "YYYY-MM-DDTHH:MM:SS.ffffffZ": microseconds, the precision of the ts column.
_MICROSECOND_WIDTH: Final = 27


def _parse_ts(text: str) -> datetime | None:
    try:
        fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
        return datetime.strptime(text, fmt).replace(tzinfo=UTC)
    except ValueError:
        return None


def timestamps(values: pa.Array | Sequence[str | None], matches: np.ndarray | None = None) -> pa.Array:
    """RFC 3339 UTC strings (the protocol's ``ts``) as ``timestamp[us, tz=UTC]``.

    Strings that break the protocol's pattern, and impossible dates (February 30th), become null; more
    than six fractional digits are truncated to microseconds. Each result depends only on its string.
    ``matches``: ``timestamp_mask(values)``, when the caller has it already.
    """
    strings = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    if len(strings) == 0:
        return pa.array([], TIMESTAMP)
    mask = timestamp_mask(strings) if matches is None else matches
    valid = strings if mask.all() else pc.if_else(pa.array(mask), strings, pa.scalar(None, pa.string()))
    lengths = pc.binary_length(valid)
    if (pc.max(lengths).as_py() or 0) > _MICROSECOND_WIDTH:
        long = pc.greater(lengths, _MICROSECOND_WIDTH)
        cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(valid, 0, _MICROSECOND_WIDTH - 1), "Z", "")
        valid = pc.if_else(long, cut, valid)
    try:
        return pc.cast(valid, TIMESTAMP)
    except pa.ArrowInvalid:  # an impossible date somewhere: decide string by string
        return pa.array([None if v is None else _parse_ts(v) for v in valid.to_pylist()], TIMESTAMP)


def int64s(values: Sequence[int | None]) -> pa.Array:
    """Integers as int64; one beyond int64 (valid JSON, never a valid count or seq) becomes null."""
    return seq_array(values)


def strings_repeated(values: Sequence[str], counts: Sequence[int] | np.ndarray) -> pa.Array:
    """``values[i]`` repeated ``counts[i]`` times, as a plain string column."""
    if len(values) == 1:
        return pa.repeat(pa.scalar(values[0], pa.string()), int(counts[0]))
    indices = pa.array(np.repeat(np.arange(len(values), dtype=np.int32), counts), pa.int32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(values, pa.string())).cast(pa.string())


def column(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    return int64s(values) if type_ == pa.int64() else pa.array(values, type_)


def with_source(finding: Finding, source: str) -> Finding:
    if finding.source:
        return finding
    return Finding(finding.run, finding.seq, finding.code, finding.severity, finding.message, source)


def findings_table(findings: Sequence[Finding]) -> pa.Table:
    """The ``findings`` table of a list of findings."""
    return pa.Table.from_arrays(
        [
            pa.array([f.run for f in findings], pa.string()),
            int64s([f.seq for f in findings]),
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
