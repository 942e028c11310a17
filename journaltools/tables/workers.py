"""Worker processes that fold batches of journal files: both sides of their pipe protocol.

A worker is a plain child interpreter, ``python -m journaltools.tables.workers``, not a multiprocessing
process: it is started with ``subprocess`` (fork-and-exec, safe whatever threads the parent runs), imports
journaltools and nothing of the user's (a script without a ``__main__`` guard is never run twice), and works
the same from a script, Jupyter or a Dask worker. It reads the journals itself (the parent sends a source URL
and run ids), builds the tables with the same code as the parent (``batch.tables_of_batch``) and sends them back as a
pickle whose Arrow buffers travel out of band: the parent reads them into one Arrow buffer and the tables
point into it, without another copy.

Frames, both ways: an 8-byte little-endian length, then that many bytes. Parent to worker: a pickled
``(job, batch, options)``. Worker to parent: a pickled ``(job, ok, value, buffer_sizes)``
followed by the buffers, each padded to 64 bytes; ``value`` is the ``BatchResult`` (or the error text).
A worker that dies takes no result with it: the parent redoes its batches itself.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO, Any, Final

import pyarrow as pa

_LENGTH: Final = struct.Struct("<Q")
_ALIGN: Final = 64


def _padding(size: int) -> int:
    return -size % _ALIGN


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_into(stream: IO[bytes], view: memoryview) -> bool:
    """Fill ``view`` from ``stream``; False at end of input."""
    got = 0
    while got < len(view):
        n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            return False
        got += n
    return True


def _read_frame(stream: IO[bytes]) -> bytes | None:
    head = _read_exactly(stream, _LENGTH.size)
    if head is None:
        return None
    return _read_exactly(stream, _LENGTH.unpack(head)[0])


def _write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)


# -- the worker's side ----------------------------------------------------------------------------------------


def _send_result(stream: IO[bytes], job: int, ok: bool, value: object) -> None:
    buffers: list[pickle.PickleBuffer] = []
    views: list[memoryview] = []
    if ok:
        header_value = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
        views = [buffer.raw() for buffer in buffers]
    else:
        header_value = pickle.dumps(value, protocol=5)
    sizes = [view.nbytes for view in views]
    _write_frame(stream, pickle.dumps((job, ok, header_value, sizes), protocol=5))
    for view in views:
        stream.write(view)
        stream.write(b"\0" * _padding(view.nbytes))
    stream.flush()


def serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """The worker's loop: one batch per request, until the parent closes the pipe."""
    from journaltools.tables.batch import run_batch

    _write_frame(replies, b"ready")
    replies.flush()
    while (frame := _read_frame(requests)) is not None:
        job, batch, options = pickle.loads(frame)
        try:
            result = run_batch(batch, options)
        except Exception as exc:  # the parent redoes the batch itself and meets the error there
            _send_result(replies, job, False, f"{type(exc).__name__}: {exc}")
        else:
            _send_result(replies, job, True, result)


# -- the parent's side ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    worker: Worker
    job: int
    ok: bool
    value: Any  # the BatchResult, or the error text; None when the worker has gone


class Worker:
    """One worker process, with a thread that reads its replies as they come (so it never blocks on a full
    pipe) into the pool's ``replies``; a reply with ``job`` -1 means the worker has gone."""

    def __init__(self, replies: queue.SimpleQueue[Reply]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "journaltools.tables.workers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.replies = replies
        self.ready = threading.Event()
        self.alive = True
        self.in_flight: list[int] = []
        self._reader = threading.Thread(target=self._read, name="journaltools-worker-replies", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            if _read_frame(stream) != b"ready":
                return
            self.ready.set()
            while (frame := _read_frame(stream)) is not None:
                job, ok, value, sizes = pickle.loads(frame)
                # One Arrow buffer each: a slice of one shared buffer would keep every table of the batch
                # alive as long as any of them (a small runs table waiting for its Parquet row group, say).
                buffers = []
                for size in sizes:
                    data = pa.allocate_buffer(size + _padding(size))
                    if not _read_into(stream, memoryview(data).cast("B")):
                        return
                    buffers.append(data.slice(0, size))
                self.replies.put(Reply(self, job, ok, pickle.loads(value, buffers=buffers)))
        except (OSError, ValueError, pickle.UnpicklingError):
            pass
        finally:
            self.alive = False
            self.ready.set()
            self.replies.put(Reply(self, -1, False, None))

    def send(self, job: int, batch: Any, options: Any) -> bool:
        """Hand a batch over; False if the worker has gone (the caller then does the batch itself)."""
        stdin = self.process.stdin
        if not self.alive or stdin is None:
            return False
        try:
            _write_frame(stdin, pickle.dumps((job, batch, options), protocol=5))
        except (BrokenPipeError, OSError):
            self.alive = False
            return False
        self.in_flight.append(job)
        return True

    def close(self) -> None:
        self.alive = False
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()  # the worker's loop ends at end of input
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join()  # the worker's exit ended its output
        if self.process.stdout is not None:
            self.process.stdout.close()


class WorkerPool:
    """The worker processes of this process, started once and kept for later loads (a fresh process pays
    their start-up once, while it already works on the first batches itself)."""

    def __init__(self, size: int) -> None:
        self.pid = os.getpid()
        self.replies: queue.SimpleQueue[Reply] = queue.SimpleQueue()
        self.workers = [Worker(self.replies) for _ in range(size)]

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def pool(size: int) -> WorkerPool:
    """This process's pool with ``size`` workers (replaced if it has another size, or was inherited by fork)."""
    global _pool
    with _pool_lock:
        current = _pool
        if current is not None and (current.pid != os.getpid() or len(current.workers) != size):
            if current.pid == os.getpid():
                current.close()
            current = None
        if current is not None and not all(worker.alive for worker in current.workers):
            current.close()
            current = None
        if current is None:
            current = WorkerPool(size)
            _pool = current
        return current


def pool_started() -> bool:
    return _pool is not None and _pool.pid == os.getpid() and all(w.alive for w in _pool.workers)


def close_pool() -> None:
    """Stop this process's worker processes (they stop on their own when it exits, too)."""
    global _pool
    with _pool_lock:
        if _pool is not None and _pool.pid == os.getpid():
            _pool.close()
        _pool = None


atexit.register(close_pool)


if __name__ == "__main__":
    # Anything printed by accident goes to stderr: stdout carries the frames.
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, replies)
