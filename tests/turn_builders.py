"""Turn-checkpoint records for tests: a record in any phase, tool batches by outcome, and a clock to move."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from journaltools.turnjournal import (
    ExternalChildRef,
    HistoryMessageRef,
    Phase,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    ToolOutcome,
    TurnRecord,
)

DIGEST = hashlib.sha256(b"m").hexdigest()
T0 = datetime(2026, 11, 29, 10, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand (stores stamp ``created_at``/``updated_at`` from it)."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> datetime:
        self.moment += timedelta(**delta)
        return self.moment


def ref(message: str, workspace: str = "ws", session: str = "s1") -> HistoryMessageRef:
    return HistoryMessageRef(workspace_id=workspace, session_id=session, message_id=message, digest=DIGEST)


def call(invocation: str, outcome: ToolOutcome, *, external: bool = False, name: str = "tool") -> ToolCheckpoint:
    child = (
        ExternalChildRef.create(f"child-of-{invocation}", f"exec-{invocation}", "child-s", b'{"agent":"reviewer"}')
        if external
        else None
    )
    result = ref(f"result-{invocation}") if outcome is ToolOutcome.CONFIRMED else None
    return ToolCheckpoint(
        invocation_id=invocation, name=name, args_digest=DIGEST, outcome=outcome, external=child, result=result
    )


def batch(*calls: ToolCheckpoint) -> ToolBatchCheckpoint:
    return ToolBatchCheckpoint(assistant=ref("assistant-1"), calls=list(calls))


def new_record(task: str = "t1", owner: str = "host-a", workspace: str = "ws") -> TurnRecord:
    """A ``prepared`` record (what ``create`` takes; the store stamps revision and times)."""
    return TurnRecord(
        workspace_id=workspace,
        session_id="s1",
        task_id=task,
        owner_identity=owner,
        phase=Phase.PREPARED,
        input=ref("m1", workspace),
        created_at=T0,
        updated_at=T0,
    )


def in_phase(record: TurnRecord, phase: Phase, *calls: ToolCheckpoint, at: datetime = T0) -> TurnRecord:
    """``record`` moved to ``phase`` with a batch of ``calls`` and whatever else that phase needs to be valid."""
    changes: dict[str, object] = {"phase": phase, "tool_batch": batch(*calls) if calls else None}
    if phase in (Phase.FAILING, Phase.FAILED):
        changes["failure_reason"] = "the provider refused"
    if phase in (Phase.COMPLETED, Phase.FAILED, Phase.INTERRUPTED):
        changes["completed_at"] = at
    return record.with_changes(**changes)
