"""The run browser shows a source's newest runs first and takes the rest on a thread: the rows it ends with are the
rows of one whole load, whatever arrived when, and a status first seen late still gets its chip."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

from journaltools.widgets import RunBrowser, load_source
from journaltools.widgets.runs_parts import SourceParts, load_in_parts
from journaltools.widgets.runs_row import RunRow
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

SOURCES = [CORPUS / "file", NEWEST_CORPUS / "random"]


def _rows(rows: list[RunRow]) -> dict[str, dict[str, Any]]:
    return {row.run: asdict(row) for row in rows}


@pytest.mark.parametrize("source", SOURCES, ids=["august", "newest-random"])
def test_a_source_in_parts_ends_with_the_rows_of_one_whole_load(source: Any) -> None:
    whole, whole_loader = load_source(str(source), progress=False)
    whole_loader.close()
    parts = load_in_parts(str(source), first=7)
    try:
        # The newest first: a runtime's run ids sort by creation time, and the last seven are folded at once.
        assert sorted(row.run for row in parts.first.rows) == sorted(row.run for row in whole.rows)[-7:]
        browser = RunBrowser(parts.first, parts.loader)
        browser.take_rows(parts.rest, parts.total)
        assert browser.wait_loaded(60)
        assert _rows(browser.model.rows) == _rows(whole.rows)
        assert list(browser.chips) == whole.status_choices  # chips for the statuses only later rows brought
        assert browser.summary.value.count(f"{len(whole.rows):,} runs") == 1 and "so far" not in browser.summary.value
    finally:
        parts.loader.close()


def test_the_summary_says_how_many_runs_are_in_while_the_rest_load() -> None:
    parts = load_in_parts(str(CORPUS / "file"), first=4)
    release = threading.Event()
    rest = list(parts.rest)

    def held() -> Iterator[list[RunRow]]:
        release.wait(30)
        yield from rest

    try:
        browser = RunBrowser(parts.first, parts.loader)
        browser.take_rows(held(), parts.total)
        assert not browser.loaded.is_set()
        assert f"4 runs of {parts.total:,} loaded so far" in browser.summary.value
        assert [row.run for row in browser.model.page_rows()]  # the first rows are there to read and open
        release.set()
        assert browser.wait_loaded(30) and len(browser.model.rows) == parts.total
    finally:
        release.set()
        parts.loader.close()


def test_a_load_that_stops_keeps_its_rows_and_says_why() -> None:
    parts = load_in_parts(str(CORPUS / "file"), first=3)

    def failing() -> Iterator[list[RunRow]]:
        raise OSError("the directory went away")
        yield []  # a generator

    try:
        browser = RunBrowser(parts.first, parts.loader)
        browser.take_rows(failing(), parts.total)
        assert browser.wait_loaded(30)
        assert len(browser.model.rows) == 3 and "loading stopped: the directory went away" in browser.summary.value
    finally:
        parts.loader.close()


def test_an_august_runs_updated_time_says_it_is_the_stores_not_the_runs() -> None:
    model, loader = load_source(str(CORPUS / "file"), progress=False)
    loader.close()
    august = next(row for row in model.rows if row.generation == "august" and row.updated)
    assert august.tooltip("updated").endswith(
        "the file's modification time (or the stream's last message time), not the run's"
    )
    assert august.tooltip("created").endswith("Z") and "." in august.tooltip("created")  # UTC, to the millisecond
    newest, newest_loader = load_source(str(NEWEST_CORPUS / "file"), progress=False)
    newest_loader.close()
    dated = next(row for row in newest.rows if row.updated)
    assert "modification" not in dated.tooltip("updated") and dated.tooltip("updated").endswith("Z")


class _Shell:
    """What ``after_this_cell`` asks of IPython: its events (a kernel runs a cell, then ``post_run_cell``), and the
    kernel's event loop where there is one."""

    def __init__(self, loop: _Loop | None = None) -> None:
        from IPython.core.events import EventManager, available_events

        self.events = EventManager(self, available_events)
        if loop is not None:
            self.kernel = type("Kernel", (), {"io_loop": loop})()


