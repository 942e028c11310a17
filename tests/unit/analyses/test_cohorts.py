"""Two cohorts of runs side by side (``analyses.cohorts``): each cohort is what its filter keeps, its counts add up
to the tables', and its spreads are values of its runs."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import journaltools as jt
from journaltools.analyses.cohorts import STANDOUTS, Spread, cohort_of, diff_cohorts
from journaltools.cli import main
from journaltools.errors import InvalidFilter
from journaltools.models.documents import output_adapter
from tests.paths import ROOT

RANDOM = ROOT / "tests" / "corpus" / "runstate" / "newest" / "random"


@pytest.fixture(scope="module")
def tables() -> jt.Tables:
    return jt.load(str(RANDOM), strict=False, records=False, progress=False)


def test_two_cohorts_that_split_the_runs_add_up_to_the_tables(tables: jt.Tables) -> None:
    diff = diff_cohorts(tables, 'status == "completed"', 'status != "completed"')
    runs = tables.runs.to_pylist()
    assert sorted(diff.a.runs + diff.b.runs) == sorted(row["run"] for row in runs)
    assert diff.a.endings == {"completed": sum(row["status"] == "completed" for row in runs)}
    assert Counter(row["status"] for row in runs) == Counter(diff.a.endings) + Counter(diff.b.endings)
    calls = tables.tool_calls.to_pylist()
    for name in diff.tools():
        made = [call for call in calls if call["name"] == name]
        total = (diff.a.tools[name].calls if name in diff.a.tools else 0) + (
            diff.b.tools[name].calls if name in diff.b.tools else 0
        )
        errors = (diff.a.tools[name].errors if name in diff.a.tools else 0) + (
            diff.b.tools[name].errors if name in diff.b.tools else 0
        )
        assert (total, errors) == (len(made), sum(bool(call["is_error"]) for call in made))
    codes = Counter(tables.findings.column("code").to_pylist())
    assert Counter(diff.a.findings) + Counter(diff.b.findings) == codes
    for cohort in (diff.a, diff.b):
        assert math.isclose(sum(cohort.share(name) for name in cohort.endings), 1.0)


def test_a_cohort_is_what_its_filter_keeps_and_its_spreads_are_its_runs_values(tables: jt.Tables) -> None:
    cohort = cohort_of(tables, 'model ~ "opus" and tool_calls > 0')
    kept = [row for row in tables.runs.to_pylist() if "opus" in (row["model"] or "") and row["tool_calls"] > 0]
    assert sorted(cohort.runs) == sorted(row["run"] for row in kept)
    tokens = sorted(
        float(sum(row[name] or 0 for name in ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens")))
        for row in kept
    )
    assert cohort.tokens.runs == len(tokens) and cohort.tokens.median in tokens and cohort.tokens.p90 in tokens


def test_the_runs_that_moved_most_belong_to_their_cohort(tables: jt.Tables) -> None:
    diff = diff_cohorts(tables, 'model ~ "opus"', 'model ~ "sonnet"')
    assert diff.standouts
    for standout in diff.standouts:
        mine = diff.a if standout.cohort == "A" else diff.b
        other = diff.b if standout.cohort == "A" else diff.a
        assert standout.run in mine.runs
        assert standout.other_median == (other.tokens if standout.measure == "tokens" else other.seconds).median
    per = Counter((s.cohort, s.measure) for s in diff.standouts)
    assert max(per.values()) <= STANDOUTS
    document = diff.to_dict()
    assert document["a"]["runs"] == len(diff.a.runs) and len(document["moved_most"]) == len(diff.standouts)


def test_a_cohort_over_an_unknown_field_is_refused_naming_it(tables: jt.Tables) -> None:
    with pytest.raises(InvalidFilter, match="bogus_field"):
        diff_cohorts(tables, "bogus_field > 3", 'status == "error"')


@given(st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=1, max_size=50))
def test_a_spread_is_nearest_rank(values: list[float]) -> None:
    spread = Spread.of(values)
    assert spread.runs == len(values) and spread.median in values and spread.p90 in values
    assert spread.median is not None and spread.p90 is not None
    assert sum(value <= spread.median for value in values) >= len(values) / 2
    assert sum(value <= spread.p90 for value in values) >= 0.9 * len(values)
    assert sum(value < spread.median for value in values) < len(values) / 2
    assert Spread.of([]) == Spread(0, None, None)


def test_the_command_prints_both_cohorts_and_its_json_is_the_documented_shape(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cohorts = ["--cohort", 'status == "completed"', "--cohort", 'status != "completed"']
    assert main(["diff", str(RANDOM), *cohorts, "--json"]) == 0
    document = output_adapter("diff").validate_json(capsys.readouterr().out)
    diff = diff_cohorts(str(RANDOM), 'status == "completed"', 'status != "completed"')
    assert document.a.runs == len(diff.a.runs) and document.b.runs == len(diff.b.runs)
    assert main(["diff", str(RANDOM), *cohorts]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'A: status == "completed"  ({len(diff.a.runs):,} runs)\n')
    for title in ("endings", "median / p90", "tool calls", "findings", "moved most"):
        assert f"\n{title}" in out
    for wrong, said in (
        (["--cohort", 'status == "error"'], "give it twice"),
        ([*cohorts, "--cohort", "records > 3"], "give it twice"),
        (["some-run", *cohorts], "give no RUN"),
        (["--cohort", "bogus > 3", "--cohort", 'status == "error"'], "unknown field 'bogus'"),
    ):
        assert main(["diff", str(RANDOM), *wrong]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err


def test_a_cohort_that_keeps_no_run_is_said_to_be_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(RANDOM), "--cohort", 'model ~ "no-model-is-named-so"', "--cohort", "records > 0"]) == 0
    captured = capsys.readouterr()
    assert "cohort A keeps no run of" in captured.err and "no-model-is-named-so" in captured.err
    assert "cohort B keeps no run" not in captured.err
    assert "(0 runs)" in captured.out
