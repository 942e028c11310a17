"""The agent-harness-go turn checkpoint, ``agent-harness.turn.execution`` schema revision 3: the record, its Go
bytes, the runtime's strict decoder, ``Validate`` and the transition rules (REAL-SYSTEM.md I.2-I.4).

A record is plain frozen data with Go's zero values (an empty string, revision 0, the zero time) so that a record
the runtime would store and one it would refuse can both be held and explained. Times are ``GoTime`` (nanoseconds
kept exactly); a child descriptor is the raw JSON bytes as held (compacted when written, its digest over the
compacted form). Phases and outcomes are strings, so an unknown one read from a store is kept and refused by
``validate`` rather than lost in decoding.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from journaltools.errors import InvalidTransition, InvalidTurnRecord
from journaltools.goencoding.json import is_valid
from journaltools.goencoding.json_values import compact, html_unescape, marshal_raw
from journaltools.goencoding.time import GoTime

SCHEMA: Final = "agent-harness.turn.execution"
SCHEMA_REVISION: Final = 3
MAX_DESCRIPTOR_BYTES: Final = 256 << 10
MAX_IDENTIFIER_BYTES: Final = 1024
MAX_BATCH_CALLS: Final = 1024


class Phase(StrEnum):
    PREPARED = "prepared"
    PROVIDER_PENDING = "provider_pending"
    TOOL_PENDING = "tool_pending"
    WAITING_EXTERNAL_CHILD = "waiting_external_child"
    CHILD_RESOLVED = "child_resolved"
    COMPLETING = "completing"
    FAILING = "failing"
    INTERRUPTING = "interrupting"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


PHASES: Final = frozenset(phase.value for phase in Phase)
TERMINAL: Final = frozenset({Phase.COMPLETED.value, Phase.FAILED.value, Phase.INTERRUPTED.value})
#: The outbox boundary: the turn's outcome is durable, the task host has not acknowledged it yet.
PENDING_TERMINAL: Final = {
    Phase.COMPLETING.value: Phase.COMPLETED.value,
    Phase.FAILING.value: Phase.FAILED.value,
    Phase.INTERRUPTING.value: Phase.INTERRUPTED.value,
}
#: Only these may resume model or tool execution (the runtime's doc comment; its store does not enforce it).
RESUMABLE: Final = frozenset({Phase.WAITING_EXTERNAL_CHILD.value, Phase.CHILD_RESOLVED.value})


class ToolOutcome(StrEnum):
    REQUESTED = "requested"
    ADMITTED = "admitted"
    CONFIRMED = "confirmed"
    UNCERTAIN = "uncertain"  # never replayed automatically


@dataclass(frozen=True, slots=True)
class HistoryMessageRef:
    """A message already persisted in the workspace/session transcript."""

    workspace_id: str = ""
    session_id: str = ""
    message_id: str = ""
    digest: str = ""


def descriptor_digest(descriptor: bytes) -> str:
    """The digest the runtime keeps for a child descriptor: SHA-256 hex of its ``json.Compact`` form."""
    return hashlib.sha256(compact(descriptor)).hexdigest()


@dataclass(frozen=True, slots=True)
class ExternalChildRef:
    """One admitted child execution; ``descriptor`` is raw JSON exactly as held (file reads give it indented)."""

    task_id: str = ""
    execution_id: str = ""
    child_session_id: str = ""
    descriptor: bytes = b""
    descriptor_digest: str = ""

    @classmethod
    def new(cls, task_id: str, execution_id: str, child_session_id: str, descriptor: bytes) -> ExternalChildRef:
        """``NewExternalChildRef``: the descriptor compacted, its digest over the compacted bytes; refused
        (``InvalidTurnRecord``) when it is not JSON or an id is not an identifier."""
        if not is_valid(descriptor):
            raise InvalidTurnRecord("turnjournal: invalid external execution descriptor (not one JSON value)")
        normalized = compact(descriptor)
        ref = cls(task_id, execution_id, child_session_id, normalized, hashlib.sha256(normalized).hexdigest())
        _validate_external(ref)
        return ref


@dataclass(frozen=True, slots=True)
class ToolCheckpoint:
    invocation_id: str = ""
    name: str = ""
    args_digest: str = ""
    outcome: str = ""
    external: ExternalChildRef | None = None
    result: HistoryMessageRef | None = None


@dataclass(frozen=True, slots=True)
class ToolBatchCheckpoint:
    """Every call of one persisted assistant message, in source order. ``calls`` None is Go's nil slice
    (``"calls": null``), which Validate refuses like an empty batch."""

    assistant: HistoryMessageRef = field(default_factory=HistoryMessageRef)
    calls: tuple[ToolCheckpoint, ...] | None = ()


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One parent task's checkpoint. The defaults are Go's zero values: what ``Create`` takes is a record with
    identity, input and phase set; the store stamps schema, revision and times."""

    schema_revision: int = 0
    schema: str = ""
    revision: int = 0
    workspace_id: str = ""
    session_id: str = ""
    task_id: str = ""
    owner_identity: str = ""
    phase: str = ""
    input: HistoryMessageRef = field(default_factory=HistoryMessageRef)
    iteration: int = 0
    last_message_id: str = ""
    tool_batch: ToolBatchCheckpoint | None = None
    failure_reason: str = ""
    created_at: GoTime = field(default_factory=GoTime.zero)
    updated_at: GoTime = field(default_factory=GoTime.zero)
    completed_at: GoTime | None = None

    def terminal(self) -> bool:
        return self.phase in TERMINAL

    def pending_terminal(self) -> bool:
        return self.phase in PENDING_TERMINAL

    def acknowledged_phase(self) -> str | None:
        """The terminal phase an outbox-boundary record moves to once the task host acknowledges it."""
        return PENDING_TERMINAL.get(self.phase)

    def key(self) -> tuple[str, str]:
        """(workspace_id, task_id): the record's identity in a store."""
        return (self.workspace_id, self.task_id)

    def calls(self) -> tuple[ToolCheckpoint, ...]:
        return (self.tool_batch.calls or ()) if self.tool_batch is not None else ()

    def with_changes(self, **changes: Any) -> TurnRecord:
        return dataclasses.replace(self, **changes)


