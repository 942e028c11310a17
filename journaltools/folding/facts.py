"""What a journal's records say beyond the fold, from one walk over them: each tool call, each model response, times.

The fold keeps the runtime's state; an analysis wants the calls and responses themselves. ``RunFacts.of`` walks a
journal's records once, in stored order, and pairs them as the newest runtime's ``runstate.Calls`` does:

- each ``tool_use`` block of an assistant record opens a call (its iteration, id, tool, input, and the record's
  time);
- a deferral attaches to the most recent open call with its id that has none yet;
- a result answers the most recent still-unanswered call with its id and closes it; a result that matches no open
  call is ignored (a second answer to a closed call goes to an older open call with that id, if there is one);
- a call's **duration** is the gap between the record that ended it (its deferral if it deferred, else its result)
  and the record just before that one; it is untimed when either record is undated or the gap is negative. A call
  a resumed run answers is so timed from the resume's claim.

Provider kinds follow the fold's rule (``kind`` when the result has one, else ``remote`` for a remote result, else
``unknown``). An August journal's records carry no time and no kind: its calls are untimed and their kinds come from
``remote``, which ``RunFacts.dated`` and ``RunFacts.kinds_recorded`` say so nobody reads "untimed" as "instant".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Final

from journaltools.goencoding.time import parse_go_time
from journaltools.protocol.credentials import conversation_digest
from journaltools.protocol.findings import Finding
from journaltools.protocol.kinds import FORMAT_VERSION as AUGUST_VERSION
from journaltools.protocol.kinds import ZERO_TIME, Deferred, Meta, Record, ToolResult, kind_token, provider_of

#: A time as Go's encoder writes it (what every canonical record holds): read here without the general parser,
#: which a table of a million records would otherwise call a million times.
_GO_TIME: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:[0-9]{2})"
)
_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()


@lru_cache(maxsize=64)
def _recent_time_ns(text: str) -> int | None:
    # A parallel batch's results each need the time of the record before them, often the previous result.
    return time_ns(text)


@lru_cache(maxsize=4096)
def _day_ns(day: str) -> int:
    return (date.fromisoformat(day).toordinal() - _EPOCH_DAY) * 86_400_000_000_000


def undated(time: str) -> bool:
    """Whether a record's time says nothing: absent, or Go's zero time (what an undated record marshals)."""
    return not time or time == ZERO_TIME


def time_ns(text: str) -> int | None:
    """A record's time as nanoseconds since 1970 (years 0 to 9999, as Go reads them), or None for an undated
    record."""
    if not text:
        return None
    found = _GO_TIME.fullmatch(text)
    if found is None or text.startswith("0000"):  # year 0 (Go's, not Python's dates'): the general parser
        try:
            return parse_go_time(text).unix_ns
        except ValueError:
            return None
    day, hours, minutes, seconds, fraction, zone = found.groups()
    try:
        moment = _day_ns(day)
    except ValueError:
        return None
    moment += ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000_000
    if fraction:
        moment += int(fraction.ljust(9, "0"))
    if zone != "Z":
        offset = (int(zone[1:3]) * 60 + int(zone[4:6])) * 60_000_000_000
        moment += -offset if zone[0] == "+" else offset
    return moment


#: A call's deferral and its answer as the journal holds them (the newest line's ``kind`` and ``dispatched`` are
#: empty in an August journal): what a call's facts carry, so nobody above reads the records for them.
CallDeferral = Deferred
CallAnswer = ToolResult


@dataclass(frozen=True, slots=True)
class MetaFacts:
    """What a journal's meta record says of its run, for both generations alike (a field the August build does not
    write is empty). The conversation token is a credential: only its digest is here."""

    run_id: str
    #: The journal's format version (which build wrote it).
    version: int
    #: ``meta.created`` as the journal wrote it, and the meta record's own time (``""`` when undated).
    created: str
    time: str
    prompt: str
    interactive: bool
    agent: str
    caller: str
    provider: str
    model: str
    reasoning_effort: str
    thinking_mode: str
    max_tokens: int
    max_iterations: int
    #: The first 12 hex characters of the conversation token's SHA-256 (None without a token).
    conversation: str | None

    @classmethod
    def of(cls, meta: Meta, time: str) -> MetaFacts:
        fingerprint = meta.fingerprint
        return cls(
            meta.run_id,
            meta.version,
            str(meta.created),
            time,
            meta.prompt,
            meta.interactive,
            meta.agent,
            meta.caller,
            fingerprint.provider,
            fingerprint.model,
            fingerprint.reasoning_effort,
            fingerprint.thinking_mode,
            fingerprint.max_tokens,
            fingerprint.max_iterations,
            conversation_digest(meta.conversation_token),
        )


@dataclass(slots=True)
class CallFact:
    """One tool call: the ``tool_use`` block that made it and what later records say of it."""

    iteration: int
    tool_use_id: str
    tool: str
    #: The call's input as the journal holds it (raw JSON).
    input: bytes
    #: The assistant record that made it, and its time (``""`` when undated).
    made_seq: int
    made_time: str
    deferral: CallDeferral | None = None
    deferred_seq: int | None = None
    answer: CallAnswer | None = None
    answered_seq: int | None = None
    answered_time: str = ""
    #: An allow-once approval names it.
    approved_once: bool = False
    #: By the runtime's timing rule; None when untimed.
    duration_ns: int | None = None

    @property
    def answered(self) -> bool:
        return self.answer is not None

    @property
    def ended(self) -> bool:
        """Whether a record ended its wait: an answer or a deferral (only such a call is timed or untimed)."""
        return self.answer is not None or self.deferral is not None

    @property
    def is_error(self) -> bool:
        return self.answer is not None and self.answer.result.is_error

    @property
    def kind(self) -> str | None:
        """The provider's token by the fold's rule; None while unanswered."""
        answer = self.answer
        if answer is None:
            return None
        return kind_token(provider_of(answer.kind, remote=answer.remote, dispatched=answer.dispatched)[0])

    @property
    def dispatched(self) -> bool | None:
        """Whether the call reached its provider, by the fold's rule; None while unanswered."""
        answer = self.answer
        if answer is None:
            return None
        return provider_of(answer.kind, remote=answer.remote, dispatched=answer.dispatched)[1]

    @property
    def says_dispatch(self) -> bool:
        """Whether its answer says anything of dispatch at all (a kind, or ``remote``): an August result that is
        neither says nothing, so it counts as neither dispatched nor not."""
        return self.answer is not None and bool(self.answer.kind or self.answer.remote)


