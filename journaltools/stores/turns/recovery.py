"""What startup recovery may do with a checkpoint record, as the seed states it.

- Only ``waiting_external_child`` and ``child_resolved`` (``RESUMABLE``) may resume model or tool execution.
- ``completing``, ``failing`` and ``interrupting`` are an outbox boundary: the outcome is durable, only the task
  host's acknowledgement is missing; recovery finishes that idempotent handshake without replaying anything.
- A call whose outcome is ``requested`` or ``uncertain`` is never replayed automatically: the mutation may or
  may not have happened, and only an operator can tell.

``plan_resume(record)`` says, per call of the record's tool batch, ``replay``, ``skip`` or ``ask_operator``, and
why; ``require_resumable(record)`` refuses (``TurnNotResumable``) unless recovery may go on by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Final

from journaltools.errors import TurnNotResumable
from journaltools.stores.turns.records import RESUMABLE, Phase, ToolCheckpoint, ToolOutcome, TurnRecord

#: How long an active record may stay in one phase, or an outbox record wait for its acknowledgement.
DEFAULT_STUCK_AFTER: Final = timedelta(hours=1)


class CallDecision(StrEnum):
    REPLAY = "replay"
    """Re-attach to the call's external child: bound by execution id and descriptor digest, so never a second child."""
    SKIP = "skip"
    """Never run again: its result is durable, or the turn's outcome is."""
    ASK_OPERATOR = "ask_operator"
    """Recovery must not decide: the call may or may not have had its effect."""


@dataclass(frozen=True, slots=True)
class CallPlan:
    invocation_id: str
    name: str
    outcome: str
    decision: CallDecision
    why: str

    def to_json(self) -> dict[str, str]:
        return {
            "invocation_id": self.invocation_id,
            "name": self.name,
            "outcome": self.outcome,
            "decision": self.decision.value,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """What recovery may do with one record: ``resumable`` (its phase may resume model or tool execution), why,
    and a decision for every call of its tool batch, in source order."""

    record: TurnRecord
    resumable: bool
    why: str
    calls: list[CallPlan]

    @property
    def needs_operator(self) -> list[CallPlan]:
        return [call for call in self.calls if call.decision is CallDecision.ASK_OPERATOR]

    @property
    def automatic(self) -> bool:
        """True when recovery may resume the turn by itself: a resumable phase and no call for an operator."""
        return self.resumable and not self.needs_operator


def _phase_why(record: TurnRecord) -> str:
    if record.terminal():
        return f"phase {record.phase} is terminal: the turn is over"
    acknowledged = record.acknowledged_phase()
    if acknowledged is not None:
        return (
            f"phase {record.phase} is an outbox boundary: finish the task host's acknowledgement ({acknowledged}) "
            "without replaying the model or tools"
        )
    if record.phase in RESUMABLE:
        return f"phase {record.phase} may resume model and tool execution"
    allowed = " and ".join(sorted(RESUMABLE))
    return f"phase {record.phase} may not resume model or tool execution (only {allowed} may)"


def call_decision(record: TurnRecord, call: ToolCheckpoint) -> tuple[CallDecision, str]:
    """What recovery does with one call of ``record``'s batch, and why."""
    if call.outcome == ToolOutcome.CONFIRMED:
        message = call.result.message_id if call.result is not None else "?"
        return CallDecision.SKIP, f"confirmed: its result is durable (message {message!r})"
    if record.terminal() or record.pending_terminal():
        return CallDecision.SKIP, f"the turn's outcome is durable (phase {record.phase}): no tool runs again"
    if call.outcome in (ToolOutcome.REQUESTED, ToolOutcome.UNCERTAIN):
        return CallDecision.ASK_OPERATOR, f"{call.outcome}: the call may or may not have had its effect"
    if record.phase not in RESUMABLE:
        return CallDecision.ASK_OPERATOR, f"admitted, but phase {record.phase} may not resume tool execution"
    if call.external is None:
        return CallDecision.ASK_OPERATOR, "admitted without an external child reference to re-attach to"
    return CallDecision.REPLAY, f"admitted: re-attach to child execution {call.external.execution_id!r}"


def plan_resume(record: TurnRecord) -> ResumePlan:
    """The plan for ``record``: whether its phase may resume, and a decision for every call of its batch."""
    calls = record.calls()
    plans = []
    for call in calls:
        decision, why = call_decision(record, call)
        plans.append(CallPlan(call.invocation_id, call.name, call.outcome, decision, why))
    plan = ResumePlan(record, record.phase in RESUMABLE, _phase_why(record), plans)
    if plan.resumable and plan.needs_operator:
        names = ", ".join(f"{c.invocation_id!r} ({c.outcome})" for c in plan.needs_operator)
        plan = ResumePlan(record, True, f"{plan.why}, but calls {names} need an operator", plans)
    return plan


def require_resumable(record: TurnRecord) -> ResumePlan:
    """The plan, when recovery may resume ``record`` by itself; otherwise ``TurnNotResumable`` saying why."""
    plan = plan_resume(record)
    if not plan.automatic:
        raise TurnNotResumable(plan, plan.record.task_id, plan.record.workspace_id, plan.record.revision, plan.why)
    return plan


__all__ = [
    "RESUMABLE",
    "CallDecision",
    "CallPlan",
    "Phase",
    "ResumePlan",
    "TurnNotResumable",
    "call_decision",
    "plan_resume",
    "require_resumable",
]
