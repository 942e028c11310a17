"""A records-only load of local journals reads its batches on a thread per core: the tables one thread gives, in
its order, the same error at the same place, no thread left behind once the caller stops reading, and the garbage
collector as it was."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.tables import load
from journaltools.tables import loader as loader_module
from journaltools.tables.loader import iter_tables
from journaltools.tables.options import LoadOptions
from journaltools.tables.schema import Tables
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS
from tests.table_checks import parts_until_refused, same_tables

#: Every folder holds more than 16 KiB of journals: at least two batches, so the load has threads to share them.
FOLDERS = ["file", "random", "broken", "newest/file", "newest/broken"]


@pytest.fixture
def threads_used(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many threads each threaded read asked for (empty when the load read on one)."""
    used: list[int] = []
    threaded = loader_module.threaded_batches

    def counting(batches: Any, threads: int, options: Any, here: Any) -> Iterator[Any]:
        used.append(threads)
        return threaded(batches, threads, options, here)

    monkeypatch.setattr(loader_module, "threaded_batches", counting)
    return used


@pytest.mark.slow  # ten corpus folders loaded threaded and not, in batches down to one journal: `make test` runs it
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(folder=st.sampled_from(FOLDERS), batch_bytes=st.integers(1, 16 << 10), workers=st.sampled_from([2, 3, 4]))
def test_threads_give_the_tables_one_thread_gives(
    threads_used: list[int], folder: str, batch_bytes: int, workers: int
) -> None:
    options = LoadOptions(strict=False, fold=False, batch_bytes=batch_bytes, workers=workers, progress=False)
    threads_used.clear()
    threaded = load(CORPUS / folder, options=options)
    assert threads_used and 2 <= threads_used[0] <= workers
    threads_used.clear()
    serial = load(CORPUS / folder, options=dataclasses.replace(options, workers=1))
    assert threads_used == []
    same_tables(threaded, serial)
    assert threaded.records.num_rows > 0


def _until_refused(source: Path, workers: int) -> tuple[list[Tables], str]:
    return parts_until_refused(
        source, LoadOptions(strict=True, fold=False, batch_bytes=1, workers=workers, progress=False)
    )


def test_a_refused_journal_is_raised_at_its_place_in_the_order(threads_used: list[int]) -> None:
    threaded_parts, threaded_error = _until_refused(SAMPLES, workers=2)
    assert threads_used == [2]
    serial_parts, serial_error = _until_refused(SAMPLES, workers=1)
    assert threaded_error == serial_error and "corrupt" in threaded_error
    assert len(threaded_parts) == len(serial_parts) > 0
    for threaded, serial in zip(threaded_parts, serial_parts, strict=True):
        same_tables(threaded, serial)


def _reading_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("journaltools-load")]


def test_a_caller_that_stops_reading_leaves_no_thread_behind(threads_used: list[int]) -> None:
    options = LoadOptions(strict=False, fold=False, batch_bytes=1, workers=3, progress=False)
    parts = iter_tables(CORPUS / "random", None, options)
    next(parts)
    assert threads_used == [3] and _reading_threads()
    parts.close()
    assert _reading_threads() == []


def test_overlapping_pauses_of_the_collector_end_with_it_running() -> None:
    """Two threads' batches pause the collector and end in the other order: it runs again after the last."""
    import gc

    from journaltools._base.perf import paused_gc

    assert gc.isenabled()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with paused_gc():
            first_in.set()
            second_in.wait()
        first_out.set()

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait()
    with paused_gc():
        second_in.set()
        first_out.wait()
        assert not gc.isenabled()  # the first pause ended, the second still holds
    worker.join()
    assert gc.isenabled()
