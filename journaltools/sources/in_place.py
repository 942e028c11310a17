"""Local plain journals read into one buffer and proven there, journal by journal, for whoever folds them.

A load and a file listing both meet thousands of small journals, where what costs is not the bytes but the objects
made per journal. Here a batch of journals is read in C into one buffer (``scan.read_journals_into``),
proven by the scanner in place (``protocol.native.scan_batch``), and handed out one at a time: a journal the scanner
proved as its lines in the buffer (``Proven``: its meta record decoded alone, and whether the native walk may take
it), any other as its path (``Usual``: to be read the usual way, whose findings then say what is wrong with it).
Nothing here folds: the tables (``tables.batch``) and the listing (``sources.listing``) each fold what they are
handed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, NamedTuple, TypeVar

import numpy as np

from journaltools.folding import native as native_fold
from journaltools.protocol import native
from journaltools.protocol.journal import generation_of_proven, read_file_journal
from journaltools.protocol.kinds import Record
from journaltools.sources.base import LocalJournal, RunRead
from journaltools.sources.scan import max_journal_bytes, read_journals_into, run_read, updated_at

#: What one batch holds at most: journal bytes (``LoadOptions.batch_bytes``' default), and journals (what a batch
#: holds per journal, its rows and its fold, is bounded too, not only its bytes).
BATCH_BYTES: Final = 8 << 20
BATCH_JOURNALS: Final = 1024

T = TypeVar("T")


def batched(journals: Sequence[LocalJournal], max_bytes: int, max_journals: int) -> Iterator[Sequence[LocalJournal]]:
    """``journals`` in order, in batches of at most ``max_bytes`` by the sizes they were listed with (a journal larger
    than that alone) and at most ``max_journals``: what a load and a listing each read in place at a time."""
    start = size = 0
    for index, journal in enumerate(journals):
        if index > start and (size + journal.size > max_bytes or index - start >= max_journals):
            yield journals[start:index]
            start, size = index, 0
        size += journal.size
    if start < len(journals):
        yield journals[start:]


def read_ahead(
    items: Iterable[T], read: Callable[[T], InPlace | None], *, ahead: bool = True
) -> Generator[tuple[T, InPlace | None], None, None]:
    """Each of ``items`` in turn with what ``read`` makes of it (a batch read in place, or None), the next item's
    read made on a thread while the caller works on this one (``ahead``; else each read when its turn comes).

    The file reads and the scan release the GIL, so where a second core is free the reading of a batch hides behind
    the fold of the one before: 7 of a small run's 65 µs, a sixth of the August directory's load. One batch at most
    is read ahead of the one handed out (memory holds one batch more), and an error of a read is raised at its
    item's turn, as a read in turn would raise it."""
    if not ahead:
        for item in items:
            yield item, read(item)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="journaltools-read") as reader:
        pending: tuple[T, Future[InPlace | None]] | None = None
        for item in items:
            following = item, reader.submit(read, item)
            if pending is not None:
                yield pending[0], pending[1].result()
            pending = following
        if pending is not None:
            yield pending[0], pending[1].result()


def in_place_available() -> bool:
    """Whether journals can be read and proven in place here: this build has the scanner and the native walk is in
    use (neither set aside by the environment)."""
    return native.active() and native_fold.active()


class Proven(NamedTuple):
    """A journal the scanner proved, as its lines in the batch's buffer."""

    #: Its place in the batch.
    position: int
    run: str
    path: str
    #: Its meta record when the native walk may take the journal (``native_fold.proven_first``), else None.
    usable: Record | None
    #: The buffer up to the journal's end, and its lines' starts there (``int64``) and payload kinds.
    data: memoryview
    starts: bytes
    kinds: bytes
    #: Its lines' offsets in ``data`` (each one's start, then the end of the last), for ``read``.
    offsets: memoryview
    #: The file's modification time when read (nanoseconds since 1970).
    modified_ns: int
    #: The batch's protocol index of every line (``BatchScan.protocols``), and where the journal's first line is there.
    batch_protocols: bytes
    first_line: int

    @property
    def lines(self) -> int:
        return len(self.kinds)

    def protocol(self, number: int) -> str | None:
        """Line ``number``'s protocol id as the scan matched it, None for one it does not know (the line holds it)."""
        index = self.batch_protocols[self.first_line + number]
        return None if index == native.OTHER_PROTOCOL else native.PROTOCOL_IDS[index]

    def line(self, number: int) -> memoryview:
        """Line ``number`` (0 the first) without its newline."""
        return self.data[self.offsets[number] : self.offsets[number + 1]]

    def read(self, source: str) -> RunRead:
        """The journal's read as the file backend makes it, from the same bytes (its lines, one per line): for a
        journal the walk gives back, folded in Python."""
        data = b"".join(bytes(self.line(number)) + b"\n" for number in range(self.lines))
        updated = updated_at(self.modified_ns)
        return run_read(
            self.run, read_file_journal(data), source=source, where=self.path, strict=False, updated=updated
        )


