"""The report's sections, each drawn from the conversation model the widgets draw too: the summary, what the run
waits for, the timeline of its turns and calls, its process runs, its findings, and the notes on what was left out."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Final

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.facts import RecordFacts, duration_text, time_text
from journaltools.exports.html import Banner, esc, severity_badge, status_badge
from journaltools.exports.why import pending_text
from journaltools.folding.conversation import CallView
from journaltools.folding.phrases import ending_text

if TYPE_CHECKING:
    pass


#: Rows of the turns, segments and findings tables before the rest is summed up in one line.
TABLE_ROWS: Final = 1_000

#: Rows of those tables when ``TABLE_ROWS`` would pass the size bound.
FEWER_ROWS: Final = 50

#: A timeline of at most this many model turns starts open (a longer one is a click away).
OPEN_TURNS: Final = 20

#: Characters of a one-line text in a table (a finding's message, a terminal's message) before it is cut.
CELL_CHARS: Final = 2_000

UNDATED: Final = "undated"


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


def _link(model: ConversationModel, seq: int) -> str:
    return f'<a class="jt-seq-link" href="#{esc(model.anchor(seq))}" data-seq="{seq}">seq {seq}</a>'


def _more_rows(count: int, what: str) -> str:
    return f'<p class="jt-cut jt-muted">… {count:,} more {esc(what)} left out of this table</p>' if count > 0 else ""


def _times_html(model: ConversationModel) -> str:
    """Where the times come from and the span they cover, or plainly that the journal is undated (the summary above
    already says when it was created and last stored). A span across times that run backwards is no duration."""
    facts = model.facts
    if facts is None:
        return '<p class="jt-undated">undated: made from a fold alone, without the records\' times</p>'
    if not facts.has_times:
        return (
            f'<p><span class="jt-undated">{UNDATED}</span>: this journal\'s records carry no time of their own (the '
            "August build dates none), so the report shows no turn or call durations.</p>"
        )
    first, last = facts.times.get(facts.seqs[0]), facts.times.get(facts.seqs[-1])
    if model.backwards_seqs():
        spanned = f"no span: {esc(model.backwards_text())}"
    else:
        spanned = f"<b>{esc(duration_text(facts.between(facts.seqs[0], facts.seqs[-1])))}</b> from first to last"
    return (
        f"<p>{esc(facts.times_note())}: first record <b>{esc(time_text(first))}</b>, last record "
        f"<b>{esc(time_text(last))}</b>, {spanned}</p>"
    )


#: The most turn and call ticks the timeline draws (a long run's are sampled evenly): past this, ticks merge anyway.
TIMELINE_TICKS = 400


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}{'' if number == 1 else 's'}"


def _evenly(seqs: list[int], most: int) -> list[int]:
    if len(seqs) <= most:
        return seqs
    step = len(seqs) / most
    return [seqs[int(index * step)] for index in range(most)]


def _timeline_bar(model: ConversationModel) -> str:
    """The journal from its first record to its last, by seq (a journal's place, whether or not it is dated): a
    tick for each model turn and each tool call, a mark where each process run starts and one at the ending; the
    notes under it in journal order."""
    first = model.segments[0].first_seq if model.segments else 0
    last = int(model.header["last_seq"])
    width = max(1, last - first)
    facts = model.facts
    ticks: list[tuple[int, str, str]] = []
    if facts is not None:
        for seq in _evenly(sorted(facts.turns), TIMELINE_TICKS // 2):
            ticks.append((seq, "jt-marker jt-marker-turn", f"seq {seq}: a model turn"))
        for seq in _evenly(sorted(set(facts.call_ended.values())), TIMELINE_TICKS // 2):
            ticks.append((seq, "jt-marker jt-marker-call", f"seq {seq}: a tool call ended"))
    marks: list[tuple[int, str, str]] = []
    for segment in model.segments[1:TABLE_ROWS]:
        who = segment.claimed_by or "a resume"
        marks.append((segment.first_seq, "jt-marker jt-marker-claim", f"seq {segment.first_seq}: claimed by {who}"))
    if model.why.terminal_reason is not None:
        ending = model.ending_seq()
        marks.append((ending, "jt-marker jt-marker-end", f"seq {ending}: ended ({model.why.terminal_reason})"))
    marks.sort(key=lambda mark: mark[0])
    shown = "".join(
        f'<span class="{css}" style="left: min({100 * (seq - first) / width:.2f}%, calc(100% - 3px))" '
        f'title="{esc(title)}"></span>'
        for seq, css, title in [*ticks, *marks]
    )
    legend = clipped("; ".join(title for _seq, _css, title in marks) or "one process run, no ending recorded")
    counts = (
        f"{_count(len(facts.turns), 'model turn')}, {_count(len(facts.call_ended), 'tool call')}; "
        if facts is not None
        else ""
    )
    return (
        f'<div class="jt-timeline" role="img" aria-label="{esc(counts + legend)}">{shown}</div>'
        f'<p class="jt-muted">seq {first} to {last}: {esc(counts + legend)}</p>'
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
    head = _times_html(model) + _timeline_bar(model)
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
        '<div class="jt-scroll"><table class="jt-table jt-segments-table"><tr><th>process run</th><th>records</th>'
        "<th>claimed by</th>"
        "<th>claimed at</th><th>first → last record</th><th>ending</th><th>model calls</th><th>tool results</th>"
        f"<th>tokens in / out</th><th>terminal message</th></tr>{''.join(rows)}</table></div>"
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


def page_summary_html(model: ConversationModel, number: int, pages: int) -> str:
    shown = model.page(number)
    first = number * model.page_size
    in_flight = " + the turn in flight" if number == pages - 1 and model.pending is not None else ""
    if not shown:
        return f"page {number + 1} of {pages}: the turn in flight" if in_flight else f"page {number + 1}: no messages"
    return (
        f"page {number + 1} of {pages}: messages {first + 1:,}-{first + len(shown):,} "
        f"(seq {shown[0].seq}-{shown[-1].seq}){in_flight}"
    )


def left_out_html(model: ConversationModel, seq: int, left: int, source: str, max_bytes: int) -> str:
    in_flight = " and the turn in flight" if model.pending is not None else ""
    what = f"{left:,} message{'s' if left != 1 else ''}{in_flight}" if left else f"the turn in flight (seq {seq})"
    return (
        f'<div class="jt-cut jt-left-out" data-left-out-from="{seq}">… {what} from seq {seq} on left out: this file '
        f"keeps under its size bound of {max_bytes:,} bytes. Read them with <code>journaltools show "
        f"{esc(source or 'SOURCE')} {esc(model.run)} --from-seq {seq}</code>.</div>"
    )
