"""Column helpers shared by the table builders: Go times, digests, strings repeated per run, findings."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from journaltools.protocol.findings import Finding

# Defined beside the wire format's other time readers, where the command line finds it without pyarrow; named
# here too for the table builders.
from journaltools.protocol.times import go_time as go_time
from journaltools.tables.schema import FINDINGS_SCHEMA


def digest12(secret: str) -> str | None:
    """The first 12 hex characters of the SHA-256 of ``secret`` (None for an empty one): what a table may hold
    of a credential, enough to group runs of one conversation, never enough to use it."""
    if not secret:
        return None
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def strings_repeated(values: Sequence[str], counts: Sequence[int] | np.ndarray) -> pa.Array:
    """``values[i]`` repeated ``counts[i]`` times, as a plain string column (one C loop, no Python list)."""
    if len(values) == 1:
        return pa.repeat(pa.scalar(values[0], pa.string()), int(counts[0]))
    if not len(values):
        return pa.array([], pa.string())
    indices = pa.array(np.repeat(np.arange(len(values), dtype=np.int32), counts), pa.int32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(values, pa.string())).cast(pa.string())


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
