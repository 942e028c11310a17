"""One run as one self-contained HTML file (``journaltools report``, ``jt.report``), to read offline or send on.

The file holds the run's banner (why it ended, or what it waits for), what it waits for (its pending calls), the
timeline of its model turns and tool calls with their durations, its process runs (segments), its findings and its
conversation, paged: each page of messages is a ``<details>`` section that opens and closes without any script.
It is drawn by the widgets' own code (``exports.html``, ``exports.why``, ``exports.facts``,
``widgets.conversation``), so a value is escaped, clamped and cut exactly as in a notebook; the conversation token
is never read, only its digest shown.

Nothing in the file reaches out: no external script, stylesheet, font or image, and a Content-Security-Policy that
forbids every request and runs only the file's one small script (the theme switch, "open every page", and opening
the page a link points into). It follows the reader's light or dark preference, and the switch overrides it.

**Size bound.** The file never exceeds ``max_bytes`` (``DEFAULT_MAX_BYTES``, 10 MB, unless told otherwise). A value
longer than ``exports.html.SENT_CHARS`` (20,000 characters) is cut, with a note saying how many characters more it
had; tables stop after ``TABLE_ROWS`` rows (``FEWER_ROWS`` where those would not fit) with a note; once the next
message would pass the bound the messages left are left out, with a note naming how many and the seq to read on
from (``journaltools show --from-seq``). Nothing is left out without saying so.

**Times.** Durations are shown only between records that carry their own time (the newest line dates every record).
An August journal's records carry none: the report says "undated" and shows no duration, whatever store it is in (a
JetStream copy's message times are when it was copied, not when the run did the work).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from journaltools._base.urls import masked
from journaltools.exports.conversation import ConversationModel
from journaltools.exports.facts import Prices, RecordFacts, duration_text, facts_of_read, time_text
from journaltools.exports.html import STYLE, Banner, RenderBudget, esc, severity_badge, status_badge
from journaltools.exports.messages import CallView
from journaltools.exports.why import ending_text, pending_text
from journaltools.folding import FoldResult
from journaltools.folding.run import fold_run

if TYPE_CHECKING:
    from journaltools.sources.base import RunRead

#: The file's size bound unless the caller gives another (bytes of UTF-8).
DEFAULT_MAX_BYTES: Final = 10_000_000
#: The smallest bound accepted: the page's styles, script, banner and tables need about this much.
MIN_MAX_BYTES: Final = 200_000
#: Messages per page of the conversation.
PAGE_SIZE: Final = 50
#: Rows of the turns, segments and findings tables before the rest is summed up in one line.
TABLE_ROWS: Final = 1_000
#: Rows of those tables when ``TABLE_ROWS`` would pass the size bound.
FEWER_ROWS: Final = 50
#: A timeline of at most this many model turns starts open (a longer one is a click away).
OPEN_TURNS: Final = 20
#: Characters of a one-line text in a table (a finding's message, a terminal's message) before it is cut.
CELL_CHARS: Final = 2_000
#: The Markdown time of a whole report (seconds); the messages after it are shown as plain text, as a notebook page
#: does past its own budget.
MARKDOWN_SECONDS: Final = 10.0
#: What the document's id attributes start with (``jt-r-seq-12``: the conversation's anchors).
ANCHOR_UID: Final = "r"

UNDATED: Final = "undated"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "replace"))


def clipped(text: str, limit: int = CELL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many more it had (plain text: the caller escapes it)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … ({len(text) - limit:,} more characters not shown)"


def undated_as_such(facts: RecordFacts | None) -> RecordFacts | None:
    """``facts`` with times only where the records carry their own: a store's message time (a JetStream copy of an
    August journal) dates the copy, not the work, so no duration is made from it."""
    if facts is None or facts.dated_by_records or not facts.times:
        return facts
    return dataclasses.replace(facts, times={})


# -- the page's fixed parts --------------------------------------------------------------------------------------

#: JupyterLab's theme variables, which every colour of ``exports.html.STYLE`` reads, for each theme.
_LIGHT: Final = {
    "--jp-layout-color0": "#ffffff",
    "--jp-layout-color1": "#ffffff",
    "--jp-layout-color2": "#eeeeee",
    "--jp-ui-font-color1": "rgba(0, 0, 0, 0.87)",
    "--jp-ui-font-color2": "rgba(0, 0, 0, 0.62)",
    "--jp-content-font-color1": "rgba(0, 0, 0, 0.87)",
    "--jp-border-color1": "#9e9e9e",
    "--jp-border-color2": "#e0e0e0",
    "--jp-content-link-color": "#0d47a1",
    "--jp-brand-color1": "#1976d2",
    "--jp-success-color1": "#388e3c",
    "--jp-warn-color1": "#ef6c00",
    "--jp-error-color1": "#d32f2f",
    "--jp-error-color0": "#b71c1c",
}
_DARK: Final = {
    "--jp-layout-color0": "#111111",
    "--jp-layout-color1": "#1b1b1b",
    "--jp-layout-color2": "#2c2c2c",
    "--jp-ui-font-color1": "rgba(255, 255, 255, 0.87)",
    "--jp-ui-font-color2": "rgba(255, 255, 255, 0.66)",
    "--jp-content-font-color1": "rgba(255, 255, 255, 0.9)",
    "--jp-border-color1": "#757575",
    "--jp-border-color2": "#3d3d3d",
    "--jp-content-link-color": "#90caf9",
    "--jp-brand-color1": "#42a5f5",
    "--jp-success-color1": "#66bb6a",
    "--jp-warn-color1": "#ffa726",
    "--jp-error-color1": "#ef5350",
    "--jp-error-color0": "#e57373",
}


def _declarations(values: dict[str, str], scheme: str) -> str:
    return f"color-scheme: {scheme}; " + " ".join(f"{name}: {value};" for name, value in values.items())


#: The report's own styles: the two themes (the reader's preference unless the switch says otherwise), the page's
#: frame, and its sections. Everything else is the widgets' ``STYLE``.
REPORT_STYLE: Final = f"""<style>
:root {{ {_declarations(_LIGHT, "light")} }}
:root[data-theme="dark"] {{ {_declarations(_DARK, "dark")} }}
@media (prefers-color-scheme: dark) {{ :root[data-theme="auto"] {{ {_declarations(_DARK, "dark")} }} }}
html {{ background: var(--jp-layout-color0); }}
body {{ margin: 0; background: var(--jp-layout-color0); }}
.jt-report {{ max-width: 76em; margin: 0 auto; padding: 12px 24px 48px; font-size: 13px; }}
.jt-report h1 {{ font-size: 20px; margin: 6px 0 2px; overflow-wrap: anywhere; }}
.jt-report h2 {{ font-size: 16px; margin: 22px 0 6px; padding-bottom: 2px; border-bottom: 1px solid var(--jt-border); }}
.jt-report a {{ color: var(--jt-link); }}
.jt-report-meta {{ font-size: 12px; margin: 0 0 4px; overflow-wrap: anywhere; }}
.jt-report-nav {{ position: sticky; top: 0; z-index: 3; display: flex; flex-wrap: wrap; align-items: center;
    gap: 4px 14px; padding: 6px 0; font-size: 12px; background: var(--jt-surface);
    border-bottom: 1px solid var(--jt-border); }}
