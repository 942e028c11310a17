"""What the run browser puts on the page beside its widgets: its stylesheet and its one key handler (``runs``)."""

from __future__ import annotations

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
