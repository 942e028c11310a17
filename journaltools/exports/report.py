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

**Compressed pages.** When the messages would pass the bound as plain HTML, the pages between the first and the last
are stored gzipped (base64, in a data attribute) and the page's script inflates each when it is opened, found in or
jumped into (``DecompressionStream``, which needs no request and works from ``file://``); the first and last pages
stay plain, and a compressed page says, for a reader without scripts, the command that prints it. A 20,000-record run
then fits whole in the 10 MB bound (about a quarter of its plain size).

**Times.** Durations are shown only between records that carry their own time (the newest line dates every record).
An August journal's records carry none: the report says "undated" and shows no duration, whatever store it is in (a
JetStream copy's message times are when it was copied, not when the run did the work).
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
import gzip
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from journaltools._base.urls import masked
from journaltools.exports.conversation import ConversationModel
from journaltools.exports.conversation_places import JUMPS
from journaltools.exports.facts import Prices, RecordFacts, facts_of_read, time_text
from journaltools.exports.html import STYLE, RenderBudget, esc, status_badge
from journaltools.exports.report_page import CONTENT_SECURITY_POLICY, REPORT_SCRIPT, REPORT_STYLE
from journaltools.exports.report_sections import (
    FEWER_ROWS,
    TABLE_ROWS,
    brief_summary_html,
    findings_html,
    left_out_html,
    page_summary_html,
    segments_html,
    summary_html,
    timeline_html,
    undated_as_such,
    waiting_html,
)
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
#: The Markdown time of a whole report (seconds); the messages after it are shown as plain text, as a notebook page
#: does past its own budget.
MARKDOWN_SECONDS: Final = 10.0
#: What the document's id attributes start with (``jt-r-seq-12``: the conversation's anchors).
ANCHOR_UID: Final = "r"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "replace"))


# -- the page's fixed parts --------------------------------------------------------------------------------------


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
    #: Pages stored compressed in the file (inflated by its script when read).
    compressed_pages: int = 0

    def contents(self) -> str:
        """Its size against its bound, how many messages it holds, and what the bound left out."""
        line = (
            f"{self.size:,} bytes (bound {self.max_bytes:,}), {self.messages_shown:,} of {self.messages:,} "
            f"messages in {self.pages:,} page{'s' if self.pages != 1 else ''}"
        )
        if self.compressed_pages:
            line += f" ({self.compressed_pages:,} of them compressed)"
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
    index_href: str = "",
    compress: bool | None = None,
) -> RunReport:
    """The report of one folded run (I/O free: what ``report`` does once the journal is read). ``result`` is the
    fold a view shows (``FoldedRun.as_fold_result()``: the run's status, the reader's findings first); ``facts``
    what the records say beyond it (``widgets._source.facts_of_read``): times, tokens per turn, call durations.
    ``source`` is named in the page (credentials masked); ``index_href`` links back to the site the page is part of
    (``exports.site``). ``compress``: store the middle pages compressed (None: only when the plain messages would
    pass ``max_bytes``)."""
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
        '<nav class="jt-report-nav">'
        + (f'<a href="{esc(index_href)}" class="jt-report-home">← all runs</a>' if index_href else "")
        + '<a href="#summary">summary</a><a href="#waiting">waiting for</a>'
        '<a href="#timeline">timeline</a><a href="#segments">process runs</a><a href="#findings">findings</a>'
        '<a href="#conversation">conversation</a>'
        '<span class="jt-report-find jt-script-only" hidden>'
        '<input id="jt-find" type="search" placeholder="find in this run (/)" aria-label="find in this run">'
        '<span id="jt-find-count" class="jt-muted" aria-live="polite"></span>'
        '<button type="button" id="jt-find-previous" title="previous match (Shift+Enter, N)">↑</button>'
        '<button type="button" id="jt-find-next" title="next match (Enter, n)">↓</button>'
        + "".join(
            f'<button type="button" data-jump="{key}" title="the next {label} (key {key})">{label} '
            '<span class="jt-jump-count"></span></button>'
            for key, label in JUMPS
        )
        + "</span>"
        '<button type="button" id="jt-theme" class="jt-script-only" hidden>theme: auto</button></nav></header>'
    )
    bottom = f"</div><script>{REPORT_SCRIPT}</script></body></html>\n"
    # The conversation's frame (its heading and the note on what the bound left out) must fit whatever the sections
    # before it take: it is kept aside until they are in.
    intro, closing = _conversation_frame(model)
    kept_aside = _size(intro) + _size(closing) + _size(left_out_html(model, 10**12, 10**12, source, max_bytes))
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
    conversation, shown, left_out, compressed = _conversation(model, room, source, max_bytes, compress)
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
        compressed_pages=compressed,
    )


def _conversation_frame(model: ConversationModel) -> tuple[str, str]:
    """The conversation section's opening (its heading, how it is paged, the page buttons) and its closing."""
    pages = model.page_count
    in_flight = " and the turn in flight" if model.pending is not None else ""
    # Every process run's first seq, for the "r" key: the table and the chips link to only some of a long run's.
    starts = " ".join(str(segment.first_seq) for segment in model.segments)
    intro = (
        f'<section id="conversation"><h2 data-jt-run-starts="{starts}">Conversation</h2>'
        f"<p>{len(model.messages):,} message"
        f"{'s' if len(model.messages) != 1 else ''}{in_flight} in {pages:,} "
        f"page{'s' if pages != 1 else ''} of {model.page_size}; a page opens and closes by its title (the first and "
        "the last are open). "
        '<span class="jt-script-only" hidden><button type="button" id="jt-open-all">open every page</button> '
        '<button type="button" id="jt-close-all">close every page</button></span></p>'
    )
    return intro, "</section>"


