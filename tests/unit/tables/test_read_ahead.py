"""A folded load of local journals reads the next batch on a thread while it folds this one: the tables a load
reading each batch in turn gives, the same error at the same place, and no thread left behind once the caller stops
reading."""

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

#: Every folder holds more than 16 KiB of journals: at least two batches, so there is a batch to read ahead.
FOLDERS = ["file", "random", "broken", "newest/file", "newest/broken"]


@pytest.fixture
def read_ahead(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many batches each load that read ahead was given (empty when the load read each batch in turn); the
    machine is taken to have a second core, whatever it has."""
    used: list[int] = []
    reading = loader_module.folded_reading_ahead

    def counting(backend: Any, batches: Any, options: Any) -> Iterator[Any]:
        used.append(len(batches))
        return reading(backend, batches, options)

    monkeypatch.setattr(loader_module, "folded_reading_ahead", counting)
    monkeypatch.setattr(loader_module, "threads_for", lambda workers, batches: 1 if workers == 1 else min(2, batches))
    return used


@pytest.mark.slow  # ten corpus folders loaded twice in batches as small as one journal: `make test` runs it
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(folder=st.sampled_from(FOLDERS), batch_bytes=st.integers(1, 16 << 10))
def test_reading_ahead_gives_the_tables_of_reading_in_turn(
    read_ahead: list[int], folder: str, batch_bytes: int
) -> None:
    options = LoadOptions(strict=False, batch_bytes=batch_bytes, progress=False)
    read_ahead.clear()
    ahead = load(CORPUS / folder, options=options)
    assert read_ahead and read_ahead[0] >= 2
    read_ahead.clear()
    in_turn = load(CORPUS / folder, options=dataclasses.replace(options, workers=1))
    assert read_ahead == []
    same_tables(ahead, in_turn)
    assert ahead.runs.num_rows > 0 and ahead.records.num_rows > 0


def _until_refused(source: Path, workers: int | None) -> tuple[list[Tables], str]:
    return parts_until_refused(source, LoadOptions(strict=True, batch_bytes=1, workers=workers, progress=False))


def test_a_refused_journal_is_raised_at_its_place_in_the_order(read_ahead: list[int]) -> None:
    ahead_parts, ahead_error = _until_refused(SAMPLES, workers=None)
    assert len(read_ahead) == 1
    in_turn_parts, in_turn_error = _until_refused(SAMPLES, workers=1)
    assert ahead_error == in_turn_error and "corrupt" in ahead_error
    assert len(ahead_parts) == len(in_turn_parts) > 0
    for ahead, in_turn in zip(ahead_parts, in_turn_parts, strict=True):
        same_tables(ahead, in_turn)


def _reading_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("journaltools-read")]


def test_a_caller_that_stops_reading_leaves_no_thread_behind(read_ahead: list[int]) -> None:
    parts = iter_tables(CORPUS / "random", None, LoadOptions(strict=False, batch_bytes=1, progress=False))
    next(parts)
    assert len(read_ahead) == 1 and _reading_threads()
    parts.close()
    assert _reading_threads() == []
