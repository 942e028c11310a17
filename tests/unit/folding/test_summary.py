"""The run summary (``folding.summary``): what a runs row takes from a fold is the same whichever fold made it.

The tables make every run row with one function from a summary; these tests hold the Python fold's summary to the
native walk's, field by field, on every journal of both real corpora that the walk takes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from journaltools.folding import native as native_fold
from journaltools.folding.facts import wall_clock_of
from journaltools.folding.run import fold_run
from journaltools.folding.summary import NO_META, PythonSummary, meta_columns, python_summary
from journaltools.goencoding.time import go_time
from journaltools.protocol.journal import read_file_journal, typed_records
from journaltools.protocol.kinds import Record
from journaltools.sources.scan import run_read
from journaltools.tables.build import TablesBuilder
from tests.mixed_journals import journals_of
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

FOLDERS = [root / folder for root in (CORPUS, NEWEST_CORPUS) for folder in ("file", "random")]


def _read(run: str, data: bytes) -> object:
    return run_read(run, read_file_journal(data), source="file:///test", where=run, strict=False, updated=None)


def _walked(folder: Path) -> Iterator[tuple[str, object, Record, native_fold.NativeRun]]:
    """Each journal of ``folder`` the native walk takes: its run, its read, its meta record and the walk's answer."""
    for run, data in journals_of(folder):
        read = _read(run, data)
        first = native_fold.usable_first(read)  # type: ignore[arg-type]
        if first is None or first.meta is None:
            continue
        walked = native_fold.fold_rows(read, first.meta, TablesBuilder()._native_columns)  # type: ignore[arg-type]
        if walked is not None:
            yield run, read, first, walked


def _both(folder: Path) -> list[tuple[str, PythonSummary, native_fold.NativeRun]]:
    pairs = []
    for run, read, _first, walked in _walked(folder):
        records = typed_records(read.records)  # type: ignore[attr-defined]
        result = fold_run(read).result  # type: ignore[arg-type]
        pairs.append((run, python_summary(records, result, result.last_seq), walked))
    return pairs


@pytest.mark.skipif(not native_fold.AVAILABLE, reason="the native walk is not built: nothing to compare with")
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_the_python_summary_is_the_native_walks(folder: Path) -> None:
    pairs = _both(folder)
    assert pairs, "the walk takes some journals of every corpus folder"
    for run, ours, walked in pairs:
        for name in PythonSummary._fields:
            mine, theirs = getattr(ours, name), getattr(walked, name)
            if name == "memory_keys":  # the walk gives them in journal order; the row sorts them
                theirs = sorted(theirs)
            assert mine == theirs, (run, name, mine, theirs)


def test_a_journal_never_folded_has_no_state_values() -> None:
    _run, data = next(journals_of(CORPUS / "file"))
    records = typed_records(read_file_journal(data).records)
    summary = python_summary(records, None, 41)
    assert (summary.records, summary.last_seq, summary.segments, summary.stale_terminal) == (len(records), 41, 0, False)
    assert summary.turns is None and summary.reopened is None and summary.counters == (None,) * len(summary.counters)
    assert summary.resumes == sum(1 for record in records if record.kind == "claim")


def test_the_meta_columns_never_hold_the_token() -> None:
    _run, data = next(journals_of(CORPUS / "file"))
    records = typed_records(read_file_journal(data).records)
    meta = records[0].meta
    assert meta is not None
    columns, generation = meta_columns(records[0])
    assert generation is not None and columns.generation == generation.name
    assert not meta.conversation_token or all(meta.conversation_token not in str(value) for value in columns)
    assert meta_columns(None) == (NO_META, None)
    assert meta_columns(records[1]) == (NO_META, None)


def _micros(moment: datetime | None) -> int | None:
    return None if moment is None else (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


@pytest.mark.skipif(not native_fold.AVAILABLE, reason="the native walk is not built: nothing to compare with")
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_the_walk_reads_the_run_times_as_the_python_rules_do(folder: Path) -> None:
    """The creation time, the last record's time and the wall clock the walk gives the run row are those the Python
    rules read off the journal's text (``go_time``, ``facts.wall_clock_of``)."""
    for run, _read_of_it, first, walked in _walked(folder):
        assert first.meta is not None
        assert walked.created_us == _micros(go_time(first.meta.created)), run
        assert walked.updated_us == _micros(go_time(walked.last_time)), run
        assert walked.wall_clock == wall_clock_of(first.meta, first.time, walked.last_dated_time), run