.jt-report button {{ font: inherit; font-size: 12px; color: var(--jt-fg); background: var(--jt-surface-2);
    border: 1px solid var(--jt-border-strong); border-radius: 3px; padding: 1px 8px; cursor: pointer; }}
.jt-report button:focus-visible {{ outline: 2px solid var(--jt-brand); outline-offset: 1px; }}
.jt-report .jt-table {{ margin: 4px 0; }}
.jt-report .jt-nowrap {{ white-space: nowrap; }}
.jt-report .jt-turns td:last-child {{ min-width: 18em; }}
.jt-report .jt-turns td:first-child, .jt-report .jt-turns td:last-child span {{ white-space: nowrap; }}
.jt-page {{ border-top: 1px solid var(--jt-border); }}
.jt-turns-box > summary {{ cursor: pointer; font-weight: 600; padding: 4px 0; color: var(--jt-fg); }}
.jt-page > summary {{ cursor: pointer; font-weight: 600; padding: 6px 0; color: var(--jt-fg); }}
.jt-report .jt-msg {{ scroll-margin-top: 48px; }}
.jt-report .jt-timeline {{ max-width: none; height: 16px; }}
.jt-report .jt-marker {{ height: 16px; }}
.jt-marker-claim {{ background: var(--jt-warn); }}
.jt-left-out {{ border: 1px dashed var(--jt-border-strong); border-radius: 4px; padding: 6px 10px; margin: 8px 0;
    font-style: normal; }}
