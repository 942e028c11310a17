"""The one opener and the one writer of local files, shared by every reader and writer of the package.

``open_regular`` opens a path only when it is a regular file, never blocking on a FIFO nor acting on a device;
``replacing`` writes a file by replacing it atomically, never following a link nor replacing what is not a regular
file. Both say ``IrregularFile`` for the path they refuse; each caller turns it into its own error."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO


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

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.path = Path(path)
        self.kind = kind
        super().__init__(f"{os.fsdecode(path)}: it is {kind}, not a regular file")


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a FIFO"``)."""
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


def _kind_at(path: str | os.PathLike[str]) -> str:
    try:
        return kind_of(os.lstat(path).st_mode)
    except OSError:
        return "not a regular file"


def open_regular(
    path: str | os.PathLike[str], flags: int = os.O_RDONLY, *, mode: int = 0o600, follow_links: bool = False
) -> int:
    """A blocking descriptor of the regular file at ``path``, opened with ``flags``: the one way a path is opened.

    Anything else there is ``IrregularFile`` before a byte is read or written, and nothing blocks on the way: the
    path is looked at first (opening a device can act on it), then opened ``O_NONBLOCK`` (a FIFO swapped in
    between opens at once) and checked again on the descriptor. A symbolic link is refused unless
    ``follow_links`` (a path a person named: it is the file the link leads to), and a loop of links always is.
    Other failures are the ``OSError`` (``FileNotFoundError`` for a missing path without ``O_CREAT``)."""
    look = os.stat if follow_links else os.lstat
    try:
        info: os.stat_result | None = look(path)
    except FileNotFoundError:
        info = None  # O_CREAT makes it; otherwise the open says it is missing
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IrregularFile(path, "a symbolic link") from None
        raise
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise IrregularFile(path, kind_of(info.st_mode))
    no_follow = 0 if follow_links else os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | no_follow | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise IrregularFile(path, _kind_at(path)) from None
        raise
    try:
        opened = os.fstat(fd).st_mode
        if not stat.S_ISREG(opened):
            raise IrregularFile(path, kind_of(opened))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_file(path: str | os.PathLike[str], *, limit: int | None = None, follow_links: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``), opened by ``open_regular``: a symlink (unless
    ``follow_links``), FIFO, directory or device there is ``IrregularFile``, never read and never waited on.
    A missing file is ``FileNotFoundError``."""
    fd = open_regular(path, os.O_RDONLY, follow_links=follow_links)
    try:
        chunks = []
        left = limit
        while left is None or left > 0:
            chunk = os.read(fd, 1 << 20 if left is None else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _into_open_files(path: str | os.PathLike[str]) -> bool:
    """Whether following the links from ``path`` reaches ``/proc`` (``/dev/stdout`` -> ``/proc/self/fd/1``): such a
    link stands for a stream some process has open, whatever kind of file is behind it at this moment."""
    try:
        proc = os.lstat("/proc").st_dev
    except OSError:
        return False
    hop = os.fspath(path)
    for _ in range(40):  # the kernel's own bound on a chain of links
        try:
            info = os.lstat(hop)
        except OSError:
            return False
        if info.st_dev == proc:
            return True
        if not stat.S_ISLNK(info.st_mode):
            return False
        hop = os.path.join(os.path.dirname(hop), os.readlink(hop))
    return False


def refuse_unreplaceable(path: str | os.PathLike[str]) -> None:
    """``IrregularFile`` unless ``path`` may be replaced by a new file: it is missing, a regular file, or a symbolic
    link (replaced itself, never followed) that leads to a regular file or nowhere. A FIFO, device, socket or
    directory is never replaced, nor is a link to one or to a process's open file (``/dev/stdout``, ``/dev/fd/3``):
    replacing that link would break it for every program."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode):
        return
    if not stat.S_ISLNK(info.st_mode):
        raise IrregularFile(path, kind_of(info.st_mode))
    if _into_open_files(path):
        raise IrregularFile(path, "a symbolic link to a process's open file")
    try:
        target = os.stat(path).st_mode
    except OSError:
        return  # dangling, or a loop: nothing behind the link to protect
    if not stat.S_ISREG(target):
        raise IrregularFile(path, f"a symbolic link to {kind_of(target)}")


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


@contextmanager
def replacing(
    path: str | os.PathLike[str],
    *,
    mode: int = 0o600,
    staging_prefix: str | None = None,
    staging_suffix: str = ".tmp",
    durable: bool = True,
) -> Iterator[BinaryIO]:
    """The one way a file is written: a binary file to write ``path``'s new bytes into, which replace ``path`` when
    the block ends without an exception (and never otherwise), so a crash or a failure leaves the old or the new
    bytes, never a mix.

    The bytes go to a file staged in the same directory (``mkstemp``: an unpredictable name opened exclusive and
    no-follow, so nothing planted at a guessable name is written through), named ``<staging_prefix><random>
    <staging_suffix>`` (default ``<name>.``), then renamed over ``path``. ``path`` must be replaceable
    (``refuse_unreplaceable``, checked before and again just before the rename): a link there is replaced, never
    followed. ``durable`` fsyncs the file and the directory (off only for files that are cheap to make again)."""
    target = Path(path)
    refuse_unreplaceable(target)
    prefix = staging_prefix if staging_prefix is not None else f"{target.name}."
    fd, staged = tempfile.mkstemp(prefix=prefix, suffix=staging_suffix, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        refuse_unreplaceable(target)
        os.replace(staged, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(staged)
        raise
    if durable:
        fsync_directory(target.parent)


def replace_file(
    path: Path, data: bytes, *, mode: int = 0o600, staging_prefix: str | None = None, staging_suffix: str = ".tmp"
) -> None:
    """Replace ``path`` with ``data`` through ``replacing`` (staged, fsynced, renamed; a link replaced, never
    followed; what is not a regular file is ``IrregularFile``). The staging file is named
    ``<staging_prefix><random>.tmp`` (default ``<name>.``)."""
    with replacing(path, mode=mode, staging_prefix=staging_prefix, staging_suffix=staging_suffix) as handle:
        handle.write(data)


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
    fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
