"""What the OTLP and ATIF exports both read off a folded run: its calls and their outcomes, its times in
nanoseconds, and its messages as GenAI message parts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from journaltools.errors import ExportError
from journaltools.folding.facts import CallFact, RunFacts, time_ns
from journaltools.folding.run import FoldedRun
from journaltools.protocol.blocks import Block, Message
from journaltools.protocol.journal import typed_records
from journaltools.protocol.kinds import Meta, Record

if TYPE_CHECKING:
    pass


#: ``fisk.tool.outcome`` as the journal can tell it.
OUTCOMES: Final = ("dispatched", "not_dispatched", "answered", "error", "deferred", "unanswered")


@dataclass(slots=True)
class RunView:
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


def prepare(folded: FoldedRun) -> RunView | str:
    """The run ready to export, or why it cannot be (a journal with no meta record has no run to describe)."""
    records = typed_records(folded.read.records)
    meta = records[0].meta if records else None
    if meta is None or folded.state is None:
        return "the journal holds no meta record to describe a run by"
    return RunView(folded, meta, records, folded.facts())


def outcome(call: CallFact) -> str:
    """``fisk.tool.outcome`` of one call, from what its records say (one of ``OUTCOMES``)."""
    if call.answer is None:
        return "deferred" if call.deferral is not None else "unanswered"
    if call.is_error:
        return "error"
    if not call.says_dispatch:
        return "answered"
    return "dispatched" if call.dispatched else "not_dispatched"


def tool_kind(call: CallFact) -> str | None:
    if call.answer is not None:
        return call.kind
    if call.deferral is not None and call.deferral.kind:
        return call.deferral.kind
    return None


def json_of(raw: bytes) -> Any:
    """A call's input as JSON values (its text when it does not decode, which the runtime never writes)."""
    try:
        return msgspec.json.decode(raw) if raw else None
    except (msgspec.DecodeError, RecursionError):
        return bytes(raw).decode("utf-8", "replace")


def moment_ns(text: str) -> int | None:
    """A record time in nanoseconds since 1970; None when undated or before 1970 (OTLP times are unsigned)."""
    moment = time_ns(text) if text else None
    return moment if moment is not None and moment >= 0 else None


def blocks_as_parts(blocks: Sequence[Block] | None) -> list[dict[str, Any]]:
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
            parts.append({"type": "tool_call", "id": use.id, "name": use.name, "arguments": json_of(bytes(use.input))})
        elif block.tool_result is not None:
            result = block.tool_result
            parts.append({"type": "tool_call_response", "id": result.tool_use_id, "response": result.content})
    return parts


def message_parts(message: Message) -> dict[str, Any]:
    return {"role": message.role, "parts": blocks_as_parts(message.content)}


def text_of(message: Message, *, thinking: bool = False) -> str:
    texts = []
    for block in message.content or ():
        if thinking and block.thinking is not None:
            texts.append(block.thinking.text)
        elif not thinking and block.text is not None:
            texts.append(block.text.text)
    return "\n\n".join(text for text in texts if text)


def checked(folded: FoldedRun) -> RunView:
    prepared = prepare(folded)
    if isinstance(prepared, str):
        raise ExportError(f"run {folded.run}: cannot export: {prepared}")
    return prepared


def dumps(value: Any) -> str:
    # msgspec, not orjson: a tool input may hold an integer beyond 64 bits, which JSON allows and orjson refuses.
    return msgspec.json.encode(value).decode()
