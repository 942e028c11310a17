"""RunBrowser: a table of runs you sort by clicking a column header and open by clicking a row.

``RunBrowserModel`` (``runs_model``) is pure (rows, filter, sort, paging, HTML) and opens no source. ``RunBrowser``
is the ipywidgets view over it. The view draws one page of rows at a time as one piece of HTML (``runs_page``), so
ten thousand runs page as fast as ten, and a page is one widget model however many cells it has. Each row says why
its run stopped (the terminal's message, the deferrals it waits on, the pending calls, the first error of an
``invalid`` journal).

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
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journaltools._base.readable import shorten_middle
from journaltools.exports.facts import Prices
from journaltools.exports.html import STYLE, esc, id_html, themed
from journaltools.widgets.runs_live import BrowserLive
from journaltools.widgets.runs_model import RunBrowserModel, RunLoader, with_costs
from journaltools.widgets.runs_page import ACTIONS, BROWSER_STYLE, SCRIPT, arranged_model, table_html
from journaltools.widgets.runs_parts import Handover, after_this_cell, load_in_parts
from journaltools.widgets.runs_row import RUN_SHOWN, RunRow

if TYPE_CHECKING:
    from journaltools.analyses.cohorts import ChosenRuns, CohortChoice
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
        follow: bool = True,
    ) -> None:
        import ipywidgets as w

        model = arranged_model(model, rows_per_page, prices)
        self.model = model
        self.loader = loader
        self.conversation_page_size = conversation_page_size
        self.selected: str | None = None
        self.columns = model.columns
        self.conversation: Any = None
        self._conversation_view: Any = None
        self._shown_once = False
        # Rows may arrive on a loading thread (``from_source``) while a click changes the order: one at a time.
        self._lock = threading.RLock()
        #: Set once every run of the source is in the model (at once, unless ``from_source`` loads in parts).
        self.loaded = threading.Event()
        self.loaded.set()
        self._total: int | None = None
        self._stopped = ""
        #: The thread that folds the rest of a source, until it starts (after the cell that made the browser).
        self._taker: threading.Thread | None = None
        self._handover: Handover | None = None
        #: The opened run's pane and the rows of open runs, followed as they are written (``widgets.runs_live``).
        self.live = BrowserLive(self, getattr(loader, "backend", None), follow=follow)

        self.filter_box = w.Text(
            placeholder="search runs, prompts, tools, messages, dates…",
            layout=w.Layout(width="24em"),
            continuous_update=True,
        )
        self.filter_box.observe(self._on_filter, names="value")
        self.chips = {status: w.ToggleButton(value=False) for status in model.status_choices}
        for status, chip in self.chips.items():
            self._dress_chip(status, chip)
        self.all_columns = w.ToggleButton(value=False, description="all columns", tooltip="show every column")
        self.all_columns.add_class("jt-chip")
        self.all_columns.observe(self._on_all_columns, names="value")
        self.filter_box.add_class("jt-search")
        self.summary = w.HTML()
        toolbar = self.toolbar = w.HBox([*self.chips.values(), self.all_columns, self.summary])
        toolbar.add_class("jt-toolbar")

        # The table is one HTML widget (``runs_page.table_html``); a click on a cell comes back through ``actions``.
        self.table = w.HTML(layout=w.Layout(width="100%"))
        self.table.add_class("jt-table-view")
        self.actions = w.Text(continuous_update=True)
        self.actions.add_class(ACTIONS)
        self.actions.layout.display = "none"
        self.actions.observe(self._on_action, names="value")
        #: The cell the keyboard goes to once the table is drawn next (the row of a run just closed), or "".
        self._focus = ""

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
        keys = w.HTML(SCRIPT)
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
        # The opened run's pane sits above the pager and the search, which stay next to the rows they act on.
        #: Two cohorts of this source compared (``compare_cohorts``), under the toolbar until closed.
        self.cohorts_box = w.VBox()
        self.cohorts: Any = None
        from journaltools.widgets.cohorts import CohortPicker

        self.picker = CohortPicker(self._listed, self.compare_cohorts)
        parts = [style, toolbar, self.picker.widget, self.cohorts_box, self.detail, pager, self.table]
        self.widget = w.VBox([*parts, self.actions, keys])
        self.widget.add_class("jt")
        self.widget.add_class("jt-browser")
        self._render()

    def _dress_chip(self, status: str, chip: Any) -> None:
        chip.add_class("jt-chip")
        chip.tooltip = f"show only {status} runs (several may be chosen)"
        chip.observe(self._on_filter, names="value")

    def add_rows(self, rows: list[RunRow]) -> None:
        """Add runs that arrived after the browser first showed (a chip for each new status); the filter, the
        order, the page and the opened run stay as they are."""
        with self._lock:
            if self.model.prices is not None:
                rows = with_costs(rows, self.model.prices)
            self.model = replace(self.model, rows=[*self.model.rows, *rows])
            self._chips_for_new_statuses()
            self._render()

    def update_rows(self, rows: list[RunRow]) -> None:
        """Put ``rows`` in place of the rows of the same runs (runs followed as they are written: ``widgets.live``);
        the filter, the order, the page and the opened run stay as they are."""
        with self._lock:
            fresh = {row.run: row for row in with_costs(rows, self.model.prices)}
            self.model = replace(self.model, rows=[fresh.get(row.run, row) for row in self.model.rows])
            self._chips_for_new_statuses()
            self._render()

    def row_of(self, run: str) -> RunRow | None:
        with self._lock:
            return next((row for row in self.model.rows if row.run == run), None)

    def open_rows(self, most: int) -> list[RunRow]:
        """The rows of open runs, the newest first, at most ``most``."""
        with self._lock:
            rows = sorted((row for row in self.model.rows if row.status == "open"), key=lambda r: r.run, reverse=True)
        return rows[:most]

    def _chips_for_new_statuses(self) -> None:
        import ipywidgets as w

        new = [status for status in self.model.status_choices if status not in self.chips]
        for status in new:
            self.chips[status] = w.ToggleButton(value=False)
            self._dress_chip(status, self.chips[status])
        if new:  # in the model's order, as the chips a whole load makes
            self.chips = {status: self.chips[status] for status in self.model.status_choices}
            self.toolbar.children = [*self.chips.values(), self.all_columns, self.summary]

    def take_rows(self, parts: Iterator[list[RunRow]], total: int) -> None:
        """Add each batch of ``parts`` as it is folded (on a thread; shown on the kernel's, ``runs_parts.Handover``),
        saying how many of ``total`` runs are in; ``loaded`` is set when the last is (or when loading stops on an
        error, which the summary then says)."""
        with self._lock:
            self.loaded.clear()
            self._total = total
            self._render()
        self._handover = handover = Handover(self.add_rows, self._finish_loading)

        def take() -> None:
            try:
                for rows in parts:
                    handover.put(rows)
            except Exception as error:  # a source gone mid-load: the rows so far stay, and say what stopped them
                handover.end(str(error) or type(error).__name__)
            else:
                handover.end()

        self._taker = threading.Thread(target=take, name="journaltools-run-browser-rows", daemon=True)
        after_this_cell(self._start_taking)

    def _finish_loading(self, stopped: str) -> None:
        with self._lock:
            self._stopped = stopped
            self.loaded.set()
            self._render()

    def _start_taking(self) -> None:
        with self._lock:
            taker, self._taker = self._taker, None
        if taker is not None:
            taker.start()

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Wait until every run of the source is in (the rest start folding now if they were to wait for the end
        of the cell); False when ``timeout`` passed first."""
        self._start_taking()
        handover = self._handover
        if handover is not None and handover.on_loop_thread():  # no callback runs while this thread waits
            return handover.take(until_finished=timeout if timeout is not None else 1e9)
        return self.loaded.wait(timeout)

    @classmethod
    def from_source(
        cls,
        url: str | None = None,
        progress: bool | None = None,
        rows_per_page: int | None = None,
        task_store: str | os.PathLike[str] | TaskStore | None = None,
        prices: Prices | None = None,
        report_dir: str | os.PathLike[str] | None = None,
        follow: bool = True,
    ) -> RunBrowser:
        """Load a source's runs (a progress bar in a notebook) and browse them; no ``url`` reads the runtime's
        own directory, as ``journaltools ls`` does (``journaltools.default_source()``); ``task_store`` as for
        ``load_source``; ``prices`` (model → price per million tokens of ``input``, ``output``, ``cache_read``,
        ``cache_create``: your own table, none is bundled) adds a cost column; ``report_dir`` is where the opened
        run's **report** button writes its file (default: the notebook's own directory).

        The newest runs show at once; the rest are folded on a thread and join the table batch by batch (the summary
        says how many are in; ``loaded`` is set when all are). ``progress`` is kept for callers of old: the summary
        is the progress now. ``follow``: the opened run's pane follows an open run as it is written, and the rows
        of open runs change as their journals do (``widgets.runs_live``)."""
        if url is None:
            from journaltools.sources.registry import default_source

            url = str(default_source())
        parts = load_in_parts(url, task_store=task_store)
        browser = cls(
            parts.first, parts.loader, rows_per_page=rows_per_page, prices=prices, report_dir=report_dir, follow=follow
        )
        browser.take_rows(parts.rest, parts.total)
        browser.live.start_rows()
        return browser

    @classmethod
    def from_tables(cls, tables: Any, loader: RunLoader | None = None, **options: Any) -> RunBrowser:
        return cls(RunBrowserModel.from_tables(tables), loader, **options)

    # -- events ------------------------------------------------------------------------------------

    def _on_filter(self, _change: object) -> None:
        with self._lock:
            chosen = [status for status, chip in self.chips.items() if chip.value]
            self.model = self.model.with_filter(self.filter_box.value, chosen)
            self._render()

    def _on_all_columns(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.widget.add_class("jt-all-columns")
        else:
            self.widget.remove_class("jt-all-columns")

    def _on_action(self, change: dict[str, Any]) -> None:
        """A click on the table (``runs_page.SCRIPT``): ``<nonce> <action> <argument>``, the nonce so that the same
        click twice is two changes. Anything else, or a run no longer listed, is let go."""
        _nonce, _, rest = str(change["new"]).partition(" ")
        action, _, argument = rest.partition(" ")
        self.act(action, argument)

    def act(self, action: str, argument: str) -> None:
        """What a click on the table asks: ``sort`` by a column key, or ``open`` a run."""
        if action == "sort" and any(column.key == argument for column in self.columns):
            self.sort_by_header(argument)
        elif action == "open" and self.row_of(argument) is not None:
            self.select(argument)

    def _step(self, step: int) -> None:
        if self.selected is not None:
            target = self.model.neighbour(self.selected, step)
            if target is not None:
                self.select(target)

    def sort_by_header(self, key: str) -> None:
        """What a click on a column header does: sort by it, or flip the direction."""
        with self._lock:
            self.model = self.model.toggle_sort(key)
            if self.selected is not None:
                self.model = self.model.with_page(self.model.page_of(self.selected) or 0)
            self._render()

    def go_to_page(self, page: int) -> None:
        with self._lock:
            self.model = self.model.with_page(page)
            self._render()

    # -- rendering ---------------------------------------------------------------------------------

    def _render(self) -> None:
        model = self.model
        counts = model.status_counts()
        for status, chip in self.chips.items():
            chip.description = f"{status} {counts.get(status, 0):,}"
        focus, self._focus = self._focus, ""
        self.table.value = table_html(model, self.selected, focus)
        self.page_label.value = f"{model.page_text()} · page {min(model.page, model.page_count - 1) + 1} of " + (
            f"{model.page_count:,}"
        )
        self.previous_page.disabled = model.page <= 0
        self.next_page.disabled = model.page >= model.page_count - 1
        order = "newest first" if (model.sort_key, model.descending) == ("created", True) else ""
        loading = f" of {self._total:,} loaded so far" if not self.loaded.is_set() and self._total else ""
        stopped = f"; loading stopped: {self._stopped}" if self._stopped else ""
        self.summary.value = (
            f'<span class="jt-muted">{len(model.rows):,} runs{loading}{", " + order if order else ""}'
            f"{esc(stopped)}</span>"
        )

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
            self.live.opened(None, None)
            self.detail_body.children = ()
            self.detail.layout.display = "none"
            self.conversation = None
            # The keyboard goes back to the row of the run just closed (or the search box), not to the page top.
            if closed is not None and any(row.run == closed for row in self.model.page_rows()):
                self._focus = f"run:{closed}"
            else:
                self.filter_box.focus()
            self._render()
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
        self.live.opened(run, self.conversation)
        previous_run, next_run = self.model.neighbour(run, -1), self.model.neighbour(run, 1)
        self.previous_run.disabled, self.previous_run.tooltip = previous_run is None, previous_run or ""
        self.next_run.disabled, self.next_run.tooltip = next_run is None, next_run or ""
        # A long id is shortened here too, with its copy button (the header below shows it whole).
        self.detail_title.value = themed(f"<b>opened</b> {id_html(run, 40)}{self._liveness_html(run, facts)}")
        self.detail_body.children = (body,)
        self.detail.layout.display = ""
        if self.conversation is not None and self._shown_once:
            self.conversation.focus()
        else:
            self.close_button.focus()
        self._shown_once = self.conversation is not None

    def _liveness_html(self, run: str, facts: Any) -> str:
        """Whether a process holds the run's lock now (asked as it opens, never by touching the lock) and how long
        the run has been silent, as ``show`` says them; nothing for a source without lock files (a stream)."""
        from journaltools.exports.facts import duration_text
        from journaltools.sources.liveness import SourceLocks, liveness_text, silent_for

        backend = getattr(self.loader, "backend", None)
        if backend is None:
            return ""
        locks = SourceLocks.of(backend)
        if locks.root is None:
            return ""
        heard = facts.last_heard() if facts is not None else None
        writer = locks.writer(run)
        said = liveness_text(writer, silent_for(heard[1]) if heard is not None else None, duration_text)
        return f' <span class="jt-muted jt-writer" data-writer="{esc(writer)}">· {esc(said)}</span>'

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

    def _listed(self) -> ChosenRuns:
        from journaltools.analyses.cohorts import ChosenRuns
        from journaltools.widgets.cohorts import chosen_label

        with self._lock:
            runs = frozenset(row.run for row in self.model.visible())
            return ChosenRuns(chosen_label(self.model.text_filter, self.model.statuses), runs)

    def compare_cohorts(self, a: CohortChoice, b: CohortChoice) -> Any:
        """Compare the runs of this browser's source that ``a`` keeps with those ``b`` keeps (filter expressions as
        the search box and ``ls --where`` take them, or runs chosen with "A: these runs"), shown under the toolbar
        (``widgets.cohorts``); None when there is no source to load or an expression is refused (said there)."""
        from journaltools.widgets.cohorts import cohorts_shown

        self.cohorts, children = cohorts_shown(getattr(self.loader, "backend", None), a, b, self.close_cohorts)
        self.cohorts_box.children = children
        return self.cohorts

    def close_cohorts(self) -> None:
        self.cohorts = None
        self.cohorts_box.children = ()
        self.picker.clear()

    def _close_comparison(self) -> None:
        self.comparison = None
        self.comparison_box.children = ()

    def close(self) -> None:
        """Stop following, and close the source the loader reads from when the browser opened it."""
        self.live.close()
        closer = getattr(self.loader, "close", None)
        if callable(closer):
            closer()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