.jt-undated {{ font-weight: 600; }}
</style>"""

#: The file's one script: the theme switch, "open / close every page", and opening the page a link points into
#: (a message on a closed page). Fixed code: no journal text is ever in it. The buttons it drives are hidden until it
#: runs, so a reader whose viewer runs no script sees no dead buttons (every page still opens by its summary).
REPORT_SCRIPT: Final = """(function () {
  var root = document.documentElement;
  var themes = ["auto", "light", "dark"];
  var themeButton = document.getElementById("jt-theme");
  function showTheme(theme) {
    root.setAttribute("data-theme", theme);
    themeButton.textContent = "theme: " + theme;
  }
  themeButton.addEventListener("click", function () {
    var now = themes.indexOf(root.getAttribute("data-theme"));
    showTheme(themes[(now + 1) % themes.length]);
  });
  function pages(open) {
    var found = document.querySelectorAll("details.jt-page");
    for (var i = 0; i < found.length; i++) found[i].open = open;
  }
  document.getElementById("jt-open-all").addEventListener("click", function () { pages(true); });
  document.getElementById("jt-close-all").addEventListener("click", function () { pages(false); });
  function reveal(id) {
    var target = document.getElementById(id);
    for (var node = target; node; node = node.parentElement) if (node.tagName === "DETAILS") node.open = true;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (link) reveal(decodeURIComponent(link.getAttribute("href").slice(1)));
  });
  if (location.hash) reveal(decodeURIComponent(location.hash.slice(1)));
  var controls = document.querySelectorAll(".jt-script-only");
  for (var i = 0; i < controls.length; i++) controls[i].hidden = false;
})();"""


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


#: No request of any kind (``default-src 'none'``), inline styles, and only the script above: were journal text ever
#: to become markup, a browser would still neither run it nor fetch anything it names.
CONTENT_SECURITY_POLICY: Final = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src '{_script_hash(REPORT_SCRIPT)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


# -- the result --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunReport:
    """A run's report: the HTML and what it holds. ``left_out_from_seq`` is the seq of the first message the size
    bound left out (None when every message is in); ``path`` where ``report`` wrote it."""

    run: str
    html: str
    size: int
    max_bytes: int
    messages: int
    messages_shown: int
    pages: int
    left_out_from_seq: int | None = None
    path: Path | None = None

    def contents(self) -> str:
        """Its size against its bound, how many messages it holds, and what the bound left out."""
        line = (
            f"{self.size:,} bytes (bound {self.max_bytes:,}), {self.messages_shown:,} of {self.messages:,} "
            f"messages in {self.pages:,} page{'s' if self.pages != 1 else ''}"
        )
        if self.left_out_from_seq is not None:
            line += f"; the size bound left out the messages from seq {self.left_out_from_seq} on"
        return line

    def summary(self) -> str:
        """One line: where it went (once written) and ``contents()``."""
        return (f"wrote {self.path}: " if self.path is not None else "") + self.contents()


class _Room:
    """What is left of the size bound while the page is put together."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, html: str) -> bool:
        """Count ``html`` against the bound when it fits (True); False, counting nothing, when it does not."""
        size = _size(html)
        if size > self.left:
            return False
        self.left -= size
        return True


# -- the sections ------------------------------------------------------------------------------------------------


def _link(model: ConversationModel, seq: int) -> str:
    return f'<a class="jt-seq-link" href="#{esc(model.anchor(seq))}" data-seq="{seq}">seq {seq}</a>'


def _more_rows(count: int, what: str) -> str:
    return f'<p class="jt-cut jt-muted">… {count:,} more {esc(what)} left out of this table</p>' if count > 0 else ""


