"""What an action does when it might block on a FIFO, bounded: shared by the hostile-input tests."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest


def outcome_of(action: Callable[[], object], fifo: Path) -> object:
    """What ``action`` returns or raises, asserting that it does so within a generous bound. If it hung in an
    open of ``fifo``, opening the FIFO's other end releases it, so a failing test leaves no thread behind."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(action())
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=20)
    if thread.is_alive():
        for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, flags))
        thread.join(timeout=20)
        pytest.fail(f"blocked on the FIFO {fifo}")
    return outcome[0]
