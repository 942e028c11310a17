"""Performance helpers shared by the loaders."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pause_lock = threading.Lock()
_pauses = 0
_resume_after = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small acyclic objects.

    Parsing a journal allocates a dict per record and nothing cyclic; with the collector on, the
    allocations alone trigger repeated full scans of everything retained so far, which costs more
    than the parsing. Reference counting still frees everything; the collector resumes afterwards.

    Pauses overlap when batches are built on several threads: the collector resumes when the last one ends (and
    only if it ran before the first began), whatever order they end in.
    """
    global _pauses, _resume_after
    with _pause_lock:
        if _pauses == 0:
            _resume_after = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume_after:
                gc.enable()
