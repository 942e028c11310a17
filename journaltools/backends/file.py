"""The file backend: ``<root>/<run>.jsonl`` journals, one JSON line per record (PROTOCOL.md section 5).

Durability: every append is written and fsynced before ``last_seq`` moves; a new journal's
directory is fsynced on its first write. Exclusion: a writer holds a non-blocking exclusive
``flock`` on ``<root>/<run>.lock`` for its lifetime; the kernel drops it when the process dies,
so a crash never leaves a stale lock. Because the file is append-only and synced, only the final
line can be torn: an unparsable final line is dropped and reported, an unparsable interior line
is corruption and the journal is refused.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Sequence
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
    prepare_record,
)
from journaltools.backends.scan import DEFAULT_MAX_LINE_BYTES, read_journal, scan_journal
from journaltools.errors import JournalLocked, RunNotFound, SequenceGap, SourceError
from journaltools.listing import summarize_by_fold
from journaltools.protocol.findings import Finding
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append

JOURNAL_SUFFIX = ".jsonl"
LOCK_SUFFIX = ".lock"


class FileJournalWriter(JournalWriter):
    def __init__(self, root: Path, run: str) -> None:
        self.run = validate_run_id(run)
        self.path = root / f"{run}{JOURNAL_SUFFIX}"
        self._root = root
        self._lock_fd = os.open(root / f"{run}{LOCK_SUFFIX}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._lock_fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalLocked(
                    run, None, f"another process holds the write lock {root / (run + LOCK_SUFFIX)}"
                ) from None
            raise
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            self.last_seq, self._new_journal = self._recover()
            self._durable_length = os.fstat(self._fd).st_size
        except BaseException:
            self._release()
            raise

    def _recover(self) -> tuple[int, bool]:
        """Read what is stored, truncate a torn tail, and return (last durable seq, journal is new)."""
        with open(self.path, "rb") as handle:
            data = handle.read()
        if not data:
            return 0, True
        scanned = scan_journal(data, self.run, str(self.path))
        if scanned.corrupt is not None:
            raise scanned.corrupt
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
        if self._fd < 0:
            raise ValueError(f"writer for run {self.run!r} is closed")
        parsed = prepare_record(self.run, self.last_seq, record)
        seq = parsed.seq
        assert seq is not None  # prepare_record validated the envelope
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
        except BaseException:
            self._undo_failed_append()
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
        if getattr(self, "_fd", -1) >= 0:
            os.close(self._fd)
        self._fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
        self._lock_fd = -1

    async def aclose(self) -> None:
        self._release()

    def close(self) -> None:
        self._release()


class FileBackend(Backend):
    kind = "file"

    def __init__(
        self, root: str | os.PathLike[str], *, create: bool = False, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.root = Path(root)
        self.max_line_bytes = max_line_bytes
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        if not self.root.is_dir():
            raise SourceError(f"{self.root}: not a directory of journals")
        self.url = self.root.resolve().as_uri()

    def path_of(self, run: str) -> Path:
        return self.root / f"{validate_run_id(run)}{JOURNAL_SUFFIX}"

    def list_runs_now(self) -> list[str]:
        runs = []
        for entry in os.scandir(self.root):
            if entry.name.endswith(JOURNAL_SUFFIX) and entry.is_file():
                run = entry.name[: -len(JOURNAL_SUFFIX)]
                if is_valid_run_id(run):
                    runs.append(run)
        return sorted(runs)

    def unusable_journal_names(self) -> list[str]:
        """``*.jsonl`` files whose name is not a valid run id: never read as runs, but reported by audits."""
        return sorted(
            entry.name
            for entry in os.scandir(self.root)
            if entry.name.endswith(JOURNAL_SUFFIX) and not is_valid_run_id(entry.name[: -len(JOURNAL_SUFFIX)])
        )

    def local_journals(self, runs: Sequence[str]) -> list[tuple[str, str]]:
        return [(run, str(self.path_of(run))) for run in runs]

    def source_findings(self) -> list[Finding]:
        return [
            Finding.of(None, None, "invalid_run_id", f"{name}: the file name is not a valid run id; not read", self.url)
            for name in self.unusable_journal_names()
        ]

    def read_run_now(self, run: str, *, strict: bool = True) -> RunRead:
        path = self.path_of(run)
        try:
            scanned = read_journal(path, run, self.max_line_bytes)
        except FileNotFoundError:
            raise RunNotFound(run, str(self.root)) from None
        if scanned.corrupt is not None and strict:
            raise scanned.corrupt
        return RunRead(run, scanned.records, scanned.findings, self.url, complete=scanned.corrupt is None)

    async def list_runs_async(self) -> list[str]:
        return self.list_runs_now()

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    async def listing_async(self) -> list[RunSummary]:
        rows = []
        for run in self.list_runs_now():
            read = self.read_run_now(run, strict=False)
            rows.append(summarize_by_fold(run, read.records, read.complete))
        return rows

    async def open_writer_async(self, run: str) -> FileJournalWriter:
        return FileJournalWriter(self.root, run)

    # Local disk needs no event loop: the blocking face calls straight through instead of a round trip
    # through the background loop for every call.
    def close(self) -> None:
        pass

    def list_runs(self) -> list[str]:
        return self.list_runs_now()

    def read_run(self, run: str, *, strict: bool = True) -> RunRead:
        return self.read_run_now(run, strict=strict)

    def open_writer(self, run: str) -> FileJournalWriter:
        return FileJournalWriter(self.root, run)
