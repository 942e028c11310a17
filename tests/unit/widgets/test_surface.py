"""The anywidget views (``RunBrowserSurface``, ``ConversationSurface``) without a browser: each action the page sends
does what a click asks, the HTML they put on the page is the same the ipywidgets views draw, and the keyboard is
sent where it should go once."""

from __future__ import annotations

import re

import pytest

from journaltools.exports.conversation import ConversationModel
from journaltools.folding import FoldResult
from journaltools.widgets import ConversationSurface, RunBrowser, RunBrowserModel, RunBrowserSurface
from journaltools.widgets.conversation import ConversationView
from journaltools.widgets.runs_page import table_html
from journaltools.widgets.surface import Surface, button
from tests.widget_journals import SCRIPT, browser_folds, corpus_fold


@pytest.fixture
def folds() -> dict[str, FoldResult]:
    return browser_folds()


@pytest.fixture
def surface(folds: dict[str, FoldResult]) -> RunBrowserSurface:
    return RunBrowserSurface(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=10)


def sent(widget: Surface, action: str, argument: str = "") -> None:
    """What the front end does for a click: one custom message ``{"act", "arg"}``."""
    widget._on_message(widget, {"act": action, "arg": argument}, [])


def test_the_table_is_the_one_the_ipywidgets_browser_draws(folds: dict[str, FoldResult]) -> None:
    model = RunBrowserModel.from_folds(folds)
    surface = RunBrowserSurface(model, folds.get)
    jupyter = RunBrowser(model, folds.get)
    assert table_html(surface.model) in surface.widget.html
    assert jupyter.table.value == table_html(surface.model)


def test_a_row_click_opens_its_run_with_its_conversation_and_escape_closes_it(surface: RunBrowserSurface) -> None:
    run = surface.model.page_rows()[3].run
    sent(surface.widget, "open", run)
    assert surface.selected == run and surface.conversation is not None
    html = surface.widget.html
    assert html.index('class="jt-detail"') < html.index('class="jt-rows"')  # the pane sits above the table
    assert surface.conversation.model.header_html() in html
    assert 'data-jt-focus="close"' in html  # the pane's bar takes the keyboard, so the page scrolls to it
    sent(surface.widget, "close")
    assert surface.selected is None and 'class="jt-detail"' not in surface.widget.html
    assert f'data-jt-focus="run:{run}"' in surface.widget.html  # back to the row of the run just closed
    surface.act("search", "")
    assert "data-jt-focus=" not in surface.widget.html  # once, not at every redraw


def test_search_status_sort_and_pages_act_on_the_model(surface: RunBrowserSurface) -> None:
    everything = len(surface.model.visible())
    sent(surface.widget, "status", "completed")
    assert surface.model.statuses == {"completed"}
    assert 'aria-pressed="true"' in surface.widget.html
    assert {row.status for row in surface.model.visible()} == {"completed"}
    sent(surface.widget, "status", "completed")
    assert len(surface.model.visible()) == everything
    sent(surface.widget, "search", "terminal-error")
    assert [row.run for row in surface.model.visible()] == ["terminal-error"]
    sent(surface.widget, "search", "")
    sorted_once = surface.model.toggle_sort("tokens")
    sent(surface.widget, "sort", "tokens")
    assert (surface.model.sort_key, surface.model.descending) == ("tokens", sorted_once.descending)
    sent(surface.widget, "sort", "tokens")
    assert surface.model.descending is not sorted_once.descending  # again reverses
    sent(surface.widget, "page", "1")
    assert surface.model.page == 1 and "page 2 of" in surface.widget.html
    sent(surface.widget, "page", "-1")
    sent(surface.widget, "page", "-1")
    assert surface.model.page == 0
    sent(surface.widget, "columns")
    assert "jt-all-columns" in surface.widget.html


def test_previous_and_next_run_step_in_table_order(surface: RunBrowserSurface) -> None:
    first, second = (row.run for row in surface.model.page_rows()[:2])
    surface.act("open", first)
    surface.act("step", "1")
    assert surface.selected == second
    surface.act("step", "-1")
    assert surface.selected == first


def test_anything_else_the_page_sends_is_let_go(surface: RunBrowserSurface) -> None:
    before = surface.widget.html
    for content in ({"act": "open", "arg": "no-such-run"}, {"act": "sort", "arg": "nope"}, {"act": 3}, "open", None):
        surface.widget._on_message(surface.widget, content, [])
    surface.act("page", "many")
    surface.act("messages", "1")  # no run open: no conversation to page
    assert surface.selected is None and surface.widget.html == before


def test_journal_content_is_escaped_in_the_controls_too(folds: dict[str, FoldResult]) -> None:
    surface = RunBrowserSurface(RunBrowserModel.from_folds(folds), folds.get)
    surface.act("search", SCRIPT)
    assert SCRIPT not in surface.widget.html and "&lt;script&gt;" in surface.widget.html
    surface.act("open", "hostile-prompt")
    assert re.search(r"<(img src=x|script>)", surface.widget.html) is None
    assert "<b>" not in button("<b>", "act", '"><b>')


def test_a_run_the_source_cannot_read_says_so(folds: dict[str, FoldResult]) -> None:
    surface = RunBrowserSurface(RunBrowserModel.from_folds(folds), loader=None)
    run = surface.model.rows[0].run
    surface.act("open", run)
    assert "No conversation for" in surface.widget.html


def test_the_conversation_pages_and_jumps_as_the_ipywidgets_view_does() -> None:
    model = ConversationModel.from_fold(corpus_fold("long-run"), page_size=10)
    surface, view = ConversationSurface(model), ConversationView(model)
    assert model.header_html() in surface.widget.html
    assert view.pager_text in surface.widget.html
    sent(surface.widget, "messages", "1")
    view.show_window(10)
    assert surface.place.start == 10 and view.pager_text in surface.widget.html
    target = model.targets()[-1]
    sent(surface.widget, "jump", str(target.seq))
    view.jump_to_seq(target.seq)
    assert surface.place.start == view.start and view.pager_text in surface.widget.html
    sent(surface.widget, "messages", "-1")
    sent(surface.widget, "jump", "not a seq")
    assert surface.place.start == max(0, view.start - 10)


def test_the_surfaces_show_themselves_in_every_host(surface: RunBrowserSurface) -> None:
    assert surface._display_() is surface.widget  # marimo
    bundle = surface._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in (bundle[0] if isinstance(bundle, tuple) else bundle)
    assert surface.widget._esm.strip().endswith("export default { render };")
