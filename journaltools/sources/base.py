"""The backend contract: what both the file and the JetStream backends do, written once as ``async def``.

Backends only place bytes: file names and lines, subjects and messages, the seq a record goes under. What a line
means is ``journaltools.protocol``'s business and what a run means is the fold's; a backend applies no rule of its
own beyond what the runtime's own backends apply (CheckAppend, the torn-tail rule of file journals).

Each async method has a blocking twin (``read_run`` / ``read_run_async``) that runs it on the process-wide
background loop (``journaltools._base.aio``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Self, TypeVar

from journaltools.errors import RecordRefused, SequenceGap
from journaltools.goencoding.time import now_go_time
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import rules_for_version
from journaltools.protocol.journal import BadLine, read_stream_bodies, typed_records
from journaltools.protocol.journal import StoredRecord as StoredRecord
from journaltools.protocol.kinds import Meta, Record, make_record
from journaltools.protocol.runid import validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append

if TYPE_CHECKING:
    from journaltools.sources.listing import RunSummary

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``aio.run_sync``, its module imported at the first blocking call: asyncio takes a command's start some 30 ms
    to import, and the file backend's blocking face (all that ``show`` of a journal file uses) never needs it."""
    from journaltools._base.aio import run_sync as run_on_loop

    return run_on_loop(coroutine)


BackendKind = Literal["file", "jetstream"]


@dataclass(slots=True)
class RunRead:
    """One run as read from a backend.

    ``complete`` is False when the journal is refused (a corrupt interior line, an undecodable JetStream body, a
    journal resumed after a torn tail): ``records`` then holds the lines that decode and ``findings`` says what
    did not, but the run must never be folded or copied as if whole. ``updated``: the journal's mtime (file) or
    the last message's time (JetStream). ``last_seq``: the seq of the last decoded record, what a resuming
    writer continues from.
    """

    run: str
    records: Sequence[StoredRecord]
    findings: list[Finding] = field(default_factory=list)
    source: str = ""
    complete: bool = True
    updated: datetime | None = None
    last_seq: int = 0

    def typed(self) -> list[Record]:
        """The records alone, in order: what ``fold`` takes."""
        return typed_records(self.records)


class LocalJournal(NamedTuple):
    """A run's journal as a plain local file: its path and its size when it was listed."""

    run: str
    path: str
    size: int


class AppendOutcome(Enum):
    STORED = "stored"
    DUPLICATE = "duplicate"  # CheckAppend: seq <= last; nothing written, nothing compared (as the runtime does)
    ADOPTED = "adopted"  # JetStream: the ack was lost but the server holds our message


@dataclass(frozen=True, slots=True)
class AppendResult:
    seq: int
    outcome: AppendOutcome


def raw_seq(run: str, raw: bytes) -> int:
    """The seq of stored bytes about to be copied verbatim (migration): one line the runtime's decoder accepts,
    judged by the same reader as a stored JetStream body (an atomic unit: no torn-tail or blank-line rule)."""
    if b"\n" in raw:
        raise RecordRefused(run, None, "corrupt_line", "a record is one line; these bytes hold a newline")
    (read,) = read_stream_bodies([raw])
    if isinstance(read, BadLine):
        raise RecordRefused(run, None, "corrupt_line", f"the runtime's decoder refuses these bytes: {read.reason}")
    return read.record.seq


