"""A file journal's bytes as a ``RunRead``: reading the file safely, and what the runtime's line rule found.

The runtime's file backend reads a journal whole, splits it on ``\\n``, drops one final empty element, skips
lines that are blank after trimming whitespace, and decodes each other line; a line that does not decode is a
torn tail when it is the file's last element (dropped) and corruption anywhere else (``file.go:384-416``). The
rule itself lives only in ``journaltools.protocol.journal`` (``read_file_journal``); this module reads the bytes
(plain or compressed, never following a link or waiting on a FIFO) and turns the reader's verdict into the
findings and the ``RunRead`` (``run_read``, the one place they are worded), plus what journaltools' own writer
needs to repair a torn tail before it appends.
"""

from __future__ import annotations

import contextlib
import errno
import io
import mmap
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, BinaryIO, Final, NamedTuple

from journaltools._base.oserrors import mapped, open_regular, storage_error
from journaltools.errors import CorruptJournal, JournalError, RunNotFound, StorageError
from journaltools.errors import JournalTooLarge as JournalTooLargeError
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import FileJournal, read_file_journal
from journaltools.sources.base import RunRead, StoredRecord

if TYPE_CHECKING:  # numpy is imported where a count or a batch needs it: reading one small journal never does
    import numpy as np

JOURNAL_SUFFIX: Final = ".json"
LOCK_SUFFIX: Final = ".lock"
#: Compressed journals, read-only: the suffix after ``.json``.
COMPRESSED_SUFFIXES: Final = (".gz", ".zst")
#: Every journal name: plain first (it wins when a run has both), then the read-only compressed ones.
JOURNAL_SUFFIXES: Final = (JOURNAL_SUFFIX, *(JOURNAL_SUFFIX + suffix for suffix in COMPRESSED_SUFFIXES))


#: The suffixes longest first, so ``.json.gz`` is found before ``.json``.
_SUFFIXES_LONGEST_FIRST: Final = tuple(sorted(JOURNAL_SUFFIXES, key=len, reverse=True))


def journal_name_parts(name: str) -> tuple[str, str] | None:
    """``"r1.json.gz"`` → ``("r1", ".json.gz")``; None for a name that is not a journal's."""
    for suffix in _SUFFIXES_LONGEST_FIRST:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix
    return None


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return os.fsdecode(path).endswith(COMPRESSED_SUFFIXES)


#: The most bytes one journal may hold once decompressed (plain journals: their size), unless the environment
#: variable ``JOURNALTOOLS_MAX_JOURNAL_BYTES`` says otherwise. A journal is read whole, as the runtime reads it; this
#: bound keeps a decompression bomb (a few hundred KB of zstd expanding to gigabytes) from taking the machine's
#: memory. 256 MiB is far beyond any run the runtime writes (a long run is a few MB).
DEFAULT_MAX_JOURNAL_BYTES: Final = 256 << 20
MAX_JOURNAL_BYTES_VARIABLE: Final = "JOURNALTOOLS_MAX_JOURNAL_BYTES"
#: The most records one journal may hold (every line that is not blank counts, whether it decodes or not), unless
#: the environment variable ``JOURNALTOOLS_MAX_JOURNAL_RECORDS`` says otherwise. The byte bound does not bound
#: records: 30 MB of ``{}`` lines (each a record to Go, every field zero) are ten million records, each a few
#: hundred bytes of objects and tens of microseconds once read. A long run the runtime writes holds a few thousand.
DEFAULT_MAX_JOURNAL_RECORDS: Final = 100_000
MAX_JOURNAL_RECORDS_VARIABLE: Final = "JOURNALTOOLS_MAX_JOURNAL_RECORDS"
#: Bytes looked at a time when the records of a journal past the bound are counted (an index per byte is made).
_COUNT_STEP: Final = 1 << 18
#: What Go's ``bytes.TrimSpace`` trims in ASCII: a line of these alone is blank, never a record.
_ASCII_SPACE: Final = b" \t\n\v\f\r"
#: Compressed input fed to the decompressor at a time: a run-length block of zstd expands some 30,000 times, so one
#: step stays near 16 MB even for the worst bomb, and the bound is checked after every step.
_COMPRESSED_STEP: Final = 512
_GZIP_OUTPUT_STEP: Final = 1 << 20
#: Compressed bytes read from the file at a time (and the read buffer under the zstd steps): the compressed file is
#: streamed through the decompressor, never held whole, so a huge one costs memory in neither form.
_COMPRESSED_READ: Final = 1 << 16
#: Bytes read at a time from a plain journal that grew while it was being read.
_GROWTH_STEP: Final = 1 << 20