# -- Go's bytes ---------------------------------------------------------------------------------------


# -- the runtime's strict decoder ------------------------------------------------------------------------
#
# encoding/json into the Go structs with DisallowUnknownFields: keys match fields case-insensitively (an exact
# match first), a repeated key decodes again into the same field (objects merge, the last scalar wins), null
# leaves strings, numbers, times and structs as they were and makes pointers and slices nil, integers must be
# plain unsigned literals in range, and any type mismatch refuses the whole record.


# -- Validate ---------------------------------------------------------------------------------------------

#: ``unicode.IsSpace``, which ``strings.TrimSpace`` trims (Python's ``isspace`` also counts U+001C-U+001F).
_GO_SPACE: Final = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def is_identifier(value: str) -> bool:
    """The runtime's identifier rule: non-empty, no leading or trailing white space, at most 1024 bytes, no NUL."""
    if not value or value[0] in _GO_SPACE or value[-1] in _GO_SPACE or "\x00" in value:
        return False
    return len(value.encode("utf-8", "surrogatepass")) <= MAX_IDENTIFIER_BYTES


def _invalid(why: str) -> InvalidTurnRecord:
    return InvalidTurnRecord(f"turnjournal: invalid execution record: {why}")


def _check_identifier(name: str, value: str) -> None:
    if not is_identifier(value):
        raise _invalid(f"invalid {name} {value[:80]!r}")


def valid_digest(value: str) -> bool:
    return _DIGEST.fullmatch(value) is not None


def _check_ref(name: str, ref: HistoryMessageRef, workspace_id: str, session_id: str) -> None:
    if ref.workspace_id != workspace_id or ref.session_id != session_id:
        raise _invalid(f"{name} crosses workspace or session")
    _check_identifier(f"{name} message_id", ref.message_id)
    if not valid_digest(ref.digest):
        raise _invalid(f"invalid {name} digest")


def _validate_external(ref: ExternalChildRef) -> None:
    _check_identifier("external task_id", ref.task_id)
    _check_identifier("external execution_id", ref.execution_id)
    _check_identifier("external child_session_id", ref.child_session_id)
    descriptor = ref.descriptor
    if not descriptor or len(descriptor) > MAX_DESCRIPTOR_BYTES or not is_valid(descriptor):
        raise _invalid("invalid external execution descriptor")
    if not valid_digest(ref.descriptor_digest) or ref.descriptor_digest != descriptor_digest(descriptor):
        raise _invalid("external execution descriptor digest mismatch")