def _times_html(facts: RecordFacts | None) -> str:
    """Where the times come from and the span they cover, or plainly that the journal is undated (the summary above
    already says when it was created and last stored)."""
    if facts is None:
        return '<p class="jt-undated">undated: made from a fold alone, without the records\' times</p>'
    if not facts.has_times:
        return (
            f'<p><span class="jt-undated">{UNDATED}</span>: this journal\'s records carry no time of their own (the '
            "August build dates none), so the report shows no turn or call durations.</p>"
        )
    first, last = facts.times.get(facts.seqs[0]), facts.times.get(facts.seqs[-1])
    span = facts.between(facts.seqs[0], facts.seqs[-1])
    return (
        f"<p>{esc(facts.times_note())}: first record <b>{esc(time_text(first))}</b>, last record "
        f"<b>{esc(time_text(last))}</b>, <b>{esc(duration_text(span))}</b> from first to last</p>"
    )


def _timeline_bar(model: ConversationModel) -> str:
    """The journal from its first record to its last, with a mark where each process run starts and at the ending
    (by seq: a journal's place, whether or not it is dated)."""
    first = model.segments[0].first_seq if model.segments else 0
    last = int(model.header["last_seq"])
    width = max(1, last - first)
    marks = []
    for segment in model.segments[1:TABLE_ROWS]:
        who = segment.claimed_by or "a resume"
        marks.append((segment.first_seq, "jt-marker jt-marker-claim", f"seq {segment.first_seq}: claimed by {who}"))
    if model.why.terminal_reason is not None:
        ending = model.ending_seq()
        marks.append((ending, "jt-marker jt-marker-end", f"seq {ending}: ended ({model.why.terminal_reason})"))
    shown = "".join(
        f'<span class="{css}" style="left: min({100 * (seq - first) / width:.2f}%, calc(100% - 3px))" '
        f'title="{esc(title)}"></span>'
        for seq, css, title in marks
    )
    legend = clipped("; ".join(title for _seq, _css, title in marks) or "one process run, no ending recorded")
    return (
        f'<div class="jt-timeline" role="img" aria-label="{esc(legend)}">{shown}</div>'
        f'<p class="jt-muted">seq {first} to {last}: {esc(legend)}</p>'
    )


def _call_views(model: ConversationModel) -> dict[str, CallView]:
    """Every call of the conversation and of the turn in flight, by id (the first one made with each id)."""
    calls: dict[str, CallView] = {}
    for message in model.messages:
        for part in message.parts:
            if part.call is not None:
                calls.setdefault(part.call.id, part.call)
    if model.pending is not None:
        for call in model.pending.calls:
            calls[call.id] = call
    return calls


def _call_words(call: CallView, facts: RecordFacts) -> str:
    took = facts.call_seconds(call.id)
    words = [", ".join(call.flags) or "answered", *([f"took {duration_text(took)}"] if took is not None else [])]
    return f"<code>{esc(call.name)}</code> <span class='jt-muted'>{esc(', '.join(words))}</span>"


def timeline_html(model: ConversationModel, rows_shown: int = TABLE_ROWS) -> str:
    """The timeline: where its times come from (or that it is undated), the process runs and the ending along the
    journal, then a row per model turn with its time, how long it took, its tokens and the calls it made, each with
    its state and duration."""
    facts = model.facts
    head = _times_html(facts) + _timeline_bar(model)
    if facts is None or not facts.turns:
        return head + '<p class="jt-muted">no model turn recorded</p>'
    calls = _call_views(model)
    made: dict[int, list[str]] = {}
    for call_id, seq in facts.call_made.items():
        made.setdefault(seq, []).append(call_id)
    # An undated journal has no time and no duration to show: those columns are left out, not filled with dashes
    # (the note above says why).
    dated = facts.has_times
    rows = []
    turns = sorted(facts.turns)
    for seq in turns[:rows_shown]:
        when = facts.times.get(seq)
        took = facts.turn_seconds(seq)
        made_here = [calls[call_id] for call_id in made.get(seq, ()) if call_id in calls]
        times = (
            f'<td class="jt-nowrap">{esc(time_text(when))}</td><td class="jt-nowrap">{esc(duration_text(took))}</td>'
            if dated
            else ""
        )
        rows.append(
            f"<tr><td>{_link(model, seq)}</td><td>{esc(facts.iterations.get(seq, '—'))}</td>{times}"
            f"<td>{esc(facts.turns[seq].text())}</td><td>{esc(facts.stop_reasons.get(seq) or '—')}</td>"
            f"<td>{'<br>'.join(_call_words(call, facts) for call in made_here) or '—'}</td></tr>"
        )
    time_heads = "<th>time</th><th>took</th>" if dated else ""
    calls_head = "tool calls (state, duration)" if dated else "tool calls (state)"
    # A long run's table would push the conversation far down: past a screenful it starts closed.
    opened = " open" if len(turns) <= OPEN_TURNS else ""
    return (
        f'{head}<details class="jt-turns-box"{opened}><summary>{len(turns):,} model turn'
        f"{'s' if len(turns) != 1 else ''}</summary>"
        f'<table class="jt-table jt-turns"><tr><th>turn</th><th>iteration</th>{time_heads}<th>tokens</th>'
        f"<th>stop reason</th><th>{calls_head}</th></tr>{''.join(rows)}</table>"
        f"{_more_rows(len(turns) - rows_shown, 'turns')}</details>"
    )