#: Findings of one code kept per journal; the rest become one "and N more" finding (the reader keeps at most
#: ``protocol.journal.MAX_CORRUPT_KEPT`` corrupt lines to begin with).
MAX_FINDINGS_PER_CODE: Final = 100


def max_journal_bytes() -> int:
    """The bound in force (the environment variable is read each time, so worker processes inherit it)."""
    text = os.environ.get(MAX_JOURNAL_BYTES_VARIABLE, "")
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    return DEFAULT_MAX_JOURNAL_BYTES


def max_journal_records() -> int:
    """The bound on records per journal in force (read each time, as ``max_journal_bytes``)."""
    text = os.environ.get(MAX_JOURNAL_RECORDS_VARIABLE, "")
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    return DEFAULT_MAX_JOURNAL_RECORDS


def records_past_bound(data: bytes | np.ndarray, limit: int) -> int | None:
    """How many lines of ``data`` are not blank (ASCII white space only), when that is more than ``limit``; None
    otherwise. Counted without an object per line, and at the cost of one newline count for almost every journal: a
    line holding something takes two bytes at least, and a journal has no more lines than newlines plus one."""
    if len(data) // 2 + 1 <= limit:  # a uint8 array's length is its bytes, as a bytes object's
        return None
    import numpy as np

    array = np.frombuffer(data, np.uint8)
    space = np.frombuffer(_ASCII_SPACE, np.uint8)
    newlines = 0
    for start in range(0, len(array), _COUNT_STEP):
        newlines += int(np.count_nonzero(array[start : start + _COUNT_STEP] == 10))
    if newlines + 1 <= limit:
        return None
    records = 0
    line_before = -1  # the line the previous step's last byte of content was on
    line_base = 0
    for start in range(0, len(array), _COUNT_STEP):
        step = array[start : start + _COUNT_STEP]
        newline = step == 10
        # Each byte's line is the number of newlines before it; a line holds a record when a byte of it is content.
        lines = np.cumsum(newline) - newline + line_base
        holding = lines[~np.isin(step, space)]
        if len(holding):
            records += 1 + int(np.count_nonzero(np.diff(holding))) - int(holding[0] == line_before)
            line_before = int(holding[-1])
        line_base += int(np.count_nonzero(newline))
    return records if records > limit else None


class JournalBounds(NamedTuple):
    """The bounds per journal in force, asked of the environment once for many journals (``in_force``)."""

    bytes: int
    records: int

    @classmethod
    def in_force(cls) -> JournalBounds:
        return cls(max_journal_bytes(), max_journal_records())


def check_record_bound(data: bytes, limit: int | None = None) -> None:
    """Raise ``JournalTooLarge`` when ``data`` holds more records than ``limit`` (``max_journal_records()``)."""
    limit = max_journal_records() if limit is None else limit
    records = records_past_bound(data, limit)
    if records is not None:
        raise JournalTooLarge(limit, compressed=False, records=records)


class DamagedCompression(Exception):
    """Compressed data that does not decompress (the message says why); ``partial`` is what it gave before."""

    def __init__(self, why: str, partial: bytes) -> None:
        super().__init__(why)
        self.partial = partial


