"""The run browser's search box as a filter expression: the same runs as ``load(where=)`` on real journals of both
builds (one compiled filter, held equal here over random expressions), plain words as before, the summary saying
which search applied, and a broken expression shown rather than searched for."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from journaltools.tables import Tables, load
from journaltools.widgets import RunBrowser, RunBrowserModel
from journaltools.widgets.runs_parts import load_in_parts
from journaltools.widgets.runs_search import SearchQuery, filter_values
from tests.filter_expressions import conditions
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

SOURCES = (CORPUS / "file", NEWEST_CORPUS / "file", SAMPLES)
PRICES = {"claude-sonnet-4-6": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_create": 3.75}}


@cache
def every_table() -> Tables:
    return Tables.concat(load(source, strict=False, records=False, progress=False) for source in SOURCES)


@cache
def browser_model() -> RunBrowserModel:
    return RunBrowserModel.from_tables(every_table())


def browsed(model: RunBrowserModel, text: str) -> set[str]:
    return {row.run for row in model.with_filter(text).visible()}


def loaded(text: str, **options: Any) -> set[str]:
    kept: set[str] = set()
    for source in SOURCES:
        runs = load(source, strict=False, records=False, progress=False, where=text, **options).runs
        kept.update(str(run) for run in runs.column("run").to_pylist())
    return kept


@pytest.mark.parametrize(
    "text",
    [
        'status == "error"',
        'status in ["invalid", "suspended"] or pending_calls > 0',
        'model ~ "HAIKU" and generation == "newest"',
        'created > "2026-11-29T08:30" and tool_calls >= 2',
        "wall_clock > 0 and not interactive",
        "error_findings > 0 or warning_findings > 0",
        "ended == None",
    ],
)
def test_the_search_box_keeps_the_runs_load_where_keeps(text: str) -> None:
    model = browser_model()
    found = browsed(model, text)
    assert found == loaded(text)
    assert 0 < len(found) < len(model.rows), "a case that tells runs apart"
    assert model.with_filter(text).query.run_filter is not None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conditions())
def test_any_expression_browses_as_the_table_filters(condition: tuple[str, Any]) -> None:
    """The browser's rows (mappings of runs-table values) and the runs table itself pass one compiled filter."""
    text, _reference = condition
    model = browser_model()
    runs = every_table().runs
    from journaltools.tables.where import parse_filter

    expected = {str(run) for run in parse_filter(text).apply(runs).column("run").to_pylist()}
    assert browsed(model, text) == expected, text


def test_the_status_chips_count_what_the_filter_leaves() -> None:
    filtered = browser_model().with_filter('generation == "august"')
    counts = filtered.status_counts()
    assert sum(counts.values()) == len(filtered.visible()) == len(loaded('generation == "august"'))
    both = filtered.with_filter('generation == "august"', statuses={"completed"})
    assert {row.status for row in both.visible()} == {"completed"}


def test_plain_words_still_search_the_text_and_the_summary_says_which_applied() -> None:
    model = browser_model()
    words = model.with_filter("stream")
    assert words.query.run_filter is None and words.query.error is None and words.visible()
    assert words.search_summary == "text search" and words.page_text().endswith(" · text search")
    # A lone boolean column is a word to look for, not the condition it would parse as.
    assert model.with_filter("interactive").search_summary == "text search"
    expression = model.with_filter('status == "error"')
    assert expression.page_text().endswith(' · filter: status == "error"')
    assert model.page_text() == f"runs 1-25 of {len(model.rows):,}"  # an empty box says nothing more


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("tokens > 1000", "unknown field 'tokens'"),
        ('llm_calls > "many"', "llm_calls is a number column"),
        ("status == ", "invalid syntax"),
        ("model ~ ", "invalid syntax"),
        ('model ~ "a" and tool_failures > 0', "unknown field 'tool_failures'"),
    ],
)
def test_an_expression_that_cannot_be_one_is_shown_and_matches_nothing(text: str, words: str) -> None:
    model = browser_model().with_filter(text)
    assert model.query.error is not None and words in model.search_summary
    assert model.visible() == [] and sum(model.status_counts().values()) == 0
    assert model.page_text().startswith("no runs match") and "not a filter: " in model.page_text()


@pytest.mark.parametrize(
    "text", ["error and completed", "529", "1.50e3", "invoices 2025-01", "a-b", "x -> y", "<script>", "<b>bold</b>"]
)
def test_words_with_no_comparison_stay_words(text: str) -> None:
    query = SearchQuery.of(text)
    assert query.run_filter is None and query.error is None and query.words == text.lower().split()