@dataclass(slots=True)
class ResponseFact:
    """One model response: an assistant record."""

    seq: int
    iteration: int
    time: str
    stop_reason: str
    in_tokens: int
    out_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    #: Part of ``out_tokens``.
    thinking_tokens: int


@dataclass(slots=True)
class RunFacts:
    """Facts of one journal's records (see the module doc). Built by ``of``; nothing here is the runtime's state."""

    calls: list[CallFact] = field(default_factory=list)
    responses: list[ResponseFact] = field(default_factory=list)
    #: seq → the record's own time, for each dated record.
    times: dict[int, str] = field(default_factory=dict)
    #: Every seq, in stored order.
    seqs: list[int] = field(default_factory=list)
    #: The seq of the last terminal record.
    terminal_seq: int | None = None
    #: The seq of each claim, in journal order.
    claim_seqs: list[int] = field(default_factory=list)
    #: Whether any record names a provider kind (a newest result or deferral does).
    kinds_recorded: bool = False
    #: What the meta record says, when the first record is one.
    meta: MetaFacts | None = None
    #: The last terminal record's reason (``""`` when none).
    terminal_reason: str = ""
    #: The kind of the last record (``""`` for no record).
    last_kind: str = ""

    @property
    def created(self) -> str | None:
        """``meta.created`` as the journal wrote it, when its first record is the meta record (None otherwise)."""
        return (self.meta.created or None) if self.meta is not None else None

    @property
    def dated(self) -> bool:
        """Whether any record carries its own time (only the newest line dates records)."""
        return bool(self.times)

    def last_time(self) -> str:
        """The time of the last dated record (``""`` when none is dated)."""
        for seq in reversed(self.seqs):
            if seq in self.times:
                return self.times[seq]
        return ""

    def last_go_time(self) -> str:
        """The time of the last record dated with a time Go does not call zero (``""`` when none is)."""
        times = self.times
        return next((times[seq] for seq in reversed(self.seqs) if seq in times and not undated(times[seq])), "")

    @property
    def ends_with_terminal(self) -> bool:
        """Whether the last record is a terminal one: nothing follows the run's ending (the runtime's ``Ending()``)."""
        return self.last_kind == "terminal"

    @classmethod
    def of(cls, records: Sequence[Record]) -> RunFacts:
        walk = FactsWalk()
        walk.add(records)
        return walk.facts