class Usual(NamedTuple):
    """A journal to read the usual way: one the scanner did not prove, one that did not read whole here, or an
    August journal holding a field only the newest line writes (not what that build writes)."""

    position: int
    run: str
    path: str


@dataclass(frozen=True, slots=True)
class InPlace:
    """One batch read and proven in place: its buffer, the scan, and each journal's line count (-1: not proven)."""

    paths: Sequence[tuple[str, str]]
    buffer: np.ndarray
    scan: native.BatchScan
    counts: list[int]
    modified: list[int]

    @classmethod
    def read(cls, paths: Sequence[tuple[str, str]], size: int) -> InPlace:
        """Read ``paths`` (run, path) whose listing said they hold ``size`` bytes in all (``in_place_available``
        must be true)."""
        # A journal past the bound is never read here, so the buffer need not hold more than the bound per journal.
        capacity = min(size, max_journal_bytes() * len(paths))
        modified = np.zeros(len(paths), np.int64)
        buffer, lengths = read_journals_into([path for _, path in paths], capacity, modified)
        scan = native.scan_batch(buffer, [length or 0 for length in lengths])
        if scan is None:
            raise RuntimeError("InPlace.read: this build has no scanner (ask in_place_available first)")
        # A journal left to the usual read was given length 0, which the scan never proves: its count is -1 too.
        counts: list[int] = np.frombuffer(scan.proven, np.int64).tolist()
        return cls(paths, buffer, scan, counts, modified.tolist())

    def beside_august(self) -> set[int]:
        """The positions of the proven journals that hold a field only the newest line writes beside an August meta
        record (``_beside_august``): to be read the usual way. Only the first line of a journal flagged so is
        decoded."""
        scan = self.scan
        if not any(scan.newest):
            return set()
        body = memoryview(self.buffer)  # type: ignore[arg-type]  # numpy arrays export the buffer protocol
        offsets = memoryview(scan.offsets).cast("q")
        found: set[int] = set()
        first_line = 0
        for index, count in enumerate(self.counts):
            if count < 0:
                continue
            if scan.newest[index]:
                line = body[offsets[first_line] : offsets[first_line + 1]]
                if _beside_august(line, native_fold.decoded_line(line)):
                    found.add(index)
            first_line += count
        return found

    def journals(self) -> Iterator[Proven | Usual]:
        """Each journal in order, proven or to be read the usual way."""
        scan = self.scan
        body = memoryview(self.buffer)  # type: ignore[arg-type]  # numpy arrays export the buffer protocol
        offsets = memoryview(scan.offsets).cast("q")
        kinds = native_fold.kinds_of_protocols(scan.protocols)
        # Looked up once: each lookup was a measurable part of what handing a small journal out costs.
        protocols, newest, modified = scan.protocols, scan.newest, self.modified
        decoded_line, proven_first = native_fold.decoded_line, native_fold.proven_first
        end = 0
        for index, ((run, path), count) in enumerate(zip(self.paths, self.counts, strict=True)):
            if count >= 0:
                start = end
                end += count
                line = body[offsets[start] : offsets[start + 1]]
                first = decoded_line(line)
                holds_newest = newest[index] != 0
                if not (holds_newest and _beside_august(line, first)):
                    yield Proven(
                        index,
                        run,
                        path,
                        proven_first(first, protocols[start], holds_newest=holds_newest),
                        body[: offsets[end]],
                        scan.offsets[start * 8 : end * 8],
                        kinds[start:end],
                        offsets[start : end + 1],
                        modified[index],
                        protocols,
                        start,
                    )
                    continue
            yield Usual(index, run, path)


def _beside_august(first_line: memoryview, decoded: Record | None) -> bool:
    """Whether a proven journal holding a field only the newest line writes has an August meta record by its first
    line (``decoded``: that line decoded, None when it does not): not what that build's encoder writes, so the
    journal is read the usual way (its lines noncanonical)."""
    return not generation_of_proven(first_line, decoded).extended_records


__all__ = [
    "BATCH_BYTES",
    "BATCH_JOURNALS",
    "InPlace",
    "Proven",
    "Usual",
    "batched",
    "in_place_available",
    "read_ahead",
]
