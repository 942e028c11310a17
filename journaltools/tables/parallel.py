"""How a load spreads its work, and its progress bar. The policy, in one place:

- The records path (``fold=False``) runs in this process: shipping the records back from another process
  costs about what decoding them there saves. Where it reads local plain journals in place, its batches run on
  a thread per core (at most four; ``workers`` caps them): the reads and the C scanner release the GIL, so two
  cores read 107 MB in 0.71-0.78x the time of one. Batches still come out in order, and no more than one per
  thread waits beyond the one the caller holds.
- Local journals the scanner proves are folded natively (``folding.native``, read in place: ``sources.in_place``)
  and stay in this process by default. A worker process pays off only once it runs: with one started, a load
  shares its batches in 0.77x the time alone for 3,000 August runs (107 MB) and 0.86x for 15,000 small newest ones
  (69 MB), 0.97x for 40 runs of 1.9 MB; but a load in a fresh interpreter that starts it is slower than alone
  (69 MB: 1.06-1.17 s against 1.01-1.04 s; 107 MB: 0.49-0.64 s against 0.48-0.50 s), and even 320 MB gains nothing
  reliable. So ``workers=2`` is for whoever loads again and again in one process (a notebook). A thread per core
  gains nothing measurable either, as the per-journal Python around the native fold holds the GIL about as long as
  the fold runs without it (15,000 small runs: 1.03-1.07 s on threads against 1.00-1.03 s alone).
- Folding in Python is slow, so a load that folds enough journal bytes in Python (``FOLD_POOL_FROM``: a
  source the scanner cannot read in place, such as JetStream, or the native fold set aside) on a machine with
  more than one core shares its batches with worker processes (``workers.py``): one per further core, started once
  per process and kept. A batch names its source by URL and runs, so a worker opens the source itself and reads
  the journals there: only the finished tables cross the pipe. They are plain child interpreters started with
  ``subprocess``, so nothing depends on how many threads happen to run, on a start method, or on whether a
  script guards its top level; this process keeps working on batches meanwhile, so the first load of a process
  does not wait for them to start. Inside a Dask worker a load never starts processes: Dask spreads the work
  (``audit_sources(..., dask=client)``). ``workers=1`` folds here only.
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

from journaltools.tables import workers as worker_processes

Item = TypeVar("Item")
Read = TypeVar("Read")
Prepared = TypeVar("Prepared")


#: Journal bytes from which a fold starts worker processes (measured: below this the work is over before a
#: fresh worker, about half a second to start, has taken a batch). A running pool is used for any load.
FOLD_POOL_FROM: Final = 32 << 20
#: Batches this process may finish ahead of the oldest one a worker still holds (bounds what waits in memory).
_AHEAD: Final = 4
#: Seconds without any reply from a busy worker after which it is given up (its batches are redone here).
_STALLED: Final = 300.0
_jobs = itertools.count()


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _inside_dask_worker() -> bool:
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        distributed.get_worker()
    except ValueError:
        return False
    return True


def processes_for(workers: int | None, fold_bytes: int, *, folds_natively: bool = False) -> int:
    """How many processes fold a load (this one included); ``folds_natively``: every batch is local journals the
    native fold takes where it can (then one, unless ``workers`` asks for more)."""
    if workers is not None:
        return max(1, workers)
    cores = min(usable_cores(), 8)
    if cores < 2 or _inside_dask_worker() or folds_natively:
        return 1
    return cores if worker_processes.pool_started() or fold_bytes >= FOLD_POOL_FROM else 1


def threads_for(workers: int | None, batches: int) -> int:
    """How many threads read a records-only load's batches."""
    wanted = min(usable_cores(), 4) if workers is None else max(1, workers)
    return max(1, min(wanted, batches))


