"""Following a journal as it is written: what it gained since the last look, from a file or a stream.

A follower reads the journal whole once (``start``, the read ``show`` folds), then hands out what was appended
(``wait``): the new records, the reader's verdict on the journal as it now stands, and lines a person should read
(a torn tail, a journal that turned corrupt). It never writes, and never takes the runtime's lock.

**Files** (``FileFollower``): the journal is watched with inotify where the system has it (a watch on its directory,
so a deletion or a replacement is seen too) and looked at every ``POLL_SECONDS`` all the same. Only the bytes after
the last whole line are read, by the file reader's own rules (``protocol.journal.read_file_journal`` and
``scan.run_read``, given the meta line and the last record before them, so the generation, the line numbers and the
torn-tail resume rule are the whole read's): a final line that does not decode is a torn tail for now and read
again with what follows it, so a tail completed later is read once, and a tail something was appended after is the
interior corruption the runtime refuses. A final line that decodes but has no newline yet is held too, until its
newline comes or a look finds the file unchanged: a writer may still be adding to it (a ``\r``, or the next record
glued on by a resume), and a record is shown once, as the whole read will have it. A journal deleted, replaced by
another file, or cut short below what was already read ends the follow with a line saying so: what was shown is
not silently read again.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from journaltools.errors import SourceError
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import BadLine, FileJournal, ResumedAfterTornTail, StoredRecord, read_file_journal
from journaltools.sources.base import Backend, RunRead
from journaltools.sources.follower import Change, Follower
from journaltools.sources.scan import JournalBounds, open_journal_file, read_journal, run_read

#: How often a journal is looked at when nothing wakes the follower sooner (inotify, where there is one).
POLL_SECONDS = 0.1


class FileFollower(Follower):
    """A journal file followed (see the module doc)."""

    def __init__(self, path: str | os.PathLike[str], run: str, source: str = "") -> None:
        self.path = os.fspath(path)
        self.run = run
        self.source = source
        self._file: int | None = None
        self._identity: tuple[int, int] | None = None
        #: Bytes and lines read for good: every line up to ``offset`` ends in a newline and will not be read again.
        self.offset = 0
        self._lines = 0
        #: The meta line and the last record's line: read again before new bytes, so they are read in context.
        self._head: bytes | None = None
        self._anchor: bytes | None = None
        self._lasting: list[Finding] = []
        self._tail: list[Finding] = []
        self._complete = True
        self._watch = _Inotify.of(Path(self.path).parent)
        self._seen: tuple[int, int] | None = None
        #: Whether bytes after ``offset`` end in a line that decodes but has no newline yet (held until quiet).
        self._unterminated = False

    def start(self) -> RunRead:
        data, info = read_journal(self.path, JournalBounds.in_force())
        self._identity = (info.st_dev, info.st_ino)
        self._file = _open_fd(self.path)
        self._seen = (info.st_size, info.st_mtime_ns)
        journal = read_file_journal(data)
        self._take(data, journal, base=1)
        if self._unterminated:  # the line still being written is shown by a later look, once
            journal = read_file_journal(data[: self.offset])
        # The whole read's own findings, in its order (what show prints), with the tail's kept apart.
        updated = datetime.fromtimestamp(info.st_mtime_ns / 1e9, UTC)
        read = run_read(self.run, journal, source=self.source, where=self.path, strict=False, updated=updated)
        self._lasting = [finding for finding in read.findings if finding not in self._tail]
        self._complete = read.complete
        return read

    def wait(self, timeout: float) -> Change:
        if self._watch is not None:
            self._watch.wait(min(timeout, 1.0))
        else:
            _sleep_on_nothing(min(timeout, POLL_SECONDS))
        return self.look()

    def close(self) -> None:
        if self._file is not None:
            os.close(self._file)
            self._file = None
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    # -- one look ----------------------------------------------------------------------------------------------

    def look(self) -> Change:
        """What was appended since the last look, without waiting."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return Change(gone=f"the journal {self.path} was deleted or moved away")
        if (info.st_dev, info.st_ino) != self._identity:
            return Change(gone=f"the journal {self.path} was replaced by another file")
        if info.st_size < self.offset:
            return Change(
                gone=f"the journal {self.path} was cut to {info.st_size:,} bytes, below the {self.offset:,} already "
                "read: records already shown are gone"
            )
        seen = (info.st_size, info.st_mtime_ns)
        quiet = seen == self._seen
        if quiet and not self._unterminated:
            return Change()
        self._seen = seen
        assert self._file is not None
        data = os.pread(self._file, max(0, info.st_size - self.offset), self.offset)
        if not data and not self._tail:
            return Change()
        return self._read_on(data, quiet=quiet)

    def _read_on(self, data: bytes, *, quiet: bool = False) -> Change:
        context = [line for line in (self._head, self._anchor) if line is not None]
        base = len(context) + 1
        journal = read_file_journal(b"".join(line + b"\n" for line in context) + data)
        return self._take(data, journal, base=base, quiet=quiet)

    def _take(self, data: bytes, journal: FileJournal, *, base: int, quiet: bool = False) -> Change:
        """Keep what ``journal`` (``data`` read after ``base - 1`` lines of context) holds for good, and word the
        reader's findings on it, numbered as the file numbers its lines. ``quiet``: nothing was written since the
        last look, so a final line with no newline is taken as it stands."""
        shift = self._lines + 1 - base
        torn = journal.torn_tail
        # The final line is read again next time when it does not decode (it may be torn, or be completed), or when
        # it decodes but may still grow (no newline yet, and the writer was not quiet).
        self._unterminated = bool(data) and not data.endswith(b"\n") and torn is None and not quiet
        if torn is None and not self._unterminated:
            cut = len(data)
        else:
            cut = data.rfind(b"\n", 0, len(data) - 1 if data.endswith(b"\n") else None) + 1
        kept_lines = data.count(b"\n", 0, cut)
        records: Sequence[StoredRecord] = journal.records
        if self._unterminated:  # the held line's record, the last, is taken with its line
            records = [stored for stored in records if stored.position < base + kept_lines]
        if shift or base > 1:
            records = [_moved(stored, shift) for stored in records if stored.position >= base]
        resumed = [_moved_resume(resume, shift) for resume in journal.resumed_after_torn_tail if resume.line >= base]
        where = self.path
        held = FileJournal(
            records,
            None,
            [_moved_line(bad, shift) for bad in journal.corrupt if bad.line >= base],
            [resume for resume in resumed if not resume.at_end],
            records[-1].record.seq if records else journal.last_seq,
            journal.corrupt_more,
        )
        kept = run_read(self.run, held, source=self.source, where=where, strict=False, updated=None)
        tail_journal = FileJournal(
            [], _moved_line(torn, shift) if torn is not None else None, [], [r for r in resumed if r.at_end], 0
        )
        tail = run_read(self.run, tail_journal, source=self.source, where=where, strict=False, updated=None)
        # A torn tail is said once, when it appears; it goes when completed, or becomes the corruption said below.
        notices = [] if self._tail else [_torn_notice(finding) for finding in tail.findings]
        newly_refused = self._complete and not kept.complete
        if self._tail and not tail.findings and not newly_refused:
            notices.append("the torn final line was completed (or cut off and written again)")
        notices += [f"{finding.code}: {finding.message}" for finding in kept.findings if finding.severity == "error"]
        if newly_refused:
            notices.append("the journal is refused from here on, as the runtime refuses it: the run is invalid")
        self._lasting += kept.findings
        self._tail = tail.findings
        self._complete = self._complete and kept.complete
        self.offset += cut
        self._lines += kept_lines
        if records:
            # The meta line decides the generation; the last record is where a torn-tail resume is recognised.
            if self._head is None:
                self._head, records_after_head = records[0].raw, records[1:]
            else:
                records_after_head = records
            if records_after_head:
                self._anchor = records_after_head[-1].raw
        findings_changed = bool(kept.findings) or bool(notices) or newly_refused
        return Change(
            list(records),
            [*self._lasting, *self._tail] if findings_changed else None,
            self._complete if newly_refused else None,
            notices,
        )