def _conversation(
    model: ConversationModel, room: _Room, source: str, max_bytes: int, compress: bool | None
) -> tuple[str, int, int | None, int]:
    """The conversation section, page by page, message by message, while the bound has room; then a note saying
    what was left out. The pages between the first and the last are stored compressed when ``compress`` says so (None:
    when the plain pages would not fit). Returns the HTML, how many messages it holds, the seq of the first one left
    out and how many pages are compressed."""
    pages = model.page_count
    intro, closing = _conversation_frame(model)
    # The note on what was left out must always fit: keep room for it from the start.
    note_room = _size(left_out_html(model, 10**12, 10**12, source, max_bytes))
    room.left -= _size(intro) + _size(closing) + note_room
    budget = RenderBudget(MARKDOWN_SECONDS)
    drawn = [model.window_items(number * model.page_size, budget=budget) for number in range(pages)]
    if compress is None:
        frames = pages * _size("".join(_frame(model, pages - 1, pages)))
        compress = frames + sum(_size(html) for items in drawn for _seq, html in items) > room.left
    body: list[str] = []
    shown = compressed = 0
    left_out: int | None = None
    for number, items in enumerate(drawn):
        messages_here = len(model.page(number)) if model.messages else 0
        frame_head, frame_tail = _frame(model, number, pages)
        if compress and items:
            # The first and last pages stay plain (they start open, and read without scripts) when they fit whole;
            # any other page, or one of those that does not fit, is stored compressed when that fits; else the
            # messages that fit are kept plain, one by one, so what is left out starts at an exact seq.
            whole = frame_head + "".join(html for _seq, html in items) + frame_tail
            if number in (0, pages - 1) and room.take(whole):
                body.append(whole)
                shown += messages_here
                continue
            packed = _packed_page(model, number, pages, items, source)
            if room.take(packed):
                body.append(packed)
                shown += messages_here
                compressed += 1
                continue
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
        messages_left = len(model.message_seqs) - bisect.bisect_left(model.message_seqs, left_out)
        body.append(left_out_html(model, left_out, messages_left, source, max_bytes))
    elif not model.messages and model.pending is None:
        body.append('<p class="jt-muted">no messages</p>')
    return intro + "".join(body) + closing, shown, left_out, compressed


def _frame(model: ConversationModel, number: int, pages: int) -> tuple[str, str]:
    """A plain page's opening and closing: a ``<details>`` that opens by its title (the first and last start open)."""
    opened = " open" if number in (0, pages - 1) else ""
    return (
        f'<details class="jt-page" id="page-{number + 1}"{opened}>'
        f"<summary>{esc(page_summary_html(model, number, pages))}</summary>",
        "</details>",
    )


def packed_html(html: str) -> str:
    """``html`` as a compressed page holds it: gzip (no time in its header, so one run makes one file) in base64,
    which the page's script inflates with ``DecompressionStream("gzip")``."""
    return base64.b64encode(gzip.compress(html.encode("utf-8", "replace"), compresslevel=6, mtime=0)).decode("ascii")


def _packed_page(
    model: ConversationModel, number: int, pages: int, items: Sequence[tuple[int, str]], source: str
) -> str:
    """A page stored compressed: its title as a plain page's, its messages inflated by the script when it opens,
    and for a reader without scripts the command that prints them."""
    first = items[0][0]
    command = f"journaltools show {source or 'SOURCE'} {model.run} --from-seq {first}"
    return (
        f'<details class="jt-page jt-packed" id="page-{number + 1}" data-first-seq="{first}">'
        f"<summary>{esc(page_summary_html(model, number, pages))}</summary>"
        f'<div class="jt-packed-body" data-jt-gz="{packed_html("".join(html for _seq, html in items))}">'
        f'<p class="jt-cut jt-packed-note">this page is stored compressed in the file and opens with scripts on; '
        f"without them, <code>{esc(command)}</code> prints it</p></div></details>"
    )


# -- reading a source ----------------------------------------------------------------------------------------------


def report_of_read(
    read: RunRead,
    *,
    source: str = "",
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    page_size: int = PAGE_SIZE,
    prices: Prices | None = None,
    index_href: str = "",
    compress: bool | None = None,
) -> RunReport:
    """The report of one journal as a backend read it: folded (``folding.run``), with its records' facts."""
    folded = fold_run(read, strict=strict)
    return render_report(
        folded.as_fold_result(),
        facts_of_read(read, folded.facts()),
        source=source,
        max_bytes=max_bytes,
        page_size=page_size,
        prices=prices,
        index_href=index_href,
        compress=compress,
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
    compress: bool | None = None,
) -> RunReport:
    """Read ``run`` from ``source`` (a directory, a journal file, ``nats://host:port/STREAM``, ...) and make its
    report: one self-contained HTML file of at most ``max_bytes`` bytes, written to ``path`` when one is given (the
    HTML is ``.html`` either way). Lenient by default: a journal the runtime would refuse is reported as far as it
    reads, ``invalid``, with the reader's findings first; ``strict=True`` raises instead. ``compress``: store the
    middle pages compressed (None, the default: when the plain messages would pass ``max_bytes``)."""
    from journaltools.sources.registry import open_source

    with open_source(source) as backend:
        read = backend.read_run(run, strict=strict)
        url = backend.url
    made = report_of_read(
        read, source=url, strict=strict, max_bytes=max_bytes, page_size=page_size, prices=prices, compress=compress
    )
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