def threaded_batches(
    batches: Sequence[Any], threads: int, options: Any, here: Callable[[Any, Any], Any]
) -> Iterator[Any]:
    """The results of ``here(batch, options)`` for every batch, in order, computed on ``threads`` threads with
    at most ``threads`` batches ahead of the one yielded. An exception is raised at its batch's turn, as a serial
    load would raise it; batches not yet started are then never read."""
    from concurrent.futures import Future, ThreadPoolExecutor

    pool = ThreadPoolExecutor(threads, thread_name_prefix="journaltools-load")
    window: collections.deque[Future[Any]] = collections.deque()
    try:
        for batch in batches:
            window.append(pool.submit(here, batch, options))
            if len(window) > threads:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def shared_batches(
    batches: Sequence[Any],
    worker_count: int,
    options: Any,
    here: Callable[[Any, Any], Any],
) -> Iterator[Any]:
    """The results of ``here(batch, options)`` for every batch, in order, with the batches shared
    between this process and ``worker_count`` worker processes (see the module doc). Anything a worker
    cannot do (it failed on a batch, or died) is done here, so a result is never lost."""
    pool = worker_processes.pool(worker_count)
    results: dict[int, Any] = {}
    held: dict[int, tuple[worker_processes.Worker, int]] = {}  # job -> (worker, batch)
    next_batch = 0
    for wanted in range(len(batches)):
        while wanted not in results:
            for worker in pool.workers:  # keep every ready worker fed, two batches in flight
                while (
                    worker.alive
                    and worker.ready.is_set()
                    and len(worker.in_flight) < 2
                    and next_batch < min(len(batches), wanted + _AHEAD)
                ):
                    job = next(_jobs)
                    if not worker.send(job, batches[next_batch], options):
                        break
                    held[job] = (worker, next_batch)
                    next_batch += 1
            replies = _replies(pool.replies, block=False)
            if not replies and wanted >= next_batch:
                results[next_batch] = here(batches[next_batch], options)
                next_batch += 1
                continue
            if not replies and next_batch < min(len(batches), wanted + _AHEAD):
                results[next_batch] = here(batches[next_batch], options)  # work while the worker works
                next_batch += 1
                continue
            if not replies:
                replies = _replies(pool.replies, block=True)
                if not replies:  # nothing for a long while: give the busy workers up, redo their batches here
                    for worker in pool.workers:
                        if worker.in_flight:
                            worker.process.kill()
                    continue
            for reply in replies:
                _settle(reply, held, results, batches, options, here)
        yield results.pop(wanted)


def _replies(replies: queue.SimpleQueue[worker_processes.Reply], *, block: bool) -> list[worker_processes.Reply]:
    got = []
    try:
        got.append(replies.get(block=block, timeout=_STALLED if block else None))
        while True:
            got.append(replies.get_nowait())
    except queue.Empty:
        pass
    return got


def _settle(
    reply: worker_processes.Reply,
    held: dict[int, tuple[worker_processes.Worker, int]],
    results: dict[int, Any],
    batches: Sequence[Any],
    options: Any,
    here: Callable[[Any, Any], Any],
) -> None:
    worker = reply.worker
    if reply.job < 0:  # the worker has gone: redo what it held
        for job, (owner, batch) in list(held.items()):
            if owner is worker:
                del held[job]
                results[batch] = here(batches[batch], options)
        worker.in_flight.clear()
        return
    if reply.job in worker.in_flight:
        worker.in_flight.remove(reply.job)
    entry = held.pop(reply.job, None)
    if entry is None:  # a reply for a load that was given up
        return
    batch = entry[1]
    results[batch] = reply.value if reply.ok else here(batches[batch], options)


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (not merely when IPython or ipykernel has been imported)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def progress_enabled(progress: bool | None) -> bool:
    """``progress`` if given; by default a bar only in a notebook (a widget) or on a terminal."""
    if progress is not None:
        return progress
    if _in_notebook():
        return True
    stream = sys.stderr
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """A tqdm bar over runs (``tqdm.auto``: a widget in notebooks), or nothing."""

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=description, unit="run", leave=False, file=sys.stderr)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
