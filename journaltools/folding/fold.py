"""The pure fold: typed records in, the runtime's ``RunState`` plus a post-mortem's view out. No I/O.

``fold(records)`` (strict) returns the state fisk-ai's ``runstate.Fold`` returns and refuses exactly what it
refuses, raising ``FoldError`` (``VersionMismatch``) naming the run, the seq and the rule. Each journal folds by
the rules of the build its ``meta.version`` names (``protocol.generations``): the August build's (version 3) or
the newest line's (version 1), whose fold also dates every message and result, counts tool calls by provider kind
and reopens a run that journaled anything after its terminal; any other version is refused, as both builds refuse
it. ``strict=False``
never raises: a record Go would refuse is skipped with an error finding (its seq still counts as seen) and
the run's status becomes ``invalid``.

Both modes also report warnings for what Go folds silently but a post-mortem must see (PROTOCOL 4):
``unanswered_call``, ``unknown_call_result``, ``duplicate_result``, ``tool_use_id_mismatch``,
``unknown_deferral``, ``unknown_terminal_reason`` and ``turn_without_claim``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from journaltools.errors import FoldError, VersionMismatch
from journaltools.folding.facts import time_ns, undated
from journaltools.folding.schema import schema_problem
from journaltools.folding.state import Counters, PendingCall, PendingTurn, RunState, wrap_int64
from journaltools.folding.status import Segment, SegmentWalk, Status, status_of, waiting_for_of
from journaltools.folding.warnings import run_id_mismatch, times_out_of_order, unanswered_call
from journaltools.goencoding.json import go_quoted
from journaltools.protocol.blocks import (
    ASSISTANT,
    USER,
    Block,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    tool_uses,
    user_text,
)
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import generation_of_version, rules_for_version, unsupported_version
from journaltools.protocol.kinds import (
    KIND_MCP,
    KIND_REMOTE,
    TERMINAL_REASONS,
    ZERO_TIME,
    Assistant,
    Deferred,
    Kind,
    Record,
    ToolResult,
    provider_of,
)


@dataclass(frozen=True, slots=True)
class AfterTerminal:
    """Records follow a journal's last terminal: its seq, and the first record after it (its seq, its kind, and who
    claimed the run when that record is a claim). The newest line then lists the run open again; the August build
    still lists the terminal."""

    terminal_seq: int
    seq: int
    kind: str
    claimed_by: str | None


@dataclass(slots=True)
class FoldResult:
    """The fold of one journal: the runtime's state (None when there is no meta to fold from) and more."""

    run: str
    state: RunState | None
    status: Status
    findings: list[Finding]
    segments: list[Segment]
    last_seq: int
    records: int
    #: The last terminal is followed by a new turn: the status still names the previous turn's ending.
    stale_terminal: bool = False
    pending_calls: list[PendingCall] = field(default_factory=list)
    #: For each message of ``state.messages``, the seq of the record it came from (a merged user message: the
    #: first record that made it; a results message: its first result), so a finding's seq names a message.
    message_seqs: list[int] = field(default_factory=list)
    #: The last terminal and the first record after it, when records follow the last terminal.
    after_terminal: AfterTerminal | None = None

    @property
    def messages(self) -> list[Message]:
        return self.state.messages if self.state is not None else []

    @property
    def waiting_for(self) -> str | None:
        return waiting_for_of(self.state, self.pending_calls)


#: How a ``schema_violation`` begins.
_SCHEMA_REFUSES = "the published record schemas refuse this record"


class _Refusal(Exception):
    """A record the Go fold refuses; strict mode raises it as FoldError, lenient mode records it."""

    def __init__(self, seq: int, code: str, rule: str) -> None:
        self.seq = seq
        self.code = code
        self.rule = rule


@dataclass(slots=True)
class _Turn:
    """The assistant turn being gathered: its record and the calls it makes, results in journal order, answered and
    deferred ids. A run makes one per model call, so what most turns never hold is not made for each (``deferred``
    until the first deferral)."""

    assistant: Assistant
    seq: int
    time: str
    calls: list[ToolUseBlock]
    results: list[ToolResultBlock] = field(default_factory=list)
    #: The seq of the first result: the synthetic results message's.
    first_result_seq: int = 0
    answered: set[str] = field(default_factory=set)
    deferred: dict[str, Deferred] | None = None
    call_ids: frozenset[str] = frozenset()
    #: The time of the batch's last result record: the synthetic results message's.
    last_result_time: str = ZERO_TIME