class _Loop:
    """A kernel's event loop as the handover uses it: callbacks from any thread, run on the kernel's thread later."""

    def __init__(self) -> None:
        self.callbacks: list[Any] = []
        self.lock = threading.Lock()

    def add_callback(self, callback: Any) -> None:
        with self.lock:
            self.callbacks.append(callback)

    def run_pending(self) -> None:
        with self.lock:
            pending, self.callbacks = self.callbacks, []
        for callback in pending:
            callback()


def _in_a_notebook(monkeypatch: pytest.MonkeyPatch, loop: _Loop | None = None) -> _Shell:
    import IPython

    shell = _Shell(loop)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    return shell


@pytest.fixture
def august() -> Iterator[SourceParts]:
    """The real August corpus, its four newest runs folded first."""
    parts = load_in_parts(str(CORPUS / "file"), first=4)
    yield parts
    parts.loader.close()


def test_in_a_notebook_the_rest_fold_once_the_cell_has_run(
    monkeypatch: pytest.MonkeyPatch, august: SourceParts
) -> None:
    shell = _in_a_notebook(monkeypatch)
    browser = RunBrowser(august.first, august.loader)
    browser.take_rows(august.rest, august.total)
    # The cell has not finished: no thread folds the rest yet (so nothing can have arrived).
    assert not browser.loaded.is_set() and len(browser.model.rows) == 4
    shell.events.trigger("post_run_cell", None)
    assert browser.loaded.wait(30) and len(browser.model.rows) == august.total
    assert shell.events.callbacks["post_run_cell"] == []  # once


def test_waiting_in_the_same_cell_starts_the_rest_instead_of_waiting_forever(
    monkeypatch: pytest.MonkeyPatch, august: SourceParts
) -> None:
    shell = _in_a_notebook(monkeypatch)
    browser = RunBrowser(august.first, august.loader)
    browser.take_rows(august.rest, august.total)
    assert browser.wait_loaded(30) and len(browser.model.rows) == august.total
    shell.events.trigger("post_run_cell", None)  # the cell ends after: nothing is started twice
    assert len(browser.model.rows) == august.total


def test_in_a_kernel_the_rows_are_shown_on_the_kernels_thread(
    monkeypatch: pytest.MonkeyPatch, august: SourceParts
) -> None:
    """A widget changed from another thread races the kernel sending the cell's widgets: the folding thread only
    queues, and the kernel's loop shows each batch between cells."""
    loop = _Loop()
    shell = _in_a_notebook(monkeypatch, loop)
    shown_on: set[str] = set()
    browser = RunBrowser(august.first, august.loader)
    real_add = browser.add_rows

    def add_rows(rows: list[RunRow]) -> None:
        shown_on.add(threading.current_thread().name)
        real_add(rows)

    monkeypatch.setattr(browser, "add_rows", add_rows)
    browser.take_rows(august.rest, august.total)
    shell.events.trigger("post_run_cell", None)  # the cell ended: the rest fold on their thread
    deadline = time.monotonic() + 30
    while not browser.loaded.is_set() and time.monotonic() < deadline:
        loop.run_pending()  # what the kernel's loop does between cells
        browser.loaded.wait(0.01)
    assert browser.loaded.is_set() and len(browser.model.rows) == august.total
    assert shown_on == {threading.main_thread().name}


def test_in_a_kernel_waiting_on_its_own_thread_shows_the_rest_itself(
    monkeypatch: pytest.MonkeyPatch, august: SourceParts
) -> None:
    _in_a_notebook(monkeypatch, _Loop())
    browser = RunBrowser(august.first, august.loader)
    browser.take_rows(august.rest, august.total)
    # In the same cell, on the kernel's thread: no loop callback can run while it waits, so it takes them itself.
    assert browser.wait_loaded(30) and len(browser.model.rows) == august.total