def _has_blank_reason(record: TurnRecord) -> bool:
    return not record.failure_reason.strip("".join(_GO_SPACE))


def _validate_terminal(record: TurnRecord) -> None:
    if record.terminal():
        done = record.completed_at
        if (
            done is None
            or done.is_zero()
            or not done.is_utc
            or done.before(record.created_at)
            or record.updated_at.before(done)
        ):
            raise _invalid("terminal phase requires a valid UTC completion timestamp")
        if record.phase in (Phase.FAILED, Phase.INTERRUPTED) and _has_blank_reason(record):
            raise _invalid("failed/interrupted phase requires a reason")
        return
    if record.completed_at is not None:
        raise _invalid("active phase cannot carry terminal fields")
    if record.phase in (Phase.FAILING, Phase.INTERRUPTING):
        if _has_blank_reason(record):
            raise _invalid("pending failure/interruption requires a reason")
    elif record.failure_reason:
        raise _invalid("active phase cannot carry a failure reason")


def _validate_batch(record: TurnRecord) -> None:
    phase = record.phase
    batch = record.tool_batch
    if batch is None:
        if phase in (Phase.TOOL_PENDING, Phase.WAITING_EXTERNAL_CHILD, Phase.CHILD_RESOLVED):
            raise _invalid(f"phase {phase!r} requires a tool batch checkpoint")
        return
    calls = batch.calls or ()
    if not 1 <= len(calls) <= MAX_BATCH_CALLS:
        raise _invalid(f"tool batch requires 1..{MAX_BATCH_CALLS} calls")
    _check_ref("tool batch assistant", batch.assistant, record.workspace_id, record.session_id)
    seen: set[str] = set()
    counts = dict.fromkeys(ToolOutcome, 0)
    for call in calls:
        _check_identifier("tool invocation_id", call.invocation_id)
        if call.invocation_id in seen:
            raise _invalid(f"duplicate tool invocation_id {call.invocation_id!r}")
        seen.add(call.invocation_id)
        _check_identifier("tool name", call.name)
        if not valid_digest(call.args_digest):
            raise _invalid("invalid tool argument digest")
        if call.outcome in (ToolOutcome.REQUESTED, ToolOutcome.UNCERTAIN):
            if call.external is not None or call.result is not None:
                raise _invalid(f"{call.outcome} tool cannot carry an external child or result")
        elif call.outcome == ToolOutcome.ADMITTED:
            if call.external is None or call.result is not None:
                raise _invalid("admitted tool requires only an external child")
        elif call.outcome == ToolOutcome.CONFIRMED:
            if call.result is None:
                raise _invalid("confirmed tool requires a result reference")
            _check_ref("tool result", call.result, record.workspace_id, record.session_id)
        else:
            raise _invalid(f"unknown tool outcome {call.outcome!r}")
        counts[ToolOutcome(call.outcome)] += 1
        if call.external is not None:
            _validate_external(call.external)
    requested, admitted = counts[ToolOutcome.REQUESTED], counts[ToolOutcome.ADMITTED]
    confirmed, uncertain = counts[ToolOutcome.CONFIRMED], counts[ToolOutcome.UNCERTAIN]
    if phase == Phase.TOOL_PENDING and (requested == 0 or admitted or uncertain):
        raise _invalid("pending tool batch requires at least one requested call")
    if phase == Phase.WAITING_EXTERNAL_CHILD and (len(calls) != 1 or admitted != 1):
        raise _invalid("external-child wait requires one admitted call")
    if phase == Phase.CHILD_RESOLVED and (len(calls) != 1 or confirmed != 1 or calls[0].external is None):
        raise _invalid("child resolution requires one confirmed external call")
    if phase == Phase.PREPARED:
        raise _invalid("prepared phase cannot carry a tool batch")
    if phase in (Phase.PROVIDER_PENDING, Phase.COMPLETED, Phase.COMPLETING) and confirmed != len(calls):
        raise _invalid(f"phase {phase!r} requires a fully confirmed tool batch")
    if phase in (Phase.FAILED, Phase.FAILING) and (requested or uncertain):
        raise _invalid("failed phase cannot carry requested or uncertain calls")
    if phase in (Phase.INTERRUPTED, Phase.INTERRUPTING) and requested:
        raise _invalid("interrupted phase cannot carry requested calls")


