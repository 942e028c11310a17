"""One blocking face over the async core.

nats-py is async only, and Jupyter already runs an event loop in the main thread, so blocking
calls cannot simply ``asyncio.run``. Instead one event loop runs in a daemon thread for the whole
process and every blocking call hands its coroutine to that loop and waits on a lock.
That works the same in a script, the CLI and a notebook (no ``nest_asyncio``), and it keeps one
NATS connection alive between calls because connections live on that one loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
A = TypeVar("A")

#: Seconds a cancelled coroutine is given to stop before ``run_sync`` returns to its caller anyway.
_CANCEL_WAIT = 10.0

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_log = logging.getLogger("journaltools.aio")


def quiet_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """The loop's handler for exceptions nobody awaited. journaltools reports each failure of its own through the
    call that awaits it, as one line; what ends up here is what nats-py's background tasks leave behind when a
    link drops mid-message (a task's exception never retrieved, a transport's error), which asyncio's default
    handler prints as a traceback on stderr, after the command has given its answer. Kept at debug level on the
    ``journaltools.aio`` logger (the name it had before this module moved into ``_base``, kept for the logging
    configurations that name it), for whoever configures logging to see it."""
    exc = context.get("exception")
    _log.debug(
        "on the journaltools loop: %s", context.get("message"), exc_info=exc if isinstance(exc, BaseException) else None
    )


def background_loop() -> asyncio.AbstractEventLoop:
    """The process-wide loop all blocking calls run on, started on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(quiet_exception_handler)
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="journaltools-loop", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def run_sync(coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coroutine`` on the background loop and block until it returns (or raises).

    ``TimeoutError`` after ``timeout`` seconds; a timeout or an interrupt (Ctrl-C) cancels the coroutine.
    Not ``run_coroutine_threadsafe``: its two chained futures and their condition variable cost about 40 us
    more per call, which is a fifth of a JetStream append (measured in ``benchmarks/bench_jetstream.py``).
    """
    loop = _loop
    if loop is None or loop.is_closed():
        loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coroutine.close()
        raise RuntimeError("run_sync called from the journaltools loop itself; await the *_async method instead")
    done = threading.Lock()
    done.acquire()
    started: list[asyncio.Task[T]] = []

    def start() -> None:
        task = loop.create_task(coroutine)
        started.append(task)
        task.add_done_callback(lambda _: done.release())

    loop.call_soon_threadsafe(start)
    try:
        finished = done.acquire(timeout=-1 if timeout is None else timeout)
    except BaseException:  # an interrupt while waiting: the coroutine must not run on unobserved
        _cancel(loop, started, done)
        raise
    if not finished:
        _cancel(loop, started, done)
        raise TimeoutError(f"the operation did not finish within {timeout} seconds")
    return started[0].result()


def _cancel(loop: asyncio.AbstractEventLoop, started: list[asyncio.Task[Any]], done: threading.Lock) -> None:
    """Cancel what ``run_sync`` started (or is about to start) and give it a moment to stop (a coroutine
    that ignores cancellation is left to finish on its own rather than hang the caller)."""

    def cancel() -> None:
        if started:
            started[0].cancel()

    loop.call_soon_threadsafe(cancel)  # queued after ``start``, so the task exists by the time it runs
    done.acquire(timeout=_CANCEL_WAIT)


async def map_bounded(items: Sequence[A], action: Callable[[A], Awaitable[T]], limit: int) -> list[T]:
    """``action`` over ``items`` with at most ``limit`` in flight, results in the order of ``items``.

    A fixed set of workers shares one iterator, so a listing of 100,000 runs holds ``limit`` coroutines,
    not 100,000.
    """
    results: list[T | None] = [None] * len(items)
    work = iter(enumerate(items))

    async def worker() -> None:
        for index, item in work:
            results[index] = await action(item)

    await asyncio.gather(*(worker() for _ in range(max(1, min(limit, len(items))))))
    return results  # type: ignore[return-value]  # every slot was filled
