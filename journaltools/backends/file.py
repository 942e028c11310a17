"""The file backend: ``<root>/<run>.jsonl`` journals, one JSON line per record (PROTOCOL.md section 5).

Durability: every append is written and fsynced before ``last_seq`` moves; a new journal's
directory is fsynced on its first write. Exclusion: a writer holds a non-blocking exclusive
``flock`` on ``<root>/<run>.lock`` for its lifetime; the kernel drops it when the process dies,
so a crash never leaves a stale lock. Because the file is append-only and synced, only the final
line can be torn: an unparsable final line is dropped and reported, an unparsable interior line
is corruption and the journal is refused.

A hostile directory changes none of that. A journal or lock path that is a symbolic link, FIFO, socket,
device or directory is never written (``NotAJournalFile``), so a link cannot send an append outside the
source nor take the lock beside the link instead of beside the file it writes; for reading such a journal
is reported and never opened in a way that could block (``scan.open_journal_file``). One journal that
cannot be read is a finding of its own run, never the end of a listing or a lenient load. Every
operating-system failure is a ``StorageError`` naming the path (``backends.oserrors``).

Besides directories, ``JournalFilesBackend`` reads an explicit set of journal files: one file named as the
source, or the matches of a glob. ``<run>.jsonl.gz`` and ``<run>.jsonl.zst`` journals are read (never
written) in both.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from journaltools._durable import fsync_directory, write_all
from journaltools.backends.base import (
    AppendResult,
    AppendVerdictTaken,
    Backend,
    JournalWriter,
    RunRead,
    RunSummary,
    prepare_raw_record,
    prepare_record,
)
from journaltools.backends.oserrors import mapped, open_regular, refuse_unless_regular, storage_error
from journaltools.backends.scan import COMPRESSED_SUFFIXES, DEFAULT_MAX_LINE_BYTES, read_journal, scan_journal
from journaltools.errors import (
    JournalLocked,
    ReadOnlySource,
    RunNotFound,
    SequenceGap,
    SourceError,
    StorageError,
)
from journaltools.listing import summarize_by_fold
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import RawRecord
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append

JOURNAL_SUFFIX = ".jsonl"
LOCK_SUFFIX = ".lock"
#: Every journal name: plain first (it wins when a run has both), then the read-only compressed ones.
JOURNAL_SUFFIXES = (JOURNAL_SUFFIX, *(JOURNAL_SUFFIX + suffix for suffix in COMPRESSED_SUFFIXES))


def journal_name_parts(name: str) -> tuple[str, str] | None:
    """``"r1.jsonl.gz"`` → ``("r1", ".jsonl.gz")``; None for a name that is not a journal's."""
    for suffix in sorted(JOURNAL_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return None


def _read_all(fd: int, path: Path) -> bytes:
    chunks = []
    with mapped(path, "read the journal"):
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    return b"".join(chunks)


class FileJournalWriter(JournalWriter):
    def __init__(self, root: Path, run: str) -> None:
        self.run = validate_run_id(run)
        self.path = root / f"{run}{JOURNAL_SUFFIX}"
        self._root = root
        self._fd = -1
        lock = root / f"{run}{LOCK_SUFFIX}"
        # Both paths must be regular files, never links: the lock then always sits beside the file it guards.
        # The journal is looked at first so that refusing it leaves no lock file behind.
        refuse_unless_regular(self.path, "open the journal for writing")
        self._lock_fd = open_regular(lock, os.O_RDWR | os.O_CREAT, "take the write lock")
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._lock_fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalLocked(run, None, f"another process holds the write lock {lock}") from None
            raise storage_error(exc, lock, "take the write lock") from None
        try:
            self._fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, "open the journal for writing")
            self.last_seq, self._new_journal = self._recover()
            with mapped(self.path, "open the journal for writing"):
                self._durable_length = os.fstat(self._fd).st_size
        except BaseException:
            self._release()
            raise

    def _recover(self) -> tuple[int, bool]:
        """Read what is stored, truncate a torn tail, and return (last durable seq, journal is new)."""
        data = _read_all(self._fd, self.path)
        if not data:
            return 0, True
        scanned = scan_journal(data, self.run, str(self.path))
        if scanned.corrupt is not None:
            raise scanned.corrupt
        with mapped(self.path, "repair the journal's torn tail"):
            if scanned.clean_length < len(data):
                os.ftruncate(self._fd, scanned.clean_length)
                os.fsync(self._fd)
            elif scanned.needs_newline:
                # The last record is whole but its newline never made it: finish the line before appending.
                write_all(self._fd, b"\n")
                os.fsync(self._fd)
        last = max((record.seq or 0 for record in scanned.records), default=0)
        return last, not scanned.records

    async def append_async(self, record: bytes | dict[str, Any]) -> AppendResult:
        return self.append_now(record)

    def append_now(self, record: bytes | dict[str, Any]) -> AppendResult:
        """Append in the calling thread (file I/O needs no event loop; used by ``append`` and crash tests)."""
        self._check_open()
        return self._store(prepare_record(self.run, self.last_seq, record))

    def append_raw_now(self, record: bytes) -> AppendResult:
        """``append_raw`` in the calling thread: stored bytes copied as they are (migration)."""
        self._check_open()
        return self._store(prepare_raw_record(self.run, record))

    async def append_raw_async(self, record: bytes) -> AppendResult:
        return self.append_raw_now(record)

    def append_raw(self, record: bytes) -> AppendResult:
        return self.append_raw_now(record)

    def _check_open(self) -> None:
        if self._fd < 0:
            raise ValueError(f"writer for run {self.run!r} is closed")

    def _store(self, parsed: RawRecord) -> AppendResult:
        """CheckAppend, then write and fsync one line; ``last_seq`` moves only after the fsync."""
        seq = parsed.seq
        assert seq is not None  # both prepare functions refuse a record without an integer seq
        verdict = check_append(self.last_seq, seq)
        if verdict is AppendVerdict.DUPLICATE:
            return AppendResult(seq, AppendVerdictTaken.DUPLICATE)
        if verdict is AppendVerdict.GAP:
            raise SequenceGap(self.run, self.last_seq, seq)
        line = parsed.raw + b"\n"
        try:
            write_all(self._fd, line)
            os.fsync(self._fd)
            if self._new_journal:
                fsync_directory(self._root)
        except BaseException as exc:
            self._undo_failed_append()
            if isinstance(exc, OSError):
                raise storage_error(exc, self.path, f"append seq {seq}") from None
            raise
        self._new_journal = False
        self._durable_length += len(line)
        self.last_seq = seq
        return AppendResult(seq, AppendVerdictTaken.STORED)

    def _undo_failed_append(self) -> None:
        """Cut the file back to its last durable record after a failed write or fsync.

        Otherwise a retry would append after half a line (a torn tail that turns into interior
        corruption once anything follows it) or write the same record twice. If even the cut fails,
        the writer closes: reopening recovers the file as after a crash.
        """
        try:
            os.ftruncate(self._fd, self._durable_length)
            os.fsync(self._fd)
        except OSError:
            self._release()

    def append(self, record: bytes | dict[str, Any]) -> AppendResult:
        return self.append_now(record)

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


