"""A journal's status, its process-run segments and why it stopped (PROTOCOL 5).

The runtime keeps no status. The August build's ``session ls`` shows the reason of the **last** terminal record,
or ``open`` when there is none; the newest line's shows its fold's ``Ending()``: the same, except that a run which
journaled anything after its last terminal (a claim, an answer, memory revisions) is ``open`` again. Each journal
takes its own generation's rule. journaltools adds ``invalid`` for a journal the runtime's fold refuses, which the
runtime's own file listing silently omits.

A journal spans several process runs. Each resume writes a claim first, then the run's records, then (unless
the process died) a terminal and, when memory was read, a ``memory_revisions`` record. A segment ends in its
terminal's reason, in ``crashed`` when it has no terminal and a later claim follows, or in ``running`` when it
is the last one and has no terminal yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from journaltools.folding.state import wrap_int64
from journaltools.protocol.kinds import Record

if TYPE_CHECKING:
    from journaltools.folding.state import PendingCall, RunState

#: ``open``, a terminal reason the runtime writes, ``invalid``, or (rarely) an unknown reason verbatim.
Status = str
STATUSES: tuple[str, ...] = ("open", "completed", "suspended", "error", "budget", "max_iterations", "invalid")
WaitingFor = Literal["model", "tools", "answer"] | None


def status_of(state: RunState | None, *, invalid: bool) -> Status:
    if invalid or state is None:
        return "invalid"
    ending = state.ending() if state.generation.reopens_after_terminal else state.terminal
    return ending.reason if ending is not None else "open"


@dataclass(frozen=True, slots=True)
class Segment:
    """One process run within a journal: from its claim (or the meta record) to the record before the next."""

    index: int
    first_seq: int
    last_seq: int
    claimed_by: str | None
    claimed_at: str | None
    #: A terminal reason, ``crashed`` or ``running``.
    ending: str
    terminal_message: str | None
    llm_calls: int
    tool_calls: int
    in_tokens: int
    out_tokens: int


def segments_of(records: Sequence[Record]) -> list[Segment]:
    """Split a journal at its claims. Records are taken as stored; refused ones count where they stand."""
    bounds: list[int] = [0] + [i for i, record in enumerate(records) if i > 0 and record.kind == "claim"]
    segments: list[Segment] = []
    for number, start in enumerate(bounds):
        end = bounds[number + 1] if number + 1 < len(bounds) else len(records)
        part = records[start:end]
        claim = part[0].claim if part[0].kind == "claim" else None
        terminal = None
        llm_calls = tool_calls = in_tokens = out_tokens = 0
        for record in part:
            kind = record.kind
            if kind == "terminal" and record.terminal is not None:
                terminal = record.terminal
            elif kind == "assistant" and record.assistant is not None:
                llm_calls += 1
                in_tokens += record.assistant.in_tokens
                out_tokens += record.assistant.out_tokens
            elif kind == "tool_result" and record.tool_result is not None:
                tool_calls += 1
        if terminal is not None:
            ending = terminal.reason
        elif end == len(records):
            ending = "running"
        else:
            ending = "crashed"
        segments.append(
            Segment(
                index=number,
                first_seq=part[0].seq,
                last_seq=part[-1].seq,
                claimed_by=claim.by if claim is not None else None,
                claimed_at=claim.claimed if claim is not None else None,
                ending=ending,
                terminal_message=(terminal.message or None) if terminal is not None else None,
                llm_calls=llm_calls,
                tool_calls=tool_calls,
                # int64 as the runtime's counters (addendum rule 10): a table column holds them, never a bigger int.
                in_tokens=wrap_int64(in_tokens),
                out_tokens=wrap_int64(out_tokens),
            )
        )
    return segments


def waiting_for_of(state: RunState | None, pending_calls: Sequence[PendingCall]) -> WaitingFor:
    """What a resume would do first: run tools, wait for an answer to a deferred call, or ask the model."""
    if state is None:
        return None
    if state.pending is not None:
        if any(call.deferred is None for call in pending_calls):
            return "tools"
        return "answer"
    if state.messages and state.messages[-1].role == "user":
        return "model"
    return None
