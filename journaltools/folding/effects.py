"""What one record did to its run, as a person reads it while the run is being written (``show --follow``).

A followed run prints one entry per record as it is journaled: a message, a call's answer with the call's duration
(the runtime's rule, from ``RunFacts``), a deferral, a claim, a terminal. The text is plain and unescaped, cut to
what a face shows of one value; the face escapes it for its medium. ``journaled_ns`` is when the record was appended
as far as anything says (the record's own time, else the store's time of its message), so a face can say how long
after its append it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from journaltools._base.readable import readable_json, shown_part
from journaltools.folding.facts import CallFact, RunFacts, time_ns
from journaltools.folding.phrases import shown_time
from journaltools.protocol.blocks import Message, block_line
from journaltools.protocol.kinds import Record


class StoredLike(Protocol):
    """A record as a store returned it: the record, and the store's time of it where the store keeps one."""

    @property
    def record(self) -> Record: ...
    @property
    def time(self) -> datetime | None: ...


@dataclass(frozen=True, slots=True)
class RecordEffect:
    """One record's entry: its seq, its kind, its lines, when it was journaled (ns since 1970; None: not known)."""

    seq: int
    kind: str
    lines: list[str]
    journaled_ns: int | None
    #: A terminal's reason: the process run the record belongs to ended; None for any other record.
    ending: str | None = None


def record_effects(stored: Sequence[StoredLike], facts: RunFacts) -> list[RecordEffect]:
    """The entries of ``stored``, records already folded into ``facts`` (their calls' answers are found there)."""
    return [_effect(one.record, one.time, facts) for one in stored]


def _effect(record: Record, stored_time: datetime | None, facts: RunFacts) -> RecordEffect:
    journaled = time_ns(record.time) if record.time else None
    if journaled is None and stored_time is not None:
        journaled = int(stored_time.timestamp() * 1_000_000) * 1000
    kind = record.kind or "unknown"
    ending = record.terminal.reason if kind == "terminal" and record.terminal is not None else None
    return RecordEffect(record.seq, kind, _lines(record, facts), journaled, ending)


def _blocks(message: Message) -> list[str]:
    return ["  " + shown_part(block_line(block, readable=True)) for block in message.content or ()]


def _lines(record: Record, facts: RunFacts) -> list[str]:
    seq = record.seq
    kind = record.kind
    if kind == "assistant" and record.assistant is not None:
        assistant = record.assistant
        head = (
            f"[seq {seq}] assistant, iteration {assistant.iteration}, stop reason {assistant.stop_reason or '-'}, "
            f"{assistant.in_tokens:,} in / {assistant.out_tokens:,} out tokens"
        )
        return [head, *_blocks(assistant.message)]
    if kind == "user" and record.user is not None:
        return [f"[seq {seq}] user", *_blocks(record.user.message)]
    if kind == "tool_result" and record.tool_result is not None:
        answer = record.tool_result
        call = _call_answered_at(facts, seq)
        name = call.tool if call is not None else "?"
        took = "" if call is None or call.duration_ns is None else f" after {_duration(call.duration_ns)}"
        flag = " (error)" if answer.result.is_error else ""
        return [f"[seq {seq}] <- {name} [{answer.tool_use_id}]{flag}{took}: {shown_part(answer.result.content)}"]
    if kind == "deferred" and record.deferred is not None:
        deferral = record.deferred
        note = f": {shown_part(deferral.note)}" if deferral.note else ""
        handle = f" [handle {shown_part(deferral.handle)}]" if deferral.handle else ""
        return [f"[seq {seq}] deferred {deferral.tool_name} [{deferral.tool_use_id}]{note}{handle}"]
    if kind == "claim" and record.claim is not None:
        claim = record.claim
        at = f" at {shown_time(claim.claimed)}" if claim.claimed else ""
        return [f"[seq {seq}] claimed by {shown_part(claim.by)}{at}: a new process run starts"]
    if kind == "terminal" and record.terminal is not None:
        terminal = record.terminal
        said = f": {shown_part(terminal.message)}" if terminal.message else ""
        return [f"[seq {seq}] terminal: {terminal.reason}{said}"]
    if kind == "decision" and record.decision is not None:
        return [f"[seq {seq}] standing approval of {shown_part(record.decision.tool)}"]
    if kind == "call_approval" and record.call_approval is not None:
        approval = record.call_approval
        return [f"[seq {seq}] approved once: {approval.tool_name} [{approval.tool_use_id}]"]
    if kind == "memory_revisions" and record.memory_revisions is not None:
        return [f"[seq {seq}] memory revisions: {len(record.memory_revisions.revisions or {})} key(s)"]
    if kind == "meta":
        return [f"[seq {seq}] meta record"]
    what = shown_part(readable_json(record.protocol)) if record.protocol else "no protocol"
    optional = ", optional" if record.optional else ""
    return [f"[seq {seq}] a record the fold does not apply ({what}{optional})"]


def _call_answered_at(facts: RunFacts, seq: int) -> CallFact | None:
    # The call a result answers is nearly always one of the last made: looked for from the end.
    for call in reversed(facts.calls):
        if call.answered_seq == seq:
            return call
    return None


def _duration(nanoseconds: int) -> str:
    if nanoseconds < 1_000_000_000:
        return f"{nanoseconds / 1_000_000:.0f}ms"
    return f"{nanoseconds / 1_000_000_000:.1f}s"


__all__ = ["RecordEffect", "StoredLike", "record_effects"]
