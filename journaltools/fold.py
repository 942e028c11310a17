"""The pure fold: records in, conversation, pending batch, counters, resume position and status out.

No I/O. One fold serves both backends, the CLI, the tables and the widgets (PROTOCOL.md section 7).

Choices the protocol leaves open, made here so every caller gets the same answer:

- ``messages`` carry the known fields of each block only (unknown fields are ignored, never sent on);
- two assistant records with no user record between (a continuation) become one assistant message;
- a skipped unknown optional record never decides the status (a reader that skips it sees the run as
  if it were not there), just like a claim or a note;
- an approval for a call that was never deferred is reported and decides nothing.

Strict mode raises ``FoldError`` at the first error-severity finding, naming run, seq and rule.
Lenient mode (``strict=False``) never raises and loses nothing it can interpret: a record whose payload
breaks its shape is folded as far as it can be read (a broken field folds as zero: absent, empty, false)
and flagged; only a record it cannot interpret at all (a broken envelope, an unknown type, a deferral
without a call) is skipped, with its finding. A finding is never the echo of an earlier one: a skipped
record's seq still counts as seen, and the results of a dropped turn are dropped with it.

Content the Messages API refuses (an empty text block, empty content) is kept out of ``messages`` with
an ``empty_content`` warning saying what was dropped, so ``messages`` stays valid API input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from journaltools._perf import paused_gc
from journaltools.errors import FoldError, VersionMismatch
from journaltools.protocol.envelope import SEQ_MAX, check_envelope
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import (
    PROTOCOL_VERSION,
    RECORD_TYPES,
    MetaRecord,
    RawRecord,
    check_record,
    validate_record,
)

Body = dict[str, Any]

Status = Literal["failed", "cancelled", "suspended", "open", "completed"]
WaitingFor = Literal["model", "tools", "answer"] | None
STATUSES: tuple[Status, ...] = ("failed", "cancelled", "suspended", "open", "completed")

#: Placeholder content the lenient fold gives a call a broken journal never answered, so the
#: messages it returns are still valid Messages API input. The finding says it was made up.
MISSING_RESULT_TEXT = "[journaltools: no tool_result was recorded for this call]"


@dataclass(frozen=True, slots=True)
class PendingCall:
    id: str
    name: str
    input: dict[str, Any]
    deferred: Literal["approval", "external"] | None
    approval: Literal["approve", "deny"] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "input": self.input,
            "deferred": self.deferred,
            "approval": self.approval,
        }


@dataclass(slots=True)
class ToolCallTrace:
    """Everything the journal says about one tool call, for the ``tool_calls`` table."""

    call_id: str
    name: str
    input: dict[str, Any]
    call_seq: int
    call_ts: str
    result_seq: int | None = None
    result_ts: str | None = None
    is_error: bool | None = None
    deferred: str | None = None
    approval: str | None = None


@dataclass(slots=True)
class Counters:
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    claims: int = 0
    errors: int = 0
    deferrals: int = 0
    skipped_optional: int = 0

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class ResumePosition:
    last_seq: int
    waiting_for: WaitingFor

    def to_json(self) -> dict[str, Any]:
        return {"last_seq": self.last_seq, "waiting_for": self.waiting_for}


@dataclass(frozen=True, slots=True)
class Ending:
    """Why a run ended: the fatal error or the cancel that decided its status (``failed``, ``cancelled``)."""

    kind: Literal["error", "cancel"]
    seq: int
    where: str | None  # the error's where: provider, tool or runner
    by: str | None  # who cancelled
    message: str  # the error's message, or the cancel's reason

    @property
    def text(self) -> str:
        """One line for tables and banners: ``provider error: overloaded`` / ``cancelled by alice: wrong repo``."""
        if self.kind == "error":
            return f"{self.where or 'unknown'} error: {self.message}"
        return f"cancelled by {self.by or 'unknown'}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        if self.kind == "error":
            return {"kind": "error", "seq": self.seq, "where": self.where, "message": self.message}
        return {"kind": "cancel", "seq": self.seq, "by": self.by, "reason": self.message}


@dataclass(slots=True)
class FoldResult:
    run: str | None
    status: Status
    messages: list[dict[str, Any]]
    pending: list[PendingCall]
    counters: Counters
    resume: ResumePosition
    meta: MetaRecord | None
    findings: list[Finding]
    tool_calls: list[ToolCallTrace]
    records_folded: int
    first_ts: str | None = None
    last_ts: str | None = None
    claim_seqs: list[int] = field(default_factory=list)
    stop_reason: str | None = None
    """The ``stop_reason`` of the last assistant record folded."""
    ending: Ending | None = None
    """Why a ``failed`` or ``cancelled`` run ended; None for every other status."""
    model: str | None = None
    """The fingerprint's model (read from the meta record even when the rest of it breaks its shape)."""
    task: str | None = None
    """The meta's task id in the task store, if any."""

    def to_json(self) -> dict[str, Any]:
        """The ``show --json`` shape of INTERFACES.md."""
        return {
            "run": self.run,
            "status": self.status,
            "messages": self.messages,
            "pending": [call.to_json() for call in self.pending],
            "counters": self.counters.to_json(),
            "resume": self.resume.to_json(),
            "stop_reason": self.stop_reason,
            "end_reason": self.ending.to_json() if self.ending is not None else None,
        }