def validate(record: TurnRecord) -> None:
    """``Record.Validate`` (REAL-SYSTEM.md I.3); ``InvalidTurnRecord`` naming the first rule broken. The runtime
    checks the four identifiers in a random order; this checks them in the order of the record."""
    if record.schema != SCHEMA or record.schema_revision != SCHEMA_REVISION or record.revision == 0:
        raise _invalid("unsupported schema or zero revision")
    for name in ("workspace_id", "session_id", "task_id", "owner_identity"):
        _check_identifier(name, getattr(record, name))
    if record.phase not in PHASES:
        raise _invalid(f"unknown phase {record.phase!r}")
    _check_ref("input", record.input, record.workspace_id, record.session_id)
    if record.last_message_id:
        _check_identifier("last_message_id", record.last_message_id)
    created, updated = record.created_at, record.updated_at
    if created.is_zero() or updated.is_zero() or updated.before(created):
        raise _invalid("invalid timestamps")
    if not created.is_utc or not updated.is_utc:
        raise _invalid("timestamps must be UTC")
    _validate_terminal(record)
    _validate_batch(record)


# -- transitions ---------------------------------------------------------------------------------------------

_OUTBOX_MOVES: Final = {
    Phase.COMPLETING.value: {Phase.COMPLETED.value, Phase.INTERRUPTED.value},
    Phase.FAILING.value: {Phase.FAILED.value, Phase.INTERRUPTED.value},
    Phase.INTERRUPTING.value: {Phase.INTERRUPTED.value},
}
_ALWAYS_ALLOWED: Final = frozenset({"failed", "interrupted", "completing", "failing", "interrupting"})
_FORWARD_MOVES: Final = {
    "prepared": {"provider_pending"},
    "provider_pending": {"tool_pending", "completed"},
    "tool_pending": {"waiting_external_child", "provider_pending"},
    "waiting_external_child": {"child_resolved"},
    "child_resolved": {"provider_pending", "completed"},
}
_OUTCOME_MOVES: Final = {"requested": {"admitted", "confirmed", "uncertain"}, "admitted": {"confirmed"}}


def phase_move_allowed(before: str, after: str) -> bool:
    """The phase table of REAL-SYSTEM.md I.4 (a terminal phase is handled by ``validate_transition``)."""
    if before == after:
        return True
    if before in _OUTBOX_MOVES:
        return after in _OUTBOX_MOVES[before]
    return after in _ALWAYS_ALLOWED or after in _FORWARD_MOVES.get(before, set())


def _all_calls(batch: ToolBatchCheckpoint, outcome: str) -> bool:
    calls = batch.calls or ()
    return bool(calls) and all(call.outcome == outcome for call in calls)


def _same_batch_identity(left: ToolBatchCheckpoint, right: ToolBatchCheckpoint) -> bool:
    left_calls, right_calls = left.calls or (), right.calls or ()
    if left.assistant != right.assistant or len(left_calls) != len(right_calls):
        return False
    return all(
        (a.invocation_id, a.name, a.args_digest) == (b.invocation_id, b.name, b.args_digest)
        for a, b in zip(left_calls, right_calls, strict=True)
    )


def _same_external(left: ExternalChildRef, right: ExternalChildRef) -> bool:
    return (
        (left.task_id, left.execution_id, left.child_session_id, left.descriptor_digest)
        == (right.task_id, right.execution_id, right.child_session_id, right.descriptor_digest)
        and is_valid(left.descriptor)
        and is_valid(right.descriptor)
        and compact(left.descriptor) == compact(right.descriptor)
    )


def _refuse_transition(why: str) -> InvalidTransition:
    return InvalidTransition(f"turnjournal: invalid execution transition: {why}")


