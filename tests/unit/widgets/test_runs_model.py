"""The run browser's prompt, agent and generation columns, its status cells and its keyboard, without a browser:
filled alike from the ``runs`` table and from folds, on real journals of both builds, and escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.folding import fold
from journaltools.tables import load
from journaltools.widgets import RunBrowser, RunBrowserModel, TimeTravel
from journaltools.widgets._source import RunFolds
from journaltools.widgets.runs import BROWSER_STYLE
from journaltools.widgets.runs_page import SCRIPT as BROWSER_SCRIPT
from journaltools.widgets.runs_row import COLUMNS, PROMPT_SHOWN, TOOLTIP_CHARS, RunRow
from tests.browser_table import headers as table_headers
from tests.browser_table import rows as table_rows
from tests.browser_table import shown_runs, table_lines
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS
from tests.widget_journals import (
    MANY_CHANGES_RUN,
    SCRIPT,
    STALE_TERMINAL_RUNS,
    all_folds,
    browser_folds,
    hostile_records,
    journal_records,
)

#: The real corpora of both builds: what each journal's meta says, read by both of the model's paths.
CORPORA = {"august": CORPUS / "file", "newest": NEWEST_CORPUS / "file"}


def test_prompt_agent_and_generation_are_columns_and_the_prompt_stays_at_any_width() -> None:
    priorities = {column.key: column.priority for column in COLUMNS}
    assert priorities["prompt"] == 1  # how a person tells runs made in the same minute apart
    assert priorities["agent"] > priorities["model"] and priorities["generation"] > priorities["model"]
    keys = [column.key for column in RunBrowserModel.from_folds(all_folds()).columns]
    assert keys.index("run") < keys.index("status") < keys.index("prompt") < keys.index("reason")
    assert {"agent", "generation"} <= set(keys)  # shown under "all columns"
    assert ".jt-col-prompt" in BROWSER_STYLE and ".jt-col-agent" in BROWSER_STYLE
    assert ".jt-col-generation" in BROWSER_STYLE


@pytest.mark.parametrize("build", sorted(CORPORA))
def test_the_table_and_the_folds_fill_them_alike_on_real_runs(build: str) -> None:
    folder = CORPORA[build]
    tables = load(str(folder), strict=False, records=False, progress=False)
    by_table = {row.run: row for row in RunBrowserModel.from_tables(tables).rows}
    folds = RunFolds.open(str(folder))
    try:
        by_fold = {row.run: row for row in RunBrowserModel.from_folds({run: folds(run) for run in by_table}).rows}  # type: ignore[misc]
    finally:
        folds.close()
    folded = [run for run, row in by_fold.items() if row.generation is not None]
    assert len(folded) >= len(by_table) - 3  # all but a journal no build writes (or with no meta)
    for run in folded:
        table_row, fold_row = by_table[run], by_fold[run]
        assert (fold_row.prompt, fold_row.agent, fold_row.generation) == (
            table_row.prompt,
            table_row.agent,
            table_row.generation,
        ), run
    assert {by_table[run].generation for run in folded} == {build}
    assert all(by_table[run].prompt for run in folded)
    agents = {by_table[run].agent for run in folded} - {None}
    assert bool(agents) == (build == "newest")  # only the newest line's meta names its agent
    some = by_table[folded[0]]
    assert (
        some.prompt is not None
        and some.prompt.split()[0].lower()
        in RunBrowserModel(list(by_table.values())).with_filter(some.prompt.split()[0]).visible()[0].search_text
    )


def test_a_prompt_is_escaped_on_one_line_and_whole_in_its_tooltip() -> None:
    prompt = f"{SCRIPT}\n\nsecond\tline \x1b[2J" + " word" * 1_000
    row = RunRow("r1", "completed", None, None, None, None, None, 3, prompt=prompt)
    shown = row.shown("prompt")
    assert shown.startswith(f"{SCRIPT} second line \\x1b[2J word") and len(shown) == PROMPT_SHOWN
    assert shown.endswith("…") and "\n" not in shown and "\x1b" not in shown
    tooltip = row.tooltip("prompt")
    assert tooltip.startswith(f"{SCRIPT}\n\nsecond\tline \\x1b[2J word") and "\x1b" not in tooltip
    more = len(prompt) + len("\\x1b") - 1 - TOOLTIP_CHARS  # the escape is what a page shows of ESC
    assert tooltip.endswith(f"… ({more:,} more characters: open the run to read it whole)")
    short = RunRow("r2", "completed", None, None, None, None, None, 3, prompt="say hello")
    assert short.shown("prompt") == short.tooltip("prompt") == "say hello"
    assert RunRow("r3", "open", None, None, None, None, None, 1).shown("prompt") == "—"
    html = RunBrowserModel([row, short]).to_html()
    assert SCRIPT not in html and "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert 'title="&lt;script&gt;' in html  # the tooltip, escaped for its attribute


def test_a_hostile_prompt_reaches_the_view_as_text() -> None:
    browser = RunBrowser(RunBrowserModel.from_folds({"hostile": fold(hostile_records(), strict=False)}))
    column = [column.key for column in browser.columns].index("prompt")
    cell = table_rows(browser)[0][column]
    # The cell's text is escaped, never markup; the cell shows the markup as the journal wrote it.
    assert cell.text == f"prompt {SCRIPT}" and cell.title == f"prompt {SCRIPT}"
    assert SCRIPT not in browser.table.value


def test_a_status_with_a_detail_keeps_its_word_on_the_first_line() -> None:
    folds = {path: fold(journal_records(path), strict=False) for path in STALE_TERMINAL_RUNS}
    browser = RunBrowser(RunBrowserModel.from_folds(folds))
    column = [column.key for column in browser.columns].index("status")
    cells = {line[column].argument: line[column] for line in table_rows(browser)}
    for path, status in zip(STALE_TERMINAL_RUNS, ("completed", "open"), strict=True):
        assert cells[path].text == f"{status}\nnext turn in flight"
        assert cells[path].title == f"{status} (next turn in flight)"
        assert "jt-status-detail" in cells[path].classes
    plain = RunBrowser(RunBrowserModel.from_folds({"done": all_folds()["completed-parallel-tools"]}))
    status_cell = table_rows(plain)[0][column]
    assert status_cell.text == "completed" and "jt-status-detail" not in status_cell.classes
    assert "white-space: pre-line" in BROWSER_STYLE


def test_the_rows_are_one_tab_stop_right_after_the_search_and_the_arrows_move_between_them() -> None:
    browser = RunBrowser(RunBrowserModel.from_folds(browser_folds()), rows_per_page=10)
    stops = [cell for cells in table_rows(browser) for cell in cells if cell.tabbable]
    assert stops == [table_rows(browser)[0][0]] and not any(header.tabbable for header in table_headers(browser))
    children = list(browser.widget.children)
    pager = next(child for child in children if "jt-pager" in child._dom_classes)
    assert pager.children[-1] is browser.filter_box and children.index(pager) + 1 == children.index(browser.table)
    keys = next(child for child in children if getattr(child, "value", None) == BROWSER_SCRIPT)
    assert keys.layout.display == "none"
    for key in ("ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Escape"):
        assert key in BROWSER_SCRIPT
    for script in (BROWSER_SCRIPT, browser.table.value.split("<img", 1)[1]):
        assert "<script" not in script and '"' not in script.split('onerror="', 1)[1][:-2]


def test_a_click_on_the_table_comes_back_as_an_action_and_a_page_is_one_widget() -> None:
    # Every widget model made and not closed (``Widget.widgets`` is the deprecated spelling of this registry).
    from ipywidgets.widgets.widget import _instances

    folds = browser_folds()
    before = len(_instances)
    RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=2)
    small_models = len(_instances) - before
    before = len(_instances)
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=50)
    assert len(_instances) - before == small_models  # rows add no models: a page is one HTML widget
    first = shown_runs(browser)[0]
    browser.actions.value = f"1 open {first}"
    assert browser.selected == first and "jt-selected" in table_lines(browser)[1].classes
    browser.actions.value = "2 open no-such-run"  # a run the table no longer lists is let go
    browser.actions.value = "3 frobnicate x"
    assert browser.selected == first
    browser.actions.value = "4 sort run"
    assert (browser.model.sort_key, browser.model.descending) == ("run", False)
    browser.actions.value = "5 sort run"  # the same click again is a new value: the nonce differs
    assert browser.model.descending
    browser.actions.value = "6 sort no-such-column"
    assert browser.model.sort_key == "run"
    browser.select(None)
    assert f'data-jt-focus="run:{first}"' in browser.table.value  # the keyboard goes back to the closed run's row
    browser.go_to_page(0)
    assert "data-jt-focus=" not in browser.table.value.split("<img", 1)[0]  # once


def test_time_travel_buttons_never_shrink_below_their_label() -> None:
    view = TimeTravel.from_records(Path(MANY_CHANGES_RUN).stem, journal_records(MANY_CHANGES_RUN))
    buttons = view.changes.children[1:]
    assert len(buttons) == 13 and view.changes.layout.flex_flow == "row wrap"
    for button in buttons:
        assert button.layout.flex == "0 0 auto" and button.description.split(" → ")[1] in button.tooltip
    assert buttons[-1].description == "seq 184: completed → max_iterations"
