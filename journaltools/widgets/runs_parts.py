"""A source's runs for the run browser in parts: the newest runs first, the rest batch by batch after.

A person opening a directory of ten thousand runs wants its newest rows on screen at once, not after every journal
is folded. ``load_in_parts`` folds a first page's worth of runs (the newest, where run ids sort by time as the
runtime's do), gives the browser that model, and leaves the rest as an iterator of row batches that the view
(``RunBrowser.from_source``) takes on a thread and adds as they come: counts, chips and pages grow while the first
rows are already there to read and open. Every row is the one ``load_source`` would give: the same tables, loaded
in two calls instead of one.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from journaltools.widgets.runs_model import RunBrowserModel
from journaltools.widgets.runs_row import RunRow, with_writers

if TYPE_CHECKING:
    from journaltools.stores.tasks import TaskStore
    from journaltools.widgets._source import RunFolds

#: How many runs the browser folds before it first shows: a few pages' worth.
FIRST_RUNS = 100


@dataclass(slots=True)
class SourceParts:
    """The first model, the loader that opens a run, how many runs the source lists, and the rest of the rows."""

    first: RunBrowserModel
    loader: RunFolds
    total: int
    rest: Iterator[list[RunRow]]


class Handover:
    """Rows folded on a thread, shown on the kernel's own thread: a widget changed from another thread races the
    kernel sending the cell's widgets to the page (JupyterLab then draws "model not found" in place of the browser),
    so each batch is queued and the kernel's event loop, which takes callbacks from any thread, shows it between
    cells. Outside a kernel (a script, the tests) each batch is shown as it comes. ``finish`` is told once, after the
    last batch, with what stopped the load early ("" when nothing did)."""

    def __init__(self, show: Callable[[list[RunRow]], None], finish: Callable[[str], None]) -> None:
        self._show, self._finish = show, finish
        self._queue: queue.SimpleQueue[list[RunRow] | str] = queue.SimpleQueue()
        self._loop = _kernel_loop()
        self.finished = threading.Event()

    def put(self, rows: list[RunRow]) -> None:
        self._hand(rows)

    def end(self, stopped: str = "") -> None:
        self._hand(stopped)

    def _hand(self, item: list[RunRow] | str) -> None:
        self._queue.put(item)
        if self._loop is None:
            self.take()
        else:
            self._loop.add_callback(self.take)

    def take(self, *, until_finished: float | None = None) -> bool:
        """Show what is queued (on the caller's thread); with ``until_finished`` (seconds), wait for the rest up to
        then: what a wait on the kernel's own thread must do, since no callback runs while it waits."""
        deadline = None if until_finished is None else time.monotonic() + until_finished
        while not self.finished.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            try:
                item = self._queue.get(block=left is not None and left > 0, timeout=left if left and left > 0 else None)
            except queue.Empty:
                break
            if isinstance(item, str):
                self.finished.set()
                self._finish(item)
            else:
                self._show(item)
        return self.finished.is_set()

    def on_loop_thread(self) -> bool:
        return self._loop is not None and threading.current_thread() is threading.main_thread()


def _kernel_loop() -> Any:
    """The running kernel's event loop (``add_callback`` from any thread), or None outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    kernel = getattr(get_ipython(), "kernel", None)
    return getattr(kernel, "io_loop", None)


def after_this_cell(start: Callable[[], None]) -> None:
    """Call ``start`` once the notebook cell running now has finished (IPython's ``post_run_cell``), else at once.

    The rest of a big source is folded on a thread that holds the interpreter most of the time, and so would starve
    the kernel's own threads of the turns they need to send the cell's widgets to the page: measured through a
    browser, 10,000 runs showed their first rows no sooner than a whole load. Begun after the cell, it folds while
    the page draws."""
    try:
        from IPython import get_ipython
    except ImportError:
        start()
        return
    shell = get_ipython()
    if shell is None:
        start()
        return

    def once(*_result: object) -> None:
        shell.events.unregister("post_run_cell", once)
        start()

    shell.events.register("post_run_cell", once)


def load_in_parts(
    url: str,
    *,
    first: int = FIRST_RUNS,
    task_store: str | os.PathLike[str] | TaskStore | None = None,
) -> SourceParts:
    """Open ``url`` and fold its ``first`` newest runs now (the last ``first`` of the source's sorted listing: a
    runtime's run ids sort by creation time); the rest are folded as ``rest`` is iterated, a batch at a time."""
    from journaltools.sources.registry import open_source
    from journaltools.tables import iter_tables, load
    from journaltools.widgets._source import RunFolds

    backend = open_source(url)
    try:
        runs = backend.list_runs()
        cut = max(0, len(runs) - max(1, first))
        early, later = runs[cut:], runs[:cut]
        tables = load(backend, early, strict=False, records=False, progress=False, task_store=task_store)
        first_model = RunBrowserModel.from_tables(tables)
        model = dataclasses.replace(first_model, rows=with_writers(first_model.rows, backend))
    except BaseException:
        backend.close()
        raise

    def rest() -> Iterator[list[RunRow]]:
        if not later:
            return
        for part in iter_tables(backend, later, strict=False, records=False, progress=False, task_store=task_store):
            rows = with_writers(list(RunBrowserModel.from_tables(part).rows), backend)
            if rows:
                yield rows

    return SourceParts(model, RunFolds(backend, owned=True), len(runs), rest())
