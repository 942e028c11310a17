"""RunBrowserSurface: the run browser as one anywidget (``surface.Surface``), for marimo and any host of anywidget.

It draws the run browser from the same pure pieces as ``RunBrowser`` (the ipywidgets view the Jupyter hosts show,
and static pages of embedded widgets can): the model (``RunBrowserModel``: filter, sort, pages), the table
(``runs_page.table_html``) and its stylesheet, and the opened run's conversation (``ConversationModel``, drawn by
``conversation_surface``). Only the controls around them differ: here they are HTML buttons in the same page,
there ipywidgets. The whole browser is one widget model whatever the page holds.

What it does: a search box and status chips narrow the list (the chips count what the search leaves), a click on a
column header sorts (again to reverse), a click on a row (or Enter on its run id) opens the run in a pane above the
table with previous / next run and its conversation's navigation, Escape or *close* closes it and gives the
keyboard back to the run's row, ArrowUp and ArrowDown move between rows, and the pager moves between pages. What
it leaves to ``RunBrowser``: the report and comparison buttons, following open runs as they are written, and
loading a big source in parts (``from_source`` loads the source whole).
"""

from __future__ import annotations

import os
from typing import Any

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.facts import Prices
from journaltools.exports.html import STYLE, esc, id_html
from journaltools.widgets.conversation_surface import ConversationPlace
from journaltools.widgets.runs_model import RunBrowserModel, RunLoader, load_source
from journaltools.widgets.runs_page import BROWSER_STYLE, arranged_model, table_html
from journaltools.widgets.surface import Surface, button


