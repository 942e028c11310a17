"""What the run browser puts on the page: its table as one piece of HTML, its stylesheet and its one script.

The table of a page of runs is one HTML widget, not a button per cell: a page of 25 rows was about 650 widget
models, whose messages (a few thousand on the first render) overflowed the kernel's output channel on a busy
machine, and JupyterLab then drew "model not found" in place of the browser, or nothing. Now a page is one model
and one message. A click (or Enter) on a cell is sent back to Python through one hidden text box (``ACTIONS``):
the script writes ``<nonce> <action> <argument>`` into it, the box's own front end sends the value, and
``RunBrowser`` acts on it. Every host that runs ipywidgets (JupyterLab, Notebook 7, VS Code, Colab) and a page of
embedded widgets render it alike.
"""

from __future__ import annotations

from dataclasses import replace

from journaltools.exports.facts import Prices, check_prices
from journaltools.exports.html import STATUS_TONES, esc, status_class
from journaltools.widgets.runs_model import RunBrowserModel, with_costs
from journaltools.widgets.runs_row import Column

#: The class of the hidden text box a click's action travels through (``RunBrowser.actions``).
ACTIONS = "jt-actions"

#: What a cell's button does when clicked or given Enter, and what it acts on (a column key, a run id).
ACT, ARG, KEY = "data-jt-act", "data-jt-arg", "data-jt-key"


def arranged_model(model: RunBrowserModel, rows_per_page: int | None, prices: Prices | None) -> RunBrowserModel:
    """``model`` as a view of it starts: ``rows_per_page`` a page (its first shown), and with ``prices`` checked and
    a cost on each row. Both front ends (``runs.RunBrowser``, ``runs_surface.RunBrowserSurface``) start here."""
    if rows_per_page is not None:
        model = replace(model, page_size=max(1, rows_per_page), page=0)
    if prices is not None:
        prices = check_prices(prices)
        model = replace(model, rows=with_costs(model.rows, prices), prices=prices)
    return model


def cell_classes(kind: str, column: Column, *extra: str) -> str:
    numeric = ("jt-num",) if column.numeric else ()
    return " ".join((kind, f"jt-col-{column.key}", f"jt-prio-{column.priority}", *numeric, *extra))


def table_html(model: RunBrowserModel, selected: str | None = None, focus: str = "") -> str:
    """A page of ``model``'s runs as the browser shows it: a header line of sort buttons, then a line per run whose
    cells are buttons that open it. Every text is the journal's, escaped; ``focus`` names the cell (its ``KEY``) the
    keyboard is sent to once the page is drawn (the row of a run just closed), else the cell that had it keeps it.
    The rows are one tab stop (the first row's run id); the arrows move between rows and headers (``SCRIPT``)."""
    columns = model.columns
    head = []
    for column in columns:
        tip = f"sort by {column.label}" + (f" ({column.tooltip})" if column.tooltip else "")
        head.append(
            f'<button type="button" class="{cell_classes("jt-th", column)}" {ACT}="sort" {ARG}="{esc(column.key)}" '
            f'{KEY}="th:{esc(column.key)}" tabindex="-1" title="{esc(tip)}">{esc(model.header_label(column))}</button>'
        )
    lines = [f'<div class="jt-thead" role="row">{"".join(head)}</div>']
    for index, row in enumerate(model.page_rows()):
        cells = []
        for column in columns:
            extra: tuple[str, ...] = ()
            if column.key == "status":
                tone = STATUS_TONES.get(row.status, "muted")
                detail = ("jt-status-detail",) if row.status_detail else ()
                extra = (f"jt-tone-{tone}", f"jt-status-{status_class(row.status)}", *detail)
            stop = "0" if index == 0 and column is columns[0] else "-1"
            cells.append(
                f'<button type="button" class="{cell_classes("jt-td", column, *extra)}" {ACT}="open" '
                f'{ARG}="{esc(row.run)}" {KEY}="{esc(column.key)}:{esc(row.run)}" tabindex="{stop}" '
                f'title="{esc(row.tooltip(column.key))}">{esc(row.shown(column.key))}</button>'
            )
        marker = " jt-selected" if row.run == selected else ""
        lines.append(f'<div class="jt-tr{marker}" role="row" data-run="{esc(row.run)}">{"".join(cells)}</div>')
    wanted = f' data-jt-focus="{esc(focus)}"' if focus else ""
    return f'<div class="jt-rows" role="grid"{wanted}>{"".join(lines)}</div>{_DRAWN}'


