"""Runs as OpenTelemetry traces (OTLP JSON lines) and as ATIF trajectories, for the tools people already use.

fisk-ai can send live OpenTelemetry GenAI traces, but that is off by default, so most runs exist only as journals.
This module turns a folded journal into the trace fisk-ai's own telemetry would have sent, in the same shape:

    invoke_agent {agent}          the run (root)
    ├── chat {model}              one per model response (an assistant record)
    ├── execute_tool {name}       one per tool call (a tool_use block)
    └── ...

with the ``gen_ai.*`` attributes of the OpenTelemetry GenAI semantic conventions (the 1.41 version fisk-ai pins)
and fisk-ai's own ``fisk.*`` ones. An OTLP file holds one ``TracesData`` per line, the OpenTelemetry file
exporter's format, one line per run. An ATIF file (the Agent Trajectory Interchange Format, which Arize Phoenix
imports) holds one trajectory per line.

What the export promises:

- **Deterministic.** Trace and span ids are hashes of the run id and the journal seqs, and the JSON is written in
  one fixed order, so exporting the same journals again gives the same bytes.
- **Honest time.** A span's times come from the records' own times: a chat span runs from the record before the
  model's response to the response; a tool span ends at the record that ended its wait (its result, else its
  deferral) and starts where the runtime's timing rule starts it (``folding.facts``), and has no length when that
  rule leaves it untimed. A journal whose records carry no time (every August journal) holds one time, its
  ``meta.created``: every span of its trace starts and ends there, with no duration, and the trace says
  ``fisk.undated=true`` (on the resource and the root span). Nothing is spread out to look like a timeline.
- **Content only when asked.** Without ``content`` a trace holds structure, counts and times; with it, the
  messages (``gen_ai.input.messages`` / ``gen_ai.output.messages``), tool arguments and results. A thinking
  block's signature and a provider block's payload never; the conversation token never (nothing here reads it).
- What a journal does not hold is not made up: it records the configured model, not the model a response
  named, so ``gen_ai.response.model`` is left out; an August result says nothing of dispatch, so its outcome is
  ``answered``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Final

import msgspec

from journaltools._base.oserrors import STDOUT, writing
from journaltools.errors import ExportError
from journaltools.folding.facts import CallFact, RunFacts, time_ns
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.protocol.blocks import Block, Message
from journaltools.protocol.journal import typed_records
from journaltools.protocol.kinds import Meta, Record

if TYPE_CHECKING:
    from journaltools.sources.base import Backend

#: The GenAI semantic conventions fisk-ai's telemetry pins (``semconv/v1.41.0``).
SEMCONV_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.41.0"
#: The ATIF version written: the one Phoenix's importer and Harbor's validator both read.
ATIF_SCHEMA_VERSION: Final = "ATIF-v1.4"
#: fisk-ai's service name, which its telemetry resource carries unless configured otherwise.
SERVICE_NAME: Final = "fisk-ai"
SCOPE_NAME: Final = "journaltools.exports.interchange"

_SPAN_KIND_INTERNAL: Final = 1
_SPAN_KIND_CLIENT: Final = 3
_STATUS_ERROR: Final = 2

#: ``fisk.tool.outcome`` as the journal can tell it.
OUTCOMES: Final = ("dispatched", "not_dispatched", "answered", "error", "deferred", "unanswered")


@dataclass(slots=True)
class ExportReport:
    """What one export wrote: the runs exported, in order, and those left out with why."""

    runs: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    spans: int = 0


# -- what both formats read off a run ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    """One folded run with what both exports need: its meta record, its records and their facts."""

    folded: FoldedRun
    meta: Meta
    records: list[Record]
    facts: RunFacts

    @property
    def run(self) -> str:
        return self.folded.run

    @property
    def dated(self) -> bool:
        return self.facts.dated

    @property
    def agent(self) -> str:
        return self.meta.agent


def _prepare(folded: FoldedRun) -> _Run | str:
    """The run ready to export, or why it cannot be (a journal with no meta record has no run to describe)."""
    records = typed_records(folded.read.records)
    meta = records[0].meta if records else None
    if meta is None or folded.state is None:
        return "the journal holds no meta record to describe a run by"
    return _Run(folded, meta, records, folded.facts())


def outcome(call: CallFact) -> str:
    """``fisk.tool.outcome`` of one call, from what its records say (one of ``OUTCOMES``)."""
    if call.answer is None:
        return "deferred" if call.deferral is not None else "unanswered"
    if call.is_error:
        return "error"
    if not call.says_dispatch:
        return "answered"
    return "dispatched" if call.dispatched else "not_dispatched"


def _tool_kind(call: CallFact) -> str | None:
    if call.answer is not None:
        return call.kind
    if call.deferral is not None and call.deferral.kind:
        return call.deferral.kind
    return None


def _json(raw: bytes) -> Any:
    """A call's input as JSON values (its text when it does not decode, which the runtime never writes)."""
    try:
        return msgspec.json.decode(raw) if raw else None
    except (msgspec.DecodeError, RecursionError):
        return bytes(raw).decode("utf-8", "replace")


