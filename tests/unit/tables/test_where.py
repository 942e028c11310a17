"""The filter expression over the runs table (``tables.where``): what it keeps on the real corpus against a plain
Python reading of the same condition, SQL's unknowns, the refusals (each naming the field), and ``load(where=)``
and the audit keeping every table to the runs kept."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from journaltools.audits.sources import audit_sources
from journaltools.errors import InvalidFilter
from journaltools.tables import Tables, iter_tables, load
from journaltools.tables.loader import kept_runs
from journaltools.tables.schema import schema_of
from journaltools.tables.where import filtered_tables, parse_filter
from tests.filter_expressions import conditions
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS

FILES = CORPUS / "file"
NEWEST_FILES = CORPUS / "newest" / "file"

Row = dict[str, Any]


@cache
def corpus_tables() -> Tables:
    return load(FILES, strict=False)


@cache
def both_generations() -> pa.Table:
    """The runs of both builds' real corpora and the samples: every status, both generations, nulls in most
    columns (refused journals, undated August runs)."""
    return pa.concat_tables([load(folder, strict=False).runs for folder in (FILES, NEWEST_FILES, SAMPLES)])


def kept_ids(text: str, runs: pa.Table) -> list[str]:
    return [str(run) for run in parse_filter(text).apply(runs).column("run").to_pylist()]


def oracle_ids(runs: pa.Table, keep: Any) -> list[str]:
    """The runs a plain Python condition over each row keeps (None, an unknown, leaves the run out)."""
    return [row["run"] for row in runs.to_pylist() if keep(row) is True]


def _known(*values: Any) -> bool:
    return all(value is not None for value in values)


DECEMBER = datetime(2026, 8, 21, 12, tzinfo=UTC)

#: Filters and the same condition read by hand, row by row: SQL's logic, where an unknown is None.
CASES: list[tuple[str, Any]] = [
    ('status == "error"', lambda r: r["status"] == "error"),
    ('status != "completed"', lambda r: r["status"] != "completed"),
    ('status in ["error", "invalid"]', lambda r: r["status"] in ("error", "invalid")),
    ('status not in ("completed", "open")', lambda r: r["status"] not in ("completed", "open")),
    ('model ~ "SONNET"', lambda r: None if r["model"] is None else "sonnet" in r["model"].lower()),
    (
        'model ~ "sonnet" and llm_calls > 2',
        lambda r: None if not _known(r["model"], r["llm_calls"]) else "sonnet" in r["model"] and r["llm_calls"] > 2,
    ),
    ("1 < llm_calls <= 5", lambda r: None if r["llm_calls"] is None else 1 < r["llm_calls"] <= 5),
    ("5 >= llm_calls", lambda r: None if r["llm_calls"] is None else r["llm_calls"] <= 5),
    ("llm_calls > 2.5", lambda r: None if r["llm_calls"] is None else r["llm_calls"] > 2.5),
    ("last_seq > -1", lambda r: True),
    ('created > "2026-08-21T12:00"', lambda r: None if r["created"] is None else r["created"] > DECEMBER),
    ('created >= "2026-08-21T14:00:00+02:00"', lambda r: None if r["created"] is None else r["created"] >= DECEMBER),
    ("ended == None", lambda r: r["ended"] is None),
    ("ended is not None", lambda r: r["ended"] is not None),
    ("not interactive", lambda r: None if r["interactive"] is None else not r["interactive"]),
    ("interactive == false", lambda r: None if r["interactive"] is None else not r["interactive"]),
    ("stale_terminal or resumes > 0", lambda r: r["stale_terminal"] or r["resumes"] > 0),
    ("tool_calls >= llm_calls", lambda r: _known(r["tool_calls"], r["llm_calls"]) and r["tool_calls"] >= r["llm_calls"]),  # noqa: E501
    ('not (status == "completed")', lambda r: r["status"] != "completed"),
    ('error_findings > 0 or status == "invalid"', lambda r: r["error_findings"] > 0 or r["status"] == "invalid"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "keep"), CASES, ids=[case[0] for case in CASES])
def test_each_operator_keeps_what_python_reading_the_rows_keeps(text: str, keep: Any) -> None:
    runs = both_generations()
    found = kept_ids(text, runs)
    assert found == oracle_ids(runs, keep)
    # The rows as the run browser holds them (mappings) pass through the same expression with the same verdicts.
    verdicts = parse_filter(text).kept(runs.to_pylist())
    assert [run for run, kept in zip(runs.column("run").to_pylist(), verdicts, strict=True) if kept] == found


def test_the_cases_tell_runs_apart() -> None:
    """Each case keeps some runs and leaves some out on the corpora, or it would prove nothing."""
    runs = both_generations()
    trivial = [text for text, _ in CASES if len(kept_ids(text, runs)) in (0, runs.num_rows) and "-1" not in text]
    assert trivial == [], [(text, len(kept_ids(text, runs))) for text in trivial]


def test_an_unknown_value_is_left_out_by_a_comparison_and_by_its_negation() -> None:
    """SQL's logic: a run with no model is neither ``model == "x"`` nor ``not model == "x"`` nor ``model not in``."""
    runs = pa.table({"run": ["a", "b"], "model": ["claude", None]}).cast(
        pa.schema([pa.field("run", pa.string()), pa.field("model", pa.string())])
    )
    schema = schema_of("runs")
    for text in ('model == "claude"', 'not model == "claude"', 'model not in ["x"]', 'not model ~ "cl"'):
        verdicts = parse_filter(text, schema).kept(runs.to_pylist())
        assert verdicts[1] is False, text
    assert parse_filter('model == "claude" or model == None', schema).kept(runs.to_pylist()) == [True, True]


