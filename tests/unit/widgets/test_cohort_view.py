"""Two cohorts in the notebook (``widgets.cohorts``): the figures ``diff --cohort`` prints, as tables, escaped, and
opened from the run browser on two filter expressions."""

from __future__ import annotations

from html import unescape

import journaltools as jt
from journaltools.analyses.cohorts import diff_cohorts
from journaltools.widgets import CohortDiffView, RunBrowser
from journaltools.widgets.cohorts import cohort_diff_html
from tests.paths import ROOT, SAMPLES
from tests.widget_journals import SCRIPT

RANDOM = ROOT / "tests" / "corpus" / "runstate" / "newest" / "random"


def test_the_view_holds_every_figure_of_the_comparison() -> None:
    diff = diff_cohorts(str(RANDOM), 'model ~ "opus"', 'model ~ "sonnet"')
    html = unescape(cohort_diff_html(diff))
    assert f"({len(diff.a.runs):,} runs)" in html and f"({len(diff.b.runs):,} runs)" in html
    for name in diff.endings():
        assert f"{diff.a.endings.get(name, 0):,} ({100 * diff.a.share(name):.0f}%)" in html
    for name in diff.tools():
        assert f"<td>{name}</td>" in html
    for code in diff.finding_codes():
        assert f"<td>{code}</td>" in html
    for standout in diff.standouts:
        assert standout.run in html
    assert CohortDiffView(diff).widget.value == cohort_diff_html(diff)


def test_expressions_are_escaped() -> None:
    tables = jt.load(str(SAMPLES), strict=False, progress=False, records=False)
    hostile = f'prompt ~ "{SCRIPT}"'
    html = cohort_diff_html(diff_cohorts(tables, hostile, 'status == "error"'))
    assert SCRIPT not in html and "&lt;script&gt;" in html


def test_the_browser_opens_two_cohorts_of_its_source_and_says_why_when_it_cannot() -> None:
    browser = RunBrowser.from_source(str(SAMPLES), follow=False)
    assert browser.wait_loaded(30)
    view = browser.compare_cohorts('status == "completed"', 'status != "completed"')
    assert isinstance(view, CohortDiffView) and browser.cohorts_box.children[1] is view.widget
    runs = jt.load(str(SAMPLES), strict=False, progress=False, records=False).runs.num_rows
    assert len(view.diff.a.runs) + len(view.diff.b.runs) == runs
    assert browser.compare_cohorts("bogus > 3", 'status == "error"') is None
    said = browser.cohorts_box.children[0].value
    assert "No cohorts" in said and "unknown field" in said and "bogus" in said
    browser.close_cohorts()
    assert browser.cohorts_box.children == ()
    browser.close()


def test_the_runs_listed_when_each_button_is_pressed_are_the_two_cohorts() -> None:
    """Search or chips narrow the list, "A: these runs" takes what is listed, another narrowing and "B: these runs"
    take the other side, and the comparison opens on exactly those runs, labelled by how they were chosen."""
    browser = RunBrowser.from_source(str(SAMPLES), follow=False)
    assert browser.wait_loaded(30)
    statuses = sorted(browser.chips)
    assert len(statuses) >= 2
    browser.chips[statuses[0]].value = True
    listed_a = {row.run for row in browser.model.visible()}
    browser.picker.take_a.click()
    assert browser.cohorts is None and "not chosen" in browser.picker.note.value
    browser.chips[statuses[0]].value = False
    browser.chips[statuses[1]].value = True
    listed_b = {row.run for row in browser.model.visible()}
    browser.picker.take_b.click()
    view = browser.cohorts
    assert isinstance(view, CohortDiffView)
    assert set(view.diff.a.runs) == listed_a and set(view.diff.b.runs) == listed_b
    assert view.diff.a.expression == f"status {statuses[0]}" and view.diff.b.expression == f"status {statuses[1]}"
    by_expression = diff_cohorts(
        jt.load(str(SAMPLES), strict=False, progress=False, records=False),
        f"status == {statuses[0]!r}",
        f"status == {statuses[1]!r}",
    )
    assert view.diff.a.endings == by_expression.a.endings and view.diff.b.tools == by_expression.b.tools
    assert f"{len(listed_b):,} runs" in browser.picker.note.value
    browser.close()


def test_an_empty_list_is_not_taken_as_a_cohort_and_closing_forgets_both() -> None:
    browser = RunBrowser.from_source(str(SAMPLES), follow=False)
    assert browser.wait_loaded(30)
    browser.filter_box.value = "no-run-says-this-zzqx"
    assert browser.model.visible() == []
    browser.picker.take_a.click()
    assert browser.picker.a is None and "nothing to take as A" in browser.picker.note.value
    browser.filter_box.value = ""
    browser.picker.take_a.click()
    browser.picker.take_b.click()
    assert browser.cohorts is not None
    browser.close_cohorts()
    assert browser.picker.a is None and browser.picker.b is None and "A</b> not chosen" in browser.picker.note.value
    browser.close()