class RunBrowserSurface:
    """The run browser on one anywidget (``widget``): ``act(action, argument)`` does what a click asks, and every
    action the page sends is one of its actions (``status``, ``search``, ``columns``, ``sort``, ``open``,
    ``close``, ``step``, ``page``, and the opened conversation's ``messages`` and ``jump``)."""

    def __init__(
        self,
        model: RunBrowserModel,
        loader: RunLoader | None = None,
        rows_per_page: int | None = None,
        conversation_page_size: int = 50,
        prices: Prices | None = None,
    ) -> None:
        model = arranged_model(model, rows_per_page, prices)
        self.model = model
        self.loader = loader
        self.conversation_page_size = conversation_page_size
        self.selected: str | None = None
        #: The opened run's conversation and where the reader is in it (None: no run open, or none readable).
        self.conversation: ConversationPlace | None = None
        self.all_columns = False
        #: The element the keyboard goes to once the page is drawn next (its ``data-jt-key``), or "".
        self._focus = ""
        self.widget = Surface(self.act, STYLE + BROWSER_STYLE)
        self._render()

    @classmethod
    def from_source(
        cls,
        url: str | os.PathLike[str],
        rows_per_page: int | None = None,
        prices: Prices | None = None,
        conversation_page_size: int = 50,
    ) -> RunBrowserSurface:
        """Every run of a source (a directory, a journal, a ``nats://`` URL, as ``load`` takes it), loaded leniently
        (``load_source``); a run is read and folded when it is opened."""
        model, loader = load_source(os.fspath(url), progress=False)
        return cls(model, loader, rows_per_page, conversation_page_size, prices)

    # -- actions -------------------------------------------------------------------------------------------------

    def act(self, action: str, argument: str) -> None:
        """What the page asked. An action it does not know, or a run or column no longer listed, is let go."""
        model = self.model
        if action == "search":
            self.model = model.with_filter(argument, model.statuses)
        elif action == "status" and argument in model.status_choices:
            self.model = model.with_filter(model.text_filter, model.statuses ^ {argument})
        elif action == "columns":
            self.all_columns = not self.all_columns
        elif action == "sort" and any(column.key == argument for column in model.columns):
            self.model = model.toggle_sort(argument)
            if self.selected is not None:
                self.model = self.model.with_page(self.model.page_of(self.selected) or 0)
        elif action == "page" and argument in ("-1", "1"):
            self.model = model.with_page(min(max(0, model.page + int(argument)), model.page_count - 1))
        elif action == "open" and any(row.run == argument for row in model.rows):
            self.select(argument)
            return
        elif action == "close":
            self.select(None)
            return
        elif action == "step" and argument in ("-1", "1") and self.selected is not None:
            neighbour = model.neighbour(self.selected, int(argument))
            if neighbour is not None:
                self.select(neighbour)
            return
        elif self.conversation is None or not self.conversation.act(action, argument):
            return
        self._render()

    def select(self, run: str | None) -> None:
        """Open ``run`` in the pane above the table (``None`` closes it, and the keyboard goes back to its row)."""
        closed, self.selected = self.selected, run
        if run is None:
            self.conversation = None
            shown = closed is not None and any(row.run == closed for row in self.model.page_rows())
            self._focus = f"run:{closed}" if shown else "search"
            self._render()
            return
        page = self.model.page_of(run)
        if page is not None:
            self.model = self.model.with_page(page)
        row = next((row for row in self.model.rows if row.run == run), None)
        result = self.loader(run) if self.loader is not None else None
        facts_of = getattr(self.loader, "facts", None)
        facts = facts_of(run) if callable(facts_of) and result is not None else None
        if result is None:
            self.conversation = None
        else:
            status = row.status if row is not None else None
            conversation = ConversationModel.from_fold(
                result, page_size=self.conversation_page_size, status=status, facts=facts, prices=self.model.prices
            )
            self.conversation = ConversationPlace(conversation)
        self._focus = "close"
        self._render()

    # -- drawing -------------------------------------------------------------------------------------------------

    def html(self) -> str:
        """The whole browser as the page shows it: the chips, the opened run's pane, the pager with the search box,
        and the table. The keyboard is sent where an action asked it to go (once)."""
        model = self.model
        counts = model.status_counts()
        chips = "".join(
            button(
                f"{status} {counts.get(status, 0):,}",
                "status",
                status,
                key=f"status:{status}",
                title=f"show only {status} runs (several may be chosen)",
                classes="jt-chip",
                pressed=status in model.statuses,
            )
            for status in model.status_choices
        )
        chips += button(
            "all columns", "columns", key="columns", title="show every column", classes="jt-chip",
            pressed=self.all_columns,
        )  # fmt: skip
        order = ", newest first" if (model.sort_key, model.descending) == ("created", True) else ""
        summary = f'<span class="jt-muted">{len(model.rows):,} runs{order}</span>'
        last_page = model.page_count - 1
        page = min(model.page, last_page)
        pager = (
            '<div class="jt-pager">'
            + button("← previous", "page", "-1", key="page:-1", title="previous page", disabled=page <= 0)
            + f'<span class="jt-page-label">{esc(model.page_text())} · page {page + 1} of {model.page_count:,}</span>'
            + button("next →", "page", "1", key="page:1", title="next page", disabled=page >= last_page)
            + f'<input type="search" class="jt-field jt-search" data-jt-act="search" data-jt-key="search" '
            f'value="{esc(model.text_filter)}" placeholder="search runs, prompts, tools, messages, dates…" '
            f'aria-label="search runs"></div>'
        )
        focus, self._focus = self._focus, ""
        wanted = f' data-jt-focus="{esc(focus)}"' if focus and not focus.startswith("run:") else ""
        classes = "jt jt-browser" + (" jt-all-columns" if self.all_columns else "")
        return (
            f'<div class="{classes}"{wanted}><div class="jt-toolbar">{chips}{summary}</div>{self._pane_html()}'
            f"{pager}{table_html(model, self.selected, focus if focus.startswith('run:') else '')}</div>"
        )

    def _pane_html(self) -> str:
        run = self.selected
        if run is None:
            return ""
        previous_run, next_run = self.model.neighbour(run, -1), self.model.neighbour(run, 1)
        bar = (
            '<div class="jt-detail-bar">'
            + button("close", "close", key="close", title="close this run and go back to the list", classes="jt-close")
            + button("← previous run", "step", "-1", key="step:-1", title=previous_run or "", disabled=not previous_run)
            + button("next run →", "step", "1", key="step:1", title=next_run or "", disabled=not next_run)
            + f"<span><b>opened</b> {id_html(run, 40)}</span></div>"
        )
        if self.conversation is None:
            body = f"<p>No conversation for <code>{esc(run)}</code>: the source has no readable journal.</p>"
        else:
            body = self.conversation.html()
        return f'<div class="jt-detail">{bar}{body}</div>'

    def _render(self) -> None:
        self.widget.html = self.html()

    def _display_(self) -> Any:
        return self.widget  # marimo shows the anywidget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