def waiting_html(model: ConversationModel) -> str:
    """What the run waits for: each pending call with its state (deferred with its note and handle, approved once,
    waiting) and its input, drawn as the conversation draws it."""
    why = model.why
    waiting = model.header.get("waiting_for") or "nothing"
    if not why.pending:
        return f"<p>waiting for <b>{esc(waiting)}</b>; no call is pending</p>"
    pending_calls = {call.id: call for call in (model.pending.calls if model.pending is not None else [])}
    items = "".join(f"<li>{esc(clipped(pending_text(call)))}</li>" for call in why.pending)
    drawn = "".join(
        model.call_html(pending_calls[call.id], f"pending {call.id}")
        for call in why.pending
        if call.id in pending_calls
    )
    count = len(why.pending)
    return (
        f"<p>waiting for <b>{esc(waiting)}</b>: {count} pending call{'s' if count != 1 else ''}</p>"
        f'<ul class="jt-pending-calls">{items}</ul>{drawn}'
    )


def segments_html(model: ConversationModel, rows_shown: int = TABLE_ROWS) -> str:
    """The process runs (the first and each resume) as a table: its records, who claimed it and when, how it ended,
    its model calls, tool results and tokens, and its first and last record's times where the journal is dated."""
    facts = model.facts
    rows = []
    for segment in model.segments[:rows_shown]:
        started = facts.times.get(segment.first_seq) if facts is not None else None
        ended = facts.times.get(segment.last_seq) if facts is not None else None
        span = (
            f"{time_text(started)} → {time_text(ended)}"
            if started is not None and ended is not None
            else (UNDATED if facts is None or not facts.has_times else "—")
        )
        rows.append(
            f'<tr data-segment="{segment.index}"><td>#{segment.index}</td><td>{_link(model, segment.first_seq)}-'
            f"{segment.last_seq}</td><td>{esc(segment.claimed_by or 'first run')}</td>"
            f"<td>{esc(segment.claimed_at or '—')}</td><td>{esc(span)}</td>"
            f"<td>{status_badge(ending_text(segment.ending))}</td><td>{segment.llm_calls:,}</td>"
            f"<td>{segment.tool_calls:,}</td><td>{segment.in_tokens:,} / {segment.out_tokens:,}</td>"
            f"<td>{esc(clipped(segment.terminal_message or '—'))}</td></tr>"
        )
    return (
        '<table class="jt-table jt-segments-table"><tr><th>process run</th><th>records</th><th>claimed by</th>'
        "<th>claimed at</th><th>first → last record</th><th>ending</th><th>model calls</th><th>tool results</th>"
        f"<th>tokens in / out</th><th>terminal message</th></tr>{''.join(rows)}</table>"
        f"{_more_rows(len(model.segments) - rows_shown, 'process runs')}"
    )


