"""The turnjournal record and its validation."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from journaltools.errors import JournalError

SCHEMA = "journaltools.turnjournal.record"
SCHEMA_REVISION = 1
_SHA256_HEX = r"^[0-9a-f]{64}$"


class InvalidTurnRecord(JournalError, ValueError):
    def __init__(self, task_id: str, why: str) -> None:
        self.task_id = task_id
        super().__init__(f"turnjournal task {task_id!r}: {why}")


def _utc_now() -> datetime:
    return datetime.now(UTC)


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


TERMINAL = frozenset({Phase.COMPLETED, Phase.FAILED, Phase.INTERRUPTED})
#: The outbox boundary: the turn's outcome is durable, the task host has not acknowledged it yet.
PENDING_TERMINAL = {
    Phase.COMPLETING: Phase.COMPLETED,
    Phase.FAILING: Phase.FAILED,
    Phase.INTERRUPTING: Phase.INTERRUPTED,
}
#: Only these may resume model or tool execution.
RESUMABLE = frozenset({Phase.WAITING_EXTERNAL_CHILD, Phase.CHILD_RESOLVED})
_NEEDS_BATCH = frozenset({Phase.TOOL_PENDING, Phase.WAITING_EXTERNAL_CHILD, Phase.CHILD_RESOLVED})


class ToolOutcome(StrEnum):
    REQUESTED = "requested"
    ADMITTED = "admitted"
    CONFIRMED = "confirmed"
    UNCERTAIN = "uncertain"  # never replayed automatically


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HistoryMessageRef(_Model):
    """An immutable message already persisted in the workspace/session transcript."""

    workspace_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    message_id: str = Field(min_length=1)
    digest: str = Field(pattern=_SHA256_HEX)


class ExternalChildRef(_Model):
    task_id: str = Field(min_length=1)
    execution_id: str = Field(min_length=1)
    child_session_id: str = Field(min_length=1)
    descriptor: Any
    descriptor_digest: str = Field(pattern=_SHA256_HEX)

    @classmethod
    def create(cls, task_id: str, execution_id: str, child_session_id: str, descriptor: bytes) -> ExternalChildRef:
        """Bind a spawn to its child: the descriptor must be JSON, and its digest is computed from its bytes."""
        try:
            parsed = json.loads(descriptor)
        except ValueError as exc:
            raise InvalidTurnRecord(task_id, f"child descriptor is not JSON: {exc}") from None
        digest = hashlib.sha256(descriptor).hexdigest()
        return cls(
            task_id=task_id,
            execution_id=execution_id,
            child_session_id=child_session_id,
            descriptor=parsed,
            descriptor_digest=digest,
        )


class ToolCheckpoint(_Model):
    invocation_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    args_digest: str = Field(pattern=_SHA256_HEX)
    outcome: ToolOutcome
    external: ExternalChildRef | None = None
    result: HistoryMessageRef | None = None


class ToolBatchCheckpoint(_Model):
    """Every call of one persisted assistant message, in source order (even for sequential batches)."""

    assistant: HistoryMessageRef
    calls: list[ToolCheckpoint]


class TurnRecord(_Model):
    schema_revision: int = SCHEMA_REVISION
    schema_: str = Field(default=SCHEMA, alias="schema")
    revision: int = 0
    workspace_id: str
    session_id: str
    task_id: str
    owner_identity: str
    phase: Phase
    input: HistoryMessageRef
    iteration: int = Field(default=0, ge=0)
    last_message_id: str | None = None
    tool_batch: ToolBatchCheckpoint | None = None
    failure_reason: str | None = None
    created_at: datetime = Field(default_factory=_utc_now)  # stamped by the store on create and update
    updated_at: datetime = Field(default_factory=_utc_now)
    completed_at: datetime | None = None

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def terminal(self) -> bool:
        return self.phase in TERMINAL

    def pending_terminal(self) -> bool:
        return self.phase in PENDING_TERMINAL

    def acknowledged_phase(self) -> Phase | None:
        """The terminal phase an outbox-boundary record moves to once the task host acknowledges it."""
        return PENDING_TERMINAL.get(self.phase)

    def validate_rules(self) -> None:
        """The invariants a store enforces on every create and update; raises ``InvalidTurnRecord``."""

        def refuse(why: str) -> None:
            raise InvalidTurnRecord(self.task_id or "?", why)

        if self.schema_ != SCHEMA or self.schema_revision != SCHEMA_REVISION:
            refuse(f"schema {self.schema_!r} revision {self.schema_revision} is not {SCHEMA!r} {SCHEMA_REVISION}")
        for name in ("workspace_id", "session_id", "task_id", "owner_identity"):
            if not getattr(self, name):
                refuse(f"{name} is empty")
        if (self.input.workspace_id, self.input.session_id) != (self.workspace_id, self.session_id):
            refuse("input message belongs to another workspace or session")
        if self.phase in _NEEDS_BATCH and self.tool_batch is None:
            refuse(f"phase {self.phase} needs a tool batch")
        if self.tool_batch is not None:
            seen: set[str] = set()
            for call in self.tool_batch.calls:
                if call.invocation_id in seen:
                    refuse(f"invocation {call.invocation_id!r} appears twice in the tool batch")
                seen.add(call.invocation_id)
                if call.external is not None and call.outcome is ToolOutcome.REQUESTED:
                    refuse(f"invocation {call.invocation_id!r} has an external child but was never admitted")
                if (call.result is not None) != (call.outcome is ToolOutcome.CONFIRMED):
                    refuse(f"invocation {call.invocation_id!r}: a result is set exactly when the outcome is confirmed")
        batch = self.tool_batch
        waiting = self.phase is Phase.WAITING_EXTERNAL_CHILD and batch is not None
        if waiting and batch is not None and not any(call.outcome is ToolOutcome.ADMITTED for call in batch.calls):
            refuse("waiting for an external child, but no call was admitted")
        failing = self.phase in (Phase.FAILING, Phase.FAILED)
        if failing != bool(self.failure_reason):
            refuse("failure_reason is set exactly in the failing and failed phases")
        if self.terminal() != (self.completed_at is not None):
            refuse("completed_at is set exactly in the terminal phases")

    def key(self) -> tuple[str, str]:
        return (self.workspace_id, self.task_id)

    def to_bytes(self) -> bytes:
        return self.model_dump_json(by_alias=True, exclude_none=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "") -> TurnRecord:
        """Decode a stored record; ``InvalidTurnRecord`` (naming ``where``) when the bytes are not one."""
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            place = f" in {where}" if where else ""
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors())
            raise InvalidTurnRecord("?", f"stored record{place} is not a turn record: {problems}") from None

    def with_changes(self, **changes: Any) -> TurnRecord:
        return self.model_copy(update=changes)
