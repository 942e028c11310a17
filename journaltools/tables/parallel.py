"""How a load spreads its work, and its progress bar.

The policy, in one place: a load runs in the calling process. The stages that release the interpreter
(reading journals, splitting them into lines) run in one helper thread, one batch ahead of this thread,
which parses, checks, folds and builds. No worker process is started, so nothing depends on how many
threads happen to run, which start method multiprocessing would use, or whether a script guards its
top level: a load behaves the same in a script, in Jupyter and in a Dask worker. Spreading over machines
is the batch audit's job (``audit_sources(..., dask=client)``), one task per batch of journals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

Item = TypeVar("Item")
Read = TypeVar("Read")
Prepared = TypeVar("Prepared")


def pipelined(
    items: Sequence[Item], here: Callable[[Item], Read], there: Callable[[Read], Prepared]
) -> Iterator[Prepared]:
    """``there(here(item))`` for each item in order: ``here`` in this thread, ``there`` in a helper thread,
    one item ahead, so the helper's work on the next item overlaps the caller's work on this one."""
    if not items:
        return
    with ThreadPoolExecutor(1, thread_name_prefix="journaltools-split") as helper:
        upcoming: Future[Prepared] = helper.submit(there, here(items[0]))
        for index in range(len(items)):
            current = upcoming.result()
            if index + 1 < len(items):
                upcoming = helper.submit(there, here(items[index + 1]))
            yield current
            del current


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
