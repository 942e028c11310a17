"""The records path: journal files, batch by batch, into the ``records`` table.

A batch (about ``batch_bytes`` of journals) goes through two stages:

1. ``read_journals`` reads its journals into one reused buffer (a newline added where a journal lacks its
   last one). Two readers then share that buffer: ``split_batch`` splits it into lines with one Arrow call
   and checks framing and UTF-8 (all of which release the interpreter, so the loader runs it in a helper
   thread), while ``decode_envelopes`` decodes each journal's envelopes with msgspec in this thread. The
   split is the ``body`` column: every record's bytes, copied once, so once both readers are done the
   buffer holds nothing anyone needs and the next batch is read into it (one buffer, not one per batch in
   flight).
2. ``records_of_batch`` checks every line and builds the other columns. A journal takes the fast route when
   every line is framed as one object (starts with ``{``, ends with ``}``), its lines are UTF-8, and msgspec
   decoded every line's envelope (every other field is validated as JSON and skipped, never built); the
   envelope columns are then checked with ``envelope.envelope_mask``, and a row the mask rejects is checked
   again by ``check_envelope`` for its finding. Any other journal goes to the exact reader
   (``backends.scan``), the same that ``FileBackend.read_run`` uses: rows, findings and errors are the
   reader's, whichever route a journal takes.

Why ``body`` is one copy and not a view into the read buffer: a ``string_view`` body would avoid the copy,
but pyarrow 26 has no take, filter or sort kernels for views (apache/arrow#43010), so ``records.filter(...)``
would fail; and measured here, finding the lines with numpy for the views cost more than Arrow's split does.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from journaltools._perf import paused_gc
from journaltools.backends.oserrors import kind_of, mapped, storage_error
from journaltools.backends.scan import open_journal_file, read_journal, scan_lines
from journaltools.errors import NotAJournalFile, RunNotFound
from journaltools.protocol.envelope import check_envelope, envelope_mask, seq_array, timestamp_mask
from journaltools.protocol.findings import Finding
from journaltools.protocol.jsonline import parse_line
from journaltools.tables.build import RecordColumns
from journaltools.tables.columns import strings_repeated, timestamps, with_source
from journaltools.tables.schema import RECORDS_SCHEMA

_OPEN_BRACE: Final = ord("{")
_CLOSE_BRACE: Final = ord("}")


class _Envelope(msgspec.Struct, gc=False):
    """Only the envelope: msgspec validates every other field as JSON and skips it without building it.

    A field of another type (a number as ``type``, ``"optional": null``) makes the decode fail, which
    sends the journal to the exact reader.
    """

    type: str | None = None
    run: str | None = None
    seq: int | None = None
    ts: str | None = None
    optional: bool = False


_ENVELOPES: Final = msgspec.json.Decoder(_Envelope)


@dataclass(frozen=True, slots=True)
class JournalFile:
    run: str
    path: str
    size: int


def journal_files(paths: Sequence[tuple[str, str]]) -> list[JournalFile]:
    """(run, path) pairs with their sizes now: a record appended later is not part of this load.

    A path that is not a regular file (a link, a FIFO...) raises ``NotAJournalFile``; the backends'
    ``local_journals`` never name one, so only a file replaced since can get here.
    """
    journals = []
    for run, path in paths:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise RunNotFound(run, os.path.dirname(path)) from None
        except OSError as exc:
            raise storage_error(exc, path, "read the journal") from None
        if not stat.S_ISREG(info.st_mode):
            raise NotAJournalFile(path, "read the journal", kind_of(info.st_mode))
        journals.append(JournalFile(run, path, info.st_size))
    return journals


#: Journals per batch at most: what a batch holds per run (its fold, its rows) is bounded too, not only its bytes.
BATCH_RUNS: Final = 1024


def batches_by_size(
    journals: Sequence[JournalFile], target: int, max_line_bytes: int, max_runs: int = BATCH_RUNS
) -> list[list[JournalFile]]:
    """Consecutive journals in batches of about ``target`` bytes and at most ``max_runs`` journals. A journal
    larger than ``max_line_bytes`` is a batch of its own: it is read block by block, so one over-long line is
    never held whole."""
    batches: list[list[JournalFile]] = []
    current: list[JournalFile] = []
    size = 0
    for journal in journals:
        if journal.size > max_line_bytes:
            if current:
                batches.append(current)
                current, size = [], 0
            batches.append([journal])
            continue
        if current and (size + journal.size > target or len(current) >= max_runs):
            batches.append(current)
            current, size = [], 0
        current.append(journal)
        size += journal.size
    if current:
        batches.append(current)
    return batches


@dataclass(slots=True)
class BatchBytes:
    """A batch's journals read into one buffer, each ending in a newline."""

    journals: list[JournalFile]
    data: memoryview  # a view of the reused buffer
    starts: np.ndarray  # byte offset of each journal in data
    streamed: bool = False  # a single journal too large to hold: the exact reader reads it block by block