def _moment(text: str) -> int | None:
    """A record time in nanoseconds since 1970; None when undated or before 1970 (OTLP times are unsigned)."""
    moment = time_ns(text) if text else None
    return moment if moment is not None and moment >= 0 else None


# -- GenAI message parts (content) ---------------------------------------------------------------------------------


def _parts(blocks: Sequence[Block] | None) -> list[dict[str, Any]]:
    """A message's blocks as GenAI message parts. A thinking block's signature and a provider block's payload
    are never exported (fisk-ai's content capture leaves them out too)."""
    parts: list[dict[str, Any]] = []
    for block in blocks or ():
        if block.text is not None:
            parts.append({"type": "text", "content": block.text.text})
        elif block.thinking is not None:
            parts.append({"type": "reasoning", "content": block.thinking.text})
        elif block.tool_use is not None:
            use = block.tool_use
            parts.append({"type": "tool_call", "id": use.id, "name": use.name, "arguments": _json(bytes(use.input))})
        elif block.tool_result is not None:
            result = block.tool_result
            parts.append({"type": "tool_call_response", "id": result.tool_use_id, "response": result.content})
    return parts


def _message(message: Message) -> dict[str, Any]:
    return {"role": message.role, "parts": _parts(message.content)}


def _text_of(message: Message, *, thinking: bool = False) -> str:
    texts = []
    for block in message.content or ():
        if thinking and block.thinking is not None:
            texts.append(block.thinking.text)
        elif not thinking and block.text is not None:
            texts.append(block.text.text)
    return "\n\n".join(text for text in texts if text)


# -- OTLP ----------------------------------------------------------------------------------------------------------


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

    run: _Run
    created: int | None
    positions: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = {seq: index for index, seq in enumerate(self.run.facts.seqs)}

    def at(self, seq: int | None) -> int | None:
        """The time of record ``seq``; an undated record (every record of an undated journal) is at
        ``meta.created``, the one time its journal holds."""
        if not self.run.dated or seq is None:
            return self.created
        moment = _moment(self.run.facts.times.get(seq, ""))
        return moment if moment is not None else self.created

    def before(self, seq: int) -> int | None:
        """The time of the record stored just before ``seq`` (None when it is undated or there is none)."""
        if not self.run.dated:
            return self.created
        index = self.positions.get(seq, 0)
        return _moment(self.run.facts.times.get(self.run.facts.seqs[index - 1], "")) if index > 0 else None