@dataclass(slots=True)
class _Call:
    block: Body  # the tool_use block, already validated
    trace: ToolCallTrace
    result: dict[str, Any] | None = None
    result_seq: int | None = None
    deferred: Literal["approval", "external"] | None = None
    approval: Literal["approve", "deny"] | None = None


@dataclass(slots=True)
class _Turn:
    record: Body  # the assistant record, already validated
    calls: dict[str, _Call]
    blocks: list[Body]  # its content for the message: known fields only, no empty text block

    def unanswered(self) -> list[_Call]:
        return [call for call in self.calls.values() if call.result is None]


class _Folder:
    def __init__(self, strict: bool, expected_run: str | None) -> None:
        self.strict = strict
        self.expected_run = expected_run
        self.run: str | None = expected_run
        self.meta: MetaRecord | None = None
        self.messages: list[dict[str, Any]] = []
        self.turn: _Turn | None = None
        self.counters = Counters()
        self.findings: list[Finding] = []
        self.traces: list[ToolCallTrace] = []
        self.call_ids: set[str] = set()
        self.last_seq = 0
        self.last_seen_seq = 0
        self.last_decisive: Body | None = None
        self.records = 0
        self.seen_first = False
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.claim_seqs: list[int] = []
        self.stop_reason: str | None = None
        self.model: str | None = None
        self.task: str | None = None
        self.folding = False  # a usable meta opened the journal
        self.dropped_calls: set[str] = set()  # tool_use ids of dropped assistant records
        self.silenced: set[str] = set()  # calls whose result or deferral was reported and skipped
        self.lost_turn = False  # a skipped record may have been a turn whose calls are unknown
        self.lost_answer = False  # a skipped record may have answered or deferred a call of the current turn
        self.user_dropped = False  # a user record was reported and not folded, or had no content to keep
        self.unnumbered = 0  # records since the last readable seq whose own seq is unreadable

    def report(self, seq: int | None, code: str, message: str) -> None:
        finding = Finding.of(self.run, seq, code, message)
        if self.strict and finding.severity == "error":
            error_type = VersionMismatch if code == "version_mismatch" else FoldError
            raise error_type(self.run, seq, code, message)
        self.findings.append(finding)

    # -- messages -----------------------------------------------------------------------------

    def _append_user(self, blocks: list[dict[str, Any]] | str, results_first: bool) -> None:
        if self.messages and self.messages[-1]["role"] == "user":
            previous = self.messages[-1]
            merged = _as_blocks(previous["content"]) + _as_blocks(blocks)
            if results_first:
                merged.sort(key=lambda block: block["type"] != "tool_result")
            previous["content"] = merged
        else:
            self.messages.append({"role": "user", "content": blocks})

    def _append_assistant(self, content: list[dict[str, Any]]) -> None:
        if self.messages and self.messages[-1]["role"] == "assistant":
            # Two assistant records with no user between (a continuation): one message keeps roles alternating.
            self.messages[-1]["content"] = self.messages[-1]["content"] + content
        else:
            self.messages.append({"role": "assistant", "content": content})

    def commit(self, by_seq: int, by_type: str) -> None:
        turn = self.turn
        if turn is None:
            return
        self.turn = None
        unanswered = turn.unanswered()
        if unanswered:
            ids = ", ".join(
                call.block["id"]
                for call in unanswered
                if call.block["id"] not in self.silenced and not self.lost_answer
            )
            if ids:  # a call whose result was reported and skipped is not reported a second time
                self.report(
                    by_seq,
                    "unanswered_calls",
                    f"a {by_type} record commits the turn of seq {turn.record['seq']} with unanswered calls: {ids}",
                )
            for call in unanswered:
                call.result = {
                    "type": "tool_result",
                    "tool_use_id": call.block["id"],
                    "content": MISSING_RESULT_TEXT,
                    "is_error": True,
                }
        if turn.blocks:
            self._append_assistant(turn.blocks)
        if turn.calls:
            results = [call.result for call in turn.calls.values() if call.result is not None]
            self._append_user(results, results_first=True)

    # -- records ------------------------------------------------------------------------------

    def step(self, raw: RawRecord) -> None:
        if not self.seen_first:
            self.seen_first = True
            self._open(raw)
            return
        body = raw.body
        if not self.folding:
            # No usable meta: later records are still checked but cannot be folded; the first record's
            # finding says why.
            finding = check_record(raw)
            if finding is not None:
                self.report(finding.seq, finding.code, finding.message)
            return
        seq = body.get("seq")
        if type(seq) is int and 0 < seq <= SEQ_MAX:
            previous = self.last_seen_seq
            if seq <= previous:
                self.report(seq, "seq_not_increasing", f"seq {seq} is not greater than the previous seq {previous}")
                return
            # Ordering is judged against every record read, folded or not, so a skipped record does not make
            # the next one look like a gap; each record since whose seq is unreadable may fill one slot.
            if seq > previous + 1 + self.unnumbered:
                self.report(seq, "seq_gap", f"seq {seq} follows seq {previous}: records are missing")
            self.last_seen_seq = seq
            self.unnumbered = 0
        else:
            self.unnumbered += 1
        finding = check_record(raw)
        if finding is not None and check_envelope(body) is not None:
            self.report(finding.seq, finding.code, finding.message)  # a broken envelope: nothing to place
            self._skipped(body)
            return
        if body["run"] != self.meta_run:
            self.report(seq, "run_mismatch", f"record says run {body['run']!r}, its meta says {self.meta_run!r}")
            self._skipped(body)
            return
        lost_blocks = False
        if finding is not None:
            self.report(finding.seq, finding.code, finding.message)
            salvaged = _salvage(body) if finding.code != "unknown_type" else None
            if salvaged is None:
                self._skipped(body)
                return
            lost_blocks = body["type"] == "assistant" and len(salvaged["content"]) < len(body["content"])
            body = salvaged
        handler = _HANDLERS.get(body["type"], _Folder.on_unknown_optional)
        if handler(self, body):
            self._accept(body)
            if lost_blocks:  # an unreadable block may have been a call: what names an unknown call is silent
                self.lost_turn = True

    def _skipped(self, body: Body) -> None:
        """A record was reported and not folded: what follows from its absence is not reported again.

        Whatever it still names is silenced: the calls it introduced (their results, deferrals and approvals
        go with it) and the call it answered or deferred. If it may have been a turn or a result but names
        nothing readable, the calls it may have touched are silenced until the next turn starts.
        """
        kind, call = body.get("type"), body.get("call")
        self.dropped_calls.update(_tool_use_ids(body))
        if isinstance(call, str):
            self.silenced.add(call)
        elif kind in ("tool_result", "deferral") or not isinstance(kind, str):
            self.lost_answer = True
        unreadable_kind = not isinstance(kind, str)
        if (kind == "assistant" or unreadable_kind) and not isinstance(body.get("content"), list):
            self.lost_turn = True
        if kind == "user" or unreadable_kind:
            self.user_dropped = True

    def _open(self, raw: RawRecord) -> None:
        """The first record: it must be a meta at seq 1 with exactly this reader's version."""
        body = raw.body
        kind = body.get("type")
        if kind != "meta":
            self.report(raw.seq, "not_meta_first", f"the first record is {kind!r}, not meta")
            return
        envelope = check_envelope(body)
        if envelope is not None:
            self.report(envelope.seq, envelope.code, envelope.message)
            return
        seq: int = body["seq"]
        if seq != 1:
            self.report(seq, "not_meta_first", f"the journal must start with meta at seq 1, not meta at seq {seq}")
        version = body.get("version")
        if type(version) is not int:
            self.report(seq, "schema_violation", f"meta: version: {version!r} is not an integer")
            return
        if version != PROTOCOL_VERSION:
            self.report(
                seq,
                "version_mismatch",
                f"meta.version is {version}, this reader folds exactly version {PROTOCOL_VERSION}",
            )
            return
        validated = validate_record(raw)
        if isinstance(validated, MetaRecord):
            self.meta = validated
            self.model, self.task = validated.fingerprint.model, validated.task
        elif isinstance(validated, Finding):  # the fingerprint or labels break their shape: fold without them
            self.report(validated.seq, validated.code, validated.message)
            fingerprint = body.get("fingerprint")
            model = fingerprint.get("model") if isinstance(fingerprint, dict) else None
            self.model = model if isinstance(model, str) else None
            self.task = body["task"] if isinstance(body.get("task"), str) else None
        if self.expected_run is not None and body["run"] != self.expected_run:
            self.report(seq, "run_mismatch", f"meta says run {body['run']!r}, journal is {self.expected_run!r}")
        self.run = self.run or body["run"]
        self.meta_run: str = body["run"]  # a journal named otherwise is reported once, here, not at every record
        self.folding = True
        self.last_seen_seq = seq
        self._accept(body)

    def _accept(self, body: Body) -> None:
        self.records += 1
        self.last_seq = body["seq"]
        if self.first_ts is None:
            self.first_ts = body["ts"]
        self.last_ts = body["ts"]
        if body["type"] in _DECISIVE_TYPES:
            self.last_decisive = body

    def on_meta(self, body: Body) -> bool:
        self.report(body["seq"], "not_meta_first", f"a second meta record at seq {body['seq']}")
        return False

    def on_user(self, body: Body) -> bool:
        seq = body["seq"]
        self.commit(seq, "user")
        content = body["content"]
        if isinstance(content, str):
            kept: str | list[Body] = content
            if not content:
                self.report(seq, "empty_content", "the user content is empty: no message was added")
        else:
            kept = _text_blocks(content)
            empty = len(content) - len(kept)
            if not content:
                self.report(seq, "empty_content", "the user content is an empty list: no message was added")
            elif empty:
                rest = "no message was added" if not kept else f"{len(kept)} kept"
                self.report(seq, "empty_content", f"{_blocks_word(empty)} of the user content dropped; {rest}")
        if kept:
            self._append_user(kept, results_first=True)
        else:
            self.user_dropped = True
        return True

    def on_assistant(self, body: Body) -> bool:
        seq, ts = body["seq"], body["ts"]
        calls: dict[str, _Call] = {}
        for block in body["content"]:
            if block["type"] != "tool_use":
                continue
            call_id = block["id"]
            if call_id in self.call_ids or call_id in calls:
                self.report(
                    seq, "duplicate_call_id", f"tool_use id {call_id!r} is already used in this run; turn dropped"
                )
                # Its results would answer an ambiguous call: they go with it, without findings of their own.
                self.dropped_calls.update(_tool_use_ids(body))
                return False
            calls[call_id] = _Call(block, ToolCallTrace(call_id, block["name"], block["input"], seq, ts))
        self.commit(seq, "assistant")
        self.lost_turn = self.lost_answer = False  # a new turn: what was lost before cannot touch it
        if not self.messages and not self.user_dropped:
            self.report(seq, "assistant_first", "the conversation would start with an assistant message")
        blocks = _assistant_blocks(body["content"])
        empty = len(body["content"]) - len(blocks)
        if empty:
            rest = "the turn has no message" if not blocks else f"{len(blocks)} kept"
            self.report(seq, "empty_content", f"{_blocks_word(empty)} of the assistant content dropped; {rest}")
        elif not blocks:
            self.report(seq, "empty_content", "the assistant content is an empty list: the turn has no message")
        self.turn = _Turn(body, calls, blocks)
        self.stop_reason = body["stop_reason"]
        self.call_ids.update(calls)
        self.traces.extend(call.trace for call in calls.values())
        usage = body["usage"]
        counters = self.counters
        counters.turns += 1
        counters.tool_calls += len(calls)
        counters.input_tokens += usage["input_tokens"]
        counters.output_tokens += usage["output_tokens"]
        return True

    def _call_of_turn(self, seq: int, call_id: str, what: str) -> _Call | None:
        call = self.turn.calls.get(call_id) if self.turn is not None else None
        if call is None and call_id not in self.dropped_calls and not self.lost_turn:
            self.report(seq, "unknown_call", f"a {what} for call {call_id!r}, which the current turn does not have")
        return call

    def on_tool_result(self, body: Body) -> bool:
        seq, call_id = body["seq"], body["call"]
        call = self._call_of_turn(seq, call_id, "tool_result")
        if call is None:
            return False
        if call.result is not None:
            if call_id not in self.dropped_calls:  # else: it answers the dropped turn's call of the same id
                self.report(
                    seq, "duplicate_result", f"call {call_id!r} already has its result at seq {call.result_seq}"
                )
            return False
        content = body["content"]
        block: Body = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": content if isinstance(content, str) else _text_blocks(content),
        }
        is_error = body.get("is_error", False)
        if is_error:
            block["is_error"] = True
            self.counters.tool_errors += 1
        call.result = block
        call.result_seq = seq
        call.trace.result_seq = seq
        call.trace.result_ts = body["ts"]
        call.trace.is_error = is_error
        return True

    def on_deferral(self, body: Body) -> bool:
        seq, call_id = body["seq"], body["call"]
        call = self._call_of_turn(seq, call_id, "deferral")
        if call is None:
            return False
        if call.result is not None:
            if call_id not in self.dropped_calls:
                self.report(seq, "unknown_call", f"a deferral for call {call_id!r}, which is already answered")
            return False
        if call.deferred is not None:
            self.report(seq, "duplicate_deferral", f"call {call_id!r} was already deferred ({call.deferred})")
            return False
        call.deferred = body["reason"]
        call.trace.deferred = body["reason"]
        self.counters.deferrals += 1
        return True

    def on_approval(self, body: Body) -> bool:
        seq, call_id = body["seq"], body["call"]
        call = self._call_of_turn(seq, call_id, "approval")
        if call is None:
            return False
        if call.deferred is None:
            # Recording it would let a later deferral look already decided: the permissive direction.
            if call_id not in self.silenced and not self.lost_answer:
                self.report(
                    seq,
                    "approval_without_deferral",
                    f"an approval for call {call_id!r}, which was not deferred; ignored",
                )
            return True
        call.approval = body["decision"]
        call.trace.approval = body["decision"]
        return True

    def on_claim(self, body: Body) -> bool:
        # Completely inert: a claim lands between a turn and its results, touching the turn would commit it early.
        self.counters.claims += 1
        self.claim_seqs.append(body["seq"])
        return True

    def on_error(self, body: Body) -> bool:
        self.counters.errors += 1
        return True

    def on_inert(self, body: Body) -> bool:
        return True

    def on_unknown_optional(self, body: Body) -> bool:
        self.counters.skipped_optional += 1
        return True

    # -- the end ------------------------------------------------------------------------------

    def finish(self) -> FoldResult:
        if self.records == 0 and not any(f.code in _NO_META_CODES for f in self.findings):
            self.report(None, "empty_journal", "the journal has no records")
        pending: list[PendingCall] = []
        turn = self.turn
        if turn is not None and turn.unanswered():
            pending = [
                PendingCall(call.block["id"], call.block["name"], call.block["input"], call.deferred, call.approval)
                for call in turn.unanswered()
            ]
        elif turn is not None:
            self.commit(self.last_seq, "end of journal")
        status = self._status(pending)
        waiting: WaitingFor
        if status == "suspended":
            waiting = "answer"
        elif pending:
            waiting = "tools"
        elif self.messages and self.messages[-1]["role"] == "user":
            waiting = "model"
        else:
            waiting = None
        return FoldResult(
            run=self.run,
            status=status,
            messages=self.messages,
            pending=pending,
            counters=self.counters,
            resume=ResumePosition(self.last_seq, waiting),
            meta=self.meta,
            findings=self.findings,
            tool_calls=self.traces,
            records_folded=self.records,
            first_ts=self.first_ts,
            last_ts=self.last_ts,
            claim_seqs=self.claim_seqs,
            stop_reason=self.stop_reason,
            ending=self._ending(status),
            model=self.model,
            task=self.task,
        )

    def _ending(self, status: Status) -> Ending | None:
        decisive = self.last_decisive
        if decisive is None or status not in ("failed", "cancelled"):
            return None
        if status == "failed":
            return Ending("error", decisive["seq"], decisive["where"], None, decisive["message"])
        return Ending("cancel", decisive["seq"], None, decisive["by"], decisive["reason"])

    def _status(self, pending: list[PendingCall]) -> Status:
        decisive = self.last_decisive
        if decisive is not None and decisive["type"] == "error" and decisive["fatal"]:
            return "failed"
        if decisive is not None and decisive["type"] == "cancel":
            return "cancelled"
        if any(call.deferred is not None and call.approval is None for call in pending):
            return "suspended"
        if pending or not self.messages or self.messages[-1]["role"] == "user":
            return "open"
        return "completed"


