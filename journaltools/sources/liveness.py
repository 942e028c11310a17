"""Whether a process writes a run now, told without touching the runtime's lock.

The runtime writes a file journal under an exclusive lock on ``<id>.lock`` beside it, held for as long as the
process runs the run. A run with no ending recorded may be running right now or may have died months ago; the
lock tells them apart, but taking it, testing it or waiting on it, even for an instant, could stall or refuse a
resuming writer. So this module never opens the lock file: on Linux it reads the kernel's table of held locks
(``/proc/locks``) and looks for the lock file's device and inode there. Where that table cannot be read (another
platform, a sandbox), the answer is ``unknown``, never a guess. A JetStream run has no lock: only the last message's
time can be told (``silent_for``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from journaltools.sources.base import Backend

#: ``held``: a process holds the run's lock now; ``free``: none does (or there is no lock file); ``unknown``: it
#: cannot be told here.
Writer = Literal["held", "free", "unknown"]

#: What each state says to a person (``show``'s header, the run browser's pane and its column's tooltip).
WRITER_WORDS: Final[dict[str, str]] = {
    "held": "held (a process holds the run's lock now)",
    "free": "free (no process holds the run's lock)",
    "unknown": "unknown (whether a process holds the run's lock cannot be told here)",
}

#: The kernel's table of every held file lock (Linux).
PROC_LOCKS: Final = Path("/proc/locks")


@dataclass(frozen=True, slots=True)
class HeldLocks:
    """The (device, inode) pairs some process holds a lock on, read once; None when the table cannot be read."""

    held: frozenset[tuple[int, int, int]] | None

    @classmethod
    def now(cls, table: Path = PROC_LOCKS) -> HeldLocks:
        try:
            text = table.read_text(encoding="ascii", errors="replace")
        except OSError:
            return cls(None)
        return cls(frozenset(_held(text.splitlines())))

    def writer(self, lock: Path) -> Writer:
        """Whether a process holds ``lock`` (the path is only looked up, never opened)."""
        if self.held is None:
            return "unknown"
        if not self.held:
            # The table shows no lock held at all: this one is not held either, and a listing of thousands of runs
            # need not look each lock file up (5 us a run, a tenth of a small run's load).
            return "free"
        try:
            info = os.stat(lock)
        except FileNotFoundError:
            return "free"  # no lock file: no process has ever locked the journal here
        except OSError:
            return "unknown"
        key = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
        return "held" if key in self.held else "free"


@dataclass(frozen=True, slots=True)
class SourceLocks:
    """Whether a process writes each run of one source now: the lock table read once for the whole source (a
    directory's runs lock ``<id>.lock`` beside their journals); every run of a stream is ``unknown``."""

    locks: HeldLocks
    #: The directory of the runs' lock files; None for a source without lock files.
    root: Path | None

    @classmethod
    def of(cls, backend: Backend) -> SourceLocks:
        root = getattr(backend, "root", None) if backend.kind == "file" else None
        if root is None:
            return cls(HeldLocks(None), None)
        return cls(HeldLocks.now(), Path(root))

    def writer(self, run: str) -> Writer:
        return "unknown" if self.root is None else self.locks.writer(lock_path(self.root, run))


def _held(lines: Iterable[str]) -> Iterable[tuple[int, int, int]]:
    """``1: FLOCK  ADVISORY  WRITE 22964 fe:00:2146455 0 EOF``: a held lock's device (major and minor in hex) and
    inode; a waiter's line (``->``) holds nothing."""
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":
            continue
        parts = fields[5].split(":")
        if len(parts) != 3:
            continue
        try:
            yield int(parts[0], 16), int(parts[1], 16), int(parts[2])
        except ValueError:
            continue


def lock_path(journal_directory: Path, run: str) -> Path:
    """The runtime's lock file of ``run``: ``<id>.lock`` beside ``<id>.json``."""
    return journal_directory / f"{run}.lock"


def silent_for(last_heard: datetime | None, now: datetime | None = None) -> float | None:
    """Seconds since the run was last heard from (its last record's time, else the file's or the message's), never
    negative; None when nothing says."""
    if last_heard is None:
        return None
    moment = last_heard if last_heard.tzinfo is not None else last_heard.replace(tzinfo=UTC)
    return max(0.0, ((now or datetime.now(UTC)) - moment).total_seconds())


def liveness_text(writer: Writer, silent_seconds: float | None, duration: Callable[[float], str]) -> str:
    """``writer: held (a process holds the run's lock now) · silent for 4d01h``: what ``show`` and the run browser
    say of a run, ``duration`` spelling the seconds as the face does (no silence said when there is none)."""
    silent = f" · silent for {duration(silent_seconds)}" if silent_seconds else ""
    return f"writer: {WRITER_WORDS[writer]}{silent}"


__all__ = [
    "PROC_LOCKS",
    "WRITER_WORDS",
    "HeldLocks",
    "SourceLocks",
    "Writer",
    "liveness_text",
    "lock_path",
    "silent_for",
]
