"""One blocking face over the async core.

nats-py is async only, and Jupyter already runs an event loop in the main thread, so blocking
calls cannot simply ``asyncio.run``. Instead one event loop runs in a daemon thread for the whole
process and every blocking call submits its coroutine there with ``run_coroutine_threadsafe``.
That works the same in a script, the CLI and a notebook (no ``nest_asyncio``), and it keeps one
NATS connection alive between calls because connections live on that one loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The process-wide loop all blocking calls run on, started on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
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
    """Run ``coroutine`` on the background loop and block until it returns (or raises)."""
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coroutine.close()
        raise RuntimeError("run_sync called from the journaltools loop itself; await the *_async method instead")
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)
