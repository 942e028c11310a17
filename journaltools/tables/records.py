"""The ``records`` table: one row per decodable record, from the backends' typed reads.

Three paths give the same rows. A load of local plain journals that folds nothing (``fold=False``) reads a
batch of them into one buffer, which the native scanner proves and compacts in place into the body column
(``scanned_batch_rows``; ``tables.batch``). Any other journal the scanner proved canonical (``ProvenRecords``)
is tabled from the scan's columns and its bytes: no record is decoded, ``body`` is every journal's bytes less
their newlines in one copy, its offsets the line starts less the newlines before them. Any other journal is
tabled from its decoded records: one pass pulls the envelope, the bytes, the position, the message time and
the noncanonical note into plain lists, and Arrow builds each column from its list in C. Either way ``kind``
is found column-wise, never per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Final, cast

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from journaltools.folding.reads import RunReadLike
from journaltools.protocol.journal import ProvenRecords
from journaltools.protocol.kinds import PROTOCOLS
from journaltools.protocol.native import OTHER_PROTOCOL, PROTOCOL_IDS, BatchScan, join_lines
from journaltools.tables.columns import strings_repeated
from journaltools.tables.schema import RECORDS_SCHEMA, TIMESTAMP, empty_table

#: Indexed as the scanner indexes protocols, so a scan's protocol index picks both: the dictionaries of the
#: ``protocol`` and ``kind`` columns (``schema.REPEATED``, ``schema.FEW``), the same in every path and chunk.
_PROTOCOL_IDS: Final = pa.array(list(PROTOCOL_IDS), pa.string())
_KIND_NAMES: Final = pa.array([PROTOCOLS[protocol] for protocol in PROTOCOL_IDS], pa.string())


def kinds_of(protocols: pa.Array) -> pa.Array:
    """The kind each protocol id names (null for an id the runtime does not know), column-wise."""
    return protocol_columns(protocols)[1]


def protocol_columns(protocols: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The ``protocol`` and ``kind`` columns of protocol ids (plain or dictionary-encoded strings). Both are
    dictionary-encoded over the known ids and kinds in ``PROTOCOL_IDS`` order (a kind is null for an id the runtime
    does not know); ids it does not know follow the known ones in the protocol's dictionary in the order of their
    first row, so that chunks combine into the encoding of the whole, as ``strings_repeated`` ensures for runs."""
    if pa.types.is_dictionary(protocols.type):
        protocols = protocols.cast(pa.string())
    known = pc.index_in(protocols, value_set=_PROTOCOL_IDS)
    kinds = pa.DictionaryArray.from_arrays(known.cast(pa.int8()), _KIND_NAMES)
    if not known.null_count:
        return pa.DictionaryArray.from_arrays(known, _PROTOCOL_IDS), kinds
    dictionary = pa.concat_arrays([_PROTOCOL_IDS, pc.unique(pc.filter(protocols, pc.is_null(known)))])
    return pa.DictionaryArray.from_arrays(pc.index_in(protocols, value_set=dictionary), dictionary), kinds


def records_table(reads: Sequence[RunReadLike]) -> pa.Table:
    """The ``records`` rows of ``reads``, in read and journal order (refused journals keep what decoded)."""
    present = [read for read in reads if read.records]
    parts = [
        (_proven_rows if proven else _decoded_rows)(list(group))
        for proven, group in groupby(present, key=lambda read: isinstance(read.records, ProvenRecords))
    ]
    if not parts:
        return empty_table("records")
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def _proven_rows(reads: list[RunReadLike]) -> pa.Table:
    """Rows of journals the native scanner proved canonical, from its columns and the journal bytes alone: no
    record is decoded and no Python object is made per record. ``body`` is the journals' bytes without their
    newlines, one copy; a line's offset in it is its offset in its journal less the newlines before it."""
    proven = [cast(ProvenRecords, read.records) for read in reads]
    counts = [len(records) for records in proven]
    # Each journal's body length: its bytes less one newline per line (the last line's may be missing).
    lengths = [len(records.data) - len(records) + (not records.data.endswith(b"\n")) for records in proven]
    bases = np.cumsum([0, *lengths[:-1]], dtype=np.int64)
    body = join_lines([records.data for records in proven])
    offsets = np.concatenate(
        [
            *(
                np.frombuffer(records.scan.starts, np.int64) - np.arange(len(records), dtype=np.int64) + base
                for records, base in zip(proven, bases, strict=True)
            ),
            np.array([len(body)], np.int64),
        ]
    )
    return _scanned_table(
        [read.run for read in reads],
        [read.source for read in reads],
        counts,
        offsets,
        body,
        np.concatenate([np.frombuffer(records.scan.seqs, np.uint64) for records in proven]),
        np.concatenate([np.frombuffer(records.scan.protocols, np.uint8) for records in proven]),
        np.concatenate([np.frombuffer(records.scan.optional, np.bool_) for records in proven]),
    )


