"""What each record adds to the conversation the model reads, in stored order: the prompt, a user's message, a
tool's answer and each model response, with a message said two ways: as its text, and as the parts of the
OpenTelemetry GenAI message model (text, reasoning, tool calls and their answers), which names the same things
for both generations. The exports read a run's exchanges here, never its records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from journaltools.folding.run import FoldedRun
from journaltools.protocol.blocks import Block, Message
from journaltools.protocol.journal import typed_records

Role = Literal["prompt", "user", "tool", "assistant"]


def json_of(raw: bytes) -> Any:
    """Raw JSON (a call's input) as JSON values (its text when it does not decode, which the runtime never writes)."""
    try:
        return msgspec.json.decode(raw) if raw else None
    except (msgspec.DecodeError, RecursionError):
        return bytes(raw).decode("utf-8", "replace")


def _parts(blocks: Sequence[Block] | None) -> list[dict[str, Any]]:
    """A message's blocks as GenAI message parts. A thinking block's signature and a provider block's payload are
    never exported (fisk-ai's content capture leaves them out too)."""
    parts: list[dict[str, Any]] = []
    for block in blocks or ():
        if block.text is not None:
            parts.append({"type": "text", "content": block.text.text})
        elif block.thinking is not None:
            parts.append({"type": "reasoning", "content": block.thinking.text})
        elif block.tool_use is not None:
            use = block.tool_use
            parts.append({"type": "tool_call", "id": use.id, "name": use.name, "arguments": json_of(bytes(use.input))})
        elif block.tool_result is not None:
            result = block.tool_result
            parts.append({"type": "tool_call_response", "id": result.tool_use_id, "response": result.content})
    return parts


def _text(message: Message, *, thinking: bool) -> str:
    texts = []
    for block in message.content or ():
        if thinking and block.thinking is not None:
            texts.append(block.thinking.text)
        elif not thinking and block.text is not None:
            texts.append(block.text.text)
    return "\n\n".join(text for text in texts if text)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One record that adds to the conversation: the meta record's prompt, a user message, a tool's answer (by the
    id of the call it answers), or a model response (with its iteration and stop reason)."""

    seq: int
    role: Role
    _message: Message | None = None
    _said: str = ""
    tool_use_id: str = ""
    iteration: int = 0
    stop_reason: str = ""

    def message(self) -> dict[str, Any]:
        """The GenAI message: its role and parts (a prompt is a user's text; an answer is the tool's response)."""
        if self._message is not None:
            return {"role": self._message.role, "parts": _parts(self._message.content)}
        if self.role == "tool":
            part = {"type": "tool_call_response", "id": self.tool_use_id, "response": self._said}
            return {"role": "tool", "parts": [part]}
        return {"role": "user", "parts": [{"type": "text", "content": self._said}]}

    def text(self) -> str:
        """What it says: its text blocks, separated by a blank line (a prompt's or an answer's text itself)."""
        return _text(self._message, thinking=False) if self._message is not None else self._said

    def thinking(self) -> str:
        """Its thinking blocks' text, separated by a blank line (``""`` for none)."""
        return _text(self._message, thinking=True) if self._message is not None else ""


def exchanges_of(folded: FoldedRun) -> list[Exchange]:
    """The exchanges of a run's records, in stored order."""
    exchanges: list[Exchange] = []
    for record in typed_records(folded.read.records):
        kind, seq = record.kind, record.seq
        if kind == "meta" and record.meta is not None:
            exchanges.append(Exchange(seq, "prompt", _said=record.meta.prompt))
        elif kind == "user" and record.user is not None:
            exchanges.append(Exchange(seq, "user", record.user.message))
        elif kind == "tool_result" and record.tool_result is not None:
            answer = record.tool_result
            exchanges.append(Exchange(seq, "tool", _said=answer.result.content, tool_use_id=answer.tool_use_id))
        elif kind == "assistant" and record.assistant is not None:
            assistant = record.assistant
            exchanges.append(
                Exchange(
                    seq,
                    "assistant",
                    assistant.message,
                    iteration=assistant.iteration,
                    stop_reason=assistant.stop_reason,
                )
            )
    return exchanges


__all__ = ["Exchange", "Role", "exchanges_of", "json_of"]
