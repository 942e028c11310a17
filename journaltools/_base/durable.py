"""Small durable-file helpers shared by the task store and the turnjournal file store."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a regular file may take a write in parts)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class IrregularFile(Exception):
    """A path that should hold a regular file holds something else (a link, a FIFO, a directory, a device)."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path = path
        self.kind = kind
        super().__init__(f"{path}: it is {kind}, not a regular file")


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def read_regular_file(path: Path) -> bytes:
    """The bytes of the regular file at ``path``, never following a link and never blocking: a symlink, FIFO,
    directory or device there is ``IrregularFile`` (the FIFO is opened non-blocking, then refused unread).
    A missing file is ``FileNotFoundError``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IrregularFile(path, "a symbolic link") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise IrregularFile(path, _kind(mode))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stage(directory: Path, prefix: str, data: bytes, mode: int, suffix: str = ".tmp") -> str:
    """A new file in ``directory`` holding ``data``, written and synced: ``mkstemp`` picks an unpredictable name
    and opens it exclusive and no-follow, so nothing planted at a guessable name is ever written through."""
    fd, staged = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        write_all(fd, data)
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(staged)
        raise
    os.close(fd)
    return staged


def replace_file(
    path: Path, data: bytes, *, mode: int = 0o600, staging_prefix: str | None = None, staging_suffix: str = ".tmp"
) -> None:
    """Replace ``path`` with ``data`` so a crash leaves the old or the new bytes, never a mix: stage in the same
    directory (``mkstemp``), fsync, rename over ``path``, fsync the directory. A link at ``path`` is replaced, never
    followed. The staging file is named ``<staging_prefix><random>.tmp`` (default ``<name>.``)."""
    prefix = staging_prefix if staging_prefix is not None else f"{path.name}."
    staged = _stage(path.parent, prefix, data, mode, staging_suffix)
    try:
        os.replace(staged, path)
    except BaseException:
        os.unlink(staged)
        raise
    fsync_directory(path.parent)


def create_file(
    path: Path, data: bytes, *, mode: int = 0o600, staging_prefix: str | None = None, staging_suffix: str = ".tmp"
) -> None:
    """Create ``path`` holding ``data`` only if nothing is there (``FileExistsError`` otherwise): stage, then
    hard-link the staged file to ``path`` (atomic, never replaces), drop the staging name, fsync the directory."""
    prefix = staging_prefix if staging_prefix is not None else f"{path.name}."
    staged = _stage(path.parent, prefix, data, mode, staging_suffix)
    try:
        os.link(staged, path, follow_symlinks=False)
    finally:
        os.unlink(staged)
    fsync_directory(path.parent)


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold a blocking exclusive flock on the regular file ``path`` (created 0600 if missing; a link or FIFO there
    is ``IrregularFile``, never opened through) for the duration of the block."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IrregularFile(path, "a symbolic link") from None
        if exc.errno == errno.EISDIR:
            raise IrregularFile(path, "a directory") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise IrregularFile(path, _kind(mode))
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
