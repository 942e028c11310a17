"""The incremental fold equals the whole fold: every prefix split of every real journal of both generations, and
generated journals cut anywhere and damaged, strict and lenient, both ways (a prefix, then the rest)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.errors import FoldError
from journaltools.folding.facts import RunFacts
from journaltools.folding.fold import FoldResult, Walk, fold
from journaltools.folding.incremental import IncrementalRun
from journaltools.folding.run import fold_run
from journaltools.protocol.encode import encode_record
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import AUGUST, NEWEST
from journaltools.protocol.journal import StoredRecord, read_file_journal, typed_records
from journaltools.protocol.kinds import Claim, Record, Terminal, make_record
from journaltools.samples.builder import JournalBuilder
from tests.builders import CLAIMANT, CLAIMED, completed_run, stored
from tests.runstate_corpus import CORPUS
from tests.strategies import valid_runs

#: The real journals of both builds: the August build's, the newest line's (its API and its random runs), and the
#: broken ones of both, whose records the fold refuses in every way it can.
FOLDERS = ["file", "broken", "newest/file", "newest/random", "newest/broken"]


def _outcome(make: Callable[[], FoldResult]) -> FoldResult | tuple[Any, ...]:
    """A fold's result, or the refusal it raised (as comparable values)."""
    try:
        return make()
    except FoldError as error:
        return (type(error), error.run, error.seq, error.code, error.rule)


def fold_outcome(records: Sequence[Record], run: str, strict: bool) -> FoldResult | tuple[Any, ...]:
    return _outcome(lambda: fold(records, run=run, strict=strict))


def _fed(walk: Walk, records: Sequence[Record]) -> FoldResult | tuple[Any, ...]:
    def feed_then_result() -> FoldResult:
        walk.feed(records)
        return walk.result()

    return _outcome(feed_then_result)


def _assert_every_split_equal(run: str, records: Sequence[Record], strict: bool) -> None:
    whole = fold_outcome(records, run, strict)
    for split in range(len(records) + 1):
        walk = Walk(run, strict)
        prefix = fold_outcome(records[:split], run, strict)
        if split:
            # An empty prefix is a journal of no records (refused strictly); the walk is asked nothing yet.
            assert _fed(walk, records[:split]) == prefix, f"{run}: the first {split} records"
        assert _fed(walk, records[split:]) == whole, f"{run}: {split} records, then the rest"


def _journals(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).glob("*.json"))


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_every_prefix_split_of_the_real_journals_folds_as_the_whole(folder: str, strict: bool) -> None:
    for path in _journals(folder):
        records = typed_records(read_file_journal(path.read_bytes()).records)
        _assert_every_split_equal(path.stem, records, strict)


def _same_run(run: str, incremental: IncrementalRun, records: Sequence[StoredRecord], strict: bool) -> None:
    whole = fold_run(_Read(run, records), strict=strict)
    folded = incremental.folded
    assert folded.result == whole.result
    assert (folded.status, folded.findings) == (whole.status, whole.findings)
    assert folded.facts() == RunFacts.of(typed_records(records))
    assert list(folded.read.records) == list(records)


class _Read:
    def __init__(self, run: str, records: Sequence[StoredRecord], findings: Sequence[Finding] = ()) -> None:
        self.run, self.records, self.findings, self.complete = run, records, list(findings), True


@pytest.mark.parametrize("folder", ["file", "newest/file", "newest/broken"])
def test_an_incremental_run_is_fold_run_and_its_facts_after_every_record(folder: str) -> None:
    for path in _journals(folder):
        journal = read_file_journal(path.read_bytes())
        records = list(journal.records)
        incremental = IncrementalRun(path.stem)
        for count in range(1, len(records) + 1):
            incremental.append(records[count - 1 : count])
            _same_run(path.stem, incremental, records[:count], strict=False)


# -- generated journals, cut anywhere ---------------------------------------------------------------------------