@dataclass(slots=True)
class BatchLines:
    """A batch read and split: ``lines`` holds every line of every journal, in order, without newlines."""

    journals: list[JournalFile]
    lines: pa.LargeBinaryArray
    first_line: np.ndarray  # index in lines of each journal's first line
    counts: np.ndarray  # lines per journal
    framed: np.ndarray  # per journal: it has lines and each is framed as one object (see ``_framed``)
    utf8: bool  # whether the whole batch is UTF-8
    streamed: bool = False
    envelopes: list[list[_Envelope] | None] | None = None  # per journal, from ``decode_envelopes``

    def journal_lines(self, index: int) -> list[bytes]:
        first, count = int(self.first_line[index]), int(self.counts[index])
        values: list[bytes] = self.lines.slice(first, count).to_pylist()
        return values


def new_buffer() -> np.ndarray:
    return np.empty(0, np.uint8)


def read_journals(
    journals: list[JournalFile], buffer: np.ndarray, max_line_bytes: int
) -> tuple[BatchBytes, np.ndarray]:
    """Stage 1a: read a batch into ``buffer`` (or a larger one, returned for reuse).

    Runs in the loading thread: a helper thread would need the interpreter back after every file it opens
    and reads, and would wait for it behind msgspec, which holds it while it parses. The buffer may be
    reused once ``split_batch`` and ``decode_envelopes`` are done with the batch.
    """
    if len(journals) == 1 and journals[0].size > max_line_bytes:
        return BatchBytes(journals, memoryview(b""), np.zeros(1, np.int64), streamed=True), buffer
    need = sum(j.size for j in journals) + len(journals)
    if len(buffer) < need:
        # An eighth over what this batch needs, not double: batches are of about one size, and every byte of
        # the buffer that a read touches stays resident until the load ends.
        buffer = np.empty(need + need // 8, np.uint8)
    view = memoryview(buffer.data)
    starts = np.empty(len(journals), np.int64)
    position = 0
    for index, journal in enumerate(journals):
        starts[index] = position
        with open_journal_file(journal.path) as handle, mapped(journal.path, "read the journal"):
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
    return BatchBytes(journals, view[:position], starts), buffer


def split_batch(batch: BatchBytes) -> BatchLines:
    """Stage 1b, in a helper thread (Arrow and numpy release the interpreter): lines, framing, UTF-8."""
    if batch.streamed:
        empty = pa.array([], pa.large_binary())
        zeros = np.zeros(1, np.int64)
        return BatchLines(batch.journals, empty, zeros, zeros, np.zeros(1, bool), True, True)
    data = batch.data
    whole = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, len(data)], np.int64)), pa.py_buffer(data)]
    )
    pieces = pc.split_pattern(whole, "\n").values
    lines = pieces.slice(0, len(pieces) - 1)  # the piece after the final newline is always empty
    offsets = np.frombuffer(lines.buffers()[1], np.int64, count=len(lines) + 1, offset=lines.offset * 8)
    line_starts = offsets[:-1] + np.arange(len(lines), dtype=np.int64)  # each earlier line lost its newline
    first_line = np.searchsorted(line_starts, batch.starts)
    counts = np.diff(np.append(first_line, len(lines)))
    framed = _framed(lines, first_line, counts)
    return BatchLines(batch.journals, lines, first_line, counts, framed, _is_utf8(data))