class FactsWalk:
    """``RunFacts.of`` a few records at a time: ``facts`` is kept current as records are added (in stored order),
    each costing only itself, so a run followed as it is written never walks its journal again."""

    __slots__ = ("_before", "_open_calls", "facts")

    def __init__(self) -> None:
        self.facts = RunFacts()
        self._open_calls: dict[str, list[CallFact]] = {}
        #: The record before the next one added: a call's duration runs from it.
        self._before: Record | None = None

    def add(self, records: Iterable[Record]) -> None:
        facts, open_calls, before = self.facts, self._open_calls, self._before
        # Bound once: a run of 100,000 records opens in a view that waits for this walk.
        add_seq, times, calls, responses = facts.seqs.append, facts.times, facts.calls, facts.responses
        for record in records:
            seq, time = record.seq, record.time
            add_seq(seq)
            if time:
                times[seq] = time
            kind = record.kind
            if kind == "assistant" and record.assistant is not None:
                assistant = record.assistant
                iteration = assistant.iteration
                responses.append(
                    ResponseFact(
                        seq,
                        iteration,
                        time,
                        assistant.stop_reason,
                        assistant.in_tokens,
                        assistant.out_tokens,
                        assistant.cache_read_tokens,
                        assistant.cache_create_tokens,
                        assistant.thinking_tokens,
                    )
                )
                for block in assistant.message.content or ():
                    use = block.tool_use
                    if use is not None:
                        call = CallFact(iteration, use.id, use.name, bytes(use.input), seq, time)
                        calls.append(call)
                        made = open_calls.get(use.id)
                        if made is None:
                            open_calls[use.id] = [call]
                        else:
                            made.append(call)
            elif kind == "deferred" and record.deferred is not None:
                deferral = record.deferred
                facts.kinds_recorded |= bool(deferral.kind)
                waiting = _last_unanswered(open_calls.get(deferral.tool_use_id))
                if waiting is not None and waiting.deferral is None:
                    waiting.deferral, waiting.deferred_seq = deferral, seq
                    waiting.duration_ns = _gap(before, record)
            elif kind == "tool_result" and record.tool_result is not None:
                result = record.tool_result
                facts.kinds_recorded |= bool(result.kind)
                waiting = _last_unanswered(open_calls.get(result.tool_use_id))
                if waiting is not None:
                    waiting.answer, waiting.answered_seq, waiting.answered_time = result, seq, time
                    if waiting.deferral is None:
                        waiting.duration_ns = _gap(before, record)
            elif kind == "call_approval" and record.call_approval is not None:
                approved = open_calls.get(record.call_approval.tool_use_id)
                if approved:
                    approved[-1].approved_once = True
            elif kind == "terminal":
                facts.terminal_seq = seq
                facts.terminal_reason = record.terminal.reason if record.terminal is not None else ""
            elif kind == "claim":
                facts.claim_seqs.append(seq)
            elif kind == "meta" and record.meta is not None and len(facts.seqs) == 1:
                facts.meta = MetaFacts.of(record.meta, time)
            before = record
        if before is not None:
            facts.last_kind = before.kind or ""
        self._before = before


def _last_unanswered(made: list[CallFact] | None) -> CallFact | None:
    """The most recent call with this id still waiting for its answer (None when none is)."""
    for call in reversed(made or ()):
        if call.answer is None:
            return call
    return None


def wall_clock_ns(records: Sequence[Record]) -> int | None:
    """The runtime's ``Stats.WallClock`` in nanoseconds: from ``meta.created`` (else the meta record's own time) to
    the last record dated with a time Go does not call zero; None when either is missing (every August journal)
    or time runs backwards."""
    meta = records[0].meta if records and records[0].kind == "meta" else None
    if meta is None:
        return None
    updated = next((record.time for record in reversed(records) if not undated(record.time)), "")
    return wall_clock_of(meta, records[0].time, updated)


