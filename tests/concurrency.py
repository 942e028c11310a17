"""Running one function in many threads at once, for the races the stores and the loop must survive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def run_in_threads(target: Callable[[int], object], count: int, timeout: float = 60.0) -> None:
    """``target(n)`` for every n in ``range(count)``, each in its own thread, all started before any is joined.

    Fails if a thread is still running after ``timeout`` seconds in all: that is a hang, not a slow machine.
    """
    threads = [threading.Thread(target=target, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = [thread.name for thread in threads if thread.is_alive()]
    assert not hung, f"threads still running after {timeout:g} s: {hung}"
