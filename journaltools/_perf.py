"""Performance helpers shared by the loaders."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small acyclic objects.

    Parsing a journal allocates a dict per record and nothing cyclic; with the collector on, the
    allocations alone trigger repeated full scans of everything retained so far, which costs more
    than the parsing. Reference counting still frees everything; the collector resumes afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