_NO_META_CODES = frozenset({"not_meta_first", "version_mismatch", "schema_violation", "unknown_type"})

#: A run's status comes from the last record of these types (claims, notes and skipped unknown
#: optional records never decide it).
_DECISIVE_TYPES = frozenset(RECORD_TYPES) - {"claim", "note"}

_HANDLERS: dict[str, Any] = {
    "meta": _Folder.on_meta,
    "user": _Folder.on_user,
    "assistant": _Folder.on_assistant,
    "tool_result": _Folder.on_tool_result,
    "deferral": _Folder.on_deferral,
    "approval": _Folder.on_approval,
    "claim": _Folder.on_claim,
    "error": _Folder.on_error,
    "cancel": _Folder.on_inert,
    "note": _Folder.on_inert,
}


def _text_blocks(blocks: list[Body]) -> list[Body]:
    """Text blocks with their known fields only (unknown fields are never passed to the API), without the
    empty ones the API refuses."""
    return [{"type": "text", "text": block["text"]} for block in blocks if block["text"]]


def _assistant_blocks(blocks: list[Body]) -> list[Body]:
    return [
        {"type": "text", "text": block["text"]}
        if block["type"] == "text"
        else {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["input"]}
        for block in blocks
        if block["type"] != "text" or block["text"]
    ]


