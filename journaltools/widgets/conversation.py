"""ConversationView: one folded run, paged so that thousands of messages never freeze the notebook.

``ConversationModel`` (pure) turns a ``FoldResult`` into views of ``state.messages`` and their five block
kinds: text (Markdown, rendered safely), thinking (collapsed; its signature is never shown), tool calls with
their input JSON beside the result that answers them (``is_error`` marked), and provider blocks by kind with
their raw JSON as stored. The turn in flight (``state.pending``) comes last with each call's state; the
header says why the run stopped (terminal reason and message, last stop reason, open deferrals, pending
calls), shows one chip per process run (who claimed it, how it ended), the fingerprint, caller, interactive
flag and a digest of the conversation token (never the token). Only the current page is rendered to HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from journaltools.folding import FoldResult, Segment
from journaltools.protocol.blocks import Message, ToolResultBlock, ToolUseBlock
from journaltools.widgets._display import conversation_digest, raw_json_text
from journaltools.widgets._html import DEFAULT_LIMIT, STATUS_TONES, esc, long_text, markdown_text, status_badge, themed
from journaltools.widgets._why import Why

CallState = Literal["answered", "deferred", "approved once", "waiting"]
PartKind = Literal["text", "thinking", "call", "result", "provider", "empty"]


@dataclass(frozen=True, slots=True)
class CallView:
    """A tool call with its input and (when answered) its result, shown side by side."""

    id: str
    name: str
    input_text: str
    result_text: str | None
    is_error: bool
    state: CallState
    note: str = ""
    handle: str = ""

    @property
    def flags(self) -> list[str]:
        """Plain words about the call: error, and its state when it is not simply answered."""
        words = ["error"] if self.is_error else []
        if self.state != "answered":
            words.append(self.state)
        return words


@dataclass(frozen=True, slots=True)
class Part:
    """One block of a message. ``label`` is a provider block's kind; ``text`` the block's text or JSON."""

    kind: PartKind
    text: str = ""
    call: CallView | None = None
    label: str = ""


@dataclass(frozen=True, slots=True)
class MessageView:
    index: int
    role: str
    parts: list[Part]


@dataclass(frozen=True, slots=True)
class PendingView:
    """The assistant turn in flight: its text and calls, each with its state (nothing of it is committed)."""

    seq: int
    iteration: int
    stop_reason: str
    text: str
    calls: list[CallView]


def _results_by_call(messages: list[Message]) -> dict[str, ToolResultBlock]:
    results: dict[str, ToolResultBlock] = {}
    for message in messages:
        for block in message.content or ():
            if block.tool_result is not None:
                results.setdefault(block.tool_result.tool_use_id, block.tool_result)
    return results


def _call(
    use: ToolUseBlock, answer: ToolResultBlock | None, state: CallState, note: str = "", handle: str = ""
) -> CallView:
    return CallView(
        id=use.id,
        name=use.name,
        input_text=raw_json_text(use.input),
        result_text=answer.content if answer is not None else None,
        is_error=answer.is_error if answer is not None else False,
        state=state,
        note=note,
        handle=handle,
    )


def message_views(messages: list[Message]) -> list[MessageView]:
    """Every message as parts; a tool_result that answers a call shown is drawn with that call, not again."""
    results = _results_by_call(messages)
    shown: set[str] = set()
    views: list[MessageView] = []
    for index, message in enumerate(messages):
        parts: list[Part] = []
        for block in message.content or ():
            if block.text is not None:
                parts.append(Part("text", block.text.text))
            elif block.thinking is not None:
                parts.append(Part("thinking", block.thinking.text))
            elif block.tool_use is not None:
                answer = results.get(block.tool_use.id)
                if answer is not None:
                    shown.add(block.tool_use.id)
                parts.append(Part("call", call=_call(block.tool_use, answer, "answered" if answer else "waiting")))
            elif block.tool_result is not None:
                if block.tool_result.tool_use_id not in shown:  # never paired with a call: show it on its own
                    parts.append(Part("result", block.tool_result.content, label=block.tool_result.tool_use_id))
            elif block.provider is not None:
                parts.append(
                    Part("provider", raw_json_text(block.provider.raw, indent=False), label=block.provider.kind)
                )
            else:
                parts.append(Part("empty"))
        views.append(MessageView(index, message.role, parts))
    return views


def pending_view(result: FoldResult) -> PendingView | None:
    state = result.state
    if state is None or state.pending is None:
        return None
    pending = state.pending
    answers = {block.tool_use_id: block for block in pending.results}
    unanswered = {call.id: call for call in result.pending_calls}
    texts: list[str] = []
    calls: list[CallView] = []
    for block in pending.assistant.content or ():
        if block.text is not None:
            texts.append(block.text.text)
        if block.tool_use is None:
            continue
        use = block.tool_use
        waiting = unanswered.get(use.id)
        if use.id in pending.answered or waiting is None:
            calls.append(_call(use, answers.get(use.id), "answered"))
        elif waiting.deferred is not None:
            calls.append(_call(use, None, "deferred", waiting.deferred.note, waiting.deferred.handle))
        else:
            calls.append(_call(use, None, "approved once" if waiting.call_approved else "waiting"))
    return PendingView(pending.seq, pending.iteration, pending.stop_reason, "\n\n".join(texts), calls)


def header_of(result: FoldResult, status: str) -> dict[str, Any]:
    """The header's facts as plain values (the token only as its digest)."""
    state = result.state
    header: dict[str, Any] = {"run": result.run, "status": status, "last_seq": result.last_seq}
    header["records"] = result.records
    header["waiting_for"] = result.waiting_for
    if state is None:
        return header
    fp = state.fingerprint
    header.update(
        provider=fp.provider,
        model=fp.model,
        thinking_mode=fp.thinking_mode,
        reasoning_effort=fp.reasoning_effort or None,
        max_tokens=fp.max_tokens,
        max_iterations=fp.max_iterations,
        system_hash=fp.system_hash[:12],
        tools_hash=fp.tools_hash[:12],
        caller=state.caller or None,
        interactive=state.interactive,
        conversation=conversation_digest(state.conversation_token),
        next_iteration=state.next_iteration,
        last_stop_reason=state.last_stop_reason or None,
        approvals=list(state.approvals or ()),
        call_approvals=[approval.tool_use_id for approval in state.call_approvals or ()],
        memory_revisions=dict(state.memory_revisions or {}),
        **state.counters.to_json(),
        total_tokens=state.counters.total_tokens,
    )
    return header


