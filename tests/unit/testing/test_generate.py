"""The generator: deterministic real-format corpora in the runtime's layout, and journals that round-trip."""

from __future__ import annotations

import stat
import statistics
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from journaltools.folding import fold
from journaltools.protocol.decode import decode_line
from journaltools.protocol.encode import encode_record
from journaltools.protocol.runid import validate_run_id
from journaltools.samples.builder import JournalBuilder
from journaltools.sources.registry import open_source
from journaltools.testing.generate import generate_corpus, generated_run, main, publish_corpus, run_id
from tests.strategies import DamagedJournal, damaged_journals, valid_runs


def test_same_seed_same_bytes_and_a_larger_corpus_extends_a_smaller_one(tmp_path: Path) -> None:
    small = generate_corpus(tmp_path / "small", runs=3, records=30, seed=4, workers=1)
    large = generate_corpus(tmp_path / "large", runs=9, records=30, seed=4, workers=2)
    assert (small.runs, large.runs) == (3, 9) and small.records < large.records
    for index in range(3):
        name = f"{run_id(index, 4)}.json"
        assert (tmp_path / "small" / name).read_bytes() == (tmp_path / "large" / name).read_bytes()
    journals = sorted((tmp_path / "small").glob("*.json"))
    assert small.bytes == sum(path.stat().st_size for path in journals)
    assert generated_run(4, 0, 30).journal_bytes() == (tmp_path / "small" / f"{run_id(0, 4)}.json").read_bytes()
    assert generated_run(5, 0, 30).journal_bytes() != generated_run(4, 0, 30).journal_bytes()


def test_the_runtimes_layout_journal_and_empty_lock_owner_only(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    generate_corpus(root, runs=4, records=10, seed=1, workers=1)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    runs = sorted(path.stem for path in root.glob("*.json"))
    assert sorted(path.stem for path in root.glob("*.lock")) == runs and len(runs) == 4
    for run in runs:
        validate_run_id(run)
        assert len(run) == 27  # KSUID-shaped, as the runtime's own ids
        assert (root / f"{run}.lock").stat().st_size == 0
        assert stat.S_IMODE((root / f"{run}.json").stat().st_mode) == 0o600
    assert runs == sorted(run_id(index, 1) for index in range(4))  # ids sort by creation, as KSUIDs do


@pytest.mark.parametrize("records", [1, 5, 60])
def test_every_generated_run_is_canonical_and_folds_strictly_without_a_finding(tmp_path: Path, records: int) -> None:
    stats = generate_corpus(tmp_path, runs=15, records=records, seed=records, workers=1)
    total = 0
    with open_source(tmp_path) as backend:
        for read in backend.read_runs():
            assert read.complete and read.findings == []
            assert all(stored.noncanonical is None for stored in read.records)
            assert [stored.record.seq for stored in read.records] == list(range(1, len(read.records) + 1))
            assert len(read.records) >= min(records, 2) or read.records[-1].record.kind in ("terminal", "claim")
            result = fold(read.typed(), run=read.run)  # strict: raises where the runtime's fold refuses
            assert result.findings == []
            total += len(read.records)
    assert total == stats.records


@pytest.mark.slow  # generates a corpus: `make test` runs it
def test_content_is_varied_and_realistically_sized() -> None:
    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    sizes: dict[str, list[int]] = {}
    stale = 0
    for index in range(80):
        built = generated_run(0, index, 80)
        result = fold(built.records)
        statuses[result.status] += 1
        stale += result.stale_terminal
        for record in built.records:
            kind = record.kind or "unknown"
            kinds[kind] += 1
            sizes.setdefault(kind, []).append(len(encode_record(record)))
    assert set(kinds) == {
        "meta",
        "assistant",
        "user",
        "tool_result",
        "deferred",
        "decision",
        "call_approval",
        "memory_revisions",
        "terminal",
        "claim",
    }
    assert kinds["tool_result"] > kinds["assistant"] > kinds["claim"]
    assert set(statuses) >= {"completed", "suspended", "error", "budget", "max_iterations"}
    assert stale > 0  # some runs end with the conversation's next turn in flight after a completed one
    assert 200 < statistics.median(sizes["tool_result"]) < 2_000
    assert max(sizes["tool_result"]) > 10_000


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(built=valid_runs())
def test_generated_journals_round_trip_through_the_writer_the_reader_and_the_fold(
    tmp_path: Path, built: object
) -> None:

    assert isinstance(built, JournalBuilder)
    root = Path(tempfile.mkdtemp(dir=tmp_path))  # one directory per example: hypothesis reuses tmp_path
    with open_source(root, create=True) as backend:
        with backend.create_journal(built.run_id, built.meta) as writer:
            for record in built.records[1:]:
                writer.append(record)
        assert (root / f"{built.run_id}.json").read_bytes() == built.journal_bytes()
        read = backend.read_run(built.run_id)
    assert read.typed() == built.records and read.findings == []
    assert [decode_line(stored.raw).noncanonical for stored in read.records] == [None] * len(built.records)
    result = fold(read.typed(), run=built.run_id)
    assert result.findings == [] and result.last_seq == built.last_seq
    assert result.status != "invalid"


_READ_FINDING = {
    "torn_tail": "torn_tail",
    "resumed_after_torn_tail": "resumed_after_torn_tail",
    "corrupt_interior": "corrupt_line",
    "noncanonical": "noncanonical_line",
}


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged=damaged_journals())
def test_damaged_journals_are_read_as_the_runtime_reads_them(tmp_path: Path, damaged: DamagedJournal) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    run = damaged.journal.run_id
    (root / f"{run}.json").write_bytes(damaged.data)
    with open_source(root) as backend:
        read = backend.read_run(run, strict=False)
    codes = {finding.code for finding in read.findings}
    expected = _READ_FINDING.get(damaged.damage)
    if expected is not None:
        assert expected in codes
    refused = damaged.damage in ("resumed_after_torn_tail", "corrupt_interior")
    assert read.complete is not refused
    if damaged.damage in ("blank_lines", "crlf", "noncanonical"):
        assert read.typed() == damaged.journal.records
    if damaged.damage == "torn_tail":
        assert read.typed() == damaged.journal.records[:-1]


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--runs", "2", "--records", "5", "--seed", "3"]) == 0
    assert "2 runs, " in capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        f"{run_id(index, 3)}{suffix}" for index in range(2) for suffix in (".json", ".lock")
    )


def test_publishing_to_jetstream_stores_the_same_records(tmp_path: Path, jetstream_url: str) -> None:
    stats = publish_corpus(jetstream_url, runs=3, records=12, seed=2)
    generate_corpus(tmp_path, runs=3, records=12, seed=2, workers=1)
    with open_source(jetstream_url) as stream, open_source(tmp_path) as files:
        assert stream.list_runs() == files.list_runs()
        for run in files.list_runs():
            assert [s.raw for s in stream.read_run(run).records] == [s.raw for s in files.read_run(run).records]
    assert stats.runs == 3