def fold(records: Sequence[Record] | Iterable[Record], *, run: str | None = None, strict: bool = True) -> FoldResult:
    """Fold one journal's records (in stored order). ``run`` names the journal where the store knows it (a
    file name, a subject); otherwise ``meta.run_id`` does."""
    walk = Walk(run, strict)
    walk.feed(records)
    return walk.result()


class Walk:
    """The fold as it goes: ``feed`` takes records in stored order, as many times as they come, and ``result``
    says what the records fed so far fold to, without spending what the walk needs to go on (a turn whose
    calls are all answered is committed to the result's messages only until the next ``feed``).

    Strict, the first refusal raises ``FoldError`` from ``feed``; the walk then keeps raising it, since no
    record appended later changes what the runtime refuses. ``result`` raises ``FoldError`` (``empty_journal``)
    while nothing was fed. The result's ``state`` and ``message_seqs`` are the walk's own, kept current by every
    later ``feed``; its other fields are as they were."""

    def __init__(self, run: str | None, strict: bool) -> None:
        self.strict = strict
        self.findings: list[Finding] = []
        self.named_run = run
        self.run = run or "?"
        self.state: RunState | None = None
        self.turn: _Turn | None = None
        self.last_iteration = 0
        self.last_stop = ""
        self.saw_assistant = False
        self.counters = Counters()
        self.terminal_seq: int | None = None
        #: The last terminal applied, and what followed it first (the fold's own view of a reopening).
        self.last_terminal_seq: int | None = None
        self.after_terminal: AfterTerminal | None = None
        self.message_seqs: list[int] = []
        self.claim_since_terminal = False
        self.by_kind: dict[int, int] = {}
        #: The last record dated with a time Go does not call zero: (seq, time as written, nanoseconds).
        self.last_dated: tuple[int, str, int] | None = None
        #: Records fed, the seq of the last one applied (increasing) and the highest seq of any.
        self.records = 0
        self.last_seq = 0
        self.max_seq = 0
        #: The first record is not a meta record: nothing more is folded.
        self.headless = False
        self.segments = SegmentWalk()
        #: A terminal was fed, and a user or assistant record follows the last one (``stale_terminal``).
        self.saw_terminal = False
        self.turn_after_terminal = False
        #: Messages ``result`` committed for a turn still open to more records; withdrawn by the next ``feed``.
        self.provisional = 0
        self.failure: FoldError | None = None

    # -- the frame -------------------------------------------------------------------------------------------------

    def feed(self, records: Iterable[Record]) -> None:
        """Apply ``records``, the ones stored after those fed before."""
        if self.failure is not None:
            raise self.failure
        self._withdraw()
        try:
            self._feed(records)
        except FoldError as error:
            self.failure = error
            raise

    def _feed(self, records: Iterable[Record]) -> None:
        add_to_segments = self.segments.add
        for record in records:
            self.records += 1
            seq = record.seq
            kind = record.kind  # a dictionary lookup per call: asked once per record, handed on
            add_to_segments(record, kind)
            if kind == "terminal":
                self.saw_terminal, self.turn_after_terminal = True, False
            elif kind == "user" or kind == "assistant":
                self.turn_after_terminal = True
            if seq > self.max_seq:
                self.max_seq = seq
            state = self.state
            if state is None:
                if not self.headless:
                    self._start(record)
                continue
            problem = schema_problem(record, kind)  # ``_check_schema`` inlined: it runs on every record
            if problem is not None:
                self._warn(seq, "schema_violation", f"{_SCHEMA_REFUSES}: {problem}")
            if seq <= self.last_seq:
                self._refuse(seq, "seq_not_increasing", f"seq {seq} not increasing after {self.last_seq}")
                continue
            self.last_seq = seq
            if record.time:
                self._check_time_order(record)
            if state.terminal is not None and kind != "terminal":
                if not state.reopened and self.last_terminal_seq is not None:
                    self.after_terminal = _after_terminal(self.last_terminal_seq, record)
                state.reopened = True
            try:
                self._apply(record, kind)
            except _Refusal as refusal:
                if self.strict:
                    raise FoldError(self.run, refusal.seq, refusal.code, refusal.rule) from None
                self.findings.append(Finding.of(self.run, refusal.seq, refusal.code, refusal.rule))

    def _start(self, first: Record) -> None:
        """The first record: the run's meta, or a journal the fold refuses whole."""
        meta = first.meta if first.kind == "meta" else None
        self.run = self.named_run or (meta.run_id if meta is not None else "") or "?"
        if meta is None:
            self.headless = True
            self._refuse_journal(first.seq, "not_meta_first", "first record is not meta")
            return
        if generation_of_version(meta.version) is None:
            rule = unsupported_version(meta.version)
            if self.strict:
                raise VersionMismatch(self.run, first.seq, "version_mismatch", rule)
            self.findings.append(Finding.of(self.run, first.seq, "version_mismatch", rule))
        self.state = RunState(
            version=meta.version,
            run_id=meta.run_id,
            fingerprint=meta.fingerprint,
            prompt=meta.prompt,
            interactive=meta.interactive,
            conversation_token=meta.conversation_token,
            caller=meta.caller,
            messages=[user_text(meta.prompt)],
            generation=rules_for_version(meta.version),
            agent=meta.agent,
            # The prompt is the one message dated without a time of its own: from the run's creation.
            times=[first.time or meta.created],
        )
        self.message_seqs = [first.seq]
        renamed = run_id_mismatch(self.run, meta, first.seq)
        if renamed is not None:
            self.findings.append(renamed)
        self._check_schema(first, first.kind)
        self._check_time_order(first)
        self.last_seq = first.seq

    def result(self) -> FoldResult:
        """What the records fed so far fold to (see the class doc for what later feeds change)."""
        if self.failure is not None:
            raise self.failure
        if self.records == 0:
            if self.strict:
                raise FoldError(self.run, None, "empty_journal", "no records")
            return self._finish([Finding.of(self.run, None, "empty_journal", "no records")])
        if self.state is not None:
            self._withdraw()
            self._end()
            return self._finish(list(self.findings))
        return self._finish(list(self.findings))

    def _refuse(self, seq: int, code: str, rule: str) -> None:
        if self.strict:
            raise FoldError(self.run, seq, code, rule)
        self.findings.append(Finding.of(self.run, seq, code, rule))

    def _refuse_journal(self, seq: int | None, code: str, rule: str) -> None:
        if self.strict:
            raise FoldError(self.run, seq, code, rule)
        self.findings.append(Finding.of(self.run, seq, code, rule))

    def _check_schema(self, record: Record, kind: Kind | None) -> None:
        problem = schema_problem(record, kind)
        if problem is not None:
            self._warn(record.seq, "schema_violation", f"{_SCHEMA_REFUSES}: {problem}")

    def _check_time_order(self, record: Record) -> None:
        """A record dated before the dated record before it: the runtime accepts it (a resume on a machine whose
        clock is behind, an answer journaled by another host), but no interval across the two is a duration."""
        if undated(record.time):
            return
        moment = time_ns(record.time)
        if moment is None:
            return
        before = self.last_dated
        self.last_dated = (record.seq, record.time, moment)
        if before is not None and moment < before[2]:
            self.findings.append(times_out_of_order(self.run, record.seq, record.time, before[0], before[1]))

    def _warn(self, seq: int, code: str, message: str) -> None:
        self.findings.append(Finding.of(self.run, seq, code, message))

    # -- one record ------------------------------------------------------------------------------------------------

    def _apply(self, record: Record, kind: Kind | None) -> None:
        seq = record.seq
        state = self.state
        assert state is not None
        if kind is None:
            if record.optional:
                return
            raise _Refusal(
                seq, "unknown_protocol", f"unknown record protocol {go_quoted(record.protocol)} at seq {seq}"
            )
        if kind == "meta":
            raise _Refusal(seq, "duplicate_meta", f"duplicate meta at seq {seq}")
        payload = getattr(record, kind)
        if payload is None:
            label = "call approval" if kind == "call_approval" else kind.replace("_", " ")
            if kind == "tool_result":
                label = "tool_result"
            raise _Refusal(seq, "missing_payload", f"{label} record with no payload at seq {seq}")
        # The kinds in the order of how often a journal holds them: a result for nearly every other record.
        if kind == "tool_result":
            self._tool_result(payload, seq, record.time)
        elif kind == "assistant":
            self._assistant(payload, seq, record.time)
        elif kind == "claim":
            self.claim_since_terminal = True
        elif kind == "terminal":
            state.terminal = payload
            state.reopened = False
            state.ended = _time(record.time)
            state.call_approvals = None
            self.terminal_seq = seq
            self.last_terminal_seq, self.after_terminal = seq, None
            self.claim_since_terminal = False
            if payload.reason not in TERMINAL_REASONS:
                self._warn(
                    seq, "unknown_terminal_reason", f"terminal reason {payload.reason!r} is not one the runtime writes"
                )
        elif kind == "user":
            self._new_turn_after_terminal(seq)
            if self.turn is not None:
                self._commit(self.turn, committed_by=seq)
                self.turn = None
            state.turns += 1
            if not _append_or_merge_user(state.messages, payload.message):
                self.message_seqs.append(seq)
                state.times.append(_time(record.time))
        elif kind == "deferred":
            turn = self._open_turn(seq, "deferred")
            if payload.tool_use_id not in turn.call_ids:
                self._warn(
                    seq, "unknown_deferral", f"a deferral of {payload.tool_use_id!r}, which the turn never called"
                )
            if turn.deferred is None:
                turn.deferred = {}
            turn.deferred[payload.tool_use_id] = payload
        elif kind == "decision":
            state.approvals = [*(state.approvals or ()), payload.tool]
        elif kind == "call_approval":
            state.call_approvals = [*(state.call_approvals or ()), payload]
        elif kind == "memory_revisions":
            state.memory_revisions = payload.revisions

    def _tool_result(self, payload: ToolResult, seq: int, time: str) -> None:
        turn = self.turn
        if turn is None:
            raise _Refusal(seq, "result_outside_turn", f"tool_result before any assistant at seq {seq}")
        called = payload.tool_use_id
        result = payload.result
        if called not in turn.call_ids:
            self._warn(seq, "unknown_call_result", f"a result for {called!r}, which the turn never called")
        elif called in turn.answered:
            self._warn(seq, "duplicate_result", f"a second result for call {called!r}")
        if result.tool_use_id != called:
            self._warn(
                seq,
                "tool_use_id_mismatch",
                f"the record answers {called!r} but its result block names {result.tool_use_id!r}",
            )
        if not turn.results:
            turn.first_result_seq = seq
        turn.results.append(result)
        turn.answered.add(called)
        if time:
            turn.last_result_time = time
            state = self.state
            assert state is not None
            if state.result_times is None:
                state.result_times = {}
            state.result_times[called] = time
        else:
            turn.last_result_time = ZERO_TIME
        self._count_tool_call(payload)

    def _count_tool_call(self, result: ToolResult) -> None:
        """The newest line's rule, which reads an August result (no kind) as the August build counted it: a
        ``remote`` one ran remotely, any other is of unknown kind."""
        counters = self.counters
        counters.tool_calls += 1
        kind, dispatched = provider_of(result.kind, remote=result.remote, dispatched=result.dispatched)
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        if dispatched:
            if kind == KIND_REMOTE:
                counters.remote_tool_calls += 1
            elif kind == KIND_MCP:
                counters.mcp_tool_calls += 1

    def _assistant(self, assistant: Assistant, seq: int, time: str) -> None:
        self._new_turn_after_terminal(seq)
        if self.turn is not None:
            self._commit(self.turn, committed_by=seq)
        state = self.state
        assert state is not None
        state.context_tokens = assistant.in_tokens + assistant.cache_read_tokens + assistant.cache_create_tokens
        calls = tool_uses(assistant.message)
        self.turn = _Turn(assistant, seq, _time(time), calls, call_ids=frozenset([call.id for call in calls]))
        self.last_iteration = assistant.iteration
        self.last_stop = assistant.stop_reason
        self.saw_assistant = True
        counters = self.counters
        counters.llm_calls += 1
        counters.in_tokens += assistant.in_tokens
        counters.out_tokens += assistant.out_tokens
        counters.cache_read_tokens += assistant.cache_read_tokens
        counters.cache_create_tokens += assistant.cache_create_tokens
        counters.thinking_tokens += assistant.thinking_tokens

    def _open_turn(self, seq: int, what: str) -> _Turn:
        if self.turn is None:
            raise _Refusal(seq, "result_outside_turn", f"{what} before any assistant at seq {seq}")
        return self.turn

    def _new_turn_after_terminal(self, seq: int) -> None:
        if self.terminal_seq is not None and not self.claim_since_terminal:
            self._warn(
                seq,
                "turn_without_claim",
                f"a new turn after the terminal at seq {self.terminal_seq} with no claim between",
            )
        # One warning per terminal: the turn has started.
        self.terminal_seq = None

    def _commit(self, turn: _Turn, *, committed_by: int | None) -> None:
        state = self.state
        assert state is not None
        if committed_by is not None:
            for call in turn.calls:
                if call.id not in turn.answered:
                    self.findings.append(unanswered_call(self.run, turn.seq, call.id, call.name, committed_by))
        state.messages.append(turn.assistant.message)
        self.message_seqs.append(turn.seq)
        state.times.append(turn.time)
        if turn.results:
            self.message_seqs.append(turn.first_result_seq)
            state.messages.append(Message(role=USER, content=[Block(tool_result=result) for result in turn.results]))
            state.times.append(turn.last_result_time)

    # -- the end ---------------------------------------------------------------------------------------------------

    def _end(self) -> None:
        state = self.state
        assert state is not None
        turn = self.turn
        if turn is not None:
            if all(call.id in turn.answered for call in turn.calls):
                before = len(state.messages)
                self._commit(turn, committed_by=None)
                self.provisional = len(state.messages) - before
            else:
                state.pending = PendingTurn(
                    assistant=turn.assistant.message,
                    iteration=turn.assistant.iteration,
                    stop_reason=turn.assistant.stop_reason,
                    results=tuple(turn.results),
                    answered=frozenset(turn.answered),
                    deferred=dict(turn.deferred or {}),
                    seq=turn.seq,
                    time=turn.time,
                )
        if self.saw_assistant:
            state.next_iteration = wrap_int64(self.last_iteration + 1)
            state.last_stop_reason = self.last_stop
        if self.by_kind:
            self.counters.tool_calls_by_kind = self.by_kind
        state.counters = self.counters.wrapped()
        state.context_tokens = wrap_int64(state.context_tokens)
        state.turns = wrap_int64(state.turns)
        if state.reopened:
            state.ended = ZERO_TIME

    def _withdraw(self) -> None:
        """Undo what ``_end`` made of the turn still open, so that the next records apply to the walk itself."""
        state = self.state
        if state is None:
            return
        state.pending = None
        for _ in range(self.provisional):
            state.messages.pop()
            state.times.pop()
            self.message_seqs.pop()
        self.provisional = 0

    def _finish(self, findings: list[Finding]) -> FoldResult:
        state = self.state
        invalid = any(finding.severity == "error" for finding in findings)
        return FoldResult(
            run=self.run,
            state=state,
            status=status_of(state, invalid=invalid),
            findings=findings,
            segments=self.segments.segments() if state is not None else [],
            last_seq=self.last_seq if state is not None else self.max_seq,
            records=self.records,
            stale_terminal=self.saw_terminal and self.turn_after_terminal,
            pending_calls=_pending_calls(state) if state is not None else [],
            message_seqs=self.message_seqs if state is not None else [],
            after_terminal=self.after_terminal,
        )


def _time(time: str) -> str:
    """A record's time as the state holds it: Go's zero time for an undated record."""
    return time or ZERO_TIME


def _append_or_merge_user(messages: list[Message], message: Message) -> bool:
    """The runtime's rule: a user message after a user message adds its blocks to it. True when it merged."""
    if messages and messages[-1].role == USER:
        last = messages[-1]
        if message.content:
            messages[-1] = Message(role=last.role, content=[*(last.content or ()), *message.content])
        return True
    messages.append(message)
    return False


def _pending_calls(state: RunState) -> list[PendingCall]:
    pending = state.pending
    if pending is None:
        return []
    approved = {approval.tool_use_id for approval in state.call_approvals or ()}
    return [
        PendingCall(call.id, call.name, bytes(call.input), pending.deferred.get(call.id), call.id in approved)
        for call in pending.unanswered_calls()
    ]


def _after_terminal(terminal_seq: int, following: Record) -> AfterTerminal:
    claim = following.claim if following.kind == "claim" else None
    return AfterTerminal(terminal_seq, following.seq, following.kind or "unknown", claim.by if claim else None)


__all__ = ["ASSISTANT", "AfterTerminal", "FoldResult", "PendingCall", "Walk", "fold"]