#: Counters in the header, in this order.
COUNTERS = (
    "llm_calls",
    "tool_calls",
    "remote_tool_calls",
    "in_tokens",
    "out_tokens",
    "cache_read_tokens",
    "cache_create_tokens",
    "thinking_tokens",
)


@dataclass(slots=True)
class ConversationModel:
    """A folded run arranged for display. ``page(n)`` gives ``page_size`` messages; the turn in flight comes
    after the last page. ``status`` is the fold's (``open``, the last terminal's reason, ``invalid``) unless the
    caller gives a listing's own."""

    run: str
    status: str
    messages: list[MessageView]
    pending: PendingView | None
    why: Why
    segments: list[Segment]
    header: dict[str, Any]
    findings: list[str] = field(default_factory=list)
    page_size: int = 50
    limit: int = DEFAULT_LIMIT

    @classmethod
    def from_fold(
        cls, result: FoldResult, page_size: int = 50, limit: int = DEFAULT_LIMIT, status: str | None = None
    ) -> ConversationModel:
        shown_status = status or result.status
        return cls(
            run=result.run,
            status=shown_status,
            messages=message_views(result.messages),
            pending=pending_view(result),
            why=Why.of(result, shown_status),
            segments=list(result.segments),
            header=header_of(result, shown_status),
            findings=[f"seq {f.seq}: {f.code} ({f.severity}): {f.message}" for f in result.findings],
            page_size=max(1, page_size),
            limit=limit,
        )

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.messages) // self.page_size))

    def page(self, number: int) -> list[MessageView]:
        number = min(max(0, number), self.page_count - 1)
        start = number * self.page_size
        return self.messages[start : start + self.page_size]

    def header_text(self) -> str:
        """The header in one line of plain text (for logs and tests)."""
        h = self.header
        banner = self.why.banner().text
        counters = ", ".join(f"{name} {h[name]:,}" for name in COUNTERS if name in h)
        segments = ", ".join(f"#{s.index} {s.ending}" for s in self.segments) or "none"
        return f"{h['run']} — {banner}; {counters}; segments: {segments}; resume after seq {h['last_seq']}"

    # -- HTML (escaped) -----------------------------------------------------------------------

    def segments_html(self) -> str:
        """One chip per process run: its index, who claimed it and when, and how it ended."""
        chips = []
        for s in self.segments:
            who = f" · {s.claimed_by}" if s.claimed_by else " · first run"
            when = f" · {s.claimed_at}" if s.claimed_at else ""
            # The terminal's message is in the banner already; the chip keeps it in its tooltip.
            message = f"; {s.terminal_message}" if s.terminal_message else ""
            title = f"seq {s.first_seq}-{s.last_seq}, {s.llm_calls} model calls, {s.tool_calls} tool results{message}"
            chips.append(
                f'<span class="jt-segment jt-tone-{esc(_segment_tone(s.ending))}" data-segment="{s.index}" '
                f'title="{esc(title)}">#{s.index}{esc(who)}{esc(when)} → <b>{esc(s.ending)}</b></span>'
            )
        return f'<div class="jt-segments">process runs: {"".join(chips) or "none"}</div>'

    def header_html(self) -> str:
        """The banner (why the run stopped), the run and its status, configuration, counters and segments."""
        h = self.header
        counters = " · ".join(
            f"{esc(name.replace('_', ' '))} <b>{esc(f'{h[name]:,}')}</b>" for name in COUNTERS if name in h
        )
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
                ("approvals", ", ".join(h["approvals"]) or None),
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
        resume = (
            f'<div class="jt-counters">resume after seq <b>{esc(h["last_seq"])}</b>'
            + (f", next iteration <b>{esc(h['next_iteration'])}</b>" if "next_iteration" in h else "")
            + f", waiting for <b>{esc(h['waiting_for'] or 'nothing')}</b></div>"
        )
        findings = "".join(f"<li>{esc(text)}</li>" for text in self.findings)
        return (
            f'<div class="jt-header">{self.why.banner().to_html()}<h3><code>{esc(h["run"])}</code> '
            f'{status_badge(self.status)} <span class="jt-muted">{esc(h.get("model") or "")}</span></h3>'
            f'{config}<div class="jt-counters">{counters}</div>{resume}{self.segments_html()}'
            + (f'<ul class="jt-findings">{findings}</ul>' if findings else "")
            + "</div>"
        )

    def call_html(self, call: CallView) -> str:
        css = (
            "jt-call"
            + (" jt-call-error" if call.is_error else "")
            + ("" if call.state == "answered" else " jt-call-pending")
        )
        flags = " ".join(f'<span class="jt-flag jt-call-flag">[{esc(word)}]</span>' for word in call.flags)
        if call.result_text is not None:
            result = long_text(call.result_text, self.limit)
        elif call.state == "deferred":
            note = f"<div>note: <b>{esc(call.note)}</b></div>" if call.note else ""
            handle = f"<div>handle: <code>{esc(call.handle)}</code></div>" if call.handle else ""
            result = f"<i class='jt-muted'>deferred: waiting for an answer</i>{note}{handle}"
        elif call.state == "approved once":
            result = "<i class='jt-muted'>approved once; not run yet</i>"
        else:
            result = "<i class='jt-muted'>no result yet</i>"
        return (
            f'<div class="{css}" data-call="{esc(call.id)}" data-state="{esc(call.state)}">'
            f'<div><h4>call <code>{esc(call.name)}</code> <span class="jt-muted">{esc(call.id)}</span> '
            f"{flags}</h4>{long_text(call.input_text, self.limit)}</div>"
            f"<div><h4>result</h4>{result}</div></div>"
        )

    def part_html(self, part: Part) -> str:
        if part.kind == "call" and part.call is not None:
            return self.call_html(part.call)
        if part.kind == "thinking":
            # Collapsed: reasoning is long and rarely what a reader looks for first.
            return (
                f'<details class="jt-thinking"><summary>thinking ({len(part.text):,} characters)</summary>'
                f"{long_text(part.text, self.limit)}</details>"
            )
        if part.kind == "result":
            return (
                f"<h4>tool result for <code>{esc(part.label)}</code> (no call)</h4>{long_text(part.text, self.limit)}"
            )
        if part.kind == "provider":
            return (
                f'<div class="jt-provider" data-kind="{esc(part.label)}"><h4>provider block '
                f"<code>{esc(part.label)}</code></h4>{long_text(part.text, self.limit)}</div>"
            )
        if part.kind == "empty":
            return "<i class='jt-muted'>(empty block)</i>"
        return markdown_text(part.text, self.limit)

    def message_html(self, message: MessageView) -> str:
        inner = "".join(self.part_html(part) for part in message.parts) or "<i class='jt-muted'>(no content)</i>"
        return (
            f'<div class="jt-msg jt-msg-{esc(message.role)}" data-index="{message.index}">'
            f'<span class="jt-role">{esc(message.role)} #{message.index}</span>{inner}</div>'
        )

    def pending_html(self) -> str:
        pending = self.pending
        if pending is None:
            return ""
        waiting = sum(1 for call in pending.calls if call.state != "answered")
        text = markdown_text(pending.text, self.limit) if pending.text else ""
        calls = "".join(self.call_html(call) for call in pending.calls)
        stop = f", stop reason {pending.stop_reason}" if pending.stop_reason else ""
        return (
            f'<div class="jt-pending jt-msg jt-msg-assistant" data-seq="{pending.seq}"><h4>turn in flight '
            f"(seq {pending.seq}, iteration {pending.iteration}{esc(stop)}): {waiting} of {len(pending.calls)} "
            f"calls unanswered</h4>{text}{calls}</div>"
        )

    def page_html(self, number: int) -> str:
        """One page of messages; the last page ends with the turn in flight."""
        messages = "".join(self.message_html(message) for message in self.page(number))
        last = min(max(0, number), self.page_count - 1) == self.page_count - 1
        return themed(messages + (self.pending_html() if last else ""))

    def to_html(self, page: int = 0) -> str:
        return themed(self.header_html()) + self.page_html(page)


def _segment_tone(ending: str) -> str:
    return STATUS_TONES.get(ending, "muted")


class ConversationView:
    """Header, a pager, and one page of messages at a time."""

    def __init__(self, model: ConversationModel) -> None:
        import ipywidgets as w

        self.model = model
        self.header = w.HTML(themed(model.header_html()))
        self.pager = w.IntSlider(value=0, min=0, max=model.page_count - 1, description="page", continuous_update=False)
        self.pager.layout.display = "none" if model.page_count == 1 else ""
        self.page_label = w.Label()
        self.body = w.HTML()
        self.pager.observe(lambda change: self.show_page(change["new"]), names="value")
        self.widget = w.VBox([self.header, w.HBox([self.pager, self.page_label]), self.body])
        self.widget.add_class("jt-conversation")
        self.show_page(0)

    @classmethod
    def from_fold(cls, result: FoldResult, page_size: int = 50, status: str | None = None) -> ConversationView:
        return cls(ConversationModel.from_fold(result, page_size=page_size, status=status))

    def show_page(self, number: int) -> None:
        self.body.value = self.model.page_html(number)
        self.page_label.value = f"page {number + 1} of {self.model.page_count} ({len(self.model.messages)} messages)"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
