"""The conversation of one folded run, paged, as HTML: what the conversation widget and the offline report draw.

``ConversationModel`` (pure) turns a ``FoldResult`` into views of ``state.messages`` and their five block
kinds: text (Markdown, rendered safely), thinking (collapsed; its signature is never shown), tool calls with
their input JSON beside the result that answers them (``is_error`` marked), and provider blocks by kind with
their raw JSON as stored. Every message is labelled with the seq of the record it came from, the number every
finding and ending names. The turn in flight (``state.pending``: nothing of it is committed) is shown in place
after the last message, with its text, its thinking and each call's state.

The header stays short whatever the run: the banner (why it stopped), the fingerprint, caller, interactive
flag and a digest of the conversation token (never the token), tokens and an optional cost, where the times
come from, the process runs as one compact bar of chips, and the findings collapsed. Segment chips and finding
seqs are links to their message when it is on the page shown. Each value sends at most ``SENT_CHARS`` characters
to the page (the view shows the rest on demand).
"""

from __future__ import annotations

import bisect
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from journaltools.exports.conversation_places import Target, call_marks_of, targets_of
from journaltools.exports.facts import (
    Prices,
    RecordFacts,
    Tokens,
    check_prices,
    cost_text,
    duration_text,
    facts_of_read,
    time_text,
)
from journaltools.exports.html import (
    DEFAULT_LIMIT,
    STATUS_TONES,
    Banner,
    RenderBudget,
    Values,
    esc,
    long_text,
    markdown_text,
    role_class,
    status_badge,
    themed,
)
from journaltools.exports.why import Why, finding_text
from journaltools.folding import FoldResult, Segment
from journaltools.folding.conversation import (
    CallState,
    CallView,
    MessageView,
    MessageViews,
    Part,
    PendingView,
    header_of,
    pending_view,
)
from journaltools.folding.phrases import approvals_text, ending_text, shown_time
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.folding.state import COUNTER_NAMES
from journaltools.protocol.findings import Finding
from journaltools.sources.base import RunRead, StoredRecord

#: Findings listed open in the header; more than this are collapsed behind their count.
OPEN_FINDINGS = 3
#: Process-run chips in the header: a run with more shows the first and the last half of these.
SEGMENT_CHIPS = 40