def test_rows_that_arrive_later_are_filtered_too() -> None:
    """The browser adds batches by replacing its rows list: the verdicts follow the new list."""
    model = browser_model()
    first, rest = model.rows[:10], model.rows[10:]
    text = 'status == "completed"'
    early = replace(model, rows=first).with_filter(text)
    assert {row.run for row in early.visible()} == {row.run for row in first if row.status == "completed"}
    later = replace(early, rows=[*early.rows, *rest])
    assert {row.run for row in later.visible()} == browsed(model, text)


def test_a_followed_row_is_filtered_by_what_its_fold_says_now() -> None:
    """A run followed in the browser gets its status and counts from the fold (``runs_live.live_row``): the filter
    reads those, not the values the table was loaded with."""
    model = browser_model()
    row = next(row for row in model.rows if row.status == "suspended")
    followed = replace(row, status="completed", last_seq=row.last_seq + 3, llm_calls=99)
    values = filter_values(followed)
    assert (values["status"], values["llm_calls"], values["model"]) == ("completed", 99, row.model)
    updated = replace(model, rows=[followed if each.run == row.run else each for each in model.rows])
    assert row.run in browsed(updated, "llm_calls == 99 and status == 'completed'")
    assert row.run not in browsed(updated, 'status == "suspended"')
    assert filter_values(row) == dict(row.table_values)  # a row as loaded reads exactly its runs-table row


def test_a_model_made_from_folds_filters_by_the_columns_the_fold_gives() -> None:
    from journaltools.widgets._source import RunFolds

    folds = RunFolds.open(str(SAMPLES))
    try:
        runs = [str(run) for run in load(SAMPLES, strict=False).runs.column("run").to_pylist()]
        model = RunBrowserModel.from_folds({run: folds(run) for run in runs})  # type: ignore[misc]
    finally:
        folds.close()
    text = 'status == "suspended" or (model ~ "haiku" and llm_calls > 0)'
    assert browsed(model, text) == {str(run) for run in load(SAMPLES, strict=False, where=text).runs["run"].to_pylist()}


def test_cost_is_a_field_when_the_browser_has_prices() -> None:
    priced = RunBrowserModel.from_tables(every_table(), prices=PRICES)
    assert browsed(priced, "cost > 0.01") == loaded("cost > 0.01", prices=PRICES)
    unpriced = browser_model().with_filter("cost > 0.01")
    assert unpriced.query.error is not None and "only with prices" in unpriced.search_summary


def test_the_browser_view_filters_through_its_search_box() -> None:
    browser = RunBrowser(browser_model())
    browser.filter_box.value = 'status == "invalid"'
    assert {row.run for row in browser.model.visible()} == loaded('status == "invalid"')
    assert 'filter: status == "invalid"' in browser.page_label.value


def test_a_source_loaded_in_parts_filters_each_part() -> None:
    parts = load_in_parts(str(SAMPLES), first=5)
    try:
        rows = list(parts.first.rows)
        for batch in parts.rest:
            rows.extend(batch)
    finally:
        parts.loader.close()
    text = 'generation == "newest" and status != "completed"'
    expected = {str(run) for run in load(SAMPLES, strict=False, where=text).runs["run"].to_pylist()}
    assert len(rows) > 5 and browsed(replace(parts.first, rows=rows), text) == expected


def test_the_filter_needs_no_more_than_the_columns_it_names() -> None:
    """A narrower runs table (a listing's, an older audit's) still filters on the columns it has; one it lacks is
    unknown (null), so a comparison with it keeps nothing."""
    narrow = pa.table({"run": ["a", "b"], "status": ["open", "error"], "last_seq": pa.array([1, 2], pa.uint64())})
    model = RunBrowserModel.from_runs_table(narrow)
    assert browsed(model, 'status == "error"') == {"b"}
    assert browsed(model, "llm_calls > 0") == set()


def test_rows_whose_values_the_column_cannot_hold_say_so_instead_of_failing() -> None:
    """A table whose ``created`` is text (not the runs table's time) browses, and a filter on it says why it keeps
    nothing."""
    odd = pa.table({"run": ["a"], "status": ["open"], "created": ["last tuesday"], "last_seq": [1]})
    model = RunBrowserModel.from_runs_table(odd).with_filter('created > "2026-01-01"')
    assert model.visible() == [] and "created values are not of the runs table's type" in model.page_text()