def findings_html(model: ConversationModel, rows_shown: int = TABLE_ROWS) -> str:
    """Every finding (the reader's, then the fold's): its seq (a link to its message), code, severity, message."""
    findings = model.finding_values
    if not findings:
        return "<p>no findings: the journal reads and folds as the runtime would</p>"
    rows = "".join(
        f"<tr><td>{_link(model, finding.seq) if finding.seq is not None else '—'}</td><td><code>{esc(finding.code)}"
        f"</code></td><td>{severity_badge(finding.severity)}</td><td>{esc(clipped(finding.message))}</td></tr>"
        for finding in findings[:rows_shown]
    )
    return (
        '<table class="jt-table jt-findings-table"><tr><th>seq</th><th>code</th><th>severity</th><th>message</th></tr>'
        f"{rows}</table>{_more_rows(len(findings) - rows_shown, 'findings')}"
    )


def summary_html(model: ConversationModel) -> str:
    """The widgets' conversation header (banner, configuration, counters, times, process runs), its findings not
    listed again: they have their own section, which a line here counts and links to."""
    header = dataclasses.replace(model, finding_values=[]).header_html()
    findings = model.finding_values
    if not findings:
        return header
    errors = sum(1 for finding in findings if finding.severity == "error")
    counted = f"{len(findings):,} finding{'s' if len(findings) != 1 else ''}" + (
        f" ({errors:,} error{'s' if errors != 1 else ''})" if errors else ""
    )
    return f'{header}<p class="jt-counters">{esc(counted)}: see <a href="#findings">Findings</a></p>'


def brief_summary_html(model: ConversationModel) -> str:
    """The banner alone, its texts cut to ``CELL_CHARS``: what stands for a summary too big for the size bound (a
    terminal message of megabytes, say)."""
    banner = model.why.banner()
    return Banner(banner.tone, banner.title, clipped(banner.detail), clipped(banner.note)).to_html()


def _page_summary(model: ConversationModel, number: int, pages: int) -> str:
    shown = model.page(number)
    first = number * model.page_size
    in_flight = " + the turn in flight" if number == pages - 1 and model.pending is not None else ""
    if not shown:
        return f"page {number + 1} of {pages}: the turn in flight" if in_flight else f"page {number + 1}: no messages"
    return (
        f"page {number + 1} of {pages}: messages {first + 1:,}-{first + len(shown):,} "
        f"(seq {shown[0].seq}-{shown[-1].seq}){in_flight}"
    )


def _left_out_html(model: ConversationModel, seq: int, left: int, source: str, max_bytes: int) -> str:
    in_flight = " and the turn in flight" if model.pending is not None else ""
    what = f"{left:,} message{'s' if left != 1 else ''}{in_flight}" if left else f"the turn in flight (seq {seq})"
    return (
        f'<div class="jt-cut jt-left-out" data-left-out-from="{seq}">… {what} from seq {seq} on left out: this file '
        f"keeps under its size bound of {max_bytes:,} bytes. Read them with <code>journaltools show "
        f"{esc(source or 'SOURCE')} {esc(model.run)} --from-seq {seq}</code>.</div>"
    )


# -- the document ------------------------------------------------------------------------------------------------


