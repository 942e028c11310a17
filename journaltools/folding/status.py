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
from journaltools.protocol.kinds import Claim, Kind, Record, Terminal

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
    walk = SegmentWalk()
    for record in records:
        walk.add(record)
    return walk.segments()


class SegmentWalk:
    """``segments_of`` one record at a time: what a fold that goes on as records are appended keeps, so that its
    segments cost the new records, not the journal. ``segments()`` may be asked between records."""

    __slots__ = (
        "_claim",
        "_closed",
        "_first_seq",
        "_in",
        "_last_seq",
        "_llm",
        "_out",
        "_records",
        "_terminal",
        "_tools",
    )

    def __init__(self) -> None:
        self._closed: list[Segment] = []
        self._records = 0
        self._start(None, 0)

    def _start(self, claim: Claim | None, seq: int) -> None:
        self._claim = claim
        self._first_seq = self._last_seq = seq
        self._terminal: Terminal | None = None
        self._llm = self._tools = self._in = self._out = 0

    def add(self, record: Record, kind: Kind | None = None) -> None:
        """One record more (``kind``: its ``record.kind``, where the caller has it already)."""
        if kind is None:
            kind = record.kind
        if kind == "claim" and self._records > 0:
            # A claim starts the next process run; the one before it ends in its terminal, or crashed.
            self._closed.append(self._segment("crashed"))
            self._start(record.claim, record.seq)
        elif self._records == 0:
            self._start(record.claim if kind == "claim" else None, record.seq)
        self._records += 1
        self._last_seq = record.seq
        if kind == "terminal" and record.terminal is not None:
            self._terminal = record.terminal
        elif kind == "assistant" and record.assistant is not None:
            self._llm += 1
            self._in += record.assistant.in_tokens
            self._out += record.assistant.out_tokens
        elif kind == "tool_result" and record.tool_result is not None:
            self._tools += 1

    def segments(self) -> list[Segment]:
        """The segments of the records added so far (none before the first); the last one is ``running`` unless
        it has a terminal."""
        if self._records == 0:
            return []
        return [*self._closed, self._segment("running")]

    def _segment(self, unended: str) -> Segment:
        claim, terminal = self._claim, self._terminal
        return Segment(
            index=len(self._closed),
            first_seq=self._first_seq,
            last_seq=self._last_seq,
            claimed_by=claim.by if claim is not None else None,
            claimed_at=claim.claimed if claim is not None else None,
            ending=terminal.reason if terminal is not None else unended,
            terminal_message=(terminal.message or None) if terminal is not None else None,
            llm_calls=self._llm,
            tool_calls=self._tools,
            # int64 as the runtime's counters (addendum rule 10): a table column holds them, never a bigger int.
            in_tokens=wrap_int64(self._in),
            out_tokens=wrap_int64(self._out),
        )


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
