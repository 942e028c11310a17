"""Column helpers shared by the table builders: Go times, digests, strings repeated per run, findings."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

import numpy as np
import pyarrow as pa

from journaltools.protocol.findings import Finding

# Defined beside the wire format's other time readers, where the command line finds it without pyarrow; named
# here too for the table builders.
from journaltools.protocol.times import go_time as go_time
from journaltools.tables.schema import FINDINGS_SCHEMA

#: The pool the table builders turn Python lists into Arrow arrays with: the C library's allocator. Arrow's default
#: pool (mimalloc) keeps, for reuse, what a conversion's growing buffers freed on the way, and a load converts a
#: list per column per batch: at 107 MB of journals the default pool left a load's peak memory 40 MB higher, and
#: the load itself slower. Only journaltools' own conversions use it; the user's default pool is left alone.
TABLE_MEMORY_POOL: Final = pa.system_memory_pool()


def digest12(secret: str) -> str | None:
    """The first 12 hex characters of the SHA-256 of ``secret`` (None for an empty one): what a table may hold
    of a credential, enough to group runs of one conversation, never enough to use it."""
    if not secret:
        return None
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:12]


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