def decode_envelopes(batch: BatchBytes) -> list[list[_Envelope] | None]:
    """Stage 1c, in this thread beside the split: each journal's envelopes, or None where msgspec refuses
    its bytes. Whether the journal may take the fast route is decided later, from the split."""
    if batch.streamed:
        return [None]
    decoded: list[list[_Envelope] | None] = []
    ends = [*batch.starts[1:].tolist(), len(batch.data)]
    with paused_gc():
        for start, end in zip(batch.starts.tolist(), ends, strict=True):
            try:
                decoded.append(_ENVELOPES.decode_lines(batch.data[start:end]))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                decoded.append(None)
    return decoded


def read_batch(
    journals: list[JournalFile], buffer: np.ndarray, max_line_bytes: int, *, envelopes: bool
) -> tuple[BatchLines, np.ndarray]:
    """Every stage of reading a batch, in this thread; ``envelopes`` for ``records_of_batch``, which needs
    them (a fold reads the lines instead)."""
    read, buffer = read_journals(journals, buffer, max_line_bytes)
    decoded = decode_envelopes(read) if envelopes else None
    lines = split_batch(read)
    lines.envelopes = decoded
    return lines, buffer


@dataclass(slots=True)
class RecordsPart:
    """The records of a batch: the table rows, every finding, and each run with an error (in order)."""

    records: pa.Table
    findings: list[Finding]
    bad: list[tuple[str, Finding]]