def test_a_duration_compares_with_a_duration_text_or_seconds() -> None:
    schema = schema_of("runs")
    rows = [{"wall_clock": timedelta(seconds=seconds)} for seconds in (30, 90, 7200)]
    assert parse_filter('wall_clock > "1m"', schema).kept(rows) == [False, True, True]
    assert parse_filter("wall_clock <= 90", schema).kept(rows) == [True, True, False]
    assert parse_filter('wall_clock >= "1.5h"', schema).kept(rows) == [False, False, True]


def test_the_newest_corpus_and_both_generations_filter_alike() -> None:
    runs = both_generations()
    newest = kept_ids('generation == "newest"', runs)
    august = kept_ids('generation == "august"', runs)
    assert newest and august and not set(newest) & set(august)
    dated = kept_ids('generation == "newest" and wall_clock > 0', runs)
    assert dated and set(dated) <= set(newest)
    assert kept_ids('generation == "august" and wall_clock > 0', runs) == []  # August runs are undated


# -- property: any expression the grammar makes, against a reference reading over the rows ------------------------


@pytest.mark.slow  # 300 generated expressions over both generations' runs: `make test` runs it
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conditions())
def test_any_expression_keeps_what_the_reference_reading_keeps(condition: tuple[str, Any]) -> None:
    text, reference = condition
    runs = both_generations()
    assert kept_ids(text, runs) == oracle_ids(runs, reference), text


# -- refusals ------------------------------------------------------------------------------------------------------


def refusal(text: str) -> InvalidFilter:
    with pytest.raises(InvalidFilter) as caught:
        parse_filter(text)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("invalid filter: ")
    assert len(caught.value.reason) < 400, "one short line, however long the filter"
    return caught.value


