"""The one place local file operations' ``OSError`` becomes a journaltools error (``StorageError``).

The file backend, the readers of ``backends.scan``, the table loader's reads, the samples and the Parquet
audit all route an ``OSError`` through ``storage_error``, so a disk that is full, a read-only filesystem, a
permission or a FIFO where a journal should be reads the same everywhere: one line naming the path, what
was being done, what went wrong and what to do about it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

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


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a FIFO"``)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], flags: int, doing: str, mode: int = 0o644) -> int:
    """A descriptor of ``path`` opened with ``flags``, which is a regular file and not a symbolic link.

    Never blocks (``O_NONBLOCK``: a FIFO opens at once and is then refused) and never follows a link in the
    last component (``O_NOFOLLOW``). Raises ``NotAJournalFile`` for anything but a regular file and
    ``StorageError`` for every other failure.
    """
    refuse_unless_regular(path, doing)  # look first: opening a device can act on it
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise not_a_journal_file(path, doing) from None
        raise storage_error(exc, path, doing) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise storage_error(exc, path, doing) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotAJournalFile(os.fsdecode(path), doing, kind_of(info.st_mode))
    os.set_blocking(fd, True)
    return fd


def refuse_unless_regular(path: str | os.PathLike[str], doing: str) -> None:
    """Raise ``NotAJournalFile`` if ``path`` exists and is not a regular file (a missing path is fine)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise storage_error(exc, path, doing) from None
    if not stat.S_ISREG(info.st_mode):
        raise NotAJournalFile(os.fsdecode(path), doing, kind_of(info.st_mode))


def not_a_journal_file(path: str | os.PathLike[str], doing: str) -> StorageError:
    """The error for a path an open refused for its kind (ELOOP, EISDIR, ENXIO): it says which kind it is."""
    try:
        kind = kind_of(os.lstat(path).st_mode)
    except OSError as exc:
        return storage_error(exc, path, doing)
    return NotAJournalFile(os.fsdecode(path), doing, kind)


@contextmanager
def mapped(path: str | os.PathLike[str], doing: str) -> Iterator[None]:
    """Turn an ``OSError`` inside the block into the ``StorageError`` for ``path``."""
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        raise storage_error(exc, path, doing) from None