def _blocks_word(count: int) -> str:
    return "an empty text block" if count == 1 else f"{count} empty text blocks"


def _tool_use_ids(body: Body) -> set[str]:
    content = body.get("content")
    blocks = content if isinstance(content, list) else []
    return {
        block["id"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str)
    }


# -- fold-as-zero: what the lenient fold reads from a record whose payload breaks its shape -------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _text_block_list(value: Any) -> list[Body]:
    blocks = value if isinstance(value, list) else []
    return [
        {"type": "text", "text": block["text"]}
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _salvage_user(body: Body) -> Body | None:
    content = body.get("content")
    if isinstance(content, str):
        return {**body, "content": content}
    if isinstance(content, list):
        return {**body, "content": _text_block_list(content)}
    return None


def _salvage_assistant(body: Body) -> Body | None:
    content = body.get("content")
    if not isinstance(content, list):
        return None
    blocks: list[Body] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            blocks.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "tool_use" and isinstance(block.get("id"), str) and block["id"]:
            tool_input = block.get("input")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": _text(block.get("name")),
                    "input": tool_input if isinstance(tool_input, dict) else {},
                }
            )
    usage: Body = body["usage"] if isinstance(body.get("usage"), dict) else {}
    stop_reason = body.get("stop_reason")
    return {
        **body,
        "content": blocks,
        "stop_reason": stop_reason if isinstance(stop_reason, str) else None,
        "usage": {
            "input_tokens": _count(usage.get("input_tokens")),
            "output_tokens": _count(usage.get("output_tokens")),
        },
    }