class JournalTooLarge(Exception):
    """A journal holding more than ``max_journal_bytes()`` bytes or ``max_journal_records()`` records (``records``:
    how many it holds): not read further. The message names both bounds and how to raise each."""

    def __init__(self, limit: int, compressed: bool, *, records: int | None = None) -> None:
        if records is not None:
            past = f"the journal holds {records:,} records (lines that are not blank), more than {limit:,}"
        else:
            past = f"the journal {'decompresses to' if compressed else 'holds'} more than {limit:,} bytes"
        super().__init__(
            f"{past}, the bound per journal; not read further (the bounds per journal: {max_journal_bytes():,} "
            f"bytes, set by {MAX_JOURNAL_BYTES_VARIABLE}, and {max_journal_records():,} records, set by "
            f"{MAX_JOURNAL_RECORDS_VARIABLE})"
        )


def open_journal_file(path: str | os.PathLike[str]) -> io.FileIO:
    """``path`` opened for reading without blocking: a regular file, never a link, FIFO or device
    (``NotAJournalFile``), so a hostile directory can neither send a read outside it nor hang it."""
    return io.FileIO(open_regular(path, os.O_RDONLY, "read the journal"), "rb", closefd=True)


def read_journal_bytes(path: str | os.PathLike[str]) -> bytes:
    """The journal's bytes, decompressed for ``.json.gz`` / ``.json.zst``, never more than ``max_journal_bytes()``
    bytes nor ``max_journal_records()`` records (``JournalTooLarge``). Compressed data that breaks off or is damaged
    raises ``DamagedCompression`` carrying what decompressed before the break. Operating-system failures raise
    ``StorageError``."""
    return read_journal(path, JournalBounds.in_force())[0]


def read_journal(path: str | os.PathLike[str], bounds: JournalBounds) -> tuple[bytes, os.stat_result]:
    """``read_journal_bytes`` within ``bounds``, with the ``fstat`` of the file it read (a regular file, never a
    link: what an ``lstat`` of the path says), so a reader of many journals asks the system once per journal."""
    data, info = _read_journal_bytes(path, bounds.bytes)
    check_record_bound(data, bounds.records)
    return data, info


def _read_journal_bytes(path: str | os.PathLike[str], limit: int) -> tuple[bytes, os.stat_result]:
    where = os.fsdecode(path)
    with open_journal_file(path) as handle, mapped(path, "read the journal"):
        info = os.fstat(handle.fileno())
        if not where.endswith(COMPRESSED_SUFFIXES):
            size = info.st_size
            if size > limit:
                raise JournalTooLarge(limit, compressed=False)
            # Ask for the size the stat gave, plus one byte to see growth: a read of ``limit`` bytes would
            # allocate the whole bound (256 MiB) for every journal, however small.
            data = handle.read(size + 1) or b""
            if len(data) <= size:
                return data, info
            chunks, total = [data], len(data)  # it grew since the stat: read on in steps, up to the bound
            while more := handle.read(_GROWTH_STEP):
                total += len(more)
                if total > limit:
                    raise JournalTooLarge(limit, compressed=False)
                chunks.append(more)
            return b"".join(chunks), info
        source = io.BufferedReader(handle, _COMPRESSED_READ)
        if where.endswith(".gz"):
            return _gunzip(source, limit), info
        return _unzstd(source, limit), info


