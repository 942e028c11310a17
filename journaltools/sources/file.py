"""The file backend in the runtime's layout (REAL-SYSTEM.md D): ``<dir>/<id>.json`` journals beside ``<id>.lock``.

Layout and durability as ``internal/runstate/file`` has them: the directory is created 0700, journals and lock
files 0600; a writer holds an exclusive non-blocking ``flock`` on ``<id>.lock`` for its lifetime (busy:
``JournalLocked``; the kernel drops it when the process dies, so a crash leaves no stale lock); a create takes the
lock, then opens the journal with ``O_CREAT|O_EXCL|O_APPEND`` (already there: ``RunExists``); every record is
written and fsynced before ``last_seq`` moves, and the directory is fsynced after a created journal's first record.

Reading follows the runtime's line rule (``protocol.journal.read_file_journal``; its findings are worded in
``scan``): a torn final line is dropped with a ``torn_tail`` warning, an interior line that does not decode
refuses the journal.

A hostile directory changes none of that: a journal or lock path that is a symbolic link, FIFO, socket, device or
directory is never opened in a way that could follow it or block (``NotAJournalFile``); one journal that cannot be
read is a finding of its own run, never the end of a listing. Operating-system failures are ``StorageError``.

``JournalFilesBackend`` reads an explicit set of journal files (one file named as the source, or a glob's matches).
``<id>.json.gz`` and ``<id>.json.zst`` journals are read, never written.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import stat
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from journaltools._base.durable import fsync_directory, write_all
from journaltools._base.oserrors import mapped, open_regular, refuse_unless_regular, storage_error
from journaltools.errors import (
    CorruptJournal,
    JournalLocked,
    JournalPastReadersBound,
    ReadOnlySource,
    RunExists,
    RunNotFound,
    SourceError,
)
from journaltools.protocol import native
from journaltools.protocol.encode import encode_record
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import read_file_journal
from journaltools.protocol.kinds import Meta, Record
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.protocol.sequence import AppendVerdict
from journaltools.sources.base import (
    AppendOutcome,
    AppendResult,
    Backend,
    JournalWriter,
    LocalJournal,
    RunRead,
    is_vanished,
    meta_record,
    raw_seq,
    vanished_read,
)
from journaltools.sources.listing import RunSummary
from journaltools.sources.scan import (
    COMPRESSED_SUFFIXES,
    JOURNAL_SUFFIX,
    JOURNAL_SUFFIXES,
    LOCK_SUFFIX,
    MAX_JOURNAL_BYTES_VARIABLE,
    MAX_JOURNAL_RECORDS_VARIABLE,
    JournalBounds,
    journal_name_parts,
    max_journal_bytes,
    max_journal_records,
    needs_newline,
    read_journal_run,
    run_read,
    torn_tail_offset,
)

#: Journals and locks hold conversations and tool input: only their owner reads them (``file.go:93-100``).
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


def _is_temporary(name: str) -> bool:
    """A temporary file a writer replaces atomically (``.<name>.<pid>.tmp``): not worth a finding."""
    return name.endswith(".tmp")


class FileJournalWriter(JournalWriter):
    """One run's journal, held under its flock until ``close``.

    Unlike the runtime's writer, which appends straight after a torn tail (so the torn bytes become a corrupt
    interior line on the next read: REAL-SYSTEM.md D, "torn tail on reopen"), this writer cuts a torn tail off
    (and finishes a last line whose ``\\n`` is missing) before its first append, so a journal it resumes stays
    readable. A journal with a corrupt interior line is refused (``CorruptJournal``), as the runtime refuses it,
    and so is one whose torn final line has a whole record glued after it (cutting it would destroy that record).
    """

    def __init__(self, root: Path, run: str, *, create: bool) -> None:
        self.run = validate_run_id(run)
        self.path = root / f"{run}{JOURNAL_SUFFIX}"
        self._root = root
        self._fd = -1
        self._lock_fd = -1
        self.last_seq = 0
        lock = root / f"{run}{LOCK_SUFFIX}"
        # Both paths must be regular files, never links: the lock then always sits beside the file it guards.
        # The journal is looked at first so that refusing it leaves no lock file behind.
        refuse_unless_regular(self.path, "open the journal for writing")
        if not create and not os.path.lexists(self.path):
            raise RunNotFound(run, str(root))
        self._lock_fd = open_regular(lock, os.O_RDWR | os.O_CREAT, "take the write lock", FILE_MODE)
        try:
            self._lock(lock, create)
            self._fd = self._open_journal(create)
            self._created = create
            #: Records in the journal (what the readers' record bound counts), for the warning past it.
            self._records = 0
            if not create:
                self.last_seq = self._recover()
            with mapped(self.path, "open the journal for writing"):
                self._durable_length = os.fstat(self._fd).st_size
        except BaseException:
            self._release()
            raise

    def _lock(self, lock: Path, create: bool) -> None:
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                # Busy and the journal is there: a live run, so the create's answer is "exists" (file.go:127-156).
                if create and os.path.lexists(self.path):
                    raise RunExists(self.run, str(self._root)) from None
                raise JournalLocked(self.run, None, f"another process holds the write lock {lock}") from None
            raise storage_error(exc, lock, "take the write lock") from None

    def _open_journal(self, create: bool) -> int:
        if not create:
            return open_regular(self.path, os.O_RDWR | os.O_APPEND, "open the journal for writing")
        # O_EXCL makes checking and creating one step, so two creators can never both start the same run.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            return os.open(self.path, flags, FILE_MODE)
        except FileExistsError:
            raise RunExists(self.run, str(self._root)) from None
        except OSError as exc:
            raise storage_error(exc, self.path, "create the journal") from None

    def _recover(self) -> int:
        """Read what is stored, cut a torn tail, finish a missing newline; the seq of the last record."""
        data = bytearray()
        with mapped(self.path, "read the journal"):
            while chunk := os.pread(self._fd, 1 << 20, len(data)):
                data += chunk
        stored = bytes(data)
        journal = read_file_journal(stored)
        self._records = len(journal.records)
        read = run_read(self.run, journal, source="", where=str(self.path), strict=True, updated=None)
        if any(resume.at_end for resume in journal.resumed_after_torn_tail):
            # The torn tail holds a whole record another writer glued onto it: cutting it would destroy that
            # record for good, so a person decides (the runtime's own reader drops it too).
            torn = journal.torn_tail
            line = torn.line if torn is not None else 0
            why = "the torn final line has a whole record glued after it; cutting it would lose that record"
            raise CorruptJournal(self.run, line, why, str(self.path))
        offset = torn_tail_offset(stored, journal)
        with mapped(self.path, "repair the journal's torn tail"):
            if offset is not None:
                os.ftruncate(self._fd, offset)
                os.fsync(self._fd)
            elif needs_newline(stored, journal):
                write_all(self._fd, b"\n")
                os.fsync(self._fd)
        return read.last_seq

    def _check_open(self) -> None:
        if self._fd < 0:
            raise ValueError(f"writer for run {self.run!r} is closed")

    def append_now(self, record: Record) -> AppendResult:
        """Append in the calling thread (file I/O needs no event loop)."""
        self._check_open()
        if self.verdict(record.seq) is AppendVerdict.DUPLICATE:
            return AppendResult(record.seq, AppendOutcome.DUPLICATE)
        return self._store(record.seq, encode_record(record))

    def append_raw_now(self, raw: bytes) -> AppendResult:
        """Stored bytes copied unchanged (migration), in the calling thread."""
        self._check_open()
        seq = raw_seq(self.run, raw)
        if self.verdict(seq) is AppendVerdict.DUPLICATE:
            return AppendResult(seq, AppendOutcome.DUPLICATE)
        return self._store(seq, raw)

    def _store(self, seq: int, raw: bytes) -> AppendResult:
        """Write and fsync one line; ``last_seq`` moves only after the fsync."""
        line = raw + b"\n"
        try:
            write_all(self._fd, line)
            os.fsync(self._fd)
            if self._created:
                fsync_directory(self._root)  # the new name must survive a crash too
        except BaseException as exc:
            self._undo_failed_append()
            if isinstance(exc, OSError):
                raise storage_error(exc, self.path, f"append seq {seq}") from None
            raise
        self._created = False
        self._durable_length += len(line)
        self._records += 1
        self.last_seq = seq
        self._warn_past_readers_bounds(len(line))
        return AppendResult(seq, AppendOutcome.STORED)

    def _warn_past_readers_bounds(self, added: int) -> None:
        """Warn, once per bound, when the append just stored took the journal past a bound the readers keep:
        the writer goes on (the runtime would), but a listing, a load or an audit refuses the journal from now."""
        crossed = []
        byte_bound, record_bound = max_journal_bytes(), max_journal_records()
        if self._durable_length - added <= byte_bound < self._durable_length:
            crossed.append(f"{self._durable_length:,} bytes, past {byte_bound:,} ({MAX_JOURNAL_BYTES_VARIABLE})")
        if self._records - 1 <= record_bound < self._records:
            crossed.append(f"{self._records:,} records, past {record_bound:,} ({MAX_JOURNAL_RECORDS_VARIABLE})")
        if crossed:
            warnings.warn(
                JournalPastReadersBound(
                    f"run {self.run!r} seq {self.last_seq}: the journal now holds {' and '.join(crossed)}, the "
                    "readers' bound per journal: the record is stored, but journaltools refuses to read the journal "
                    "(journal_too_large) until the bound is raised"
                ),
                stacklevel=5,  # the caller of append (append, append_now, _store, here)
            )

    def _undo_failed_append(self) -> None:
        """Cut the file back to its last durable record after a failed write or fsync, so a retry neither
        appends after half a line nor writes a record twice; if even the cut fails, the writer closes."""
        try:
            os.ftruncate(self._fd, self._durable_length)
            os.fsync(self._fd)
        except OSError:
            self._release()

    async def append_async(self, record: Record) -> AppendResult:
        return self.append_now(record)

    async def append_raw_async(self, raw: bytes) -> AppendResult:
        return self.append_raw_now(raw)

    def append(self, record: Record) -> AppendResult:
        return self.append_now(record)

    def append_raw(self, raw: bytes) -> AppendResult:
        return self.append_raw_now(raw)

    def _release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
        self._lock_fd = -1

    async def aclose(self) -> None:
        self._release()

    def close(self) -> None:
        self._release()


def _create_with_meta(root: Path, run: str, meta: Meta | bytes) -> FileJournalWriter:
    writer = FileJournalWriter(root, run, create=True)
    try:
        if isinstance(meta, bytes):
            writer.append_raw_now(meta)
        else:
            writer.append_now(meta_record(meta))
    except BaseException:
        writer.close()
        raise
    return writer


class _LocalJournals(Backend):
    """What a directory and a set of files share: reading journal files, listing by fold, local paths."""

    kind = "file"

    def journal_path(self, run: str) -> Path:
        """The journal of ``run`` (plain or compressed); ``RunNotFound`` when the source has none."""
        return Path(self.journal_file(run))

    def journal_file(self, run: str) -> str:
        """``journal_path`` as a string: what the reads use, a Path costing more than the read of a small journal."""
        raise NotImplementedError

    def list_runs_now(self) -> list[str]:
        raise NotImplementedError

    def _where(self) -> str:
        return self.url

    def read_run_now(self, run: str, *, strict: bool = True) -> RunRead:
        """Strict: a journal that cannot be read raises; lenient: it comes back incomplete with an
        ``unreadable_journal`` finding, so one bad file never hides the others."""
        return self._read_at(run, self.journal_file(run), strict, JournalBounds.in_force())

    def _read_at(self, run: str, path: str, strict: bool, bounds: JournalBounds) -> RunRead:
        """``read_run_now`` of the journal at ``path``, within ``bounds``."""
        return read_journal_run(run, path, source=self.url, listed_in=self._where(), strict=strict, bounds=bounds)

    def _read_listed(
        self, run: str, strict: bool, path: str | None = None, bounds: JournalBounds | None = None
    ) -> RunRead:
        """A run the listing named (at ``path`` when the listing said where): leniently, one whose journal is gone
        by now is a ``vanished`` read (the listing and the reading are two moments, and a retention job may delete
        a run between them)."""
        try:
            if path is None:
                return self.read_run_now(run, strict=strict)
            return self._read_at(run, path, strict, bounds or JournalBounds.in_force())
        except RunNotFound:
            if strict:
                raise
            return vanished_read(run, self.url, self._where())

    def vanished_findings(self) -> list[Finding]:
        return list(self._vanished)

    #: Made on first use, so the subclasses' constructors need not know of it.
    _vanished_runs: list[Finding] | None = None

    @property
    def _vanished(self) -> list[Finding]:
        if self._vanished_runs is None:
            self._vanished_runs = []
        return self._vanished_runs

    def local_journals(self, runs: Sequence[str]) -> list[LocalJournal] | None:
        """The paths and sizes when every journal is a plain regular file this process may read (one ``lstat``
        each); None otherwise, so the loader reads through ``read_run`` (which decompresses and turns an
        unreadable journal into a finding)."""
        check_access = os.geteuid() != 0
        try:
            paths = [self.plain_journal_file(run) for run in runs]
        except (OSError, RunNotFound):
            return None
        if any(path.endswith(COMPRESSED_SUFFIXES) for path in paths):
            return None
        sizes = native.stat_files(paths, readable=check_access)
        if min(sizes, default=0) < 0:
            return None
        return list(map(LocalJournal, runs, paths, sizes))

    def plain_journal_file(self, run: str) -> str:
        """Where ``run``'s journal is when it is a plain one (whether it is there is the caller's ``lstat``): a
        compressed one is found by ``journal_file``."""
        return self.journal_file(run)

    def read_local_runs(self, runs: Sequence[str], paths: Sequence[str], *, strict: bool = True) -> list[RunRead]:
        bounds = JournalBounds.in_force()  # asked once for the journals, not once per journal
        return [self._read_listed(run, strict, path, bounds) for run, path in zip(runs, paths, strict=True)]

    async def list_runs_async(self) -> list[str]:
        return self.list_runs_now()

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    def listing_now(self) -> list[RunSummary]:
        """The file rule: every journal read and folded (``listing.summarize_file``)."""
        return list(self.iter_listing())

    def iter_listing(self) -> Iterator[RunSummary]:
        """The file rule a batch of journals at a time (``sources.file_listing``): each is read, folded and
        summarized, then let go."""
        from journaltools.sources.file_listing import file_summaries

        return file_summaries(self, self.list_runs_now())

    def read_listed(self, run: str, path: str | None = None) -> RunRead:
        """A run the listing named, read leniently (at ``path`` when the listing said where); one gone since is a
        ``vanished`` read, whose finding ``vanished_findings`` then holds."""
        read = self._read_listed(run, strict=False, path=path)
        if is_vanished(read):
            self._vanished.extend(read.findings)
        return read

    async def listing_async(self) -> list[RunSummary]:
        return self.listing_now()

    # Local disk needs no event loop: the blocking face calls straight through.
    def close(self) -> None:
        pass

    def list_runs(self) -> list[str]:
        return self.list_runs_now()

    def read_run(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    def read_runs(self, runs: Sequence[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        wanted = list(runs) if runs is not None else self.list_runs_now()
        return [self._read_listed(run, strict) for run in wanted]

    def listing(self) -> list[RunSummary]:
        return self.listing_now()

    def open_writer(self, run: str) -> FileJournalWriter:
        return self.open_writer_now(run)

    async def open_writer_async(self, run: str) -> FileJournalWriter:
        return self.open_writer_now(run)

    def create_journal(self, run: str, meta: Meta | bytes) -> FileJournalWriter:
        return self.create_journal_now(run, meta)

    async def create_journal_async(self, run: str, meta: Meta | bytes) -> FileJournalWriter:
        return self.create_journal_now(run, meta)

    def open_writer_now(self, run: str) -> FileJournalWriter:
        raise NotImplementedError

    def create_journal_now(self, run: str, meta: Meta | bytes) -> FileJournalWriter:
        raise NotImplementedError


def _is_directory(path: Path) -> bool:
    """A directory itself, not a link to one (a name that vanished since the scan is no directory)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class FileBackend(_LocalJournals):
    """A directory of ``<id>.json`` journals (and read-only ``<id>.json.gz`` / ``<id>.json.zst``)."""

    def __init__(self, root: str | os.PathLike[str], *, create: bool = False) -> None:
        self.root = Path(root)
        if create:
            with mapped(self.root, "create the directory"):
                os.makedirs(self.root, mode=DIRECTORY_MODE, exist_ok=True)
        try:
            info = os.stat(self.root)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise SourceError(f"{self.root}: no such directory of journals; check the path") from None
            raise storage_error(exc, self.root, "open the directory of journals") from None
        if not stat.S_ISDIR(info.st_mode):
            raise SourceError(f"{self.root}: not a directory of journals")
        self.url = self.root.resolve().as_uri()
        self._prefix = os.path.join(self.root, "")  # a journal's path is this and its name: a join cost more

    def _where(self) -> str:
        return str(self.root)

    def path_of(self, run: str) -> Path:
        return self.root / f"{validate_run_id(run)}{JOURNAL_SUFFIX}"

    def plain_journal_file(self, run: str) -> str:
        # The plain name wins when a run has both (``journal_file``): a missing one is the caller's lstat's error.
        return self._prefix + validate_run_id(run) + JOURNAL_SUFFIX

    def journal_file(self, run: str) -> str:
        stem = os.path.join(self.root, validate_run_id(run))
        for suffix in JOURNAL_SUFFIXES:
            if os.path.lexists(path := stem + suffix):
                return path
        raise RunNotFound(run, str(self.root))

    def _names(self) -> Iterator[str]:
        """The directory's entry names, one at a time (a source may hold millions of journals)."""
        with mapped(self.root, "list the directory of journals"), os.scandir(self.root) as scan:
            for entry in scan:
                yield entry.name

    def list_runs_now(self) -> list[str]:
        """Every valid run id with a journal entry, whatever kind of file it is: one that cannot be read is
        still a run, reported when read (``unreadable_journal``), never silently absent."""
        runs = set()
        for name in self._names():
            parts = journal_name_parts(name)
            if parts is not None and is_valid_run_id(parts[0]):
                runs.add(parts[0])
        return sorted(runs)

    def source_findings(self) -> list[Finding]:
        """Each entry that is not a journal this source reads, once (``not_a_journal``, info): another file or a
        directory, a journal name that is not a valid run id, a compressed twin of a plain journal. Lock files and
        temporary files are the runtime's own and not reported."""
        findings = []
        for name in self._names():
            parts = journal_name_parts(name)
            if parts is None:
                if (name.endswith(LOCK_SUFFIX) and is_valid_run_id(name[: -len(LOCK_SUFFIX)])) or _is_temporary(name):
                    continue
                what = "a directory" if _is_directory(self.root / name) else "not a journal"
                message = f"{name}: {what} (journals are <run id>.json); not read"
            else:
                run, suffix = parts
                if not is_valid_run_id(run):
                    message = f"{name}: the name is not a valid run id; not read"
                elif suffix != JOURNAL_SUFFIX and self.journal_path(run).name != name:
                    message = f"{name}: run {run!r} already has the journal {self.journal_path(run).name}; not read"
                else:
                    continue
            findings.append(Finding.of(None, None, "not_a_journal", message, self.url))
        return sorted(findings, key=lambda f: f.message)

    def open_writer_now(self, run: str) -> FileJournalWriter:
        path = self.journal_path(run)
        if path.name != f"{run}{JOURNAL_SUFFIX}":
            raise ReadOnlySource(f"{path}: a compressed journal is read-only; decompress it to append to run {run!r}")
        return FileJournalWriter(self.root, run, create=False)

    def create_journal_now(self, run: str, meta: Meta | bytes) -> FileJournalWriter:
        validate_run_id(run)
        for suffix in JOURNAL_SUFFIXES[1:]:
            if os.path.lexists(self.root / f"{run}{suffix}"):
                raise RunExists(run, str(self.root))
        return _create_with_meta(self.root, run, meta)


