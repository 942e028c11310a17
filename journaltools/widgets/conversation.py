"""ConversationView: one folded run, paged so that thousands of messages never freeze the notebook.

``ConversationModel`` (pure) turns a ``FoldResult`` into message views: text parts (Markdown, rendered
safely), tool calls paired with their results (side by side), the pending batch with deferrals and
approvals, the record that ended the run in its place at the end, and a header: a banner saying why the run
ended or what it waits for, the status by the listing's rule (so it agrees with ``ls`` and the ``runs``
table), counters, resume position and a timeline of claims. Only the current page is ever rendered to HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from journaltools.fold import Ending, FoldResult
from journaltools.listing import status_of_fold
from journaltools.widgets._html import (
    DEFAULT_LIMIT,
    Banner,
    as_text,
    esc,
    long_text,
    markdown_text,
    status_badge,
    themed,
)
from journaltools.widgets._why import banner_for

CallState = Literal["answered", "pending"]


@dataclass(frozen=True, slots=True)
class CallView:
    """A tool call with its input and (when answered) its result, shown side by side."""

    id: str
    name: str
    input_text: str
    result_text: str | None
    is_error: bool
    state: CallState
    call_seq: int | None = None
    result_seq: int | None = None
    deferred: str | None = None
    approval: str | None = None

    @property
    def flags(self) -> list[str]:
        """Plain words about the call: error, pending, deferred (why), approval decision."""
        words = []
        if self.is_error:
            words.append("error")
        if self.state == "pending":
            words.append("pending")
        if self.deferred is not None:
            words.append(f"deferred: {self.deferred}")
        if self.approval is not None:
            words.append(f"approval: {self.approval}")
        elif self.deferred == "approval" and self.state == "pending":
            words.append("awaiting approval")
        return words


@dataclass(frozen=True, slots=True)
class Part:
    kind: Literal["text", "call", "result"]
    text: str = ""
    call: CallView | None = None


@dataclass(frozen=True, slots=True)
class MessageView:
    index: int
    role: str
    parts: list[Part]


@dataclass(frozen=True, slots=True)
class Marker:
    """A point on the run's timeline (a claim, say) at ``percent`` of the way from seq 1 to the last seq."""

    seq: int
    percent: float
    label: str
    kind: Literal["claim", "end"] = "claim"


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)]


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        texts = [str(item.get("text", "")) for item in content if isinstance(item, dict) and item.get("type") == "text"]
        return "\n".join(texts) if texts else as_text(content)
    return as_text(content if content is not None else "")


def ending_record_html(ending: Ending) -> str:
    """The record that ended the run (the fatal error or the cancel), shown where it is: after everything else."""
    if ending.kind == "error":
        what = f"error · {ending.where or 'unknown'} · fatal"
        fields = f"where: <b>{esc(ending.where)}</b> · message: <b>{esc(ending.message)}</b>"
    else:
        what = "cancel"
        fields = f"by: <b>{esc(ending.by)}</b> · reason: <b>{esc(ending.message)}</b>"
    return (
        f'<div class="jt-event jt-tone-{"error" if ending.kind == "error" else "muted"}" data-seq="{ending.seq}">'
        f'<span class="jt-role">seq {ending.seq} · {esc(what)}</span><div>{fields}</div>'
        "<div class='jt-muted'>the run ended here</div></div>"
    )