def render_report(
    result: FoldResult,
    facts: RecordFacts | None = None,
    *,
    source: str = "",
    max_bytes: int = DEFAULT_MAX_BYTES,
    page_size: int = PAGE_SIZE,
    prices: Prices | None = None,
    generated_at: datetime | None = None,
) -> RunReport:
    """The report of one folded run (I/O free: what ``report`` does once the journal is read). ``result`` is the
    fold a view shows (``FoldedRun.as_fold_result()``: the run's status, the reader's findings first); ``facts``
    what the records say beyond it (``widgets._source.facts_of_read``): times, tokens per turn, call durations.
    ``source`` is named in the page (credentials masked)."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"a report's size bound must be at least {MIN_MAX_BYTES:,} bytes, not {max_bytes:,}")
    from journaltools._base.version import __version__

    source = masked(source)
    model = ConversationModel.from_fold(result, page_size=page_size, facts=undated_as_such(facts), prices=prices)
    model.uid = ANCHOR_UID
    state = result.state
    generation = state.generation.title if state is not None else "an unknown build (no meta record)"
    made = time_text(generated_at or datetime.now(UTC))
    title = f"journaltools report: {model.run}"
    top = (
        '<!DOCTYPE html>\n<html lang="en" data-theme="auto"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CONTENT_SECURITY_POLICY)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc(title)}</title>{STYLE}{REPORT_STYLE}</head><body>"
        '<div class="jt jt-report"><header>'
        f"<h1>Run <code>{esc(model.run)}</code> {status_badge(model.status)}</h1>"
        f'<p class="jt-report-meta jt-muted">{esc(source or "a fold")} · written by {esc(generation)} · '
        f"report made {esc(made)} by journaltools {esc(__version__)} · at most {max_bytes:,} bytes</p>"
        '<nav class="jt-report-nav"><a href="#summary">summary</a><a href="#waiting">waiting for</a>'
        '<a href="#timeline">timeline</a><a href="#segments">process runs</a><a href="#findings">findings</a>'
        '<a href="#conversation">conversation</a>'
        '<button type="button" id="jt-theme" class="jt-script-only" hidden>theme: auto</button></nav></header>'
    )
    bottom = f"</div><script>{REPORT_SCRIPT}</script></body></html>\n"
    # The conversation's frame (its heading and the note on what the bound left out) must fit whatever the sections
    # before it take: it is kept aside until they are in.
    intro, closing = _conversation_frame(model)
    kept_aside = _size(intro) + _size(closing) + _size(_left_out_html(model, 10**12, 10**12, source, max_bytes))
    room = _Room(max_bytes - _size(top) - _size(bottom) - kept_aside)
    parts: list[str] = []

    def section(anchor: str, heading: str, draw: Callable[[int], str], brief: str = "") -> None:
        """The section drawn with up to ``TABLE_ROWS`` rows, else ``FEWER_ROWS`` (its note says how many more),
        else its brief and a note that the rest is left out."""
        for rows in (TABLE_ROWS, FEWER_ROWS):
            html = f'<section id="{anchor}"><h2>{esc(heading)}</h2>{draw(rows)}</section>'
            if room.take(html):
                parts.append(html)
                return
        # A section too big for the bound is named, never dropped silently (and the note itself is tiny); what must
        # be read first (the banner) still comes, its texts cut.
        html = (
            f'<section id="{anchor}"><h2>{esc(heading)}</h2>{brief}<p class="jt-cut jt-left-out">this section '
            f"({_size(html):,} bytes) is left out{' but for the above' if brief else ''}: it would pass this "
            f"file's size bound of {max_bytes:,} bytes</p></section>"
        )
        room.take(html)
        parts.append(html)

    section("summary", "Summary", lambda _rows: summary_html(model), brief=brief_summary_html(model))
    section("waiting", "Waiting for", lambda _rows: waiting_html(model))
    section("timeline", "Timeline", lambda rows: timeline_html(model, rows))
    section("segments", f"Process runs ({len(model.segments)})", lambda rows: segments_html(model, rows))
    section("findings", f"Findings ({len(model.finding_values)})", lambda rows: findings_html(model, rows))

    room.left += kept_aside
    conversation, shown, left_out = _conversation(model, room, source, max_bytes)
    parts.append(conversation)
    html = top + "".join(parts) + bottom
    return RunReport(
        run=model.run,
        html=html,
        size=_size(html),
        max_bytes=max_bytes,
        messages=len(model.messages),
        messages_shown=shown,
        pages=model.page_count,
        left_out_from_seq=left_out,
    )


def _conversation_frame(model: ConversationModel) -> tuple[str, str]:
    """The conversation section's opening (its heading, how it is paged, the page buttons) and its closing."""
    pages = model.page_count
    in_flight = " and the turn in flight" if model.pending is not None else ""
    intro = (
        f'<section id="conversation"><h2>Conversation</h2><p>{len(model.messages):,} message'
        f"{'s' if len(model.messages) != 1 else ''}{in_flight} in {pages:,} "
        f"page{'s' if pages != 1 else ''} of {model.page_size}; a page opens and closes by its title (the first and "
        "the last are open). "
        '<span class="jt-script-only" hidden><button type="button" id="jt-open-all">open every page</button> '
        '<button type="button" id="jt-close-all">close every page</button></span></p>'
    )
    return intro, "</section>"


