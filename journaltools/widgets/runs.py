"""RunBrowser: a table of runs you sort by clicking a column header and open by clicking a row.

``RunBrowserModel`` (``runs_model``) is pure (rows, filter, sort, paging, HTML) and opens no source. ``RunBrowser``
is the ipywidgets view over it. The view renders one page of rows at a time from a fixed pool of row widgets, so ten
thousand runs page as fast as ten: sorting or paging only changes the cells' text. Each row says why its run stopped
(the terminal's message, the deferrals it waits on, the pending calls, the first error of an ``invalid`` journal).

It fits the notebook: columns have priorities and the least needed ones step aside as the notebook narrows (CSS
container queries; "all columns" brings them back, scrolling sideways), the run id stays pinned on the left, and the
prompt (what tells runs made together apart) and the reason wrap to two lines. A click opens the run in a pane
**above** the table, and the pane's bar takes the keyboard focus, which makes the browser scroll it into view: the
opened run's header is where the reader looks, whichever row they clicked. Newest runs come first. One search box
looks through run id, prompt, caller, model, status, dates, tool names and inputs, message text and thinking (every
word must match), and the status chips count what the search leaves. The pane's **report** button writes the opened
run's report (``journaltools report``: one self-contained HTML file) next to the notebook with a download link;
**compare with…** opens ``RunDiff`` of the opened run against another run of the list.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journaltools._base.readable import shorten_middle
from journaltools.exports.facts import Prices, check_prices
from journaltools.exports.html import STATUS_TONES, STYLE, esc, id_html, status_class, themed
from journaltools.widgets.runs_model import RUN_SHOWN, Column, RunBrowserModel, RunLoader, load_source, with_costs

if TYPE_CHECKING:
    from journaltools.exports.report import RunReport
    from journaltools.stores.tasks import TaskStore


#: A report up to this size also gets a download link (a ``data:`` URL, which JupyterLab serves offline); the link
#: travels in the widget's state, so a bigger report is only written to its file.
REPORT_LINK_BYTES = 2_000_000

#: How many other runs "compare with…" offers (the search narrows the list to reach the rest).
COMPARE_CHOICES = 1_000


def report_file_name(run: str) -> str:
    """The report's file name for ``run``: ``report-<run>.html``, any character a file name should not hold made
    ``_`` (a run id is the journal's own text)."""
    return "report-" + re.sub(r"[^A-Za-z0-9._-]", "_", run)[:150] + ".html"


def report_written_html(made: RunReport) -> str:
    """Where the report went, its size, what its size bound left out, and a download link when it is small."""
    where = f"report written to <code>{esc(made.path)}</code>: {esc(made.contents())}"
    if made.path is not None and made.size <= REPORT_LINK_BYTES:
        data = base64.b64encode(made.html.encode("utf-8", "replace")).decode("ascii")
        where += (
            f' · <a class="jt-report-download" download="{esc(made.path.name)}" '
            f'href="data:text/html;base64,{data}">download it</a>'
        )
    else:
        where += " · open it from the file browser (too big for a download link)"
    return f'<div class="jt-report-note">{where}</div>'


#: The browser's keys, when the keyboard focus is inside it: Escape clicks the opened pane's close button; ArrowDown
#: and ArrowUp move between rows (each row one focus target, its run id; Enter opens it as a click does), ArrowUp
#: from the first row reaches the column headers, ArrowLeft and ArrowRight move between them (Enter sorts). The rows
#: are one tab stop, so the first row is one Tab from the search box; the arrows do the rest.
#:
#: ipywidgets 8 offers no key events and no way to add a script to a widget, and a new dependency (anywidget) for
#: these few lines would be a second front-end to install in JupyterLab, Notebook 7 and VS Code alike. So one fixed
#: handler (no journal text in it) is installed once per page by an image that cannot load (an HTML widget runs no
#: <script> but sets its HTML as given, in all three). It listens on the window, before anything else: JupyterLab's
#: own shortcuts read the arrows too (they move between notebook cells) and leave a key whose default was prevented.
KEYBOARD = (
    '<img alt="" hidden src="data:," onerror="if (!window.__jtBrowserKeys) { window.__jtBrowserKeys = true; '
    "window.addEventListener('keydown', function (event) { "
    "var target = event.target, browser = target &amp;&amp; target.closest ? target.closest('.jt-browser') : null; "
    "if (!browser || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return; "
    "if (event.key === 'Escape') { var close = browser.querySelector('.jt-detail .jt-close'); "
    "if (close &amp;&amp; close.offsetParent) { event.stopPropagation(); close.click(); } return; } "
    "var step = {ArrowDown: 1, ArrowUp: -1, ArrowRight: 1, ArrowLeft: -1}[event.key]; "
    "var cell = step ? target.closest('.jt-td, .jt-th') : null, line = cell ? cell.parentElement : null; "
    "var table = line ? line.parentElement : null; "
    "if (!table || !table.classList.contains('jt-rows') || table.closest('.jt-browser') !== browser) return; "
    "var shown = function (list) { return [].filter.call(list, function (el) { return el.offsetParent; }); }; "
    "var heads = shown(table.querySelectorAll(':scope > .jt-thead > .jt-th')), next = null; "
    "if (event.key === 'ArrowDown' || event.key === 'ArrowUp') { "
    "var lines = shown(table.children), to = lines[lines.indexOf(line) + step]; "
    "if (to) next = to.classList.contains('jt-thead') ? heads[0] : to.querySelector('.jt-col-run'); "
    "} else if (line.classList.contains('jt-thead')) { next = heads[heads.indexOf(cell) + step]; } else return; "
    'event.preventDefault(); event.stopPropagation(); if (next) next.focus(); }, true); }">'
)

#: The browser's own styles: buttons made to look and behave like the cells of a table. Column widths fit
#: their label plus the sort arrow; the container queries hide columns by priority as the notebook narrows.
BROWSER_STYLE = """<style>
.jt-browser { max-width: 100%; container-type: inline-size; container-name: jt-browser; }
.jt-browser .jt-toolbar { align-items: center; gap: 6px; flex-wrap: wrap; overflow: visible; }
.jt-browser .jt-chip.jupyter-button { height: 24px; line-height: 22px; border-radius: 12px; padding: 0 10px;
    font-size: 12px; color: var(--jt-fg); background: transparent; border: 1px solid var(--jt-border-strong);
    width: auto; margin: 0 2px; }
.jt-browser .jt-chip.jupyter-button.mod-active { background: var(--jt-surface-2); border-color: var(--jt-brand);
    box-shadow: inset 0 0 0 1px var(--jt-brand); }
.jt-browser .jt-rows { overflow-x: auto; overflow-y: visible; }
.jt-browser .jt-thead, .jt-browser .jt-tr { min-width: min-content; width: 100%; overflow: visible;
    border-bottom: 1px solid var(--jt-border); align-items: stretch; }
.jt-browser .jt-thead { background: var(--jt-surface-2); border-bottom: 1px solid var(--jt-border-strong); }
.jt-browser .jt-tr { cursor: pointer; }
.jt-browser .jt-tr:hover { background: rgba(33, 150, 243, 0.08);
    background: color-mix(in srgb, var(--jt-brand) 9%, transparent); }
.jt-browser .jt-tr.jt-selected { background: rgba(33, 150, 243, 0.16);
    background: color-mix(in srgb, var(--jt-brand) 18%, transparent); box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser .jupyter-button.jt-td, .jt-browser .jupyter-button.jt-th { background: transparent; color: var(--jt-fg);
    text-align: left; padding: 0 8px; margin: 0; height: 32px; line-height: 32px; border-radius: 0;
    box-shadow: none; font-size: 12px; min-width: 0; width: auto; outline-offset: -2px; }
.jt-browser .jupyter-button.jt-td:focus:not(:focus-visible),
.jt-browser .jupyter-button.jt-th:focus:not(:focus-visible) { outline: none; box-shadow: none; }
.jt-browser .jupyter-button.jt-th { font-weight: 700; text-overflow: clip; }
.jt-browser .jupyter-button.jt-th:hover { text-decoration: underline; }
.jt-browser .jupyter-button.jt-td.jt-col-run { font-family: var(--jt-mono); }
.jt-browser .jupyter-button.jt-num { text-align: right; font-variant-numeric: tabular-nums; }
/* The run id stays on screen when the table scrolls sideways (after sorting by a far column, say). */
.jt-browser .jupyter-button.jt-col-run { position: sticky; left: 0; z-index: 2; background: var(--jt-surface);
    box-shadow: 1px 0 0 var(--jt-border); }
.jt-browser .jt-thead .jupyter-button.jt-col-run { background: var(--jt-surface-2); }
.jt-browser .jt-tr.jt-selected .jupyter-button.jt-col-run { background: rgba(33, 150, 243, 0.3);
    background: color-mix(in srgb, var(--jt-brand) 18%, var(--jt-surface));
    box-shadow: inset 3px 0 0 var(--jt-brand), 1px 0 0 var(--jt-border); }
/* The reason and the prompt wrap to two lines rather than being cut: their start is what differs between runs. */
.jt-browser .jupyter-button.jt-td.jt-col-reason, .jt-browser .jupyter-button.jt-td.jt-col-prompt {
    white-space: normal; line-height: 15px; padding-top: 1px;
    padding-bottom: 1px; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2;
    line-clamp: 2; overflow: hidden; text-overflow: ellipsis; overflow-wrap: anywhere; align-self: center;
    height: auto; max-height: 32px; }
/* A status with a detail ("open", then "next turn in flight") takes two lines: the word never yields to it. */
.jt-browser .jupyter-button.jt-td.jt-status-detail { white-space: pre-line; line-height: 15px; padding-top: 1px;
    padding-bottom: 1px; text-overflow: clip; }
.jt-browser .jt-col-run { flex: 0 0 18.5em; }
.jt-browser .jt-col-status { flex: 0 0 11em; }
.jt-browser .jt-col-prompt { flex: 1 1 14em; }
.jt-browser .jt-col-reason { flex: 1 1 16em; }
.jt-browser .jt-col-created { flex: 0 0 11em; }
.jt-browser .jt-col-tokens { flex: 0 0 7.5em; }
.jt-browser .jt-col-cost { flex: 0 0 6.5em; }
.jt-browser .jt-col-pending_calls { flex: 0 0 7.5em; }
.jt-browser .jt-col-model { flex: 0 0 11em; }
.jt-browser .jt-col-llm_calls { flex: 0 0 9em; }
.jt-browser .jt-col-segments { flex: 0 0 8em; }
.jt-browser .jt-col-caller { flex: 0 0 9em; }
.jt-browser .jt-col-updated { flex: 0 0 11em; }
.jt-browser .jt-col-task_state { flex: 0 0 7em; }
.jt-browser .jt-col-agent { flex: 0 0 9em; }
.jt-browser .jt-col-generation { flex: 0 0 8.5em; }
/* After the cells' min-width: 0: the prompt and the reason share what the fixed columns leave and keep a readable
   width (with "all columns" the reason keeps more, instead of being squeezed to a sliver), and every row (and the
   header) is as wide as the next, so they stay aligned. */
.jt-browser .jupyter-button.jt-col-prompt { min-width: 9em; }
.jt-browser .jupyter-button.jt-col-reason { min-width: 13em; }
.jt-browser.jt-all-columns .jupyter-button.jt-col-reason { min-width: 16em; }
.jt-browser .jupyter-button:focus-visible { outline: 2px solid var(--jt-brand); outline-offset: -2px;
    box-shadow: none; }
.jt-browser .jt-tr:focus-within { box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser .jupyter-button.jt-td.jt-col-status::before { content: ""; display: inline-block; width: 8px;
    height: 8px; border-radius: 50%; margin-right: 6px; background: var(--jt-tone); }
.jt-browser .jt-report-note { font-size: 12px; margin: 2px 0 4px; overflow-wrap: anywhere; }
.jt-browser .jt-report-note a { color: var(--jt-link); }
.jt-browser .jt-pager { align-items: center; gap: 6px; overflow: visible; flex-wrap: wrap; }
.jt-browser .jt-pager .jupyter-button { width: auto; height: 24px; line-height: 24px; font-size: 12px; }
.jt-browser .jt-detail { border: 2px solid var(--jt-brand); border-radius: 4px; margin: 6px 0; padding: 4px 8px;
    overflow: visible; }
.jt-browser .jt-detail-bar { align-items: center; gap: 6px; overflow: visible; flex-wrap: wrap; }
.jt-browser .jt-detail-bar .jupyter-button { width: auto; height: 24px; line-height: 24px; font-size: 12px; }
/* Each width is the least at which the columns of that priority and above fit at their narrowest (12px cells:
   run 222, status 132, prompt 108, reason 156, created 132, tokens 90 = 840 for the first; the status is as wide
   as its second line, "next turn in flight", needs in a common sans-serif, with room to spare). */
@container jt-browser (max-width: 1583px) { .jt-browser:not(.jt-all-columns) .jt-prio-7 { display: none; } }
@container jt-browser (max-width: 1373px) { .jt-browser:not(.jt-all-columns) .jt-prio-6 { display: none; } }
@container jt-browser (max-width: 1265px) { .jt-browser:not(.jt-all-columns) .jt-prio-5 { display: none; } }
@container jt-browser (max-width: 1169px) { .jt-browser:not(.jt-all-columns) .jt-prio-4 { display: none; } }
@container jt-browser (max-width: 1061px) { .jt-browser:not(.jt-all-columns) .jt-prio-3 { display: none; } }
@container jt-browser (max-width: 929px) { .jt-browser:not(.jt-all-columns) .jt-prio-2 { display: none; } }
</style>"""


class RunBrowser:
    """The view: a search box, status chips, the opened run's pane, the table (click a header to sort, a row to
    open) and a pager. The pane sits above the table with previous/next to step through the runs in table
    order; opening a run focuses its bar, so the browser scrolls the run's header into view."""

    def __init__(
        self,
        model: RunBrowserModel,
        loader: RunLoader | None = None,
        rows_per_page: int | None = None,
        conversation_page_size: int = 50,
        prices: Prices | None = None,
        report_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        import ipywidgets as w

        if rows_per_page is not None:
            model = replace(model, page_size=max(1, rows_per_page), page=0)
        if prices is not None:
            prices = check_prices(prices)
            model = replace(model, rows=with_costs(model.rows, prices), prices=prices)
        self.model = model
        self.loader = loader
        self.conversation_page_size = conversation_page_size
        self.selected: str | None = None
        self.columns = model.columns
        self.conversation: Any = None
        self._conversation_view: Any = None
        self._shown_once = False

        self.filter_box = w.Text(
            placeholder="search runs, prompts, tools, messages, dates…",
            layout=w.Layout(width="24em"),
            continuous_update=True,
        )
        self.filter_box.observe(self._on_filter, names="value")
        self.chips = {status: w.ToggleButton(value=False) for status in model.status_choices}
        for status, chip in self.chips.items():
            chip.add_class("jt-chip")
            chip.tooltip = f"show only {status} runs (several may be chosen)"
            chip.observe(self._on_filter, names="value")
        self.all_columns = w.ToggleButton(value=False, description="all columns", tooltip="show every column")
        self.all_columns.add_class("jt-chip")
        self.all_columns.observe(self._on_all_columns, names="value")
        self.filter_box.add_class("jt-search")
        self.summary = w.HTML()
        toolbar = w.HBox([*self.chips.values(), self.all_columns, self.summary])
        toolbar.add_class("jt-toolbar")

        self.headers = [self._cell_button("jt-th", column) for column in self.columns]
        for column, button in zip(self.columns, self.headers, strict=True):
            button.on_click(lambda _button, key=column.key: self.sort_by_header(key))
            # Off the Tab order, so the first row is one Tab from the search box; ArrowUp from it reaches them.
            button.tabbable = False
        head = w.HBox(self.headers)
        head.add_class("jt-thead")

        self.row_widgets: list[Any] = []
        self.row_cells: list[list[Any]] = []
        self._row_runs: list[str | None] = []
        for index in range(model.page_size):
            cells = [self._cell_button("jt-td", column) for column in self.columns]
            for cell in cells:
                cell.on_click(lambda _button, i=index: self._on_row_click(i))
                # The rows are one tab stop (the first row's run id; Enter opens it), the arrows move between
                # them (``KEYBOARD``): a row of seven stops made the pager 163 presses from the search box, and
                # a stop per row put the first row 16 presses away.
                cell.tabbable = cell is cells[0] and index == 0
            row = w.HBox(cells)
            row.add_class("jt-tr")
            self.row_widgets.append(row)
            self.row_cells.append(cells)
            self._row_runs.append(None)

        self.previous_page = w.Button(description="← previous", tooltip="previous page")
        self.next_page = w.Button(description="next →", tooltip="next page")
        self.previous_page.on_click(lambda _button: self.go_to_page(self.model.page - 1))
        self.next_page.on_click(lambda _button: self.go_to_page(self.model.page + 1))
        self.page_label = w.Label()
        # The search box sits last on the pager's line, right above the table: the Tab after it is the first row,
        # and the pager the Shift+Tab before it.
        pager = w.HBox([self.previous_page, self.page_label, self.next_page, self.filter_box])
        pager.add_class("jt-pager")

        # The pane's bar is made once and kept: a focus message reaches a view that is already on the page
        # (one sent to a widget made in the same step could arrive before its view exists).
        self.previous_run = w.Button(description="← previous run")
        self.next_run = w.Button(description="next run →")
        self.close_button = w.Button(description="close", tooltip="close this run and go back to the list")
        self.previous_run.on_click(lambda _button: self._step(-1))
        self.next_run.on_click(lambda _button: self._step(1))
        self.close_button.on_click(lambda _button: self.select(None))
        self.close_button.add_class("jt-close")
        keys = w.HTML(KEYBOARD)
        keys.layout.display = "none"
        self.detail_title = w.HTML()
        # The opened run's report (``journaltools report``), written next to the notebook unless ``report_dir`` says
        # where, and its comparison with another run of the list (``RunDiff``), which reads both journals again.
        self.report_dir = report_dir
        self.last_report: RunReport | None = None
        self.comparison: Any = None
        self.report_button = w.Button(
            description="report", tooltip="write this run's report: one self-contained HTML file to read offline"
        )
        self.report_button.on_click(lambda _button: self.write_report())
        self.compare_button = w.Button(description="compare with…", tooltip="compare this run with another run")
        self.compare_button.on_click(lambda _button: self._toggle_compare())
        if not callable(getattr(loader, "folded", None)):
            self.compare_button.disabled = True
            self.compare_button.tooltip = "a comparison reads both journals: open the browser on a source"
        self.report_note = w.HTML()
        self.compare_choice = w.Dropdown(options=[], description="with", layout=w.Layout(width="30em"))
        self.compare_go = w.Button(description="compare", tooltip="compare the opened run (A) with this one (B)")
        self.compare_go.on_click(lambda _button: self.compare_with(self.compare_choice.value))
        self.compare_close = w.Button(description="close the comparison", layout=w.Layout(width="auto"))
        self.compare_close.on_click(lambda _button: self._close_comparison())
        self.compare_bar = w.HBox([self.compare_choice, self.compare_go])
        self.compare_bar.layout.display = "none"
        self.comparison_box = w.VBox()
        bar = w.HBox(
            [
                self.close_button,
                self.previous_run,
                self.next_run,
                self.report_button,
                self.compare_button,
                self.detail_title,
            ]
        )
        bar.add_class("jt-detail-bar")
        self.detail_body = w.VBox()
        self.detail = w.VBox([bar, self.report_note, self.compare_bar, self.comparison_box, self.detail_body])
        self.detail.add_class("jt-detail")
        self.detail.layout.display = "none"
        style = w.HTML(STYLE + BROWSER_STYLE)
        style.layout.display = "none"  # a <style> applies wherever it sits in the page
        table = w.VBox([head, *self.row_widgets])
        table.add_class("jt-rows")  # header and rows scroll sideways together when the notebook is narrow
        # The opened run's pane sits above the pager and the search, which stay next to the rows they act on.
        self.widget = w.VBox([style, toolbar, self.detail, pager, table, keys])
        self.widget.add_class("jt")
        self.widget.add_class("jt-browser")
        self._render()

    @staticmethod
    def _cell_button(kind: str, column: Column) -> Any:
        import ipywidgets as w

        button = w.Button()
        button._dom_classes = RunBrowser._cell_classes(kind, column)
        return button

    @staticmethod
    def _cell_classes(kind: str, column: Column, *extra: str) -> tuple[str, ...]:
        numeric = ("jt-num",) if column.numeric else ()
        return (kind, f"jt-col-{column.key}", f"jt-prio-{column.priority}", *numeric, *extra)

    @classmethod
    def from_source(
        cls,
        url: str | None = None,
        progress: bool | None = None,
        rows_per_page: int | None = None,
        task_store: str | os.PathLike[str] | TaskStore | None = None,
        prices: Prices | None = None,
        report_dir: str | os.PathLike[str] | None = None,
    ) -> RunBrowser:
        """Load a source's runs (a progress bar in a notebook) and browse them; no ``url`` reads the runtime's
        own directory, as ``journaltools ls`` does (``journaltools.default_source()``); ``task_store`` as for
        ``load_source``; ``prices`` (model → price per million tokens of ``input``, ``output``, ``cache_read``,
        ``cache_create``: your own table, none is bundled) adds a cost column; ``report_dir`` is where the opened
        run's **report** button writes its file (default: the notebook's own directory)."""
        if url is None:
            from journaltools.sources.registry import default_source

            url = str(default_source())
        model, loader = load_source(url, progress=progress, task_store=task_store)
        return cls(model, loader, rows_per_page=rows_per_page, prices=prices, report_dir=report_dir)

    @classmethod
    def from_tables(cls, tables: Any, loader: RunLoader | None = None, **options: Any) -> RunBrowser:
        return cls(RunBrowserModel.from_tables(tables), loader, **options)

    # -- events ------------------------------------------------------------------------------------

    def _on_filter(self, _change: object) -> None:
        chosen = [status for status, chip in self.chips.items() if chip.value]
        self.model = self.model.with_filter(self.filter_box.value, chosen)
        self._render()

    def _on_all_columns(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.widget.add_class("jt-all-columns")
        else:
            self.widget.remove_class("jt-all-columns")

    def _on_row_click(self, index: int) -> None:
        run = self._row_runs[index]
        if run is not None:
            self.select(run)

    def _step(self, step: int) -> None:
        if self.selected is not None:
            target = self.model.neighbour(self.selected, step)
            if target is not None:
                self.select(target)

    def sort_by_header(self, key: str) -> None:
        """What a click on a column header does: sort by it, or flip the direction."""
        self.model = self.model.toggle_sort(key)
        if self.selected is not None:
            self.model = self.model.with_page(self.model.page_of(self.selected) or 0)
        self._render()

    def go_to_page(self, page: int) -> None:
        self.model = self.model.with_page(page)
        self._render()

    # -- rendering ---------------------------------------------------------------------------------

    def _render(self) -> None:
        model = self.model
        for column, button in zip(self.columns, self.headers, strict=True):
            button.description = model.header_label(column)
            button.tooltip = f"sort by {column.label}" + (f" ({column.tooltip})" if column.tooltip else "")
        counts = model.status_counts()
        for status, chip in self.chips.items():
            chip.description = f"{status} {counts.get(status, 0):,}"
        rows = model.page_rows()
        for index, (row_widget, cells) in enumerate(zip(self.row_widgets, self.row_cells, strict=True)):
            row = rows[index] if index < len(rows) else None
            self._row_runs[index] = row.run if row is not None else None
            row_widget.layout.display = "" if row is not None else "none"
            if row is None:
                continue
            row_widget._dom_classes = ("jt-tr", "jt-selected") if row.run == self.selected else ("jt-tr",)
            for column, cell in zip(self.columns, cells, strict=True):
                cell.description = row.shown(column.key)
                cell.tooltip = row.tooltip(column.key)
                if column.key == "status":
                    tone = STATUS_TONES.get(row.status, "muted")
                    detail = ("jt-status-detail",) if row.status_detail else ()
                    cell._dom_classes = self._cell_classes(
                        "jt-td", column, f"jt-tone-{tone}", f"jt-status-{status_class(row.status)}", *detail
                    )
        self.page_label.value = f"{model.page_text()} · page {min(model.page, model.page_count - 1) + 1} of " + (
            f"{model.page_count:,}"
        )
        self.previous_page.disabled = model.page <= 0
        self.next_page.disabled = model.page >= model.page_count - 1
        order = "newest first" if (model.sort_key, model.descending) == ("created", True) else ""
        self.summary.value = f'<span class="jt-muted">{len(model.rows):,} runs{", " + order if order else ""}</span>'

    def select(self, run: str | None) -> None:
        """Open ``run`` in the pane above the table (``None`` closes it); its row is marked and its page shown,
        and the pane's bar takes the focus so the browser brings the run's header into view."""
        from journaltools.exports.conversation import ConversationModel
        from journaltools.widgets.conversation import ConversationView

        closed, self.selected = self.selected, run
        self.report_note.value = ""
        self._close_comparison()
        self.compare_bar.layout.display = "none"
        if run is None:
            self.detail_body.children = ()
            self.detail.layout.display = "none"
            self.conversation = None
            self._render()
            # The keyboard goes back to the row of the run just closed (or the search box), not to the page top.
            if closed in self._row_runs:
                self.row_cells[self._row_runs.index(closed)][0].focus()
            else:
                self.filter_box.focus()
            return
        page = self.model.page_of(run)
        if page is not None and page != self.model.page:
            self.model = self.model.with_page(page)
        self._render()
        row = next((row for row in self.model.rows if row.run == run), None)
        status = row.status if row is not None else None
        result = self.loader(run) if self.loader is not None else None
        facts_of = getattr(self.loader, "facts", None)
        facts = facts_of(run) if callable(facts_of) and result is not None else None
        if result is None:
            import ipywidgets as w

            body: Any = w.HTML(
                themed(f"<p>No conversation for <code>{esc(run)}</code>: the source has no readable journal.</p>")
            )
        else:
            model = ConversationModel.from_fold(
                result, page_size=self.conversation_page_size, status=status, facts=facts, prices=self.model.prices
            )
            # One view, reused: its widgets are already on the page when the next run opens, so the focus
            # message below reaches them (a new widget's view may not exist yet when it arrives).
            if self._conversation_view is None:
                self._conversation_view = ConversationView(model)
            else:
                self._conversation_view.show_model(model)
            body = self._conversation_view.widget
        self.conversation = self._conversation_view if result is not None else None
        previous_run, next_run = self.model.neighbour(run, -1), self.model.neighbour(run, 1)
        self.previous_run.disabled, self.previous_run.tooltip = previous_run is None, previous_run or ""
        self.next_run.disabled, self.next_run.tooltip = next_run is None, next_run or ""
        # A long id is shortened here too, with its copy button (the header below shows it whole).
        self.detail_title.value = themed(f"<b>opened</b> {id_html(run, 40)}")
        self.detail_body.children = (body,)
        self.detail.layout.display = ""
        if self.conversation is not None and self._shown_once:
            self.conversation.focus()
        else:
            self.close_button.focus()
        self._shown_once = self.conversation is not None

    # -- the opened run's report and comparison ------------------------------------------------------------------

    def write_report(self) -> Path | None:
        """Write the opened run's report (``journaltools report``: one self-contained HTML file) into ``report_dir``,
        by default the notebook's own directory, and say where, with a download link when it is small. None when
        no run is open or it could not be written (said in the pane, in one line)."""
        from journaltools.errors import JournalError
        from journaltools.exports.report import render_report, report_of_read, write_report

        run = self.selected
        if run is None:
            return None
        read_of = getattr(self.loader, "read", None)
        try:
            if callable(read_of):
                # The journal as stored, with its records' times: the report the command line writes.
                made = report_of_read(read_of(run), source=self._source_url(), prices=self.model.prices)
            else:
                result = self.loader(run) if self.loader is not None else None
                if result is None:
                    self.report_note.value = themed(f"<p>No journal to report for <code>{esc(run)}</code>.</p>")
                    return None
                facts_of = getattr(self.loader, "facts", None)
                facts = facts_of(run) if callable(facts_of) else None
                made = render_report(result, facts, prices=self.model.prices)
            folder = Path(self.report_dir) if self.report_dir is not None else Path.cwd()
            written = write_report(made, folder / report_file_name(run))
        except (JournalError, OSError) as error:
            self.report_note.value = themed(f'<div class="jt-report-note">report not written: {esc(error)}</div>')
            return None
        self.last_report = written
        self.report_note.value = themed(report_written_html(written))
        return written.path

    def _source_url(self) -> str:
        """The URL of the source the loader reads (``""`` for a browser of folds alone)."""
        return str(getattr(getattr(self.loader, "backend", None), "url", ""))

    def _toggle_compare(self) -> None:
        showing = self.compare_bar.layout.display != "none"
        self.compare_bar.layout.display = "none" if showing else ""
        if showing or self.selected is None:
            return
        others = [row for row in self.model.visible() if row.run != self.selected][:COMPARE_CHOICES]
        self.compare_choice.options = [
            (f"{shorten_middle(row.run, RUN_SHOWN)} · {row.status}", row.run) for row in others
        ]
        self.compare_choice.value = others[0].run if others else None

    def compare_with(self, other: str | None) -> Any:
        """Open the comparison (``RunDiff``) of the opened run (A) with ``other`` (B) under the pane's bar, both read
        again from the source; the comparison, or None when it cannot be made (said in the pane)."""
        import ipywidgets as w

        from journaltools.analyses.rundiff import diff_sides, side_of
        from journaltools.errors import JournalError
        from journaltools.widgets.rundiff import RunDiff, RunDiffModel

        run = self.selected
        folded_of = getattr(self.loader, "folded", None)
        if run is None or other is None or not callable(folded_of):
            return None
        source = self._source_url()
        try:
            comparison = diff_sides(side_of(folded_of(run), source), side_of(folded_of(other), source))
        except JournalError as error:
            self.comparison_box.children = (w.HTML(themed(f"<p>No comparison: {esc(error)}</p>")),)
            return None
        self.comparison = RunDiff(RunDiffModel(comparison))
        title = w.HTML(themed(f"<b>A</b> {id_html(run)} compared with <b>B</b> {id_html(other)}"))
        self.comparison_box.children = (w.HBox([title, self.compare_close]), self.comparison.widget)
        return self.comparison

    def _close_comparison(self) -> None:
        self.comparison = None
        self.comparison_box.children = ()

    def close(self) -> None:
        """Close the source the loader reads from, when the browser opened it."""
        closer = getattr(self.loader, "close", None)
        if callable(closer):
            closer()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