#: Run each time the table is drawn (an image that cannot load; an HTML widget runs no <script>): keeps the table's
#: sideways scroll, and gives the keyboard back to the cell that had it before the page was redrawn (or to the one
#: the table asks for). Fixed text: no journal content is ever in it.
_DRAWN = (
    '<img alt="" hidden src="data:," onerror="var b = this.closest(\'.jt-browser\'), '
    "t = b ? b.querySelector('.jt-rows') : null; if (!t) return; "
    "if (b.__jtScroll) t.scrollLeft = b.__jtScroll; "
    "var want = t.getAttribute('data-jt-focus'), a = document.activeElement; "
    "var lost = !a || a === document.body || !document.contains(a); "
    "var key = want || (lost ? b.__jtFocus : ''); if (!key) return; "
    "var el = [].find.call(t.querySelectorAll('[data-jt-key]'), function (e) { "
    "return e.getAttribute('data-jt-key') === key; }); if (el) el.focus({preventScroll: !want});\">"
)

#: The browser's script, installed once per page by an image that cannot load (an HTML widget sets its HTML as
#: given in every host, and runs no <script>). On the window, before anything else (JupyterLab's own shortcuts read
#: the arrows too, to move between cells, and leave a key whose default was prevented):
#:
#: - a click on a cell (or Enter on it, which the button turns into a click) writes its action into the browser's
#:   hidden text box, whose front end sends it to Python;
#: - Escape clicks the opened pane's close button; ArrowDown and ArrowUp move between rows (each row one focus
#:   target, its run id), ArrowUp from the first row reaches the headers, ArrowLeft and ArrowRight move between
#:   them;
#: - which cell has the focus, and how far the table is scrolled sideways, is noted for the next draw.
SCRIPT = (
    '<img alt="" hidden src="data:," onerror="if (!window.__jtBrowserKeys) { window.__jtBrowserKeys = true; '
    "var within = function (el) { return el &amp;&amp; el.closest ? el.closest('.jt-browser') : null; }; "
    "window.addEventListener('click', function (event) { "
    "var cell = event.target &amp;&amp; event.target.closest ? event.target.closest('.jt-rows [data-jt-act]') : null; "
    "var browser = within(cell); if (!browser) return; "
    f"var box = browser.querySelector('.{ACTIONS} input'); if (!box) return; "
    "browser.__jtFocus = cell.getAttribute('data-jt-key'); "
    "browser.__jtScroll = cell.closest('.jt-rows').scrollLeft; "
    "box.value = Date.now() + '-' + Math.random() + ' ' + cell.getAttribute('data-jt-act') + ' ' "
    "+ cell.getAttribute('data-jt-arg'); "
    "box.dispatchEvent(new Event('input', {bubbles: true})); }, true); "
    "window.addEventListener('focusin', function (event) { var browser = within(event.target); "
    "var cell = browser &amp;&amp; event.target.closest('.jt-rows [data-jt-key]'); "
    "if (browser) browser.__jtFocus = cell ? cell.getAttribute('data-jt-key') : ''; }, true); "
    "window.addEventListener('pointerdown', function (event) { var browser = within(event.target); "
    "[].forEach.call(document.querySelectorAll('.jt-browser'), function (b) { if (b !== browser) b.__jtFocus = ''; });"
    " }, true); "
    "window.addEventListener('scroll', function (event) { var t = event.target; "
    "if (t &amp;&amp; t.classList &amp;&amp; t.classList.contains('jt-rows')) { var b = within(t); "
    "if (b) b.__jtScroll = t.scrollLeft; } }, true); "
    "window.addEventListener('keydown', function (event) { "
    "var target = event.target, browser = within(target); "
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

#: The browser's own styles: the table's buttons made to look like the cells of a table. Column widths fit
#: their label plus the sort arrow; the container queries hide columns by priority as the notebook narrows.
BROWSER_STYLE = """<style>
.jt-browser { max-width: 100%; container-type: inline-size; container-name: jt-browser; }
.jt-browser .jt-toolbar { align-items: center; gap: 6px; flex-wrap: wrap; overflow: visible; }
.jt-browser .jt-chip.jupyter-button { height: 24px; line-height: 22px; border-radius: 12px; padding: 0 10px;
    font-size: 12px; color: var(--jt-fg); background: transparent; border: 1px solid var(--jt-border-strong);
    width: auto; margin: 0 2px; }
.jt-browser .jt-chip.jupyter-button.mod-active { background: var(--jt-surface-2); border-color: var(--jt-brand);
    box-shadow: inset 0 0 0 1px var(--jt-brand); }
/* The cohort picker wraps as the toolbar does, its buttons never shrunk to an ellipsis, its note on their line. */
.jt-browser .jt-cohort-picker { align-items: center; gap: 6px; flex-wrap: wrap; overflow: visible; }
.jt-browser .jt-cohort-picker .jupyter-button { flex: none; }
.jt-browser .jt-cohort-picker .widget-html { margin: 0; line-height: 24px; }
.jt-browser .jt-cohort-picker .widget-html-content { line-height: 20px; }
.jt-browser .jt-cohort-close.jupyter-button { width: auto; flex: none; }
/* Each table of a comparison scrolls sideways on its own where the notebook is narrow. */
.jt-cohort-diff .jt-cohort-scroll { overflow-x: auto; max-width: 100%; }
.jt-browser .jt-rows { overflow-x: auto; overflow-y: visible; line-height: normal; }
/* The table's widget is as wide as the browser, never its rows' width: the rows scroll sideways inside it. */
.jt-browser .jt-table-view { width: 100%; max-width: 100%; min-width: 0; margin: 0; }
.jt-browser .jt-table-view > .widget-html-content { min-width: 0; max-width: 100%; }
.jt-browser .jt-thead, .jt-browser .jt-tr { display: flex; min-width: min-content; width: 100%; overflow: visible;
    border-bottom: 1px solid var(--jt-border); align-items: stretch; }
.jt-browser .jt-thead { background: var(--jt-surface-2); border-bottom: 1px solid var(--jt-border-strong); }
.jt-browser .jt-tr { cursor: pointer; }
.jt-browser .jt-tr:hover { background: rgba(33, 150, 243, 0.08);
    background: color-mix(in srgb, var(--jt-brand) 9%, transparent); }
.jt-browser .jt-tr.jt-selected { background: rgba(33, 150, 243, 0.16);
    background: color-mix(in srgb, var(--jt-brand) 18%, transparent); box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser button.jt-td, .jt-browser button.jt-th { background: transparent; color: var(--jt-fg);
    text-align: left; padding: 0 8px; margin: 0; height: 32px; line-height: 32px; border-radius: 0;
    box-shadow: none; font-size: 12px; min-width: 0; width: auto; outline-offset: -2px; border: 0;
    font-family: var(--jp-ui-font-family, system-ui, sans-serif); white-space: nowrap; overflow: hidden;
    text-overflow: ellipsis; cursor: pointer; display: block; box-sizing: border-box; }
.jt-browser button.jt-td:focus:not(:focus-visible),
.jt-browser button.jt-th:focus:not(:focus-visible) { outline: none; box-shadow: none; }
.jt-browser button.jt-th { font-weight: 700; text-overflow: clip; }
.jt-browser button.jt-th:hover { text-decoration: underline; }
.jt-browser button.jt-td.jt-col-run { font-family: var(--jt-mono); }
.jt-browser button.jt-num { text-align: right; font-variant-numeric: tabular-nums; }
/* The run id stays on screen when the table scrolls sideways (after sorting by a far column, say). */
.jt-browser button.jt-col-run { position: sticky; left: 0; z-index: 2; background: var(--jt-surface);
    box-shadow: 1px 0 0 var(--jt-border); }
.jt-browser .jt-thead button.jt-col-run { background: var(--jt-surface-2); }
.jt-browser .jt-tr.jt-selected button.jt-col-run { background: rgba(33, 150, 243, 0.3);
    background: color-mix(in srgb, var(--jt-brand) 18%, var(--jt-surface));
    box-shadow: inset 3px 0 0 var(--jt-brand), 1px 0 0 var(--jt-border); }
/* The reason and the prompt wrap to two lines rather than being cut: their start is what differs between runs. */
.jt-browser button.jt-td.jt-col-reason, .jt-browser button.jt-td.jt-col-prompt {
    white-space: normal; line-height: 15px; padding-top: 1px;
    padding-bottom: 1px; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2;
    line-clamp: 2; overflow: hidden; text-overflow: ellipsis; overflow-wrap: anywhere; align-self: center;
    height: auto; max-height: 32px; }
/* A status with a detail ("open", then "next turn in flight") takes two lines: the word never yields to it. */
.jt-browser button.jt-td.jt-status-detail { white-space: pre-line; line-height: 15px; padding-top: 1px;
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
.jt-browser .jt-col-writer { flex: 0 0 6em; }
.jt-browser .jt-col-agent { flex: 0 0 9em; }
.jt-browser .jt-col-generation { flex: 0 0 8.5em; }
/* After the cells' min-width: 0: the prompt and the reason share what the fixed columns leave and keep a readable
   width (with "all columns" the reason keeps more, instead of being squeezed to a sliver), and every row (and the
   header) is as wide as the next, so they stay aligned. */
.jt-browser button.jt-col-prompt { min-width: 9em; }
.jt-browser button.jt-col-reason { min-width: 13em; }
.jt-browser.jt-all-columns button.jt-col-reason { min-width: 16em; }
.jt-browser .jupyter-button:focus-visible, .jt-browser .jt-rows button:focus-visible {
    outline: 2px solid var(--jt-brand); outline-offset: -2px;
    box-shadow: none; }
.jt-browser .jt-tr:focus-within { box-shadow: inset 3px 0 0 var(--jt-brand); }
.jt-browser button.jt-td.jt-col-status::before { content: ""; display: inline-block; width: 8px;
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
