"""Answering a deferred call with the runtime's checks and record (fisk-ai ``SupplyToolResult``).

The record is one ordinary ``tool_result`` (``tool_use_id`` = the call, ``result`` = ``{tool_use_id, content,
is_error?}``), so the next resume is an ordinary resume. In a journal of the newest line it also carries the
deferral's ``kind`` and ``dispatched`` (as ``SupplyToolResult`` and ``AnswerDeferredCall`` copy them) and is
dated now, in UTC, as the runtime's ``PrepareRecord`` dates a record written without a time.

Beyond the runtime, journaltools folds again after it holds the journal (the file lock taken, the JetStream tail
read) and refuses if the journal moved since the check: the runtime fences only against moves after it opens the
journal, so two answers could both land.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from journaltools.errors import AlreadyAnswered, AnswerRefused
from journaltools.folding import fold
from journaltools.folding.state import RunState
from journaltools.goencoding.time import now_go_time
from journaltools.protocol.blocks import ToolResultBlock
from journaltools.protocol.generations import AUGUST, Generation
from journaltools.protocol.kinds import Deferred, Record, ToolResult, make_record
from journaltools.sources.base import Backend, RunRead

#: The runtime's limit on an answer's content, in bytes (``supply.go``).
MAX_RESULT_BYTES: Final = 256 * 1024


@dataclass(frozen=True, slots=True)
class Answered:
    run: str
    call: str
    seq: int

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "call": self.call, "seq": self.seq}


def answer_record(
    seq: int,
    call: str,
    content: str,
    *,
    is_error: bool = False,
    deferral: Deferred | None = None,
    generation: Generation = AUGUST,
    time: str | None = None,
) -> Record:
    """The record ``generation``'s runtime appends to answer ``call`` (deferred by ``deferral``): the newest line's
    copies the deferral's provider kind and dispatch, and is dated (``time``, else now in UTC)."""
    result = ToolResultBlock(tool_use_id=call, content=content, is_error=is_error)
    if generation.extended_records:
        kind = deferral.kind if deferral is not None else ""
        dispatched = deferral.dispatched if deferral is not None else False
        answer = ToolResult(tool_use_id=call, result=result, kind=kind, dispatched=dispatched)
    else:
        answer = ToolResult(tool_use_id=call, result=result)
    return make_record(seq, answer, time=(time or now_go_time()) if generation.dates_records else "")


def answer_call(backend: Backend, run: str, call: str, content: str, *, is_error: bool = False) -> Answered:
    """Append the answer to deferred call ``call`` of ``run``, after the runtime's checks, in its order."""
    if not call:
        raise AnswerRefused(run, call, "no call id given")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:  # an unpaired surrogate, as argv's bytes that are not UTF-8 arrive: no JSON holds it
        raise AnswerRefused(run, call, "the result is not UTF-8 text") from None
    if size > MAX_RESULT_BYTES:
        raise AnswerRefused(run, call, f"the result is too large: {size} bytes, limit {MAX_RESULT_BYTES}")
    read = backend.read_run(run)
    _checked_state(read, call)
    with backend.open_writer(run) as writer:
        again = backend.read_run(run)
        if writer.last_seq != read.last_seq or again.last_seq != read.last_seq:
            raise AnswerRefused(
                run, call, f"the journal moved from seq {read.last_seq} to {max(writer.last_seq, again.last_seq)}"
            )
        state = _checked_state(again, call)
        assert state.pending is not None  # the check found the call deferred in the turn in flight
        record = answer_record(
            writer.last_seq + 1,
            call,
            content,
            is_error=is_error,
            deferral=state.pending.deferred[call],
            generation=state.generation,
        )
        stored = writer.append(record)
    return Answered(run, call, stored.seq)


def _checked_state(read: RunRead, call: str) -> RunState:
    """The folded state, if ``call`` may be answered; else the runtime's refusal."""
    result = fold(read.typed(), run=read.run)
    state = result.state
    assert state is not None  # a strict fold either has a state or raised
    for message in state.messages:
        for block in message.content or ():
            if block.tool_result is not None and block.tool_result.tool_use_id == call:
                raise AlreadyAnswered(read.run, call, _result_seq(read, call))
    pending = state.pending
    if pending is None:
        raise AnswerRefused(read.run, call, "the run has no tool calls in flight")
    if call not in pending.deferred:
        raise AnswerRefused(read.run, call, "the call is not deferred in the turn in flight")
    if call in pending.answered:
        raise AlreadyAnswered(read.run, call, _result_seq(read, call))
    return state


def _result_seq(read: RunRead, call: str) -> int:
    """The seq of the last tool_result record answering ``call`` (what the refusal names)."""
    for stored in reversed(read.records):
        answer = stored.record.tool_result
        if answer is not None and call in (answer.tool_use_id, answer.result.tool_use_id):
            return stored.record.seq
    return 0