def _framed(lines: pa.LargeBinaryArray, first_line: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per journal: it has lines, and each starts with ``{`` and ends with ``}``.

    With every line framed so, no JSON value can run on from one line into the next, so msgspec's count of
    values equals the number of lines only if each line holds exactly one object.
    """
    offsets = np.frombuffer(lines.buffers()[1], np.int64, count=len(lines) + 1, offset=lines.offset * 8)
    values = lines.buffers()[2]
    data = np.frombuffer(values, np.uint8) if values is not None else np.zeros(0, np.uint8)
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


def _is_utf8(data: Any) -> bool:
    """Whether bytes are UTF-8: msgspec does not check the strings it skips. A newline is never part of a
    multi-byte sequence, so the lines of UTF-8 bytes are UTF-8 too."""
    buffer = pa.py_buffer(data)
    text = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(buffer)], np.int64)), buffer)
    return _valid(text)


def _valid(text: pa.Array) -> bool:
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _fast_envelopes(batch: BatchLines, index: int) -> list[_Envelope] | None:
    """The envelopes of journal ``index`` by the fast route, or None if it must take the exact one."""
    if batch.envelopes is None:
        raise ValueError("records_of_batch needs the envelopes: read the batch with envelopes=True")
    envelopes = batch.envelopes[index]
    if envelopes is None or not batch.framed[index] or len(envelopes) != batch.counts[index]:
        return None
    if not batch.utf8:
        first, count = int(batch.first_line[index]), int(batch.counts[index])
        if not _valid(batch.lines.slice(first, count).view(pa.large_string())):
            return None
    return envelopes


def _exact_part(journal: JournalFile, lines: list[bytes] | None, source: str, max_line_bytes: int) -> RecordsPart:
    """The exact reader for one journal (its lines, or the file itself when it is too large to hold)."""
    if lines is None:
        scanned = read_journal(journal.path, journal.run, max_line_bytes, journal.size)
    else:
        scanned = scan_lines(lines, journal.run, journal.path)
    findings = list(scanned.findings)
    for record in scanned.records:
        problem = check_envelope(record.body, expected_run=journal.run)
        if problem is not None:
            findings.append(problem)
    columns = RecordColumns()
    columns.add(journal.run, scanned.records)
    first_error = next((f for f in findings if f.severity == "error"), None)
    bad = [(journal.run, first_error)] if first_error is not None else []
    return RecordsPart(pa.Table.from_batches([columns.batch(source)]), findings, bad)


def _fast_part(batch: BatchLines, indices: list[int], envelopes: list[_Envelope], source: str) -> RecordsPart:
    """The records of consecutive fast journals: envelope columns checked by the mask, rejects re-checked."""
    journals = [batch.journals[i] for i in indices]
    counts = batch.counts[indices[0] : indices[-1] + 1]
    text = batch.lines.slice(int(batch.first_line[indices[0]]), int(counts.sum())).view(pa.large_string())
    kinds = pa.array([e.type for e in envelopes], pa.string())
    seqs = seq_array([e.seq for e in envelopes])
    ts = pa.array([e.ts for e in envelopes], pa.string())
    runs = [e.run for e in envelopes]
    expected = [journal.run for journal, count in zip(journals, counts, strict=True) for _ in range(count)]
    runs_match = (
        np.ones(len(runs), bool)
        if runs == expected
        else np.array([a == b for a, b in zip(runs, expected, strict=True)])
    )
    ts_ok = timestamp_mask(ts)
    ok = envelope_mask(kinds, seqs, ts, runs_match, ts_matches=ts_ok)
    findings: list[Finding] = []
    bad: dict[int, Finding] = {}
    if not ok.all():
        owner = np.repeat(np.arange(len(journals)), counts)
        for row in np.flatnonzero(~ok).tolist():
            journal = int(owner[row])
            body, _ = parse_line(text[row].as_py().encode())  # msgspec decoded it: it is JSON
            finding = check_envelope(body, expected_run=journals[journal].run)
            if finding is not None:
                findings.append(finding)
                if finding.severity == "error":
                    bad.setdefault(journal, finding)
    first_of_journal = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    positions = np.arange(len(text), dtype=np.int64) - np.repeat(first_of_journal, counts) + 1
    records = pa.Table.from_arrays(
        [
            strings_repeated([j.run for j in journals], counts),
            seqs,
            kinds,
            timestamps(ts, matches=ts_ok),
            pa.array([e.optional for e in envelopes], pa.bool_()),
            pc.binary_length(text.view(pa.large_binary())),
            text,
            pa.repeat(pa.scalar(source, pa.string()), len(text)),
            pa.array(positions, pa.int64()),
        ],
        schema=RECORDS_SCHEMA,
    )
    return RecordsPart(records, findings, [(journals[i].run, bad[i]) for i in sorted(bad)])


def records_of_batch(batch: BatchLines, source: str, max_line_bytes: int) -> RecordsPart:
    """Stage 2: every line of the batch checked, and its rows (see the module doc)."""
    if batch.streamed:
        return _exact_part(batch.journals[0], None, source, max_line_bytes)
    parts: list[RecordsPart] = []
    stretch: list[int] = []
    decoded: list[_Envelope] = []
    with paused_gc():
        for index, journal in enumerate(batch.journals):
            envelopes = _fast_envelopes(batch, index)
            if envelopes is not None:
                stretch.append(index)
                decoded.extend(envelopes)
                continue
            if stretch:
                parts.append(_fast_part(batch, stretch, decoded, source))
                stretch, decoded = [], []
            parts.append(_exact_part(journal, batch.journal_lines(index), source, max_line_bytes))
        if stretch:
            parts.append(_fast_part(batch, stretch, decoded, source))
    return RecordsPart(
        pa.concat_tables([part.records for part in parts]) if parts else RECORDS_SCHEMA.empty_table(),
        [with_source(f, source) for part in parts for f in part.findings],
        [entry for part in parts for entry in part.bad],
    )
