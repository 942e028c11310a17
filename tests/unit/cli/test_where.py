"""``--where`` on ``ls``, ``audit`` and ``search``: the runs kept are the runs table's (``tables.where``), a filter
that cannot be one is bad usage (exit 2) in one line naming the field, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journaltools.cli import main
from journaltools.tables import load
from journaltools.tables.where import parse_filter
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS

FILES = CORPUS / "file"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def kept(source: Path, text: str) -> set[str]:
    return {str(run) for run in parse_filter(text).apply(load(source, strict=False).runs).column("run").to_pylist()}


def test_ls_where_lists_the_runs_the_filter_keeps(capsys: pytest.CaptureFixture[str]) -> None:
    text = 'status == "error" or llm_calls > 5'
    code, out, err = run_cli(capsys, "ls", str(FILES), "--json", "--where", text)
    assert code == 0, err
    listed = {row["run"] for row in json.loads(out)}
    assert listed == kept(FILES, text) and len(listed) > 1
    # The table too, and the other filters still apply on top of it.
    code, out, _ = run_cli(capsys, "ls", str(FILES), "--json", "--where", text, "--status", "error")
    assert code == 0 and {row["status"] for row in json.loads(out)} == {"error"}


def test_ls_where_pages_the_runs_kept(capsys: pytest.CaptureFixture[str]) -> None:
    text = 'generation == "newest"'
    code, out, err = run_cli(capsys, "ls", str(SAMPLES), "--json", "--limit", "3", "--where", text)
    assert code == 0, err
    page = [row["run"] for row in json.loads(out)]
    assert len(page) == 3 and set(page) <= kept(SAMPLES, text) and "--cursor" in err


def test_ls_where_over_several_sources(capsys: pytest.CaptureFixture[str]) -> None:
    text = 'status == "invalid"'
    code, out, err = run_cli(capsys, "ls", str(FILES), str(SAMPLES), "--json", "--where", text)
    assert code == 0, err
    rows = json.loads(out)
    assert {row["run"] for row in rows} == kept(FILES, text) | kept(SAMPLES, text)
    assert len({row["source"] for row in rows}) == 2  # each source judged on its own runs table


@pytest.mark.parametrize("command", ["ls", "audit", "search"])
def test_a_filter_that_cannot_be_one_is_bad_usage_in_one_line(capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, out, err = run_cli(capsys, command, str(SAMPLES), "--where", 'status == "error" and tool_failures > 0')
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith(f"journaltools {command}: invalid filter: unknown field 'tool_failures'")
    assert "columns are: run, status," in line and "Traceback" not in err
    code, _, err = run_cli(capsys, command, str(SAMPLES), "--where", 'in_tokens > "abc"')
    assert code == 2 and "in_tokens is a number column" in err and len(err.splitlines()) == 1


def test_audit_where_reports_the_findings_of_the_runs_kept(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = 'status == "invalid"'
    code, out, err = run_cli(
        capsys, "audit", str(SAMPLES), "--json", "--quiet", "--where", text, "--parquet", str(tmp_path / "a")
    )
    assert code == 0, err
    findings = json.loads(out)
    chosen = kept(SAMPLES, text)
    assert findings and {finding["run"] for finding in findings} <= chosen | {None}
    import pyarrow.parquet as pq

    assert set(pq.read_table(tmp_path / "a" / "runs.parquet").column("run").to_pylist()) == chosen


def test_search_where_searches_the_runs_kept(capsys: pytest.CaptureFixture[str]) -> None:
    text = "tool_calls > 2"
    code, out, err = run_cli(capsys, "search", str(SAMPLES), "--json", "--where", text)
    assert code == 0, err
    found = {run["run_id"] for run in json.loads(out)["runs"]}
    code, out, _ = run_cli(capsys, "search", str(SAMPLES), "--json")
    everything = {run["run_id"] for run in json.loads(out)["runs"]}
    assert found and found < everything
    assert found == everything & kept(SAMPLES, text)


def test_audit_where_may_name_the_cost_when_prices_are_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"claude-sonnet-4-6": {"input": 3.0, "output": 15.0}}}), encoding="utf-8")
    out_dir = tmp_path / "a"
    code, _, err = run_cli(
        capsys,
        "audit",
        str(SAMPLES),
        "--quiet",
        "--prices",
        str(prices),
        "--where",
        "cost > 0.01",
        "--parquet",
        str(out_dir),
    )
    assert code == 0, err
    import pyarrow.parquet as pq

    costs = pq.read_table(out_dir / "runs.parquet").column("cost").to_pylist()
    assert costs and all(cost > 0.01 for cost in costs)
    # Without prices there is no cost column to name: bad usage, said before any journal is read.
    code, _, err = run_cli(capsys, "audit", str(SAMPLES), "--quiet", "--where", "cost > 0.01")
    assert code == 2 and "the cost columns are there only with prices" in err