@dataclass(slots=True)
class ConversationModel:
    """A folded run arranged for display. ``window(start)`` gives ``page_size`` messages from ``start``; the
    turn in flight comes after the last message. ``status`` is the fold's (``open``, the last terminal's reason,
    ``invalid``) unless the caller gives a listing's own. ``facts`` (from the records) adds times, tokens per
    turn and call durations; ``prices`` (the user's own table) adds costs."""

    run: str
    status: str
    messages: Sequence[MessageView]
    pending: PendingView | None
    why: Why
    segments: list[Segment]
    header: dict[str, Any]
    finding_values: list[Finding] = field(default_factory=list)
    page_size: int = 50
    limit: int = DEFAULT_LIMIT
    facts: RecordFacts | None = None
    prices: Prices | None = None
    #: Makes the page's anchors unique when several views of one run share a notebook.
    uid: str = field(default_factory=lambda: secrets.token_hex(4))

    @classmethod
    def from_fold(
        cls,
        result: FoldResult,
        page_size: int = 50,
        limit: int = DEFAULT_LIMIT,
        status: str | None = None,
        facts: RecordFacts | None = None,
        prices: Prices | None = None,
    ) -> ConversationModel:
        shown_status = status or result.status
        return cls(
            run=result.run,
            status=shown_status,
            messages=MessageViews(result.messages, result.message_seqs),
            pending=pending_view(result),
            why=Why.of(result, shown_status),
            segments=list(result.segments),
            header=header_of(result, shown_status),
            finding_values=list(result.findings),
            page_size=max(1, page_size),
            limit=limit,
            facts=facts,
            prices=check_prices(prices),
        )

    @classmethod
    def from_source(
        cls,
        source: str | Path,
        run: str,
        page_size: int = 50,
        limit: int = DEFAULT_LIMIT,
        prices: Prices | None = None,
    ) -> ConversationModel:
        """``run`` read from ``source`` (leniently) and folded, with every time its records and their store keep:
        each message's, each turn's and call's duration, the last activity. ``from_fold`` has only what the fold
        holds; give it ``facts=`` (``exports.facts.facts_of_read``) for the times."""
        from journaltools.sources.registry import open_source

        with open_source(source) as backend:
            read = backend.read_run(run, strict=False)
        return cls.from_folded(fold_run(read), page_size=page_size, limit=limit, prices=prices, updated=read.updated)

    @classmethod
    def from_folded(
        cls,
        folded: FoldedRun,
        page_size: int = 50,
        limit: int = DEFAULT_LIMIT,
        prices: Prices | None = None,
        updated: datetime | None = None,
        uid: str | None = None,
    ) -> ConversationModel:
        """A folded run with every time its records keep (``updated``: the store's last time, a file's mtime or
        the last message's); ``uid`` keeps the anchors of a view already on the page (a run followed as it is
        written is arranged again, record by record, under the same anchors)."""
        # A source's read, or a followed run's growing one: stored records either way, with the store's times.
        read = RunRead(folded.run, cast("Sequence[StoredRecord]", folded.read.records), updated=updated)
        facts = facts_of_read(read, folded.facts())
        model = cls.from_fold(folded.as_fold_result(), page_size=page_size, limit=limit, facts=facts, prices=prices)
        if uid is not None:
            model.uid = uid
        return model

    @property
    def findings(self) -> list[str]:
        """Each finding in one line (``seq 3: code (severity): message``)."""
        return [f"seq {f.seq}: {f.code} ({f.severity}): {f.message}" for f in self.finding_values]

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.messages) // self.page_size))

    def page(self, number: int) -> list[MessageView]:
        number = min(max(0, number), self.page_count - 1)
        start = number * self.page_size
        return list(self.messages[start : start + self.page_size])

    # -- finding a seq -------------------------------------------------------------------------

    def index_of_seq(self, seq: int) -> int | None:
        """The message a record seq belongs to: the last message from a record at or before ``seq`` (a claim,
        a deferral or a terminal belongs with the message before it); None when ``seq`` is in the turn in
        flight, which follows every message."""
        if self.pending is not None and seq >= self.pending.seq:
            return None
        seqs = self.message_seqs
        return max(0, bisect.bisect_right(seqs, seq) - 1) if seqs else None

    @property
    def message_seqs(self) -> Sequence[int]:
        """Each message's seq, in order: a jump to a seq is a search in it, never a walk that makes every view."""
        messages = self.messages
        return messages.seqs if isinstance(messages, MessageViews) else [message.seq for message in messages]

    def anchor_seq(self, seq: int) -> int:
        """The seq of the element on the page that ``seq`` lands on (a message's, or the turn in flight's)."""
        index = self.index_of_seq(seq)
        if index is None:
            return self.pending.seq if self.pending is not None else seq
        return self.message_seqs[index]

    def anchor(self, seq: int) -> str:
        return f"jt-{self.uid}-seq-{self.anchor_seq(seq)}"

    def window_start(self, seq: int) -> int:
        """Where a window showing ``seq`` starts: its message first (or the message holding the calls its tool
        results answer, so a jump to an ending shows what was called), or the last page for the turn in flight."""
        index = self.index_of_seq(seq)
        if index is None:
            return max(0, len(self.messages) - self.page_size)
        paired_from = self.messages[index].paired_from
        return min(index, paired_from) if paired_from is not None else index

    def ending_seq(self) -> int:
        """The seq "the ending" names: the last terminal record's (a claim or memory revisions may follow it),
        else the last record's."""
        if self.facts is not None and self.facts.terminal_seq is not None:
            return self.facts.terminal_seq
        ended = [segment for segment in self.segments if segment.ending not in ("running", "crashed")]
        if self.why.terminal_reason is not None and ended:
            return ended[-1].last_seq  # without the records: the process run that wrote the last terminal
        return int(self.header["last_seq"])

    def backwards_seqs(self) -> list[int]:
        """The seqs the fold found dated before the dated record before them (``times_out_of_order``)."""
        return [f.seq for f in self.finding_values if f.code == "times_out_of_order" and f.seq is not None]

    def backwards_text(self) -> str:
        return f"record times run backwards at seq {', '.join(map(str, self.backwards_seqs()))}"

    def last_activity(self) -> str | None:
        """When the run was last heard from, as ``last activity <time>`` (``file modified <time>`` where only a
        file's modification time says), where the store kept a time (None otherwise)."""
        heard = self.facts.last_heard() if self.facts is not None else None
        return None if heard is None else f"{heard[0]} {time_text(heard[1])}"

    def targets(self) -> list[Target]:
        """Every place "jump to" reaches (``conversation_places``)."""
        return targets_of(self)

    def call_marks(self, *, settled: bool = True) -> Iterator[tuple[int, str, bool, CallState]]:
        """Each call of the run and of its turn in flight as ``(seq, tool name, is_error, state)``, in order;
        ``settled=False`` leaves out the calls answered without an error."""
        return call_marks_of(self.messages, self.pending, settled=settled)

    # -- plain text ----------------------------------------------------------------------------

    def run_tokens(self) -> Tokens:
        h = self.header
        return Tokens(
            int(h.get("in_tokens") or 0),
            int(h.get("out_tokens") or 0),
            int(h.get("cache_read_tokens") or 0),
            int(h.get("cache_create_tokens") or 0),
            int(h.get("thinking_tokens") or 0),
        )

    def run_cost(self) -> float | None:
        return self.run_tokens().cost(self.prices, self.header.get("model"))

    def header_text(self) -> str:
        """The header in one line of plain text (for logs and tests)."""
        h = self.header
        banner = self.why.banner().text
        counters = ", ".join(f"{name} {h[name]:,}" for name in COUNTER_NAMES if name in h)
        segments = ", ".join(f"#{s.index} {ending_text(s.ending)}" for s in self.segments) or "none"
        return f"{h['run']} — {banner}; {counters}; segments: {segments}; resume after seq {h['last_seq']}"

    # -- HTML (escaped) -----------------------------------------------------------------------

    def segments_html(self) -> str:
        """The process runs as one compact bar: a chip per run (who claimed it, when, how it ended) that links
        to the run's first message; details in the tooltip. The chips wrap onto more lines when they do not fit.
        A run of thousands of process runs shows its first and last ``SEGMENT_CHIPS // 2`` and says how many are
        between (each is still in "jump to" and in the report's process-run table): a header of ten thousand chips
        would be megabytes. A last process run with no terminal says "no ending recorded" and, where the store
        kept a time, when the run was last heard from (it may have died long ago: it is not "running")."""
        chips = []
        created = self.facts.created if self.facts is not None else None
        last_activity = self.last_activity()
        segments = self.segments
        half = SEGMENT_CHIPS // 2
        between = len(segments) - 2 * half if len(segments) > SEGMENT_CHIPS else 0
        for s in [*segments[:half], *segments[-half:]] if between else segments:
            if between and s.index == segments[-half].index:
                chips.append(f'<span class="jt-muted jt-segments-more">… {between:,} more process runs …</span>')
            who = s.claimed_by or "first run"
            when = s.claimed_at or (created if s.index == 0 else None)
            message = f"; {s.terminal_message}" if s.terminal_message else ""
            started = f", {'claimed' if s.claimed_at else 'created'} {when}" if when else ""
            heard = f", {last_activity}" if s.ending == "running" and last_activity else ""
            title = (
                f"process run #{s.index}: {who}{started}; seq {s.first_seq}-{s.last_seq}, {s.llm_calls} model "
                f"calls, {s.tool_calls} tool results, in {s.in_tokens:,} / out {s.out_tokens:,} tokens{message}"
                f"{heard}"
            )
            heard_html = f' <span class="jt-muted">· {esc(last_activity)}</span>' if heard else ""
            chips.append(
                f'<a class="jt-segment jt-tone-{esc(_segment_tone(s.ending))}" data-segment="{s.index}" '
                f'href="#{esc(self.anchor(s.first_seq))}" title="{esc(title)}">#{s.index} {esc(who)} → '
                f"<b>{esc(ending_text(s.ending))}</b>{heard_html}</a>"
            )
        return (
            f'<div class="jt-segments"><span class="jt-segments-label">process runs ({len(self.segments)}):</span>'
            f"{''.join(chips) or 'none'}</div>"
        )

    def findings_html(self) -> str:
        """The findings, each seq a link to its message; collapsed when there are more than a few."""
        if not self.finding_values:
            return ""
        items = []
        for finding in self.finding_values:
            if finding.seq is None:
                items.append(f"<li>{esc(finding_text(finding))}</li>")
                continue
            link = (
                f'<a class="jt-seq-link" href="#{esc(self.anchor(finding.seq))}" data-seq="{finding.seq}">'
                f"seq {finding.seq}</a>"
            )
            items.append(f"<li>{link}: {esc(finding.code)} ({esc(finding.severity)}) — {esc(finding.message)}</li>")
        errors = sum(1 for f in self.finding_values if f.severity == "error")
        summary = f"{len(self.finding_values)} finding{'s' if len(self.finding_values) != 1 else ''}" + (
            f" ({errors} error{'s' if errors != 1 else ''})" if errors else ""
        )
        opened = " open" if len(self.finding_values) <= OPEN_FINDINGS else ""
        return (
            f'<details class="jt-findings-box"{opened}><summary>{esc(summary)}</summary>'
            f'<ul class="jt-findings">{"".join(items)}</ul></details>'
        )

    def times_html(self) -> str:
        facts = self.facts
        if facts is None:
            return ""
        parts = []
        if facts.created:
            parts.append(f"created <b>{esc(shown_time(facts.created))}</b>")
        if facts.updated is not None:
            parts.append(f"{facts.updated_label()} <b>{esc(time_text(facts.updated))}</b>")
        if self.backwards_seqs():
            parts.append(f"first to last record <b>unknown</b>: {esc(self.backwards_text())}")
        elif facts.has_times and facts.seqs:
            span = facts.between(facts.seqs[0], facts.seqs[-1])
            parts.append(f"first to last record <b>{esc(duration_text(span))}</b>")
        parts.append(f'<span class="jt-muted">{esc(facts.times_note())}</span>')
        return f'<div class="jt-counters jt-times">{" · ".join(parts)}</div>'

    def header_html(self) -> str:
        """The banner (why the run stopped), the run and its status, configuration, tokens, times, process
        runs and findings: a few lines however long the run."""
        h = self.header
        config = ""
        if "model" in h:
            facts = [
                ("provider", h["provider"]),
                ("thinking", h["thinking_mode"]),
                ("effort", h["reasoning_effort"]),
                ("max tokens", h["max_tokens"]),
                ("max iterations", h["max_iterations"]),
                ("system", h["system_hash"]),
                ("tools", h["tools_hash"]),
                ("caller", h["caller"]),
                ("interactive", "yes" if h["interactive"] else "no"),
                ("conversation", h["conversation"]),
                ("approvals", approvals_text(h["approvals"]) or None),
                ("approved once", ", ".join(h["call_approvals"]) or None),
                ("memory", ", ".join(f"{k}@{v}" for k, v in sorted(h["memory_revisions"].items())) or None),
            ]
            config = (
                '<div class="jt-counters jt-config">'
                + " · ".join(
                    f"{esc(label)} <b>{esc(value)}</b>" for label, value in facts if value is not None and value != ""
                )
                + "</div>"
            )
        counters = " · ".join(
            f"{esc(name.replace('_', ' '))} <b>{esc(f'{h[name]:,}')}</b>" for name in COUNTER_NAMES if name in h
        )
        cost = self.run_cost()
        if cost is not None:
            counters += f" · cost <b>{esc(cost_text(cost))}</b> <span class='jt-muted'>(your price table)</span>"
        resume = (
            f'<div class="jt-counters">resume after seq <b>{esc(h["last_seq"])}</b>'
            + (f", next iteration <b>{esc(h['next_iteration'])}</b>" if "next_iteration" in h else "")
            + f", waiting for <b>{esc(h['waiting_for'] or 'nothing')}</b></div>"
        )
        banner = self.why.banner()
        last_activity = self.last_activity()
        if self.why.terminal_reason is None and self.status == "open" and last_activity:
            heard = last_activity
            banner = Banner(
                banner.tone, banner.title, banner.detail, f"{banner.note}; {heard}" if banner.note else heard
            )
        return (
            f'<div class="jt-header" id="jt-{self.uid}-header">{banner.to_html()}'
            f"<h3><code>{esc(h['run'])}</code> {status_badge(self.status)} "
            f'<span class="jt-muted">{esc(h.get("model") or "")}</span></h3>'
            f'{config}<div class="jt-counters">{counters}</div>{self.times_html()}{resume}{self.segments_html()}'
            f"{self.findings_html()}</div>"
        )

    def call_html(self, call: CallView, where: str, values: Values | None = None) -> str:
        css = (
            "jt-call"
            + (" jt-call-error" if call.is_error else "")
            + ("" if call.state == "answered" else " jt-call-pending")
        )
        flags = " ".join(f'<span class="jt-flag jt-call-flag">[{esc(word)}]</span>' for word in call.flags)
        took = self.facts.call_seconds(call.id) if self.facts is not None else None
        took_html = f' <span class="jt-muted">took {esc(duration_text(took))}</span>' if took is not None else ""
        if call.result_text is not None:
            result = long_text(call.result_text, self.limit, values=values, label=f"{where} · result of {call.id}")
        elif call.state == "deferred":
            note = f"<div>note: <b>{esc(call.note)}</b></div>" if call.note else ""
            handle = f"<div>handle: <code>{esc(call.handle)}</code></div>" if call.handle else ""
            result = f"<i class='jt-muted'>deferred: waiting for an answer</i>{note}{handle}"
        elif call.state == "approved once":
            result = "<i class='jt-muted'>approved once; not run yet</i>"
        else:
            result = "<i class='jt-muted'>waiting: no result yet</i>"
        call_input = long_text(call.input_text, self.limit, values=values, label=f"{where} · input of {call.id}")
        return (
            f'<div class="{css}" data-call="{esc(call.id)}" data-state="{esc(call.state)}">'
            f'<div><h4>call <code>{esc(call.name)}</code> <span class="jt-muted">{esc(call.id)}</span> '
            f"{flags}</h4>{call_input}</div>"
            f"<div><h4>result{took_html}</h4>{result}</div></div>"
        )

    def thinking_html(self, text: str, where: str, values: Values | None = None) -> str:
        # Collapsed: reasoning is long and rarely what a reader looks for first.
        return (
            f'<details class="jt-thinking"><summary>thinking ({len(text):,} characters)</summary>'
            f"{long_text(text, self.limit, values=values, label=f'{where} · thinking')}</details>"
        )

    def provider_html(self, part: Part, where: str, values: Values | None = None) -> str:
        return (
            f'<div class="jt-provider" data-kind="{esc(part.label)}"><h4>provider block '
            f"<code>{esc(part.label)}</code></h4>"
            f"{long_text(part.text, self.limit, values=values, label=f'{where} · {part.label}')}</div>"
        )

    def part_html(
        self, part: Part, where: str = "", values: Values | None = None, budget: RenderBudget | None = None
    ) -> str:
        if part.kind == "call" and part.call is not None:
            return self.call_html(part.call, where, values)
        if part.kind == "thinking":
            return self.thinking_html(part.text, where, values)
        if part.kind == "result":
            label = f"{where} · result for {part.label}"
            return (
                f"<h4>tool result for <code>{esc(part.label)}</code> (no call)</h4>"
                f"{long_text(part.text, self.limit, values=values, label=label)}"
            )
        if part.kind == "provider":
            return self.provider_html(part, where, values)
        if part.kind == "empty":
            return "<i class='jt-muted'>(empty block)</i>"
        return markdown_text(part.text, self.limit, values=values, label=f"{where} · text", budget=budget)

    def turn_facts_html(self, seq: int) -> str:
        """``took 3.2 s · in 1,200 · cache read 800 · … · cost 0.0123`` for the assistant turn at ``seq``."""
        facts = self.facts
        if facts is None:
            return ""
        parts = []
        when = facts.times.get(seq)
        if when is not None:
            parts.append(time_text(when))
        took = facts.turn_seconds(seq)
        if took is not None:
            parts.append(f"took {duration_text(took)}")
        tokens = facts.turns.get(seq)
        if tokens is not None:
            parts.append(tokens.text())
            cost = tokens.cost(self.prices, self.header.get("model"))
            if cost is not None:
                parts.append(f"cost {cost_text(cost)}")
        return f' <span class="jt-turn-facts jt-muted">{esc(" · ".join(parts))}</span>' if parts else ""

    def message_html(
        self,
        message: MessageView,
        values: Values | None = None,
        budget: RenderBudget | None = None,
        target: int | None = None,
        calls_shown: bool = True,
    ) -> str:
        """One message. ``calls_shown``: the calls its tool results answer are in the same window; when they are
        not (a window that starts at this message), the results are drawn here on their own."""
        where = f"seq {message.seq}"
        inner = "".join(self.part_html(part, where, values, budget) for part in message.parts)
        if message.paired_results and not calls_shown:
            inner += "".join(
                f"<h4>tool result for <code>{esc(part.label)}</code> <span class='jt-muted'>(its call is in an "
                f"earlier message)</span></h4>"
                f"{long_text(part.text, self.limit, values=values, label=f'{where} · result for {part.label}')}"
                for part in message.paired_parts
            )
        elif message.paired_results:
            many = message.paired_results != 1
            results = f"{message.paired_results} tool result{'s' if many else ''}"
            calls = "their calls" if many else "its call"
            inner += f"<div class='jt-muted jt-paired'><i>{results}, shown beside {calls} above</i></div>"
        inner = inner or "<i class='jt-muted'>(no content)</i>"
        facts = self.turn_facts_html(message.seq) if message.role == "assistant" else ""
        if not facts and self.facts is not None and message.seq in self.facts.times:
            facts = f' <span class="jt-turn-facts jt-muted">{esc(time_text(self.facts.times[message.seq]))}</span>'
        marked = " jt-target" if target is not None and target == message.seq else ""
        return (
            f'<div class="jt-msg jt-msg-{role_class(message.role)}{marked}" id="jt-{self.uid}-seq-{message.seq}" '
            f'data-index="{message.index}" data-seq="{message.seq}">'
            f'<span class="jt-role">{esc(message.role)} · seq {message.seq}</span>{facts}{inner}</div>'
        )

    def pending_html(
        self, values: Values | None = None, budget: RenderBudget | None = None, target: int | None = None
    ) -> str:
        """The turn in flight, in place after the last message: what the model said and thought last, and each
        call with its state (answered, deferred with its note and handle, approved once, waiting)."""
        pending = self.pending
        if pending is None:
            return ""
        where = f"seq {pending.seq} (in flight)"
        text = (
            markdown_text(pending.text, self.limit, values=values, label=f"{where} · text", budget=budget)
            if pending.text
            else "<i class='jt-muted'>(no text in this turn)</i>"
        )
        thinking = "".join(self.thinking_html(t, where, values) for t in pending.thinking)
        providers = "".join(self.provider_html(part, where, values) for part in pending.providers)
        calls = "".join(self.call_html(call, where, values) for call in pending.calls)
        stop = f", stop reason {pending.stop_reason}" if pending.stop_reason else ""
        marked = " jt-target" if target is not None and target >= pending.seq else ""
        return (
            f'<div class="jt-pending jt-msg jt-msg-assistant{marked}" id="jt-{self.uid}-seq-{pending.seq}" '
            f'data-seq="{pending.seq}"><span class="jt-role">assistant · seq {pending.seq} · turn in flight</span>'
            f"{self.turn_facts_html(pending.seq)}<h4>not committed yet (iteration {pending.iteration}{esc(stop)}): "
            f"{pending.waiting} of {len(pending.calls)} calls unanswered</h4>{text}{thinking}{providers}{calls}</div>"
        )

    def window_html(
        self,
        start: int,
        values: Values | None = None,
        target: int | None = None,
        budget: RenderBudget | None = None,
        pending: bool = True,
    ) -> str:
        """``page_size`` messages from ``start``; the window that reaches the end ends with the turn in flight
        (unless ``pending`` is False: a followed view draws it apart, as it changes with every record).
        ``target`` (a seq) is marked; ``values`` collects what was cut; ``budget`` bounds Markdown time."""
        body = "".join(html for _seq, html in self.window_items(start, values, target, budget, pending))
        if not body:
            body = "<p class='jt-muted'>no messages</p>"
        return themed(f'<div class="jt-scroll">{body}</div>')

    def window_items(
        self,
        start: int,
        values: Values | None = None,
        target: int | None = None,
        budget: RenderBudget | None = None,
        pending: bool = True,
    ) -> list[tuple[int, str]]:
        """The window of ``window_html`` as ``(seq, html)`` pairs, one per message and one for the turn in flight
        when the window reaches the end: a page that must keep to a size (the report) adds them one at a time."""
        budget = budget or RenderBudget()
        start = min(max(0, start), max(0, len(self.messages) - 1))
        shown = self.messages[start : start + self.page_size]
        items = [
            (
                message.seq,
                self.message_html(
                    message,
                    values,
                    budget,
                    target,
                    calls_shown=message.paired_from is None or message.paired_from >= start,
                ),
            )
            for message in shown
        ]
        if pending and start + self.page_size >= len(self.messages) and self.pending is not None:
            items.append((self.pending.seq, self.pending_html(values, budget, target)))
        return items

    def page_html(self, number: int, values: Values | None = None) -> str:
        """One page of messages; the last page ends with the turn in flight."""
        number = min(max(0, number), self.page_count - 1)
        return self.window_html(number * self.page_size, values)

    def to_html(self, page: int = 0) -> str:
        return themed(self.header_html()) + self.page_html(page)


def _segment_tone(ending: str) -> str:
    return STATUS_TONES.get(ending, "muted")