def open_follower(backend: Backend, run: str) -> Follower:
    """A follower of ``run`` in ``backend``: its journal file, or its subjects in a stream."""
    if backend.kind == "jetstream":
        from journaltools.sources.follow_stream import StreamFollower

        return StreamFollower(backend, run)
    local = backend.local_journals([run])
    if not local:
        backend.read_run(run, strict=False)  # RunNotFound for a run the source does not hold
        raise SourceError(
            f"{backend.url}: the journal of {run!r} is not a plain file this process can read (a compressed journal "
            "is never written to): there is nothing to follow"
        )
    return FileFollower(local[0][1], run, backend.url)


class SourceWatch:
    """Whether any run of a source changed since the last look: a directory's journals (inotify where there is
    one, else a look every ``POLL_SECONDS``), or a stream's last sequence (asked once a second)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._watch: _Inotify | None = None
        if backend.kind != "jetstream":
            journals = backend.local_journals(backend.list_runs()) or []
            root = getattr(backend, "root", None)
            directory = Path(root) if root is not None else (Path(journals[0][1]).parent if journals else None)
            self._watch = _Inotify.of(directory) if directory is not None else None
        self._last = self._signature()

    @classmethod
    def of(cls, url: str | None) -> SourceWatch:
        from journaltools.sources.registry import open_source

        return cls(open_source(url))

    def changed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a change; True when the runs changed since the last look."""
        if self.backend.kind == "jetstream":
            _sleep_on_nothing(min(timeout, 1.0))
        elif self._watch is not None:
            self._watch.wait(timeout)
        else:
            _sleep_on_nothing(min(timeout, POLL_SECONDS))
        signature = self._signature()
        if signature == self._last:
            return False
        self._last = signature
        return True

    def _signature(self) -> object:
        backend = self.backend
        if backend.kind == "jetstream":
            from journaltools.sources.follow_stream import stream_position

            return stream_position(backend)
        looks = []
        for entry in backend.local_journals(backend.list_runs()) or []:
            try:
                info = os.lstat(entry[1])
            except OSError:
                continue
            looks.append((entry[0], info.st_ino, info.st_size, info.st_mtime_ns))
        return looks

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self.backend.close()