def read_journal_run(
    run: str, path: str, *, source: str, listed_in: str, strict: bool, bounds: JournalBounds
) -> RunRead:
    """The ``RunRead`` of the journal file at ``path`` (``listed_in``: the source's place, for ``RunNotFound``).
    Strict: a journal that cannot be read raises; lenient: it comes back incomplete with an ``unreadable_journal``
    finding, so one bad file never hides the others."""
    try:
        data, info = read_journal(path, bounds)
    except FileNotFoundError:
        raise RunNotFound(run, listed_in) from None
    except DamagedCompression as exc:
        return damaged_read(run, exc, source=source, where=path, strict=strict, updated=_mtime_at(path))
    except JournalTooLarge as exc:
        return too_large_read(run, exc, source=source, where=path, strict=strict, updated=_mtime_at(path))
    except StorageError as exc:
        if exc.errno == errno.ENOENT:
            raise RunNotFound(run, listed_in) from None
        if strict:
            raise
        finding = Finding.of(run, None, "unreadable_journal", str(exc), source)
        return RunRead(run, [], [finding], source, complete=False)
    except OSError as exc:
        raise storage_error(exc, path, "read the journal") from None
    # The descriptor's stat is the path's lstat: the journal opened is a regular file, never a link.
    return run_read(run, read_file_journal(data), source=source, where=path, strict=strict, updated=_mtime(info))


def _mtime(info: os.stat_result) -> datetime:
    return updated_at(info.st_mtime_ns)


def updated_at(modified_ns: int) -> datetime:
    """A journal file's modification time (nanoseconds since 1970) as a read's ``updated``."""
    return datetime.fromtimestamp(modified_ns / 1e9, UTC)


def _mtime_at(path: str) -> datetime | None:
    """The modification time of ``path`` itself (a link's own, as the runtime's listing reports it); None when it
    cannot be looked at."""
    try:
        return _mtime(os.lstat(path))
    except OSError:
        return None


def fresh_pages(size: int) -> np.ndarray:
    """``size`` bytes of fresh memory for a batch read into it, written once by the reads (a bytearray would first
    write zeros over every byte; ``native.read_files_into`` makes the pages present at once, without the GIL).

    Private anonymous pages: shared ones (``mmap``'s default) are backed by the kernel's shared memory, whose every
    page fault and release cost more: a small journal's pages cost 4.6 µs shared, 2.7 private and 1.6 made present
    at once. Never huge pages, as numpy's own allocation asks: on a machine whose memory a load has churned the
    kernel then compacts memory before the first write, which made a records-only load of 107 MB take 0.24-0.32 s
    instead of 0.11-0.16 s."""
    import numpy as np

    pages = mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    no_huge_pages = getattr(mmap, "MADV_NOHUGEPAGE", None)
    if no_huge_pages is not None:
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages
            pages.madvise(no_huge_pages)
    return np.frombuffer(pages, np.uint8)[:size]


def read_journals_into(
    paths: Sequence[str], capacity: int, times: np.ndarray | None = None
) -> tuple[np.ndarray, list[int | None]]:
    """Plain journals read one after another into one buffer of ``capacity`` bytes (what their listing said they
    hold), with each one's length; None for a journal to be read the usual way (``read_journal_bytes``, whose
    errors and findings it then meets): one that does not open as a regular file, passes the bound, grew or
    shrank since its size was taken, or does not fit. ``times`` (``int64``, one per path), when given, gets the
    modification time in nanoseconds of each journal read."""
    from journaltools.protocol import native

    buffer = fresh_pages(capacity)
    limit = max_journal_bytes()
    records_limit = max_journal_records()
    # The same rules in C, without the GIL and without a Python object per file, where the scanner is built.
    read = native.read_files_into(paths, buffer, limit, records_limit, times)
    if read is not None:
        return buffer, read
    lengths: list[int | None] = []
    position = 0
    with buffer.data as view:
        for index, path in enumerate(paths):
            try:
                with open_journal_file(path) as handle:
                    info = os.fstat(handle.fileno())
                    size = info.st_size
                    if times is not None:
                        times[index] = info.st_mtime_ns
                    if size > limit or position + size > capacity:
                        lengths.append(None)
                        continue
                    got = 0
                    while got < size and (step := handle.readinto(view[position + got : position + size])):
                        got += step
                    if got != size or handle.read(1):
                        lengths.append(None)
                        continue
                    if records_past_bound(buffer[position : position + size], records_limit) is not None:
                        lengths.append(None)  # the usual read refuses it, with its finding
                        continue
            except (JournalError, OSError):
                lengths.append(None)
                continue
            lengths.append(size)
            position += size
    return buffer, lengths