def _salvage_tool_result(body: Body) -> Body | None:
    call = body.get("call")
    if not isinstance(call, str) or not call:
        return None
    content = body.get("content")
    return {
        **body,
        "content": content if isinstance(content, str) else _text_block_list(content),
        "is_error": body.get("is_error") is True,
    }


def _salvage_deferral(body: Body) -> Body | None:
    call, reason = body.get("call"), body.get("reason")
    return body if isinstance(call, str) and call and reason in ("approval", "external") else None


def _salvage_approval(body: Body) -> Body | None:
    call, decision = body.get("call"), body.get("decision")
    return body if isinstance(call, str) and call and decision in ("approve", "deny") else None


def _salvage_error(body: Body) -> Body | None:
    where = body.get("where")
    return {
        **body,
        "where": where if where in ("provider", "tool", "runner") else None,
        "message": _text(body.get("message")),
        "fatal": body.get("fatal") is True,
    }


def _salvage_cancel(body: Body) -> Body | None:
    return {**body, "by": _text(body.get("by")), "reason": _text(body.get("reason"))}


def _salvage_inert(body: Body) -> Body | None:
    return body  # claims and notes decide nothing: a broken field of theirs changes nothing the fold reads


_SALVAGE: dict[str, Any] = {
    "user": _salvage_user,
    "assistant": _salvage_assistant,
    "tool_result": _salvage_tool_result,
    "deferral": _salvage_deferral,
    "approval": _salvage_approval,
    "claim": _salvage_inert,
    "error": _salvage_error,
    "cancel": _salvage_cancel,
    "note": _salvage_inert,
}


def _salvage(body: Body) -> Body | None:
    """The record as far as the fold can read it (broken fields folded as zero), or None if it cannot."""
    salvage = _SALVAGE.get(body["type"])
    return salvage(body) if salvage is not None else None


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def fold(records: Iterable[RawRecord], *, strict: bool = True, run: str | None = None) -> FoldResult:
    """Fold one run's records.

    ``run`` is the run the records were read as (file name or subject); a record naming another
    run is a ``run_mismatch``. Strict mode raises ``FoldError`` (``VersionMismatch`` for a version)
    at the first error; lenient mode returns every finding in ``FoldResult.findings``.
    """
    folder = _Folder(strict, run)
    with paused_gc():
        for record in records:
            folder.step(record)
        return folder.finish()


def text_of(content: str | list[dict[str, Any]]) -> str:
    """The plain text of a message's content (text blocks only), for tables and previews."""
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in content if block.get("type") == "text")
