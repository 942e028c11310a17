"""The corpus generator: deterministic, valid journals of exactly the asked size, realistic content."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

import orjson
import pytest

from journaltools.backends.file import FileBackend
from journaltools.fold import fold
from journaltools.generate import generate_corpus, journal_bytes, main, run_id
from journaltools.protocol.records import encode_record


def test_same_seed_same_bytes_and_a_larger_corpus_extends_a_smaller_one(tmp_path: Path) -> None:
    small = generate_corpus(tmp_path / "small", runs=3, records=30, seed=4, workers=1)
    large = generate_corpus(tmp_path / "large", runs=9, records=30, seed=4, workers=2)
    assert (small.runs, small.records) == (3, 90) and (large.runs, large.records) == (9, 270)
    for index in range(3):
        name = f"{run_id(index)}.jsonl"
        assert (tmp_path / "small" / name).read_bytes() == (tmp_path / "large" / name).read_bytes()
    assert small.bytes == sum(path.stat().st_size for path in (tmp_path / "small").iterdir())
    assert journal_bytes(4, 0, 30) == (tmp_path / "small" / f"{run_id(0)}.jsonl").read_bytes()
    assert journal_bytes(5, 0, 30) != journal_bytes(4, 0, 30)


@pytest.mark.parametrize("records", [1, 2, 3, 17, 250])
def test_every_run_has_exactly_the_asked_records_and_folds_without_a_finding(tmp_path: Path, records: int) -> None:
    generate_corpus(tmp_path, runs=12, records=records, seed=records, workers=1)
    backend = FileBackend(tmp_path)
    for run in backend.list_runs():
        read = backend.read_run(run)
        assert len(read.records) == records and read.findings == []
        result = fold(read.records, run=run)  # strict: raises on any error
        assert result.findings == []
        assert [r.seq for r in read.records] == list(range(1, records + 1))


def test_lines_are_what_journaltools_writes(tmp_path: Path) -> None:
    data = journal_bytes(1, 7, 40)
    assert data.endswith(b"\n")
    for line in data.split(b"\n")[:-1]:
        assert encode_record(orjson.loads(line)) == line


def test_content_is_varied_and_realistically_sized(tmp_path: Path) -> None:
    generate_corpus(tmp_path, runs=40, records=150, seed=0, workers=1)
    backend = FileBackend(tmp_path)
    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    sizes: dict[str, list[int]] = {}
    for run in backend.list_runs():
        records = backend.read_run(run).records
        statuses[fold(records, run=run).status] += 1
        for record in records:
            kinds[record.type or ""] += 1
            sizes.setdefault(record.type or "", []).append(len(record.raw))
    assert set(kinds) >= {"meta", "user", "assistant", "tool_result", "deferral", "approval", "claim", "error", "note"}
    assert kinds["tool_result"] > kinds["assistant"] > kinds["user"]
    assert set(statuses) >= {"completed", "open", "suspended"}
    assert 200 < statistics.median(sizes["user"]) < 2_000
    assert max(sizes["tool_result"]) > 10_000 > statistics.median(sizes["tool_result"])
    assert any(record.optional for run in backend.list_runs()[:40] for record in backend.read_run(run).records)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--runs", "2", "--records", "5", "--seed", "3"]) == 0
    assert "2 runs, 10 records" in capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{run_id(0)}.jsonl", f"{run_id(1)}.jsonl"]
