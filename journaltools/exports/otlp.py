"""One run as one OpenTelemetry trace (OTLP JSON): a span for the run, one per model call and one per tool call,
with the GenAI semantic conventions' attributes; content (messages, tool inputs and results) only when asked for."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from journaltools.exports.runview import (
    RunView,
    checked,
    dumps,
    moment_ns,
    outcome,
    tool_kind,
)
from journaltools.folding.exchanges import Exchange
from journaltools.folding.run import FoldedRun

if TYPE_CHECKING:
    pass


#: The GenAI semantic conventions fisk-ai's telemetry pins (``semconv/v1.41.0``).
SEMCONV_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.41.0"

#: fisk-ai's service name, which its telemetry resource carries unless configured otherwise.
SERVICE_NAME: Final = "fisk-ai"

#: The instrumentation scope every exported trace names: the export module's first name, kept when it moved so
#: that a viewer's filters on it stay true.
SCOPE_NAME: Final = "journaltools.export"

_SPAN_KIND_INTERNAL: Final = 1

_SPAN_KIND_CLIENT: Final = 3

_STATUS_ERROR: Final = 2


def _hex_id(run: str, what: str, size: int) -> str:
    """A trace or span id from the run id and what it names: the same journal gives the same ids. Never all
    zeros, which OTLP reads as no id."""
    digest = hashlib.sha256(f"journaltools\x00{what}\x00{run}".encode()).digest()[:size]
    return digest.hex() if any(digest) else "01" + digest.hex()[2:]


def _value(value: object) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 as a string, as the OTLP JSON encoding writes it
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _attributes(pairs: dict[str, object]) -> list[dict[str, Any]]:
    """OTLP key-values; a None value is left out (absent, never a made-up zero)."""
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None]


def _usage(in_tokens: int, out_tokens: int, cache_read: int, cache_create: int, thinking: int) -> dict[str, object]:
    # The journal's in_tokens are the uncached ones; gen_ai.usage.input_tokens includes both cache tiers by the
    # conventions, so fisk-ai carries the uncached part as its own attribute, and so does this.
    return {
        "gen_ai.usage.input_tokens": in_tokens + cache_read + cache_create,
        "gen_ai.usage.output_tokens": out_tokens,
        "gen_ai.usage.cache_read.input_tokens": cache_read,
        "gen_ai.usage.cache_creation.input_tokens": cache_create,
        "gen_ai.usage.reasoning.output_tokens": thinking,
        "fisk.llm.uncached_input_tokens": in_tokens,
    }


@dataclass(slots=True)
class _Clock:
    """Span times by the module's rule: the records' own times, or for an undated journal its one time."""

    run: RunView
    created: int | None
    positions: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = {seq: index for index, seq in enumerate(self.run.facts.seqs)}

    def at(self, seq: int | None) -> int | None:
        """The time of record ``seq``; an undated record (every record of an undated journal) is at
        ``meta.created``, the one time its journal holds."""
        if not self.run.dated or seq is None:
            return self.created
        moment = moment_ns(self.run.facts.times.get(seq, ""))
        return moment if moment is not None else self.created

    def before(self, seq: int) -> int | None:
        """The time of the record stored just before ``seq`` (None when it is undated or there is none)."""
        if not self.run.dated:
            return self.created
        index = self.positions.get(seq, 0)
        return moment_ns(self.run.facts.times.get(self.run.facts.seqs[index - 1], "")) if index > 0 else None


def _span(
    run: RunView,
    key: str,
    name: str,
    kind: int,
    start: int | None,
    end: int | None,
    attributes: dict[str, object],
    *,
    parent: str | None,
    error: bool = False,
) -> dict[str, Any]:
    if end is None:
        end = start
    if start is None or end is None or end < start:
        start = end = end if end is not None else start  # a span never runs backwards; no length is invented
    span: dict[str, Any] = {
        "traceId": _hex_id(run.run, "trace", 16),
        "spanId": _hex_id(run.run, key, 8),
    }
    if parent is not None:
        span["parentSpanId"] = parent
    span.update(
        {
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(start or 0),
            "endTimeUnixNano": str(end or 0),
            "attributes": _attributes(attributes),
        }
    )
    if error:
        span["status"] = {"code": _STATUS_ERROR}
    return span


def _chat_inputs(exchanges: Sequence[Exchange], prompt: str) -> dict[int, list[dict[str, Any]]]:
    """For each model response's seq, the messages journaled since the model's previous response: what that call
    added to the conversation (fisk-ai's ``delta`` capture)."""
    inputs: dict[int, list[dict[str, Any]]] = {}
    pending: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
    for exchange in exchanges:
        if exchange.role == "assistant":
            inputs[exchange.seq], pending = pending, []
        elif exchange.role != "prompt":
            pending.append(exchange.message())
    return inputs


def otlp_trace(folded: FoldedRun, *, content: bool = False) -> dict[str, Any]:
    """One run as an OTLP ``TracesData`` in the OTLP JSON encoding (ids in hex, 64-bit integers as strings).
    Raises ``ExportError`` for a journal with no meta record."""
    return otlp_trace_of(checked(folded), content)


def otlp_trace_of(run: RunView, content: bool) -> dict[str, Any]:
    folded = run.folded
    state = folded.state
    assert state is not None  # checked refuses a run without one
    meta, facts = run.meta, run.facts
    clock = _Clock(run, moment_ns(meta.created))
    undated = not run.dated
    root_id = _hex_id(run.run, "invoke_agent", 8)
    agent = run.agent or None
    common: dict[str, object] = {
        "gen_ai.provider.name": meta.provider or None,
        "gen_ai.conversation.id": run.run,
    }

    spans: list[dict[str, Any]] = []
    inputs = _chat_inputs(run.exchanges, meta.prompt) if content else {}
    responses = {exchange.seq: exchange for exchange in run.exchanges if exchange.role == "assistant"}
    for response in facts.responses:
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            **common,
            "gen_ai.request.model": meta.model,
            "gen_ai.request.max_tokens": meta.max_tokens if meta.max_tokens > 0 else None,
            "gen_ai.response.finish_reasons": [response.stop_reason] if response.stop_reason else None,
            **_usage(
                response.in_tokens,
                response.out_tokens,
                response.cache_read_tokens,
                response.cache_create_tokens,
                response.thinking_tokens,
            ),
            "fisk.llm.iteration": response.iteration,
            "fisk.seq": response.seq,
        }
        said = responses.get(response.seq)
        if content and said is not None:
            output = said.message()
            if response.stop_reason:
                output["finish_reason"] = response.stop_reason
            attributes["gen_ai.input.messages"] = dumps(inputs.get(response.seq, []))
            attributes["gen_ai.output.messages"] = dumps([output])
        end = clock.at(response.seq)
        spans.append(
            _span(
                run,
                f"chat\x00{response.seq}",
                f"chat {meta.model}" if meta.model else "chat",
                _SPAN_KIND_CLIENT,
                clock.before(response.seq),
                end,
                attributes,
                parent=root_id,
            )
        )

    ordinal: dict[int, int] = {}
    for call in facts.calls:
        number = ordinal[call.made_seq] = ordinal.get(call.made_seq, -1) + 1
        call_outcome = outcome(call)
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool,
            "gen_ai.tool.call.id": call.tool_use_id,
            "gen_ai.tool.type": "function",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": run.run,
            "fisk.tool.kind": tool_kind(call),
            "fisk.tool.outcome": call_outcome,
            "fisk.tool.dispatched": call.dispatched if call.says_dispatch else None,
            "fisk.tool.deferred": call.deferral is not None,
            "fisk.tool.resumed": any(call.made_seq < claim <= (call.answered_seq or 0) for claim in facts.claim_seqs),
            "fisk.llm.iteration": call.iteration,
            "fisk.seq": call.made_seq,
            "fisk.tool.answered_seq": call.answered_seq,
        }
        if content:
            attributes["gen_ai.tool.call.arguments"] = bytes(call.input).decode("utf-8", "replace")
            if call.answer is not None:
                attributes["gen_ai.tool.call.result"] = call.answer.result.content
        ended_seq = call.answered_seq if call.deferral is None else call.deferred_seq
        end = clock.at(ended_seq) if ended_seq is not None else clock.at(call.made_seq)
        start = end - call.duration_ns if end is not None and call.duration_ns is not None else end
        spans.append(
            _span(
                run,
                f"execute_tool\x00{call.made_seq}\x00{number}",
                f"execute_tool {call.tool}",
                _SPAN_KIND_INTERNAL,
                start,
                end,
                attributes,
                parent=root_id,
                error=call.is_error,
            )
        )

    counters = state.counters
    terminal = state.terminal
    root_attributes: dict[str, object] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        **common,
        "gen_ai.request.model": meta.model or None,
        "gen_ai.request.max_tokens": meta.max_tokens if meta.max_tokens > 0 else None,
        **_usage(
            counters.in_tokens,
            counters.out_tokens,
            counters.cache_read_tokens,
            counters.cache_create_tokens,
            counters.thinking_tokens,
        ),
        "fisk.run.terminal_reason": terminal.reason if terminal is not None else None,
        "fisk.run.status": folded.status,
        "fisk.run.interactive": meta.interactive,
        "fisk.run.resumed": bool(facts.claim_seqs),
        "fisk.run.turns": state.turns if meta.interactive else None,
        "fisk.run.tool_calls": counters.tool_calls,
        "fisk.run.remote_tool_calls": counters.remote_tool_calls,
        "fisk.llm.thinking": meta.thinking_mode or None,
        "fisk.generation": state.generation.name,
        "fisk.undated": undated,
    }
    if content and terminal is not None and terminal.message:
        root_attributes["fisk.run.terminal_message"] = terminal.message
    # The root spans the run: from meta.created (or an earlier record, a clock that stepped back) to its last
    # record; an undated journal's is the one instant it holds.
    starts = [int(span["startTimeUnixNano"]) for span in spans if span["startTimeUnixNano"] != "0"]
    ends = [int(span["endTimeUnixNano"]) for span in spans if span["endTimeUnixNano"] != "0"]
    last = moment_ns(facts.last_time()) if run.dated else None
    start = min([moment for moment in (clock.created, *starts) if moment is not None], default=None)
    end = max([moment for moment in (clock.created, last, *ends) if moment is not None], default=None)
    root = _span(
        run,
        "invoke_agent",
        f"invoke_agent {agent}" if agent else "invoke_agent",
        _SPAN_KIND_INTERNAL,
        start,
        end,
        root_attributes,
        parent=None,
        error=terminal is not None and terminal.reason == "error",
    )
    from journaltools._base.version import __version__

    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": _attributes(
                        {"service.name": SERVICE_NAME, "fisk.undated": undated, "fisk.run.id": run.run}
                    )
                },
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE_NAME, "version": __version__},
                        "spans": [root, *spans],
                        "schemaUrl": SEMCONV_SCHEMA_URL,
                    }
                ],
                "schemaUrl": SEMCONV_SCHEMA_URL,
            }
        ]
    }
