"""One run as one ATIF trajectory (the Agent Trajectory Interchange Format): its steps, tool calls, observations and
token metrics; content only when asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from journaltools.exports.otlp import SERVICE_NAME
from journaltools.exports.runview import (
    RunView,
    checked,
    outcome,
    tool_kind,
)
from journaltools.folding.exchanges import json_of
from journaltools.folding.facts import CallFact
from journaltools.folding.run import FoldedRun

if TYPE_CHECKING:
    pass


#: The ATIF version written: the one Phoenix's importer and Harbor's validator both read.
ATIF_SCHEMA_VERSION: Final = "ATIF-v1.4"


def _arguments(call: CallFact, content: bool) -> dict[str, Any]:
    """ATIF requires an object: without content ``{}``; a JSON null input is ``{}``, any other non-object input
    is kept under ``value``."""
    if not content:
        return {}
    value = json_of(bytes(call.input))
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"value": value}


def _timestamp(run: RunView, seq: int) -> str | None:
    """A step's ISO 8601 time: the record's own time; an undated record's step has none (ATIF makes it optional)."""
    text = run.facts.times.get(seq)
    return text if text else None


def atif_trajectory(folded: FoldedRun, *, content: bool = False) -> dict[str, Any]:
    """One run as an ATIF trajectory: a user step for the prompt and each user record, an agent step per model
    response with its tool calls and the results that answered them. Raises ``ExportError`` for a journal with
    no meta record."""
    return atif_trajectory_of(checked(folded), content)


def atif_trajectory_of(run: RunView, content: bool) -> dict[str, Any]:
    folded = run.folded
    state = folded.state
    assert state is not None
    meta, facts = run.meta, run.facts
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

    for said in run.exchanges:
        if said.role == "prompt":
            user_step(said.seq, meta.prompt)
        elif said.role == "user":
            user_step(said.seq, said.text())
        elif said.role == "assistant":
            step: dict[str, Any] = {"step_id": len(steps) + 1}
            stamp = _timestamp(run, said.seq)
            if stamp is not None:
                step["timestamp"] = stamp
            step.update({"source": "agent", "model_name": meta.model})
            if meta.reasoning_effort:
                step["reasoning_effort"] = meta.reasoning_effort
            step["message"] = said.text() if content else ""
            reasoning = said.thinking() if content else ""
            if reasoning:
                step["reasoning_content"] = reasoning
            calls = calls_by_seq.get(said.seq, [])
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
            response = responses[said.seq]
            step["metrics"] = {
                "prompt_tokens": response.in_tokens + response.cache_read_tokens + response.cache_create_tokens,
                "completion_tokens": response.out_tokens,
                "cached_tokens": response.cache_read_tokens,
                "extra": {
                    "cache_creation_input_tokens": response.cache_create_tokens,
                    "reasoning_tokens": response.thinking_tokens,
                },
            }
            extra: dict[str, Any] = {"seq": said.seq, "iteration": said.iteration}
            if said.stop_reason:
                extra["stop_reason"] = said.stop_reason
            if calls:
                extra["tool_calls"] = [
                    {
                        "tool_call_id": call.tool_use_id,
                        "outcome": outcome(call),
                        "kind": tool_kind(call),
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
        "provider": meta.provider,
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
        "model_name": meta.model,
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