class _LocalJournals(Backend):
    """What a directory and a set of files share: reading journal files, listing by fold, local paths."""

    kind = "file"
    max_line_bytes: int

    def journal_path(self, run: str) -> Path:
        """The journal of ``run`` (plain or compressed); ``RunNotFound`` when the source has none."""
        raise NotImplementedError

    def list_runs_now(self) -> list[str]:
        raise NotImplementedError

    def _where(self) -> str:
        return self.url

    def read_run_now(self, run: str, *, strict: bool = True) -> RunRead:
        """Strict: a journal that cannot be read raises (``StorageError``); lenient: it comes back incomplete
        with an ``unreadable_journal`` finding, so one bad file never hides the others."""
        path = self.journal_path(validate_run_id(run))
        try:
            scanned = read_journal(path, run, self.max_line_bytes)
        except StorageError as exc:
            if exc.errno == errno.ENOENT:
                raise RunNotFound(run, self._where()) from None
            if strict:
                raise
            finding = Finding.of(run, None, "unreadable_journal", str(exc), self.url)
            return RunRead(run, [], [finding], self.url, complete=False)
        if scanned.corrupt is not None and strict:
            raise scanned.corrupt
        return RunRead(run, scanned.records, scanned.findings, self.url, complete=scanned.corrupt is None)

    def local_journals(self, runs: Sequence[str]) -> list[tuple[str, str]] | None:
        """The paths when every journal is a plain regular file this process may read; None otherwise, so the
        loader reads through ``read_run`` (which decompresses and turns an unreadable journal into a finding)."""
        paths = [(run, self.journal_path(run)) for run in runs]
        check_access = os.geteuid() != 0
        for _, path in paths:
            if path.name.endswith(COMPRESSED_SUFFIXES):
                return None
            try:
                info = os.lstat(path)
            except OSError:
                return None
            if not stat.S_ISREG(info.st_mode) or (check_access and not os.access(path, os.R_OK)):
                return None
        return [(run, str(path)) for run, path in paths]

    async def list_runs_async(self) -> list[str]:
        return self.list_runs_now()

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    async def listing_async(self) -> list[RunSummary]:
        rows = []
        for run in self.list_runs_now():
            read = self.read_run_now(run, strict=False)
            summary = summarize_by_fold(run, read.records, read.complete, read.findings)
            unreadable = tuple(f for f in read.findings if f.code == "unreadable_journal")
            rows.append(replace(summary, findings=unreadable) if unreadable else summary)
        return rows

    # Local disk needs no event loop: the blocking face calls straight through instead of a round trip
    # through the background loop for every call.
    def close(self) -> None:
        pass

    def list_runs(self) -> list[str]:
        return self.list_runs_now()

    def read_run(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    def open_writer(self, run: str) -> FileJournalWriter:
        return self.open_writer_now(run)

    async def open_writer_async(self, run: str) -> FileJournalWriter:
        return self.open_writer_now(run)

    def open_writer_now(self, run: str) -> FileJournalWriter:
        raise NotImplementedError


def _is_directory(path: Path) -> bool:
    """A directory itself, not a link to one (a name that vanished since the scan is no directory)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class FileBackend(_LocalJournals):
    """A directory of ``<run>.jsonl`` journals (and read-only ``<run>.jsonl.gz`` / ``<run>.jsonl.zst``)."""

    def __init__(
        self, root: str | os.PathLike[str], *, create: bool = False, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.root = Path(root)
        self.max_line_bytes = max_line_bytes
        if create:
            with mapped(self.root, "create the directory"):
                self.root.mkdir(parents=True, exist_ok=True)
        try:
            info = os.stat(self.root)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise SourceError(f"{self.root}: no such directory of journals; check the path") from None
            raise storage_error(exc, self.root, "open the directory of journals") from None
        if not stat.S_ISDIR(info.st_mode):
            raise SourceError(f"{self.root}: not a directory of journals")
        self.url = self.root.resolve().as_uri()

    def _where(self) -> str:
        return str(self.root)

    def path_of(self, run: str) -> Path:
        return self.root / f"{validate_run_id(run)}{JOURNAL_SUFFIX}"

    def journal_path(self, run: str) -> Path:
        for suffix in JOURNAL_SUFFIXES:
            path = self.root / f"{validate_run_id(run)}{suffix}"
            if os.path.lexists(path):
                return path
        raise RunNotFound(run, str(self.root))

    def _names(self) -> Iterator[str]:
        """The directory's entry names, one at a time: a source may hold millions of journals, so callers keep
        only what they need (an ``os.DirEntry`` costs several times its name)."""
        with mapped(self.root, "list the directory of journals"), os.scandir(self.root) as scan:
            for entry in scan:
                yield entry.name

    def local_journals(self, runs: Sequence[str]) -> list[tuple[str, str]] | None:
        # A look at each journal asked for (not a scan of the whole directory, which the loader would repeat for
        # every chunk of runs it lists): a plain regular file this process may read, or None.
        check_access = os.geteuid() != 0
        root = str(self.root)
        paths = []
        for run in runs:
            if not is_valid_run_id(run):
                return None
            path = os.path.join(root, f"{run}{JOURNAL_SUFFIX}")
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                return None  # compressed, missing or unreadable: read_run reports each properly
            if not stat.S_ISREG(mode) or (check_access and not os.access(path, os.R_OK)):
                return None
            paths.append((run, path))
        return paths

    def list_runs_now(self) -> list[str]:
        """Every valid run id with a journal entry, whatever kind of file it is: one that cannot be read is
        still a run, reported when read (``unreadable_journal``), never silently absent."""
        runs = []
        for name in self._names():
            parts = journal_name_parts(name)
            if parts is not None and is_valid_run_id(parts[0]):
                runs.append(parts[0])
        runs.sort()
        # A run with a plain and a compressed journal is listed once; sorted, its names sit side by side.
        return [run for index, run in enumerate(runs) if index == 0 or runs[index - 1] != run]

    def _journal_preferred_to(self, run: str, suffix: str) -> str | None:
        """The name of the journal read for ``run`` instead of its ``suffix`` one, if there is one."""
        for preferred in JOURNAL_SUFFIXES[: JOURNAL_SUFFIXES.index(suffix)]:
            if os.path.lexists(self.root / f"{run}{preferred}"):
                return f"{run}{preferred}"
        return None

    def source_findings(self) -> list[Finding]:
        """Each entry of the directory that is not a journal this source reads, once: a journal name that is not
        a valid run id, a second journal for a run (the plain one is read), and any other file or directory
        (lock files excepted). Nothing is kept per journal, so millions of them cost no memory here."""
        findings = []
        for name in self._names():
            parts = journal_name_parts(name)
            if parts is None:
                if name.endswith(LOCK_SUFFIX) and is_valid_run_id(name[: -len(LOCK_SUFFIX)]):
                    continue
                what = "a directory" if _is_directory(self.root / name) else "not a journal"
                message = f"{name}: {what} (journals are <run>.jsonl); not read"
                findings.append(Finding.of(None, None, "not_a_journal", message, self.url))
                continue
            run, suffix = parts
            if not is_valid_run_id(run):
                message = f"{name}: the file name is not a valid run id; not read"
                findings.append(Finding.of(None, None, "invalid_run_id", message, self.url))
            elif suffix != JOURNAL_SUFFIX and (preferred := self._journal_preferred_to(run, suffix)) is not None:
                message = f"{name}: run {run!r} already has the journal {preferred}; not read"
                findings.append(Finding.of(run, None, "duplicate_journal", message, self.url))
        return sorted(findings, key=lambda f: f.message)

    def open_writer_now(self, run: str) -> FileJournalWriter:
        path = self.journal_path(run) if self._has_journal(run) else self.path_of(run)
        if path.name != f"{run}{JOURNAL_SUFFIX}":
            raise ReadOnlySource(f"{path}: a compressed journal is read-only; decompress it to append to run {run!r}")
        return FileJournalWriter(self.root, run)

    def _has_journal(self, run: str) -> bool:
        try:
            self.journal_path(run)
        except RunNotFound:
            return False
        return True


class JournalFilesBackend(_LocalJournals):
    """Journal files named one by one (a single file, the matches of a glob); their runs come from the names.

    Reading is as for a directory. Writing appends to a run's plain journal where it is (a compressed one is
    read-only); a run the set does not hold cannot be created here (``ReadOnlySource``).
    """

    def __init__(self, url: str, paths: Sequence[Path], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.url = url
        self.max_line_bytes = max_line_bytes
        self._paths: dict[str, Path] = {}
        self._findings: list[Finding] = []
        for path in paths:
            parts = journal_name_parts(path.name)
            if parts is None:
                what = "a directory" if path.is_dir() else "not a journal"
                self._findings.append(
                    Finding.of(None, None, "not_a_journal", f"{path}: {what} (journals are <run>.jsonl); not read", url)
                )
            elif not is_valid_run_id(parts[0]):
                message = f"{path}: the file name is not a valid run id; not read"
                self._findings.append(Finding.of(None, None, "invalid_run_id", message, url))
            elif parts[0] in self._paths:
                message = f"{path}: run {parts[0]!r} already has the journal {self._paths[parts[0]]}; not read"
                self._findings.append(Finding.of(parts[0], None, "duplicate_journal", message, url))
            else:
                self._paths[parts[0]] = path

    def journal_path(self, run: str) -> Path:
        try:
            return self._paths[validate_run_id(run)]
        except KeyError:
            raise RunNotFound(run, self.url) from None

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
        return FileJournalWriter(path.parent, run)


def has_glob(text: str) -> bool:
    return glob.has_magic(text)


def open_journal_files(text: str) -> JournalFilesBackend:
    """A single journal file, or every match of a glob (``logs/2026-*/*.jsonl``; ``**`` spans directories)."""
    pattern = os.path.abspath(os.path.expanduser(text))
    if has_glob(text):
        matches = sorted(Path(match) for match in glob.glob(pattern, recursive=True))
        if not matches:
            raise SourceError(f"{text}: the pattern matches no file; check the path and quote the pattern")
        return JournalFilesBackend(f"file://{pattern}", matches)
    path = Path(pattern)
    if path.is_symlink():  # the user named this link: the journal is what it points to
        path = path.resolve()
    return JournalFilesBackend(path.as_uri(), [path])