def scanned_batch_rows(
    runs: Sequence[str], counts: Sequence[int], source: str, scan: BatchScan, body: np.ndarray
) -> pa.Table:
    """Rows of journals ``scan_batch`` proved in place: ``runs`` with their line ``counts``, in order, the body
    being ``body`` itself (no copy). Equal, row for row, to the rows of the same journals read one by one."""
    return _scanned_table(
        runs,
        [source] * len(runs),
        counts,
        np.frombuffer(scan.offsets, np.int64),
        body,
        np.frombuffer(scan.seqs, np.uint64),
        np.frombuffer(scan.protocols, np.uint8),
        np.frombuffer(scan.optional, np.bool_),
    )


def _scanned_table(
    runs: Sequence[str],
    sources: Sequence[str],
    counts: Sequence[int],
    offsets: np.ndarray,
    body: bytes | np.ndarray,
    seqs: np.ndarray,
    codes: np.ndarray,
    optional: np.ndarray,
) -> pa.Table:
    """The rows of proven lines: ``offsets`` (one more than there are lines) delimit each in ``body``, which
    becomes the body column as it is; ``codes`` index ``PROTOCOL_IDS``."""
    total = len(codes)
    column = pa.Array.from_buffers(pa.large_binary(), total, [None, pa.py_buffer(offsets), pa.py_buffer(body)])
    if (codes == OTHER_PROTOCOL).any():
        # An id the runtime does not know is rare: those lines' protocols are read from their bytes.
        names = [
            PROTOCOL_IDS[code] if code != OTHER_PROTOCOL else _protocol_of(body[offsets[row] : offsets[row + 1]])
            for row, code in enumerate(codes.tolist())
        ]
        protocol_column, kind_column = protocol_columns(pa.array(names, pa.string()))
    else:
        # The scan's protocol index is also the index into both dictionaries: no string of the column is made.
        protocol_column = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), _PROTOCOL_IDS)
        kind_column = pa.DictionaryArray.from_arrays(pa.array(codes.view(np.int8)), _KIND_NAMES)
    positions = [np.arange(1, count + 1, dtype=np.int64) for count in counts]
    return pa.Table.from_arrays(
        [
            strings_repeated(runs, counts),
            pa.array(seqs),
            protocol_column,
            kind_column,
            pa.array(optional),
            pa.array(np.diff(offsets)),
            pa.nulls(total, TIMESTAMP),  # files have no per-record time
            column,
            pa.nulls(total, pa.string()),  # proven canonical: nothing differs
            strings_repeated(sources, counts),
            pa.array(np.concatenate(positions) if positions else np.empty(0, np.int64)),
        ],
        schema=RECORDS_SCHEMA,
    )


def _protocol_of(line: bytes | np.ndarray) -> str:
    protocol: str = _ENVELOPE.decode(bytes(line)).protocol
    return protocol


class _Envelope(msgspec.Struct):
    protocol: str


_ENVELOPE: Final = msgspec.json.Decoder(_Envelope)


def _decoded_rows(present: list[RunReadLike]) -> pa.Table:
    """Rows of journals read record by record (decoded, some lines perhaps noncanonical, JetStream bodies)."""
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
    protocol_column, kind_column = protocol_columns(pa.array(protocols, pa.string()))
    body = pa.array(bodies, pa.large_binary())
    return pa.Table.from_arrays(
        [
            strings_repeated(runs, counts),
            pa.array(seqs, pa.uint64()),
            protocol_column,
            kind_column,
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