class JournalFilesBackend(_LocalJournals):
    """Journal files named one by one (a single file, a glob's matches); their runs come from the names.

    Writing appends to a run's plain journal where it is (a compressed one is read-only); a run the set does not
    hold cannot be created here (``ReadOnlySource``).
    """

    def __init__(self, url: str, paths: Sequence[Path]) -> None:
        self.url = url
        self._paths: dict[str, Path] = {}
        self._findings: list[Finding] = []
        for path in paths:
            parts = journal_name_parts(path.name)
            if parts is None:
                if path.name.endswith(LOCK_SUFFIX) or _is_temporary(path.name):
                    continue
                what = "a directory" if _is_directory(path) else "not a journal"
                message = f"{path}: {what} (journals are <run id>.json); not read"
                self._findings.append(Finding.of(None, None, "not_a_journal", message, url))
            elif not is_valid_run_id(parts[0]):
                message = f"{path}: the name is not a valid run id; not read"
                self._findings.append(Finding.of(None, None, "not_a_journal", message, url))
            elif parts[0] in self._paths:
                message = f"{path}: run {parts[0]!r} already has the journal {self._paths[parts[0]]}; not read"
                self._findings.append(Finding.of(parts[0], None, "not_a_journal", message, url))
            else:
                self._paths[parts[0]] = path

    def journal_path(self, run: str) -> Path:
        try:
            return self._paths[validate_run_id(run)]
        except KeyError:
            raise RunNotFound(run, self.url) from None

    def journal_file(self, run: str) -> str:
        return os.fspath(self.journal_path(run))

    def list_runs_now(self) -> list[str]:
        return sorted(self._paths)

    def source_findings(self) -> list[Finding]:
        return list(self._findings)

    def open_writer_now(self, run: str) -> FileJournalWriter:
        path = self._paths.get(validate_run_id(run))
        if path is None:
            raise ReadOnlySource(f"{self.url}: run {run!r} has no journal here; create runs in a directory source")
        if path.name != f"{run}{JOURNAL_SUFFIX}":
            raise ReadOnlySource(f"{path}: a compressed journal is read-only; decompress it to append to run {run!r}")
        return FileJournalWriter(path.parent, run, create=False)

    def create_journal_now(self, run: str, meta: Meta | bytes) -> FileJournalWriter:
        raise ReadOnlySource(f"{self.url}: a set of journal files cannot create run {run!r}; use a directory source")


def has_glob(text: str) -> bool:
    return glob.has_magic(text)


def open_journal_files(text: str) -> JournalFilesBackend:
    """A single journal file, or every match of a glob (``runs/2026-*/*.json``; ``**`` spans directories)."""
    pattern = os.path.abspath(os.path.expanduser(text))
    if has_glob(text):
        matches = sorted(Path(match) for match in glob.glob(pattern, recursive=True))
        if not matches:
            raise SourceError(f"{text}: the pattern matches no file; check the path and quote the pattern")
        return JournalFilesBackend(f"file://{pattern}", matches)
    path = Path(pattern)
    if path.is_symlink():  # the user named this link: the journal is what it points to
        # realpath, not Path.resolve: a loop of links stays a link here (resolve raises on it), which the reader
        # then refuses in the one line it gives for a link in a directory.
        path = Path(os.path.realpath(path))
    return JournalFilesBackend(path.as_uri(), [path])