@dataclass(slots=True)
class ConversationModel:
    """A folded run arranged for display. ``page(n)`` gives ``page_size`` messages; the pending batch and the
    record that ended the run come last. ``status`` is the listing's (``invalid`` when a finding is an error);
    ``fold_status`` is what the lenient fold alone says."""

    run: str | None
    status: str
    messages: list[MessageView]
    pending: list[CallView]
    header: dict[str, Any]
    markers: list[Marker]
    findings: list[str] = field(default_factory=list)
    page_size: int = 50
    limit: int = DEFAULT_LIMIT
    banner: Banner | None = None
    ending: Ending | None = None
    fold_status: str | None = None

    @classmethod
    def from_fold(
        cls, result: FoldResult, page_size: int = 50, limit: int = DEFAULT_LIMIT, status: str | None = None
    ) -> ConversationModel:
        """``status`` overrides the listing's rule (e.g. with a listing's own row); by default ``status_of_fold``."""
        traces = {trace.call_id: trace for trace in result.tool_calls}
        results: dict[str, Mapping[str, Any]] = {}
        for message in result.messages:
            if message["role"] == "user":
                for block in _blocks(message["content"]):
                    if block.get("type") == "tool_result":
                        results[str(block.get("tool_use_id"))] = block
        shown_results: set[str] = set()
        views: list[MessageView] = []
        for index, message in enumerate(result.messages):
            parts: list[Part] = []
            for block in _blocks(message["content"]):
                kind = block.get("type")
                if kind == "text":
                    parts.append(Part("text", str(block.get("text", ""))))
                elif kind == "tool_use":
                    call_id = str(block.get("id"))
                    answer = results.get(call_id)
                    trace = traces.get(call_id)
                    if answer is not None:
                        shown_results.add(call_id)
                    call = CallView(
                        id=call_id,
                        name=str(block.get("name")),
                        input_text=as_text(block.get("input")),
                        result_text=_result_text(answer) if answer is not None else None,
                        is_error=bool(answer.get("is_error")) if answer is not None else False,
                        state="answered" if answer is not None else "pending",
                        call_seq=trace.call_seq if trace else None,
                        result_seq=trace.result_seq if trace else None,
                        deferred=trace.deferred if trace else None,
                        approval=trace.approval if trace else None,
                    )
                    parts.append(Part("call", call=call))
                elif kind == "tool_result":
                    if str(block.get("tool_use_id")) not in shown_results:  # never paired: show on its own
                        parts.append(Part("result", _result_text(block)))
                else:
                    parts.append(Part("text", as_text(block)))
            views.append(MessageView(index, str(message["role"]), parts))
        pending_views: list[CallView] = []
        for pending_call in result.pending:
            trace = traces.get(pending_call.id)
            pending_views.append(
                CallView(
                    id=pending_call.id,
                    name=pending_call.name,
                    input_text=as_text(pending_call.input),
                    result_text=None,
                    is_error=False,
                    state="pending",
                    call_seq=trace.call_seq if trace else None,
                    deferred=pending_call.deferred,
                    approval=pending_call.approval,
                )
            )
        last_seq = result.resume.last_seq

        def percent(seq: int) -> float:
            return 100.0 * (seq - 1) / max(1, last_seq - 1)

        markers = [Marker(seq, percent(seq), f"claim at seq {seq}") for seq in result.claim_seqs]
        if result.ending is not None:
            end_seq = result.ending.seq
            markers.append(Marker(end_seq, percent(end_seq), f"ended at seq {end_seq}", "end"))
        shown_status = status or status_of_fold(result)
        header: dict[str, Any] = {
            "run": result.run,
            "status": shown_status,
            "model": result.model,
            **result.counters.to_json(),
            "last_seq": last_seq,
            "waiting_for": result.resume.waiting_for,
            "stop_reason": result.stop_reason,
            "end_reason": result.ending.text if result.ending is not None else None,
        }
        findings = [f"seq {f.seq}: {f.code} ({f.severity}): {f.message}" for f in result.findings]
        return cls(
            result.run,
            shown_status,
            views,
            pending_views,
            header,
            markers,
            findings,
            max(1, page_size),
            limit,
            banner_for(result, shown_status),
            result.ending,
            result.status,
        )

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.messages) // self.page_size))

    def page(self, number: int) -> list[MessageView]:
        number = min(max(0, number), self.page_count - 1)
        start = number * self.page_size
        return self.messages[start : start + self.page_size]

    def header_text(self) -> str:
        h = self.header
        waiting = h["waiting_for"] or "nothing"
        why = f"{self.banner.text}; " if self.banner is not None else ""
        return (
            f"{h['run']} — {h['status']} — {why}{h['turns']} turns, {h['tool_calls']} tool calls "
            f"({h['tool_errors']} errors), {h['input_tokens']:,} in / {h['output_tokens']:,} out tokens, "
            f"{h['claims']} claims, {h['deferrals']} deferrals, {h['errors']} error records; "
            f"resume after seq {h['last_seq']}, waiting for {waiting}"
        )

    # -- HTML (escaped) -----------------------------------------------------------------------

    def header_html(self) -> str:
        """The banner (why the run ended), then the run, its status, counters, resume position and timeline."""
        h = self.header
        counters = " · ".join(
            f"{esc(name.replace('_', ' '))} <b>{esc(h[name])}</b>"
            for name in (
                "turns",
                "tool_calls",
                "tool_errors",
                "input_tokens",
                "output_tokens",
                "claims",
                "errors",
                "deferrals",
                "skipped_optional",
            )
        )
        markers = "".join(
            f'<span class="jt-marker{" jt-marker-end" if m.kind == "end" else ""}" '
            f'style="left:calc({m.percent:.1f}% - {m.percent * 0.03:.2f}px)" '
            f'title="{esc(m.label)}"></span>'
            for m in self.markers
        )
        events = ", ".join(esc(m.label) for m in self.markers) or "no claims"
        findings = "".join(f"<li>{esc(text)}</li>" for text in self.findings)
        banner = self.banner.to_html() if self.banner is not None else ""
        return (
            f'<div class="jt-header">{banner}<h3><code>{esc(h["run"])}</code> {status_badge(self.status)} '
            f'<span class="jt-muted">{esc(h["model"] or "")}</span></h3>'
            f'<div class="jt-counters">{counters}</div>'
            f'<div class="jt-counters">resume position: after seq <b>{esc(h["last_seq"])}</b>, waiting for '
            f"<b>{esc(h['waiting_for'] or 'nothing')}</b></div>"
            f'<div class="jt-timeline" title="seq 1 … {esc(h["last_seq"])}">{markers}</div>'
            f'<div class="jt-muted">timeline: {events}</div>'
            + (f'<ul class="jt-findings">{findings}</ul>' if findings else "")
            + "</div>"
        )

    def call_html(self, call: CallView) -> str:
        css = (
            "jt-call"
            + (" jt-call-error" if call.is_error else "")
            + (" jt-call-pending" if call.state == "pending" else "")
        )
        flags = " ".join(f'<span class="jt-flag jt-call-flag">[{esc(word)}]</span>' for word in call.flags)
        seqs = f"seq {call.call_seq}" if call.call_seq is not None else ""
        if call.result_seq is not None:
            seqs += f" → result seq {call.result_seq}"
        result = (
            long_text(call.result_text, self.limit)
            if call.result_text is not None
            else "<i class='jt-muted'>no result yet</i>"
        )
        return (
            f'<div class="{css}" data-call="{esc(call.id)}">'
            f'<div><h4>call <code>{esc(call.name)}</code> <span class="jt-muted">{esc(call.id)} {esc(seqs)}</span> '
            f"{flags}</h4>{long_text(call.input_text, self.limit)}</div>"
            f"<div><h4>result</h4>{result}</div></div>"
        )

    def message_html(self, message: MessageView) -> str:
        if not message.parts:
            return ""
        inner = []
        for part in message.parts:
            if part.kind == "call" and part.call is not None:
                inner.append(self.call_html(part.call))
            elif part.kind == "result":
                inner.append(f"<h4>unpaired tool result</h4>{long_text(part.text, self.limit)}")
            else:
                inner.append(markdown_text(part.text, self.limit))
        return (
            f'<div class="jt-msg jt-msg-{esc(message.role)}" data-index="{message.index}">'
            f'<span class="jt-role">{esc(message.role)} #{message.index}</span>{"".join(inner)}</div>'
        )

    def pending_html(self) -> str:
        if not self.pending:
            return ""
        calls = "".join(self.call_html(call) for call in self.pending)
        return f'<div class="jt-pending"><h4>pending batch ({len(self.pending)} unanswered)</h4>{calls}</div>'

    def page_html(self, number: int) -> str:
        """One page of messages; the last page ends with the pending batch and the record that ended the run."""
        messages = "".join(self.message_html(message) for message in self.page(number))
        last = min(max(0, number), self.page_count - 1) == self.page_count - 1
        tail = ""
        if last:
            tail = self.pending_html() + (ending_record_html(self.ending) if self.ending is not None else "")
        return themed(messages + tail)

    def to_html(self, page: int = 0) -> str:
        return themed(self.header_html()) + self.page_html(page)


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