def _span(
    run: _Run,
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


def _chat_inputs(records: Sequence[Record], meta: Meta) -> dict[int, list[dict[str, Any]]]:
    """For each assistant record's seq, the messages journaled since the model's previous response: what that
    call added to the conversation (fisk-ai's ``delta`` capture)."""
    inputs: dict[int, list[dict[str, Any]]] = {}
    pending: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": meta.prompt}]}]
    for record in records:
        kind = record.kind
        if kind == "user" and record.user is not None:
            pending.append(_message(record.user.message))
        elif kind == "tool_result" and record.tool_result is not None:
            result = record.tool_result
            part = {"type": "tool_call_response", "id": result.tool_use_id, "response": result.result.content}
            pending.append({"role": "tool", "parts": [part]})
        elif kind == "assistant" and record.assistant is not None:
            inputs[record.seq], pending = pending, []
    return inputs


def otlp_trace(folded: FoldedRun, *, content: bool = False) -> dict[str, Any]:
    """One run as an OTLP ``TracesData`` in the OTLP JSON encoding (ids in hex, 64-bit integers as strings).
    Raises ``ExportError`` for a journal with no meta record."""
    return _otlp_trace(_checked(folded), content)


def _otlp_trace(run: _Run, content: bool) -> dict[str, Any]:
    folded = run.folded
    state = folded.state
    assert state is not None  # _checked refuses a run without one
    meta, facts = run.meta, run.facts
    fingerprint = meta.fingerprint
    clock = _Clock(run, _moment(meta.created))
    undated = not run.dated
    root_id = _hex_id(run.run, "invoke_agent", 8)
    agent = run.agent or None
    common: dict[str, object] = {
        "gen_ai.provider.name": fingerprint.provider or None,
        "gen_ai.conversation.id": run.run,
    }

    spans: list[dict[str, Any]] = []
    inputs = _chat_inputs(run.records, meta) if content else {}
    assistants = {record.seq: record.assistant for record in run.records if record.assistant is not None}
    for response in facts.responses:
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            **common,
            "gen_ai.request.model": fingerprint.model,
            "gen_ai.request.max_tokens": fingerprint.max_tokens if fingerprint.max_tokens > 0 else None,
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
        assistant = assistants.get(response.seq)
        if content and assistant is not None:
            output = _message(assistant.message)
            if response.stop_reason:
                output["finish_reason"] = response.stop_reason
            attributes["gen_ai.input.messages"] = _dumps(inputs.get(response.seq, []))
            attributes["gen_ai.output.messages"] = _dumps([output])
        end = clock.at(response.seq)
        spans.append(
            _span(
                run,
                f"chat\x00{response.seq}",
                f"chat {fingerprint.model}" if fingerprint.model else "chat",
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
            "fisk.tool.kind": _tool_kind(call),
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
        "gen_ai.request.model": fingerprint.model or None,
        "gen_ai.request.max_tokens": fingerprint.max_tokens if fingerprint.max_tokens > 0 else None,
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
        "fisk.llm.thinking": fingerprint.thinking_mode or None,
        "fisk.generation": state.generation.name,
        "fisk.undated": undated,
    }
    if content and terminal is not None and terminal.message:
        root_attributes["fisk.run.terminal_message"] = terminal.message
    # The root spans the run: from meta.created (or an earlier record, a clock that stepped back) to its last
    # record; an undated journal's is the one instant it holds.
    starts = [int(span["startTimeUnixNano"]) for span in spans if span["startTimeUnixNano"] != "0"]
    ends = [int(span["endTimeUnixNano"]) for span in spans if span["endTimeUnixNano"] != "0"]
    last = _moment(facts.last_time()) if run.dated else None
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


# -- ATIF ----------------------------------------------------------------------------------------------------------


def _arguments(call: CallFact, content: bool) -> dict[str, Any]:
    """ATIF requires an object: without content ``{}``; a JSON null input is ``{}``, any other non-object input
    is kept under ``value``."""
    if not content:
        return {}
    value = _json(bytes(call.input))
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"value": value}


def _timestamp(run: _Run, seq: int) -> str | None:
    """A step's ISO 8601 time: the record's own time; an undated record's step has none (ATIF makes it optional)."""
    text = run.facts.times.get(seq)
    return text if text else None


def atif_trajectory(folded: FoldedRun, *, content: bool = False) -> dict[str, Any]:
    """One run as an ATIF trajectory: a user step for the prompt and each user record, an agent step per model
    response with its tool calls and the results that answered them. Raises ``ExportError`` for a journal with
    no meta record."""
    return _atif_trajectory(_checked(folded), content)


def _atif_trajectory(run: _Run, content: bool) -> dict[str, Any]:
    folded = run.folded
    state = folded.state
    assert state is not None
    meta, facts = run.meta, run.facts
    fingerprint = meta.fingerprint
    calls_by_seq: dict[int, list[CallFact]] = {}
    for call in facts.calls:
        calls_by_seq.setdefault(call.made_seq, []).append(call)
    responses = {response.seq: response for response in facts.responses}

    steps: list[dict[str, Any]] = []

    def user_step(seq: int, message: str) -> None:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": "user", "message": message if content else ""}
        stamp = _timestamp(run, seq)
        if stamp is not None:
            step["timestamp"] = stamp
        step["extra"] = {"seq": seq}
        steps.append(step)

    for record in run.records:
        if record.meta is not None and record.kind == "meta":
            user_step(record.seq, meta.prompt)
        elif record.kind == "user" and record.user is not None:
            user_step(record.seq, _text_of(record.user.message))
        elif record.kind == "assistant" and record.assistant is not None:
            assistant = record.assistant
            step: dict[str, Any] = {"step_id": len(steps) + 1}
            stamp = _timestamp(run, record.seq)
            if stamp is not None:
                step["timestamp"] = stamp
            step.update({"source": "agent", "model_name": fingerprint.model})
            if fingerprint.reasoning_effort:
                step["reasoning_effort"] = fingerprint.reasoning_effort
            step["message"] = _text_of(assistant.message) if content else ""
            reasoning = _text_of(assistant.message, thinking=True) if content else ""
            if reasoning:
                step["reasoning_content"] = reasoning
            calls = calls_by_seq.get(record.seq, [])
            if calls:
                step["tool_calls"] = [
                    {
                        "tool_call_id": call.tool_use_id,
                        "function_name": call.tool,
                        "arguments": _arguments(call, content),
                    }
                    for call in calls
                ]
                results = []
                for call in calls:
                    if call.answer is None:
                        continue
                    result: dict[str, Any] = {"source_call_id": call.tool_use_id}
                    if content:
                        result["content"] = call.answer.result.content
                    results.append(result)
                if results:
                    step["observation"] = {"results": results}
            response = responses[record.seq]
            step["metrics"] = {
                "prompt_tokens": response.in_tokens + response.cache_read_tokens + response.cache_create_tokens,
                "completion_tokens": response.out_tokens,
                "cached_tokens": response.cache_read_tokens,
                "extra": {
                    "cache_creation_input_tokens": response.cache_create_tokens,
                    "reasoning_tokens": response.thinking_tokens,
                },
            }
            extra: dict[str, Any] = {"seq": record.seq, "iteration": assistant.iteration}
            if assistant.stop_reason:
                extra["stop_reason"] = assistant.stop_reason
            if calls:
                extra["tool_calls"] = [
                    {
                        "tool_call_id": call.tool_use_id,
                        "outcome": outcome(call),
                        "kind": _tool_kind(call),
                        "is_error": call.is_error,
                        "answered_seq": call.answered_seq,
                        "duration_ns": call.duration_ns,
                    }
                    for call in calls
                ]
            step["extra"] = extra
            steps.append(step)

    counters = state.counters
    terminal = state.terminal
    extra_root: dict[str, Any] = {
        "provider": fingerprint.provider,
        "generation": state.generation.name,
        "format_version": meta.version,
        "status": folded.status,
        "terminal_reason": terminal.reason if terminal is not None else None,
        "interactive": meta.interactive,
        "created": meta.created,
        "undated": not run.dated,
        "content": content,
    }
    if content and terminal is not None and terminal.message:
        extra_root["terminal_message"] = terminal.message
    agent: dict[str, Any] = {
        "name": run.agent or SERVICE_NAME,
        "version": state.generation.title,
        "model_name": fingerprint.model,
    }
    notes = []
    if not run.dated:
        notes.append("the journal records no times (the August build): steps carry no timestamp")
    if not content:
        notes.append("exported without content: messages are empty and tool arguments {} (export with content)")
    trajectory: dict[str, Any] = {
        "schema_version": ATIF_SCHEMA_VERSION,
        "session_id": run.run,
        "agent": agent,
        "steps": steps,
    }
    if notes:
        trajectory["notes"] = "; ".join(notes)
    trajectory["final_metrics"] = {
        "total_prompt_tokens": counters.in_tokens + counters.cache_read_tokens + counters.cache_create_tokens,
        "total_completion_tokens": counters.out_tokens,
        "total_cached_tokens": counters.cache_read_tokens,
        "total_steps": len(steps),
        "extra": {
            "total_cache_creation_input_tokens": counters.cache_create_tokens,
            "total_reasoning_tokens": counters.thinking_tokens,
            "llm_calls": counters.llm_calls,
            "tool_calls": counters.tool_calls,
        },
    }
    trajectory["extra"] = extra_root
    return trajectory


# -- reading sources and writing files -----------------------------------------------------------------------------


def _checked(folded: FoldedRun) -> _Run:
    prepared = _prepare(folded)
    if isinstance(prepared, str):
        raise ExportError(f"run {folded.run}: cannot export: {prepared}")
    return prepared


def _dumps(value: Any) -> str:
    # msgspec, not orjson: a tool input may hold an integer beyond 64 bits, which JSON allows and orjson refuses.
    return msgspec.json.encode(value).decode()


def iter_folded(source: str | os.PathLike[str] | Backend, runs: Sequence[str] | None = None) -> Iterator[FoldedRun]:
    """Each run of ``source`` (all of them, or ``runs`` in the order given), read and folded leniently: a refused
    journal is exported as far as it folds, with ``fisk.run.status`` ``invalid``."""
    from journaltools.sources.base import Backend
    from journaltools.sources.registry import open_source

    if isinstance(source, Backend):
        wanted = list(runs) if runs else source.list_runs()
        for run in wanted:
            yield fold_run(source.read_run(run, strict=False), strict=False)
        return
    with open_source(str(source)) as backend:
        yield from iter_folded(backend, runs)


def export(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    otlp: str | os.PathLike[str] | None = None,
    atif: str | os.PathLike[str] | None = None,
    content: bool = False,
) -> ExportReport:
    """Write the runs of ``source`` (all, or ``runs``) as OTLP JSON lines to ``otlp`` and/or ATIF JSON lines to
    ``atif``, one line per run, in the source's run order. A run that cannot be exported (no meta record) is
    left out and named in ``ExportReport.skipped``. Each file is written whole or not at all, replacing what is
    there (a link is replaced, never followed; a FIFO, a device or a directory is refused, ``StorageError``);
    ``-`` is standard output."""
    if otlp is None and atif is None:
        raise ExportError("nothing to export to: give otlp, atif or both")
    if otlp is not None and atif is not None and os.fspath(otlp) == os.fspath(atif) == STDOUT:
        raise ExportError("otlp and atif cannot both go to standard output (-): their lines would mix")
    report = ExportReport()
    with ExitStack() as stack:
        # Each file is written as it goes (a run at a time, so a large source is never held) into a temporary
        # file beside it, renamed into place only when every run is written.
        otlp_file = _Lines(stack.enter_context(writing(otlp, "write the export"))) if otlp is not None else None
        atif_file = _Lines(stack.enter_context(writing(atif, "write the export"))) if atif is not None else None
        for folded in iter_folded(source, runs):
            prepared = _prepare(folded)
            if isinstance(prepared, str):
                report.skipped.append((folded.run, prepared))
                continue
            if otlp_file is not None:
                trace = _otlp_trace(prepared, content)
                report.spans += len(trace["resourceSpans"][0]["scopeSpans"][0]["spans"])
                otlp_file.write(msgspec.json.encode(trace))
            if atif_file is not None:
                atif_file.write(msgspec.json.encode(_atif_trajectory(prepared, content)))
            report.runs.append(folded.run)
    return report


@dataclass(frozen=True, slots=True)
class _Lines:
    """JSON lines into an export's file."""

    handle: BinaryIO

    def write(self, line: bytes) -> None:
        self.handle.write(line + b"\n")


def export_otlp(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    path: str | os.PathLike[str],
    content: bool = False,
) -> ExportReport:
    """``export`` to an OTLP JSON lines file only."""
    return export(source, runs, otlp=path, content=content)


def export_atif(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    path: str | os.PathLike[str],
    content: bool = False,
) -> ExportReport:
    """``export`` to an ATIF JSON lines file only."""
    return export(source, runs, atif=path, content=content)


__all__ = [
    "ATIF_SCHEMA_VERSION",
    "OUTCOMES",
    "ExportError",
    "ExportReport",
    "atif_trajectory",
    "export",
    "export_atif",
    "export_otlp",
    "iter_folded",
    "otlp_trace",
    "outcome",
]
