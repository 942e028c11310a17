"""``runs.tool_errors``: each run's calls whose result is an error, counted once from the tool_calls table for either
fold, so the filter ``status == "error" and tool_errors > 0`` reads what the tool_calls rows say."""

from __future__ import annotations

from collections import Counter

import pytest

import journaltools as jt
from journaltools.folding.native import NATIVE_ROWS_VARIABLE
from tests.paths import ROOT, SAMPLES

CORPORA = [
    ROOT / "tests" / "corpus" / "runstate" / "file",
    ROOT / "tests" / "corpus" / "runstate" / "newest" / "file",
    ROOT / "tests" / "corpus" / "runstate" / "newest" / "random",
    ROOT / "tests" / "corpus" / "runstate" / "broken",
    SAMPLES,
]


@pytest.mark.parametrize("native", ["1", "0"], ids=["native fold", "python fold"])
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda path: path.name)
def test_tool_errors_counts_the_runs_error_results(
    corpus: object, native: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NATIVE_ROWS_VARIABLE, native)
    tables = jt.load(str(corpus), strict=False, progress=False, records=False)
    errors = Counter(call["run"] for call in tables.tool_calls.to_pylist() if call["is_error"])
    rows = tables.runs.to_pylist()
    assert any(row["tool_errors"] for row in rows) or not errors
    for row in rows:
        expected = None if row["tool_calls"] is None else errors.get(row["run"], 0)
        assert row["tool_errors"] == expected, row["run"]


def test_the_issues_example_filter_runs_as_written() -> None:
    kept = jt.load(
        str(SAMPLES), strict=False, progress=False, records=False, where='status == "error" and tool_errors > 0'
    )
    assert kept.runs.num_rows > 0
    assert all(row["status"] == "error" and row["tool_errors"] > 0 for row in kept.runs.to_pylist())