def _conversation(model: ConversationModel, room: _Room, source: str, max_bytes: int) -> tuple[str, int, int | None]:
    """The conversation section, page by page, message by message, while the bound has room; then a note saying
    what was left out. Returns the HTML, how many messages it holds and the seq of the first one left out."""
    pages = model.page_count
    intro, closing = _conversation_frame(model)
    # The note on what was left out must always fit: keep room for it from the start.
    note_room = _size(_left_out_html(model, 10**12, 10**12, source, max_bytes))
    room.left -= _size(intro) + _size(closing) + note_room
    body: list[str] = []
    shown = 0
    left_out: int | None = None
    budget = RenderBudget(MARKDOWN_SECONDS)
    for number in range(pages):
        start = number * model.page_size
        messages_here = len(model.page(number)) if model.messages else 0
        items = model.window_items(start, budget=budget)
        opened = " open" if number in (0, pages - 1) else ""
        frame_head = (
            f'<details class="jt-page" id="page-{number + 1}"{opened}>'
            f"<summary>{esc(_page_summary(model, number, pages))}</summary>"
        )
        frame_tail = "</details>"
        if items and not room.take(frame_head + frame_tail):
            left_out = items[0][0]
            break
        kept: list[str] = []
        for index, (seq, item) in enumerate(items):
            if not room.take(item):
                left_out = seq
                break
            kept.append(item)
            shown += 1 if index < messages_here else 0
        if kept:
            body.append(frame_head + "".join(kept) + frame_tail)
        elif items:
            room.left += _size(frame_head + frame_tail)
        if left_out is not None:
            break
    room.left += note_room
    if left_out is not None:
        messages_left = sum(1 for message in model.messages if message.seq >= left_out)
        body.append(_left_out_html(model, left_out, messages_left, source, max_bytes))
    elif not model.messages and model.pending is None:
        body.append('<p class="jt-muted">no messages</p>')
    return intro + "".join(body) + closing, shown, left_out


# -- reading a source ----------------------------------------------------------------------------------------------


def report_of_read(
    read: RunRead,
    *,
    source: str = "",
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    page_size: int = PAGE_SIZE,
    prices: Prices | None = None,
) -> RunReport:
    """The report of one journal as a backend read it: folded (``folding.run``), with its records' facts."""
    folded = fold_run(read, strict=strict)
    return render_report(
        folded.as_fold_result(),
        facts_of_read(read),
        source=source,
        max_bytes=max_bytes,
        page_size=page_size,
        prices=prices,
    )


def report(
    source: str,
    run: str,
    path: str | Path | None = None,
    *,
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    page_size: int = PAGE_SIZE,
    prices: Prices | None = None,
) -> RunReport:
    """Read ``run`` from ``source`` (a directory, a journal file, ``nats://host:port/STREAM``, ...) and make its
    report: one self-contained HTML file of at most ``max_bytes`` bytes, written to ``path`` when one is given (the
    HTML is ``.html`` either way). Lenient by default: a journal the runtime would refuse is reported as far as it
    reads, ``invalid``, with the reader's findings first; ``strict=True`` raises instead."""
    from journaltools.sources.registry import open_source

    with open_source(source) as backend:
        read = backend.read_run(run, strict=strict)
        url = backend.url
    made = report_of_read(read, source=url, strict=strict, max_bytes=max_bytes, page_size=page_size, prices=prices)
    return made if path is None else write_report(made, path)


def write_report(made: RunReport, path: str | Path) -> RunReport:
    """Write ``made`` to ``path`` (UTF-8) and return it with its path (None for ``-``, standard output). The file
    is replaced atomically, a link there replaced and never followed; a path that is a FIFO, a device or a
    directory is refused (``StorageError``) before anything is written."""
    from journaltools._base.oserrors import STDOUT, writing

    with writing(path, "write the report") as handle:
        handle.write(made.html.encode("utf-8", "replace"))
    return dataclasses.replace(made, path=None if os.fspath(path) == STDOUT else Path(path))


__all__: Sequence[str] = [
    "DEFAULT_MAX_BYTES",
    "MIN_MAX_BYTES",
    "RunReport",
    "render_report",
    "report",
    "report_of_read",
    "write_report",
]