class JournalWriter(ABC):
    """Appends records to one run through CheckAppend; ``last_seq`` moves only once a record is durable.

    ``append`` encodes a typed record exactly as the Go encoder does (``encode_record``); ``append_raw`` is
    migration's path and stores the given bytes unchanged. Both go through CheckAppend: a seq at or below
    ``last_seq`` is skipped (``DUPLICATE``, nothing written), one more than one above it is ``SequenceGap``.
    """

    run: str
    last_seq: int

    def verdict(self, seq: int) -> AppendVerdict:
        """CheckAppend against ``last_seq``; raises ``SequenceGap`` for a gap."""
        verdict = check_append(self.last_seq, seq)
        if verdict is AppendVerdict.GAP:
            raise SequenceGap(self.run, self.last_seq, seq)
        return verdict

    @abstractmethod
    async def append_async(self, record: Record) -> AppendResult: ...

    @abstractmethod
    async def append_raw_async(self, raw: bytes) -> AppendResult:
        """Append stored bytes unchanged (migration), not for runtimes."""

    @abstractmethod
    async def aclose(self) -> None: ...

    def append(self, record: Record) -> AppendResult:
        return run_sync(self.append_async(record))

    def append_raw(self, raw: bytes) -> AppendResult:
        return run_sync(self.append_raw_async(raw))

    def close(self) -> None:
        run_sync(self.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def vanished_read(run: str, source: str, where: str) -> RunRead:
    """A run the source listed whose journal was gone when it came to be read (deleted by a retention job, or
    replaced by a rename at that moment): no records and one ``vanished`` finding. Listings and tables leave it
    out (``is_vanished``); the other runs are read as ever."""
    message = f"run {run!r} was listed in {where} but its journal was gone when read (deleted or replaced); left out"
    return RunRead(run, [], [Finding.of(run, None, "vanished", message, source)], source, complete=False)


def is_vanished(read: RunRead) -> bool:
    return not read.records and any(finding.code == "vanished" for finding in read.findings)


def meta_record(meta: Meta) -> Record:
    """The record a created journal starts with: the meta payload at seq 1 (``Store.Create``). The newest line's
    ``Create`` appends it through ``PrepareRecord``, which dates it now, in UTC."""
    dated = rules_for_version(meta.version).dates_records
    return make_record(1, meta, time=now_go_time() if dated else "")


class Backend(ABC):
    """A source of journals. Implementations: ``FileBackend``, ``JournalFilesBackend``, ``JetStreamBackend``."""

    url: str
    kind: BackendKind

    @abstractmethod
    async def list_runs_async(self) -> list[str]:
        """Every run id in the source, sorted; only valid run ids."""

    @abstractmethod
    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        """All records of one run in order. Strict: a refused journal raises ``CorruptJournal`` (naming run,
        position and reason); lenient: it comes back with ``complete=False`` and a finding per bad line."""

    @abstractmethod
    async def listing_async(self) -> list[RunSummary]:
        """The backend's own listing rule (file: fold every run; JetStream: two records), via ``listing``."""

    @abstractmethod
    async def create_journal_async(self, run: str, meta: Meta | bytes) -> JournalWriter:
        """A new run holding ``meta`` at seq 1 (or, for migration, a stored meta record's bytes, unchanged);
        ``RunExists`` when the run is already there."""

    @abstractmethod
    async def open_writer_async(self, run: str) -> JournalWriter:
        """Resume an existing run (``RunNotFound`` when absent): file takes the flock, JetStream reads the tail."""

    async def aclose(self) -> None:  # noqa: B027 - backends without connections have nothing to close
        pass

    def local_journals(self, runs: Sequence[str]) -> list[LocalJournal] | None:
        """Each run's journal, where it is and its size, when the journals are plain local files a loader may read
        itself; None otherwise (the loader then reads through the backend)."""
        return None

    def read_local_runs(self, runs: Sequence[str], paths: Sequence[str], *, strict: bool = True) -> list[RunRead]:
        """The reads of ``runs`` whose journals ``local_journals`` found at ``paths``, as ``read_runs`` reads them
        (a backend of local files reads those paths without looking each run up again)."""
        return self.read_runs(runs, strict=strict)

    def source_findings(self) -> list[Finding]:
        """Findings about the source rather than one run (a file that is not a journal, a stream setting)."""
        return []

    def vanished_findings(self) -> list[Finding]:
        """The ``vanished`` findings of the runs the listings so far left out: listed by the source, gone when
        read (``iter_listing`` yields rows only, so a caller that reports findings asks here afterwards)."""
        return []

    async def read_runs_async(self, runs: Sequence[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        wanted = list(runs) if runs is not None else await self.list_runs_async()
        return [await self.read_run_async(run, strict=strict) for run in wanted]

    # -- the blocking face --------------------------------------------------------------------

    def list_runs(self) -> list[str]:
        return run_sync(self.list_runs_async())

    def read_run(self, run: str, *, strict: bool = True) -> RunRead:
        return run_sync(self.read_run_async(validate_run_id(run), strict=strict))

    def read_runs(self, runs: Sequence[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        return run_sync(self.read_runs_async(runs, strict=strict))

    def listing(self) -> list[RunSummary]:
        return run_sync(self.listing_async())

    def iter_listing(self) -> Iterator[RunSummary]:
        """The listing one row at a time, so a million runs are never held at once where the backend can read
        them one by one (the file backend does; by default this is ``listing()``)."""
        yield from self.listing()

    def create_journal(self, run: str, meta: Meta | bytes) -> JournalWriter:
        return run_sync(self.create_journal_async(validate_run_id(run), meta))

    def open_writer(self, run: str) -> JournalWriter:
        return run_sync(self.open_writer_async(validate_run_id(run)))

    def close(self) -> None:
        run_sync(self.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
