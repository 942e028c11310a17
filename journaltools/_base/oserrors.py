"""The one place local file operations' ``OSError`` becomes a journaltools error (``StorageError``).

The file backend, the readers of ``sources.scan``, the table loader's reads, the samples and the Parquet
audit all route an ``OSError`` through ``storage_error``, so a disk that is full, a read-only filesystem, a
permission or a FIFO where a journal should be reads the same everywhere: one line naming the path, what
was being done, what went wrong and what to do about it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, Final

from journaltools._base import durable as _durable
from journaltools._base.durable import IrregularFile
from journaltools.errors import NotAJournalFile, StorageError

#: errno -> (what went wrong, what to do). Anything else says the system's words and to check the path.
_MEANINGS: Final[dict[int, tuple[str, str]]] = {
    errno.ENOSPC: ("no space left on the device", "free some space, then run it again"),
    errno.EDQUOT: ("the disk quota is exhausted", "free some space or raise the quota, then run it again"),
    errno.EROFS: ("the filesystem is read-only", "use a writable location (or remount it read-write)"),
    errno.EACCES: ("permission denied", "check the owner and mode of the file and of its directory"),
    errno.EPERM: ("operation not permitted", "check the owner and mode of the file and of its directory"),
    errno.ENOENT: ("no such file or directory", "check the path"),
    errno.ENOTDIR: ("a part of the path is not a directory", "check the path"),
    errno.EISDIR: ("it is a directory", "journals and their locks are regular files: move the directory away"),
    errno.ELOOP: (
        "it is a symbolic link",
        "journals are never followed out of their source: put the file itself in its place",
    ),
    errno.ENXIO: ("it is a socket or a device", "journals are regular files: move it away"),
    errno.ENAMETOOLONG: ("the name is too long", "use a shorter path"),
    errno.EMFILE: ("too many open files in this process", "raise the limit (ulimit -n) and run it again"),
    errno.ENFILE: ("too many open files on the system", "close some programs and run it again"),
    errno.EIO: ("an input/output error", "the disk or the filesystem may be failing: check the system log"),
    errno.EFBIG: ("the file is too large for the filesystem", "use another filesystem"),
}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def storage_error(exc: OSError, path: str | os.PathLike[str], doing: str) -> StorageError:
    """The journaltools error for ``exc``, raised while trying to ``doing`` (``"read the journal"``) ``path``."""
    where = os.fsdecode(path)
    code = exc.errno
    if code is None:  # Arrow and some libraries raise OSError without an errno, but say one in their text
        for known in _MEANINGS:
            if f"errno {known}]" in str(exc).lower() or os.strerror(known) in str(exc):
                code = known
                break
    if code in _MEANINGS:
        why, hint = _MEANINGS[code]
    else:
        why, hint = _one_line(exc.strerror or str(exc) or type(exc).__name__), "check the path and its filesystem"
    return StorageError(where, doing, why, hint, code)


def open_regular(path: str | os.PathLike[str], flags: int, doing: str, mode: int = 0o644) -> int:
    """A descriptor of ``path`` opened with ``flags`` by the package's one opener (``_durable.open_regular``: a
    regular file, never a link in the last component, never blocking). Raises ``NotAJournalFile`` for anything
    but a regular file and ``StorageError`` for every other failure.
    """
    try:
        return _durable.open_regular(path, flags, mode=mode)
    except IrregularFile as exc:
        raise NotAJournalFile(os.fsdecode(path), doing, exc.kind) from None
    except OSError as exc:
        raise storage_error(exc, path, doing) from None


def refuse_unless_regular(path: str | os.PathLike[str], doing: str) -> None:
    """Raise ``NotAJournalFile`` if ``path`` exists and is not a regular file (a missing path is fine)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise storage_error(exc, path, doing) from None
    if not stat.S_ISREG(info.st_mode):
        raise NotAJournalFile(os.fsdecode(path), doing, _durable.kind_of(info.st_mode))


#: Where an output file goes instead of a path the writer refuses.
_OUTPUT_HINT = "name a regular file or a new path (a link there is replaced, never followed)"

#: Who may read what the tool writes: reports and exports carry the conversations the runtime keeps 0600.
OUTPUT_MODE: Final = 0o600


#: The output path that means standard output.
STDOUT: Final = "-"


@contextmanager
def writing(path: str | os.PathLike[str], doing: str, *, durable: bool = True) -> Iterator[BinaryIO]:
    """The file the tool writes (a report, an export), by ``_durable.replacing``, its failures one line each: a
    path that is not a regular file (a FIFO, a device, a directory, a link to one) is a ``StorageError`` saying
    what it is, before anything is written; any other ``OSError`` is ``storage_error``. ``-`` (``STDOUT``) is
    standard output, written as it comes."""
    if os.fspath(path) == STDOUT:
        yield sys.stdout.buffer  # a closed pipe stays BrokenPipeError: the command line ends quietly on it
        sys.stdout.buffer.flush()
        return
    staging = f".{os.path.basename(path)}."
    try:
        with _durable.replacing(path, mode=OUTPUT_MODE, staging_prefix=staging, durable=durable) as handle:
            yield handle
    except IrregularFile as exc:
        raise not_writable(exc, doing, f"{_OUTPUT_HINT}, or {STDOUT} for standard output") from None
    except OSError as exc:
        raise storage_error(exc, path, doing) from None


def not_writable(refused: IrregularFile, doing: str, hint: str = _OUTPUT_HINT) -> StorageError:
    """The error for an output path the one writer refuses (``_durable.refuse_unreplaceable``), saying what it is."""
    return StorageError(os.fsdecode(refused.path), doing, f"it is {refused.kind}, not a regular file", hint)


@contextmanager
def mapped(path: str | os.PathLike[str], doing: str) -> Iterator[None]:
    """Turn an ``OSError`` inside the block into the ``StorageError`` for ``path``."""
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        raise storage_error(exc, path, doing) from None