def _open_fd(path: str) -> int:
    with open_journal_file(path) as handle:
        return os.dup(handle.fileno())


def _moved(stored: StoredRecord, shift: int) -> StoredRecord:
    return StoredRecord(stored.record, stored.raw, stored.position + shift, stored.time, stored.noncanonical)


def _moved_line(bad: BadLine, shift: int) -> BadLine:
    return BadLine(bad.line + shift, bad.reason, bad.length)


def _moved_resume(resume: ResumedAfterTornTail, shift: int) -> ResumedAfterTornTail:
    return ResumedAfterTornTail(resume.line + shift, resume.next_seq, resume.record, resume.glued, resume.at_end)


def _torn_notice(finding: Finding) -> str:
    if finding.code == "torn_tail":
        return f"{finding.message} (a writer died mid-record, or is still writing it: read again as it grows)"
    return f"{finding.code}: {finding.message}"


def _sleep_on_nothing(seconds: float) -> None:
    """Wait ``seconds`` for no event (the bounded poll where inotify is missing)."""
    select.select([], [], [], seconds)


class _Inotify:
    """Linux's inotify through the C library (no package needed): woken when anything in one directory changes."""

    _MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200  # modify, attrib, close_write, moved, create, delete

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def of(cls, directory: Path) -> _Inotify | None:
        """A watch on ``directory``, or None where the system has no inotify (the follower then polls)."""
        name = ctypes.util.find_library("c")
        if name is None or not hasattr(os, "O_NONBLOCK"):
            return None
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(directory), cls._MASK) < 0:
            os.close(fd)
            return None
        return cls(fd)

    def wait(self, timeout: float) -> None:
        """Until something in the directory changes, or ``timeout`` seconds; the events are drained, not read."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(self.fd, 65536):
                    pass

    def close(self) -> None:
        os.close(self.fd)


__all__ = ["POLL_SECONDS", "Change", "FileFollower", "Follower", "SourceWatch", "open_follower"]