class _Output:
    """Decompressed chunks, counted against the bound as they come (a list, not a growing bytearray, whose
    reallocations would double the peak at the worst moment)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        if self.size > self.limit:
            self.chunks.clear()  # what was read is of no use: free it before the error travels
            raise JournalTooLarge(self.limit, compressed=True)

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _gunzip(source: BinaryIO, limit: int) -> bytes:
    """Every gzip member of ``source``, read in steps, with the output bounded step by step (``max_length``)."""
    import zlib

    out = _Output(limit)
    pending = source.read(_COMPRESSED_READ)
    while pending:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            while not inflater.eof:
                if not pending:
                    if chunk := inflater.decompress(b"", _GZIP_OUTPUT_STEP):
                        out.add(chunk)  # output still buffered inside the inflater
                        continue
                    if not (pending := source.read(_COMPRESSED_READ)):
                        break
                out.add(inflater.decompress(pending, _GZIP_OUTPUT_STEP))
                pending = inflater.unconsumed_tail
        except zlib.error as exc:
            raise DamagedCompression(f"gzip data is damaged: {exc}", out.data()) from None
        if not inflater.eof:
            raise DamagedCompression("gzip data breaks off (the file is truncated)", out.data())
        pending = inflater.unused_data or source.read(_COMPRESSED_READ)  # the next member, if any
    return out.data()


def _unzstd(source: BinaryIO, limit: int) -> bytes:
    """Every zstd frame of ``source``, read in steps; a frame that does not end is damage, never a short journal."""
    import zstandard

    out = _Output(limit)
    context = zstandard.ZstdDecompressor()
    pending = source.read(_COMPRESSED_STEP)
    while pending:
        frame = context.decompressobj()
        try:
            while not frame.eof:
                if not pending and not (pending := source.read(_COMPRESSED_STEP)):
                    break
                out.add(frame.decompress(pending))
                pending = b""
        except zstandard.ZstdError as exc:
            raise DamagedCompression(f"zstd data is damaged: {exc}", out.data()) from None
        if not frame.eof:
            raise DamagedCompression("zstd data breaks off (the file is truncated)", out.data())
        pending = frame.unused_data or source.read(_COMPRESSED_STEP)  # the next frame starts inside the last step
    return out.data()


def torn_tail_offset(data: bytes, journal: FileJournal) -> int | None:
    """Where the torn tail starts in ``data``, so journaltools' own writer can cut it off before appending;
    None when there is none. The reader gives the torn line's length, not its offset: the torn line is the last
    element of the split, so it ends where the data does, less the one final newline the split drops."""
    torn = journal.torn_tail
    if torn is None:
        return None
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    return end - torn.length


def needs_newline(data: bytes, journal: FileJournal) -> bool:
    """The last line is whole but its ``\\n`` never made it: a writer must finish that line before appending,
    or its first record would be glued onto it."""
    return bool(data) and not data.endswith(b"\n") and journal.torn_tail is None


def stored_records(journal: FileJournal) -> Sequence[StoredRecord]:
    """The decoded lines as the backend contract holds them (position: the line number; files have no time)."""
    return journal.records


def run_read(
    run: str, journal: FileJournal, *, source: str, where: str, strict: bool, updated: datetime | None
) -> RunRead:
    """The ``RunRead`` of one file journal, with every finding the line rule's verdict implies (the one place
    they are worded); strict raises ``CorruptJournal`` for a journal the runtime refuses."""
    findings: list[Finding] = []
    noncanonical = 0
    for read in journal.noncanonical_records():
        noncanonical += 1
        if noncanonical <= MAX_FINDINGS_PER_CODE:
            message = f"line {read.position} is not what the Go encoder writes: {read.noncanonical}"
            findings.append(Finding.of(run, read.record.seq, "noncanonical_line", message, source))
    if noncanonical > MAX_FINDINGS_PER_CODE:
        more = noncanonical - MAX_FINDINGS_PER_CODE
        message = f"and {more:,} more lines of {where} are not what the Go encoder writes"
        findings.append(Finding.of(run, None, "noncanonical_line", message, source))
    resumed = {resume.line: resume for resume in journal.resumed_after_torn_tail}
    errors: list[CorruptJournal] = []
    for bad in journal.corrupt:
        resume = resumed.get(bad.line)
        if resume is not None:
            where_next = "on the same line" if resume.glued else "on the next line"
            why = (
                f"an earlier writer's torn record with seq {resume.next_seq} written again {where_next} "
                f"(the runtime resumes without cutting a torn tail): {bad.reason}"
            )
            error = CorruptJournal(run, bad.line, why, where)
            findings.append(Finding.of(run, resume.next_seq, "resumed_after_torn_tail", str(error), source))
        else:
            error = CorruptJournal(run, bad.line, f"line does not decode: {bad.reason}", where)
            findings.append(Finding.of(run, None, "corrupt_line", str(error), source))
        errors.append(error)
    if journal.corrupt_more:
        message = f"and {journal.corrupt_more:,} more interior lines of {where} do not decode"
        findings.append(Finding.of(run, None, "corrupt_line", message, source))
    if errors and strict:
        raise errors[0]
    torn = journal.torn_tail
    if torn is not None:
        message = (
            f"final line {torn.line} ({torn.length:,} bytes) of {where} does not decode and was dropped: {torn.reason}"
        )
        findings.append(Finding.of(run, None, "torn_tail", message, source))
        resume = resumed.get(torn.line)
        if resume is not None:
            # The runtime still reads this journal (the glued line is its torn tail), but the resumer's whole
            # record went down with the torn bytes: the journal lost a record someone was told was stored.
            message = (
                f"final line {torn.line} of {where} holds an earlier writer's torn record with the record seq "
                f"{resume.next_seq} glued after it (the runtime resumes without cutting a torn tail); "
                "the runtime drops both"
            )
            findings.append(Finding.of(run, resume.next_seq, "resumed_after_torn_tail", message, source))
    return RunRead(run, stored_records(journal), findings, source, not errors, updated, journal.last_seq)


def damaged_read(
    run: str, exc: DamagedCompression, *, source: str, where: str, strict: bool, updated: datetime | None
) -> RunRead:
    """A compressed journal whose data breaks off: refused like a corrupt one, naming the line where it breaks.
    Leniently, every whole line before the break is kept (it decompressed intact); the broken line is not."""
    partial = exc.partial
    whole = partial[: partial.rfind(b"\n") + 1]
    line = whole.count(b"\n") + 1
    error = CorruptJournal(run, line, f"compressed data breaks off in this line: {exc}", where)
    if strict:
        raise error
    try:
        check_record_bound(whole)
    except JournalTooLarge as too_large:
        return too_large_read(run, too_large, source=source, where=where, strict=False, updated=updated)
    journal = read_file_journal(whole)
    read = run_read(run, journal, source=source, where=where, strict=False, updated=updated)
    findings = [*read.findings, Finding.of(run, None, "corrupt_line", str(error), source)]
    return RunRead(run, read.records, findings, source, False, updated, read.last_seq)


def too_large_read(
    run: str, exc: JournalTooLarge, *, source: str, where: str, strict: bool, updated: datetime | None
) -> RunRead:
    """A journal past the bound: one ``journal_too_large`` finding, nothing read."""
    error = JournalTooLargeError(run, f"{where}: {exc}")
    if strict:
        raise error
    return RunRead(run, [], [Finding.of(run, None, "journal_too_large", str(error), source)], source, False, updated, 0)
