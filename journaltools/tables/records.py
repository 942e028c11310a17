"""The ``records`` table: one row per decodable record, from the backends' typed reads.

One pass over the stored records pulls the envelope (seq, protocol, optional), the bytes, the position, the
message time and the noncanonical note into plain lists, and Arrow builds each column from its list in C:
``body`` is one copy of the journal's bytes (``pa.array`` over the byte strings the reader kept), ``size`` its
lengths computed by Arrow, ``kind`` a dictionary lookup of ``protocol`` done on the column, never per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from journaltools.protocol.kinds import PROTOCOLS
from journaltools.tables.columns import strings_repeated
from journaltools.tables.reads import RunReadLike
from journaltools.tables.schema import RECORDS_SCHEMA, TIMESTAMP

_PROTOCOL_IDS: Final = pa.array(list(PROTOCOLS), pa.string())
_KIND_NAMES: Final = pa.array(list(PROTOCOLS.values()), pa.string())


def kinds_of(protocols: pa.Array) -> pa.Array:
    """The kind each protocol id names (null for an id the runtime does not know), column-wise."""
    return pc.take(_KIND_NAMES, pc.index_in(protocols, value_set=_PROTOCOL_IDS))


def records_table(reads: Sequence[RunReadLike]) -> pa.Table:
    """The ``records`` rows of ``reads``, in read and journal order (refused journals keep what decoded)."""
    present = [read for read in reads if read.records]
    runs = [read.run for read in present]
    sources = [read.source for read in present]
    counts = [len(read.records) for read in present]
    # One comprehension per column: each is a C-speed loop over the records, where one loop appending to ten
    # lists costs a method call per value.
    stored = [item for read in present for item in read.records]
    records = [item.record for item in stored]
    seqs = [record.seq for record in records]
    protocols = [record.protocol for record in records]
    optional = [record.optional for record in records]
    bodies = [item.raw for item in stored]
    positions = [item.position for item in stored]
    times = [item.time for item in stored]
    noncanonical = [item.noncanonical for item in stored]
    any_time = any(time is not None for time in times)
    any_note = any(note is not None for note in noncanonical)
    total = len(seqs)
    protocol_column = pa.array(protocols, pa.string())
    body = pa.array(bodies, pa.large_binary())
    return pa.Table.from_arrays(
        [
            strings_repeated(runs, counts),
            pa.array(seqs, pa.uint64()),
            protocol_column,
            kinds_of(protocol_column),
            pa.array(optional, pa.bool_()),
            pc.binary_length(body).cast(pa.int64()),
            # Files have no per-record time: one null column rather than a list of Nones converted.
            pa.array(times, TIMESTAMP) if any_time else pa.nulls(total, TIMESTAMP),
            body,
            pa.array(noncanonical, pa.string()) if any_note else pa.nulls(total, pa.string()),
            strings_repeated(sources, counts),
            pa.array(np.asarray(positions, np.int64), pa.int64()),
        ],
        schema=RECORDS_SCHEMA,
    )