def wall_clock_of(meta: Meta, meta_time: str, last_dated: str) -> int | None:
    """``wall_clock_ns`` from the meta record (and its own time) and the last time Go does not call zero."""
    created = next((time for time in (meta.created, meta_time) if not undated(time)), None)
    # time_ns answers None for a time Python cannot hold (year 0): no wall clock rather than a wrong one.
    start, end = time_ns(created or ""), time_ns(last_dated)
    if start is None or end is None:
        return None
    return end - start if end >= start else None


def degraded_analysis(run: str, records: Sequence[Record], facts: RunFacts) -> Finding | None:
    """The ``degraded_analysis`` finding of a journal that lacks any of the newest line's additive fields, naming
    each and what analysis it leaves out; None when the journal has them all (or has no meta record to judge by)."""
    meta = records[0].meta if records and records[0].kind == "meta" else None
    if meta is None:
        return None
    ended = [call for call in facts.calls if call.ended]
    results = [record.tool_result for record in records if record.kind == "tool_result" and record.tool_result]
    return degraded_finding(
        run,
        meta,
        JournalGaps(
            records=len(records),
            undated=sum(1 for record in records if not record.time),
            ended_calls=len(ended),
            untimed_calls=sum(1 for call in ended if call.duration_ns is None),
            results=len(results),
            kindless_results=sum(1 for result in results if not result.kind),
        ),
    )


@dataclass(frozen=True, slots=True)
class JournalGaps:
    """What ``degraded_finding`` counts in a journal: its records and the undated ones, its ended calls and the
    untimed ones, its results and those naming no provider kind."""

    records: int
    undated: int
    ended_calls: int
    untimed_calls: int
    results: int
    kindless_results: int


def degraded_finding(run: str, meta: Meta, gaps: JournalGaps) -> Finding | None:
    """The ``degraded_analysis`` finding from a journal's counts (``degraded_analysis`` and the native rows both
    count them):

    - no record time: no call durations, no wall clock, no response or segment times (a call is *untimed*, not
      instant); some records undated: the calls those end are untimed;
    - no ``meta.agent``: ``search --identity`` leaves the run out, ``ls --agent`` keeps it under any agent;
    - results that name no provider kind: kinds come from ``remote`` (``remote`` or ``unknown``), and whether a
      call ran is known only for remote calls."""
    lacks: list[str] = []
    if gaps.undated == gaps.records:
        lacks.append(
            "record times (no call durations, wall clock, response or segment times: its calls are untimed, "
            "not instant)"
        )
    elif gaps.undated:
        lacks.append(
            f"a time on {gaps.undated} of {gaps.records} records "
            f"({gaps.untimed_calls} of {gaps.ended_calls} ended calls untimed)"
            if gaps.untimed_calls
            else f"a time on {gaps.undated} of {gaps.records} records"
        )
    if not meta.agent:
        lacks.append("meta.agent (search --identity leaves the run out; ls --agent keeps it under any agent)")
    if gaps.kindless_results:
        what = (
            "results" if gaps.kindless_results == gaps.results else f"{gaps.kindless_results} of {gaps.results} results"
        )
        lacks.append(
            f"a provider kind on {what} (kinds come from 'remote': remote or unknown; whether a call ran is known "
            "only for remote calls)"
        )
    if not lacks:
        return None
    # Every August journal lacks all three: say whose build that is, so the finding reads as a fact, not a fault.
    august = " (written by the August build, format version 3)" if meta.version == AUGUST_VERSION else ""
    return Finding.of(run, None, "degraded_analysis", f"the journal{august} lacks " + "; ".join(lacks))


def _gap(before: Record | None, record: Record) -> int | None:
    """The time from the record ``before`` to ``record``, when both are dated and it does not run backwards."""
    if before is None:
        return None
    end, start = _recent_time_ns(record.time), _recent_time_ns(before.time)
    if end is None or start is None or end < start:
        return None
    return end - start


__all__ = [
    "CallAnswer",
    "CallDeferral",
    "CallFact",
    "FactsWalk",
    "JournalGaps",
    "MetaFacts",
    "ResponseFact",
    "RunFacts",
    "degraded_analysis",
    "degraded_finding",
    "time_ns",
    "undated",
    "wall_clock_ns",
    "wall_clock_of",
]