@st.composite
def _journals_with_mischief(draw: st.DrawFn) -> tuple[str, list[Record]]:
    """A generated run of either generation, sometimes with the records a fold refuses or warns about: a record
    doubled or dropped, two swapped, a claim by another worker and a reopening after the terminal."""
    generation = draw(st.sampled_from([AUGUST, NEWEST]))
    built: JournalBuilder = draw(valid_runs(max_records=30, generation=generation))
    records = list(built.records)
    mischief = draw(st.sampled_from(["none", "double", "drop", "swap", "reopen", "headless"]))
    if mischief == "double" and len(records) > 1:
        index = draw(st.integers(1, len(records) - 1))
        records.insert(index, records[index])
    elif mischief == "drop" and len(records) > 1:
        del records[draw(st.integers(0, len(records) - 1))]
    elif mischief == "swap" and len(records) > 2:
        index = draw(st.integers(1, len(records) - 2))
        records[index], records[index + 1] = records[index + 1], records[index]
    elif mischief == "reopen":
        seq = records[-1].seq
        records += [
            make_record(seq + 1, Terminal(reason="completed")),
            make_record(seq + 2, Claim(by=CLAIMANT, claimed=CLAIMED)),
            make_record(seq + 3, Terminal(reason="suspended")),
        ]
    elif mischief == "headless":
        del records[0]
    return built.run_id, records


@settings(max_examples=150, deadline=None)
@given(_journals_with_mischief(), st.lists(st.integers(0, 40), max_size=5), st.booleans())
def test_a_generated_journal_fed_in_any_pieces_folds_as_the_whole(
    journal: tuple[str, list[Record]], cuts: list[int], strict: bool
) -> None:
    run, records = journal
    walk = Walk(run, strict)
    start = 0
    for cut in sorted({min(cut, len(records)) for cut in cuts} | {len(records)}):
        piece = records[start:cut]
        if not cut:
            continue
        assert _fed(walk, piece) == fold_outcome(records[:cut], run, strict)
        start = cut


def test_a_strict_refusal_stays_refused_whatever_follows() -> None:
    built = completed_run("run-1")
    records = list(built.records)
    walk = Walk("run-1", strict=True)
    with pytest.raises(FoldError) as first:
        walk.feed([records[0], records[0]])
    with pytest.raises(FoldError) as again:
        walk.feed(records[1:])
    assert again.value is first.value
    assert first.value.code == "seq_not_increasing"


def test_an_empty_journal_is_refused_until_its_meta_record_arrives() -> None:
    incremental = IncrementalRun("run-1", strict=False)
    assert incremental.folded.status == "invalid"
    assert [finding.code for finding in incremental.folded.findings] == ["empty_journal"]
    built = completed_run("run-1")
    folded = incremental.append(stored(built.records[:1]))
    assert folded.status == "open"
    assert folded.findings == []


def test_a_complete_turn_is_committed_once_whatever_the_cuts() -> None:
    # The last turn's calls are all answered: the result shows it committed, yet the walk can still take the
    # model's next response without committing it twice.
    built = completed_run("run-1", calls=2)
    records = built.records
    incremental = IncrementalRun("run-1")
    for record in records:
        folded = incremental.append(stored([record]))
    assert folded.result == fold(records, run="run-1", strict=False)


def test_the_reader_verdict_is_replaced_and_a_corrupt_journal_is_invalid_from_then_on() -> None:
    built = completed_run("run-1")
    records = stored(built.records)
    torn = Finding.of("run-1", None, "torn_tail", "final line 3 does not decode and was dropped")
    incremental = IncrementalRun("run-1")
    assert incremental.append(records[:2], findings=[torn]).findings[0].code == "torn_tail"
    # The torn line was completed: the reader no longer reports it.
    assert incremental.append(records[2:3], findings=[]).findings == []
    corrupt = Finding.of("run-1", None, "corrupt_line", "line 4 does not decode")
    folded = incremental.append(records[3:], findings=[corrupt], complete=False)
    assert folded.status == "invalid"
    assert folded.findings[0] == corrupt
    assert folded.result.status == "completed"


def test_stored_records_keep_their_bytes() -> None:
    built = completed_run("run-1")
    incremental = IncrementalRun.of(_Read("run-1", stored(built.records)))
    assert [record.raw for record in incremental.folded.read.records if isinstance(record, StoredRecord)] == [
        encode_record(record) for record in built.records
    ]