def validate_transition(previous: TurnRecord, following: TurnRecord) -> None:
    """The runtime's transition rules (REAL-SYSTEM.md I.4); ``InvalidTransition`` naming the rule broken."""
    if previous.terminal():
        raise _refuse_transition("terminal record is immutable")
    identity = ("schema", "schema_revision", "workspace_id", "session_id", "task_id", "owner_identity", "input")
    if any(getattr(previous, name) != getattr(following, name) for name in identity) or not (
        previous.created_at.equal(following.created_at)
    ):
        raise _refuse_transition("immutable identity changed")
    if following.iteration < previous.iteration:
        raise _refuse_transition("iteration regressed")
    if not phase_move_allowed(previous.phase, following.phase):
        raise _refuse_transition(f"{previous.phase!r} to {following.phase!r}")
    before, after = previous.tool_batch, following.tool_batch
    if before is not None and after is not None:
        replacing = (
            previous.phase in (Phase.PROVIDER_PENDING, Phase.CHILD_RESOLVED)
            and _all_calls(before, ToolOutcome.CONFIRMED)
            and following.phase == Phase.TOOL_PENDING
            and _all_calls(after, ToolOutcome.REQUESTED)
        )
        if not replacing:
            if not _same_batch_identity(before, after):
                raise _refuse_transition("tool batch identity changed")
            for old, new in zip(before.calls or (), after.calls or (), strict=True):
                if old.outcome != new.outcome and new.outcome not in _OUTCOME_MOVES.get(old.outcome, set()):
                    raise _refuse_transition(f"tool outcome changed from {old.outcome!r} to {new.outcome!r}")
                if old.external is not None and (
                    new.external is None or not _same_external(old.external, new.external)
                ):
                    raise _refuse_transition("external child identity changed")
                if old.result is not None and old.result != new.result:
                    raise _refuse_transition("confirmed tool result changed")
    if (
        before is not None
        and after is None
        and (
            not _all_calls(before, ToolOutcome.CONFIRMED)
            or previous.phase not in (Phase.CHILD_RESOLVED, Phase.PROVIDER_PENDING)
        )
    ):
        raise _refuse_transition("unconfirmed tool batch checkpoint was removed")


# -- what journaltools adds: never write what the runtime could not read back ------------------------------------


def unreadable_descriptor(ref: ExternalChildRef) -> bool:
    """True when the runtime would write this descriptor and then never read it back: ``Marshal`` escapes ``<``,
    ``>``, ``&``, U+2028 and U+2029 inside it, but its digest is over the unescaped compact form, so every later
    read finds a digest mismatch (and ListActive fails for every owner)."""
    written = marshal_raw(ref.descriptor)
    return written != compact(ref.descriptor)


def explain_descriptor_mismatch(ref: ExternalChildRef) -> str | None:
    """Why a stored descriptor's digest does not match, when the cause is the runtime's own trap: the digest is
    over the form before ``Marshal`` escaped its HTML characters. None when that is not the cause."""
    if not is_valid(ref.descriptor):
        return None
    if hashlib.sha256(html_unescape(compact(ref.descriptor))).hexdigest() == ref.descriptor_digest:
        return (
            "its descriptor holds <, >, &, U+2028 or U+2029, which the runtime's encoder escaped after taking the "
            "digest over the unescaped form: the runtime wrote this record and can never read it back (Get, "
            "Update and ListActive for every owner fail on it)"
        )
    return None


def check_writable(record: TurnRecord) -> None:
    """Refuse (``InvalidTurnRecord``) a record the runtime would accept but never read back."""
    for call in record.calls():
        if call.external is not None and unreadable_descriptor(call.external):
            raise InvalidTurnRecord(
                f"turnjournal task {record.task_id!r}: call {call.invocation_id!r}: the descriptor holds <, >, &, "
                "U+2028 or U+2029 unescaped; the runtime would store it and never read it back (write those "
                "characters as \\u003c, \\u003e, \\u0026, \\u2028, \\u2029)"
            )
    for name in ("workspace_id", "session_id", "task_id", "owner_identity", "last_message_id", "failure_reason"):
        value: str = getattr(record, name)
        if any("\ud800" <= c <= "\udfff" for c in value):
            raise InvalidTurnRecord(
                f"turnjournal task {record.task_id!r}: {name} is not valid Unicode; the runtime would store it as "
                "U+FFFD and the record would no longer match its own path"
            )


__all__ = [
    "MAX_DESCRIPTOR_BYTES",
    "PENDING_TERMINAL",
    "PHASES",
    "RESUMABLE",
    "SCHEMA",
    "SCHEMA_REVISION",
    "TERMINAL",
    "ExternalChildRef",
    "GoTime",
    "HistoryMessageRef",
    "Phase",
    "ToolBatchCheckpoint",
    "ToolCheckpoint",
    "ToolOutcome",
    "TurnRecord",
    "check_writable",
    "descriptor_digest",
    "explain_descriptor_mismatch",
    "is_identifier",
    "phase_move_allowed",
    "unreadable_descriptor",
    "validate",
    "validate_transition",
]


# -- the CAS store's identity index ---------------------------------------------------------------------------
