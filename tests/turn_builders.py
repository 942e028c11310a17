"""Turn-checkpoint records for tests: a record in any phase, tool batches by outcome, and a clock to move."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from journaltools.goencoding.time import GoTime
from journaltools.stores.turns import (
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
    """A clock the test moves by hand (stores stamp ``created_at``/``updated_at`` from it), to the nanosecond."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = GoTime.from_datetime(start)

    def __call__(self) -> GoTime:
        return self.moment

    def advance(self, **delta: float) -> GoTime:
        self.moment = GoTime(self.moment.unix_ns + int(timedelta(**delta).total_seconds() * 1e9) + 1)
        return self.moment


def ref(message: str, workspace: str = "ws", session: str = "s1") -> HistoryMessageRef:
    return HistoryMessageRef(workspace, session, message, DIGEST)


def call(invocation: str, outcome: ToolOutcome, *, external: bool = False, name: str = "tool") -> ToolCheckpoint:
    child = (
        ExternalChildRef.new(f"child-of-{invocation}", f"exec-{invocation}", "child-s", b'{"agent": "reviewer"}')
        if external
        else None
    )
    result = ref(f"result-{invocation}") if outcome is ToolOutcome.CONFIRMED else None
    return ToolCheckpoint(invocation, name, DIGEST, outcome.value, child, result)


def batch(*calls: ToolCheckpoint) -> ToolBatchCheckpoint:
    return ToolBatchCheckpoint(ref("assistant-1"), tuple(calls))


def new_record(task: str = "t1", owner: str = "host-a", workspace: str = "ws") -> TurnRecord:
    """What ``create`` takes: identity, input and an empty phase (the store makes it ``prepared``)."""
    return TurnRecord(
        workspace_id=workspace, session_id="s1", task_id=task, owner_identity=owner, input=ref("m1", workspace)
    )


def in_phase(record: TurnRecord, phase: Phase, *calls: ToolCheckpoint) -> TurnRecord:
    """``record`` moved to ``phase`` with a batch of ``calls`` and the reason that phase needs."""
    reason = (
        "the provider refused" if phase in (Phase.FAILING, Phase.FAILED, Phase.INTERRUPTING, Phase.INTERRUPTED) else ""
    )
    return record.with_changes(phase=phase.value, tool_batch=batch(*calls) if calls else None, failure_reason=reason)