def test_an_unknown_field_is_named_with_the_columns_that_exist() -> None:
    error = refusal('status == "error" and tool_failures > 0')
    assert error.field == "tool_failures"
    assert "unknown field 'tool_failures'" in str(error)
    listed = str(error).split("columns are: ", 1)[1].split(", ")
    assert {"status", "model", "created", "error_findings", "llm_calls"} <= set(listed)
    assert "approvals" not in listed  # a list column cannot be compared, so it is not offered
    assert "did you mean llm_calls?" in str(refusal("llm_call > 1"))
    assert refusal("cost > 1").reason.startswith("unknown field 'cost': the cost columns are there only with prices")


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ('in_tokens > "abc"', "in_tokens", "is a number column and 'abc' is not a number"),
        ("model == 3", "model", "is a text column"),
        ('created > "yesterday"', "created", "is a time column"),
        ("interactive == 1", "interactive", "is a true/false column"),
        ("interactive > True", "interactive", "compare it with == or !="),
        ('wall_clock > "soon"', "wall_clock", "is a duration column"),
        ('llm_calls ~ "1"', "llm_calls", "~ (contains) reads text"),
        ("model", "model", "not a condition"),
        ("model ~ sonnet", "sonnet", "written in quotes"),
        ("approvals == 1", "approvals", "a list or a map"),
        ("model == status and llm_calls == created", "llm_calls", "cannot be compared with created"),
        ("status in 'error'", "status", "takes a list of values"),
    ],
)
def test_a_type_mismatch_names_the_field(text: str, field: str, words: str) -> None:
    error = refusal(text)
    assert error.field == field and words in str(error), str(error)
    assert "; the runs table's columns are: run, status, " in str(error)  # what would do, on the same line
    assert "columns are" not in error.reason  # the short form the run browser shows


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ('status = "error"', "compare with =="),
        ('model @ "x"', "'@' at column 7"),
        ('~ model == "x"', "needs a field on its left"),
        ("status == ", "invalid syntax"),
        ('status == "unterminated', "unterminated"),
        ('"a" == "a"', "compares no column"),
        ("llm_calls + 1 > 2", "neither a column nor a value"),
        ("llm_calls > 2 ** 70", "neither a column nor a value"),
        ('"sonnet" in model', "for contains write model ~ 'sonnet'"),
        ("status in []", "takes a list of values"),
        ("status in [model]", "holds values only"),
        ("llm_calls < None", "cannot be ordered against None"),
        ("llm_calls is 3", "'is' only asks"),
        ("llm_calls > 99999999999999999999999", "cannot be a value of llm_calls"),
        ("not " * 3000 + "interactive", "nested too deeply"),
        ("-" * 5000 + "1 < llm_calls", "nested too deeply"),
        ("(" * 500 + "interactive" + ")" * 500, "too many nested parentheses"),
        ("status == " + "x" * 5000 + " ==", "invalid syntax of 'status == xxx"),
    ],
)
def test_what_is_not_in_the_grammar_is_refused_in_one_line(text: str, words: str) -> None:
    assert words in str(refusal(text))


def test_nothing_in_a_filter_is_ever_run(tmp_path: Path) -> None:
    """Calls, attributes, subscripts, lambdas and comprehensions are refused before anything is evaluated."""
    target = tmp_path / "written"
    hostile = [
        f"open({str(target)!r}, 'w').write('x') == 1",
        f"__import__('pathlib').Path({str(target)!r}).touch() == None",
        "(lambda: 1)() == 1",
        "[x for x in ().__class__.__mro__] == 1",
        "status.__class__ == 1",
        "status[0] == 's'",
        "(status := 'x') == 'x'",
        "status if True else model",
        "f'{status}' == 'x'",
    ]
    for text in hostile:
        refusal(text)
    assert not target.exists()


def test_the_contains_operator_is_rewritten_only_after_an_operand() -> None:
    """``~`` inside a quoted text is text, and the columns of a message point into the text as written."""
    runs = corpus_tables().runs
    assert kept_ids('model ~ "x~y"', runs) == []
    assert kept_ids('(model)~"sonnet"', runs) == kept_ids('model ~ "sonnet"', runs)
    assert "at column 22" in str(refusal('model ~ "sonnet" and @ x'))  # counted from 1, as an editor counts


# -- every table kept to the runs kept ------------------------------------------------------------------------------


def test_load_where_keeps_every_table_to_the_runs_kept() -> None:
    everything = corpus_tables()
    text = 'status == "suspended" or llm_calls > 5'
    tables = load(FILES, strict=False, where=text)
    kept = set(kept_ids(text, everything.runs))
    assert 0 < tables.runs.num_rows == len(kept) < everything.runs.num_rows
    for name, table in tables.items():
        if name == "runs" or not everything[name].num_rows:
            continue
        runs_of = {str(run) for run in table.column("run").to_pylist()}
        assert runs_of <= kept, name
        expected_rows = sum(1 for run in everything[name].column("run").to_pylist() if run in kept)
        assert table.num_rows == expected_rows, name
    assert tables.runs.schema == everything.runs.schema


def test_the_sources_own_findings_stay_with_any_filter() -> None:
    finding = pa.table(
        {"run": [None, "gone"], "seq": [None, 1], "code": ["x", "y"], "severity": ["error", "error"],
         "message": ["the source", "a run"], "source": ["s", "s"]},
        schema=schema_of("findings"),
    )  # fmt: skip
    tables = Tables.of(findings=finding, runs=corpus_tables().runs.slice(0, 1))
    kept = filtered_tables(tables, parse_filter('run == "nothing"'))
    assert kept.runs.num_rows == 0 and kept.findings.column("message").to_pylist() == ["the source"]


def test_iter_tables_and_kept_runs_filter_each_batch() -> None:
    text = 'model ~ "sonnet-5"'
    expected = set(kept_ids(text, corpus_tables().runs))
    assert expected
    parts = list(iter_tables(FILES, strict=False, batch_bytes=4096, where=text))
    assert len(parts) > 1
    assert {str(run) for part in parts for run in part.runs.column("run").to_pylist()} == expected
    assert kept_runs(FILES, text) == expected


def test_a_wrong_filter_is_refused_before_any_journal_is_read(tmp_path: Path) -> None:
    with pytest.raises(InvalidFilter):
        load(tmp_path / "no such directory", where="nothing > 1")


def test_a_load_that_builds_no_runs_table_refuses_a_filter() -> None:
    """``fold=False`` builds ``records`` and ``findings`` only: nothing to judge a run by, so the filter is refused
    rather than every record kept."""
    with pytest.raises(InvalidFilter, match="fold=False"):
        load(FILES, strict=False, fold=False, where='status == "error"')


def test_cost_is_a_column_once_prices_are_given() -> None:
    prices = {"claude-sonnet-4-6": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_create": 3.75}}
    priced = load(FILES, strict=False, prices=prices)
    cheap = load(FILES, strict=False, prices=prices, where="cost < 0.05")
    costs = priced.runs.column("cost").to_pylist()
    assert cheap.runs.num_rows == sum(1 for cost in costs if cost is not None and cost < 0.05)
    assert 0 < cheap.runs.num_rows < priced.runs.num_rows


def test_the_audit_keeps_to_the_runs_kept(tmp_path: Path) -> None:
    text = 'status == "invalid"'
    result = audit_sources([str(FILES)], parquet=tmp_path / "audit", progress=False, where=text)
    kept = set(kept_ids(text, corpus_tables().runs))
    assert result.runs == len(kept) > 0
    assert {finding.run for finding in result.findings} <= kept | {None}
    written = pa.parquet.read_table(tmp_path / "audit" / "runs.parquet")
    assert set(written.column("run").to_pylist()) == kept


def test_the_dask_audit_keeps_to_the_runs_kept(tmp_path: Path) -> None:
    pytest.importorskip("dask", reason="the dask extra is not installed")
    text = 'status == "invalid"'
    result = audit_sources([str(FILES)], parquet=tmp_path / "audit", dask=True, where=text, batch_bytes=8192)
    kept = set(kept_ids(text, corpus_tables().runs))
    assert result.runs == len(kept) > 0
    assert {finding.run for finding in result.findings} <= kept | {None}
    assert not math.isnan(result.rows["runs"]) and result.rows["runs"] == len(kept)
