"""Turn-checkpoint analysis: everything a turn store holds as Arrow tables, and what in it needs an operator.

``audit_turns(store)`` reads every record of any turn store (an agent-harness-go state directory, a CAS store in
memory, on a directory or in a NATS bucket) once, as the runtime would read it, and returns:

- ``records``: one row per stored record (one the runtime cannot read too, with ``valid`` false and its problem);
- ``tool_calls``: one row per tool checkpoint of every readable record's batch, with recovery's decision for it
  (``replay``, ``skip`` or ``ask_operator``, from ``recovery.plan_resume``);
- ``findings``: what needs an operator, each naming workspace, task and revision:

  ============================ ======== ===============================================================
  code                         severity meaning
  ============================ ======== ===============================================================
  ``turn_call_requested``      warning  a call ``requested`` in an active turn: it may have run, and it is
                                        never replayed automatically
  ``turn_call_uncertain``      warning  a call ``uncertain`` in an active turn: the same, said by the runtime
  ``turn_stuck``               warning  an active record unchanged in its phase for longer than the threshold
  ``turn_unacknowledged``      warning  an outbox record (completing, failing, interrupting) whose task host
                                        acknowledgement did not come within the threshold
  ``turn_outbox_pending``      info     an outbox record awaiting the task host, within the threshold
  ``turn_index_orphan``        info     an index ref to a record that does not exist: a create that crashed
                                        between writing the index and the record (the runtime skips it)
  ``turn_index_missing``       error    an active record missing from the CAS index: startup recovery never
                                        sees it
  ``turn_index_invalid``       error    an index the runtime refuses, or a ref whose owner differs from its
                                        record's: ListActive fails for every owner
  ``turn_record_invalid``      error    a stored record the runtime refuses (undecodable, invalid, at a path
                                        its ids do not give, a link or FIFO): ListActive fails for every owner
  ============================ ======== ===============================================================

"Active" is what ``list_active`` returns: not terminal. Calls are checked only in active records that are not
at the outbox boundary either: there the turn's outcome is durable and recovery finishes its handshake without
replaying tools. The index checks apply to the CAS stores (the file store has none). The findings also come as
``Finding`` values (``TurnAudit.findings``) for ``audit``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import pandas as pd
import pyarrow as pa

from journaltools.errors import JournalError
from journaltools.goencoding.time import GoTime
from journaltools.protocol.findings import Finding, Severity
from journaltools.stores.turns.contract import IndexScan, StoredTurn, TurnScan, TurnStore
from journaltools.stores.turns.records import RESUMABLE, ToolOutcome, TurnRecord
from journaltools.stores.turns.recovery import DEFAULT_STUCK_AFTER, plan_resume

#: Nanoseconds, as the runtime keeps them.
TIMESTAMP: Final = pa.timestamp("ns", tz="UTC")

TURN_FINDING_SEVERITY: Final[dict[str, Severity]] = {
    "turn_call_requested": "warning",
    "turn_call_uncertain": "warning",
    "turn_stuck": "warning",
    "turn_unacknowledged": "warning",
    "turn_outbox_pending": "info",
    "turn_index_orphan": "info",
    "turn_index_missing": "error",
    "turn_index_invalid": "error",
    "turn_record_invalid": "error",
}

TURN_RECORDS_SCHEMA: Final = pa.schema(
    [
        pa.field("store", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("valid", pa.bool_(), nullable=False),
        pa.field("problem", pa.string()),
        pa.field("workspace_id", pa.string()),
        pa.field("session_id", pa.string()),
        pa.field("task_id", pa.string()),
        pa.field("owner_identity", pa.string()),
        pa.field("phase", pa.string()),
        pa.field("revision", pa.int64()),
        pa.field("iteration", pa.int64()),
        pa.field("terminal", pa.bool_()),
        pa.field("pending_terminal", pa.bool_()),
        pa.field("acknowledged_phase", pa.string()),
        pa.field("resumable", pa.bool_()),
        pa.field("needs_operator", pa.bool_()),
        pa.field("created_at", TIMESTAMP),
        pa.field("updated_at", TIMESTAMP),
        pa.field("completed_at", TIMESTAMP),
        pa.field("age_s", pa.float64()),
        pa.field("input_message_id", pa.string()),
        pa.field("last_message_id", pa.string()),
        pa.field("failure_reason", pa.string()),
        pa.field("assistant_message_id", pa.string()),
        pa.field("tool_calls", pa.int64()),
        pa.field("calls_requested", pa.int64()),
        pa.field("calls_admitted", pa.int64()),
        pa.field("calls_confirmed", pa.int64()),
        pa.field("calls_uncertain", pa.int64()),
        pa.field("indexed", pa.bool_()),
        pa.field("body", pa.large_string()),
    ],
    metadata={
        "description": "one row per stored turn-checkpoint record; key = its path in the state directory or its "
        "blob key; valid=false: the runtime refuses it (problem says why; identity columns are null unless the "
        "bytes decode but sit at the wrong path); times to the nanosecond; age_s = seconds since updated_at at "
        "the analysis; resumable = the phase may resume model or tool execution; needs_operator = a call "
        "recovery must not decide by itself; indexed = in the CAS index (null for the file store); body = the "
        "stored bytes (null for a link or FIFO, never read through)"
    },
)

TURN_TOOL_CALLS_SCHEMA: Final = pa.schema(
    [
        pa.field("store", pa.string(), nullable=False),
        pa.field("workspace_id", pa.string(), nullable=False),
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("revision", pa.int64(), nullable=False),
        pa.field("phase", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("invocation_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("args_digest", pa.string(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("decision", pa.string(), nullable=False),
        pa.field("why", pa.string(), nullable=False),
        pa.field("external_task_id", pa.string()),
        pa.field("external_execution_id", pa.string()),
        pa.field("child_session_id", pa.string()),
        pa.field("descriptor", pa.large_string()),
        pa.field("result_message_id", pa.string()),
    ],
    metadata={
        "description": "one row per tool checkpoint of every readable record's batch, in source order "
        "(position); decision = what recovery does with it: replay, skip or ask_operator; descriptor = the "
        "child descriptor as the runtime compacts it"
    },
)

TURN_FINDINGS_SCHEMA: Final = pa.schema(
    [
        pa.field("store", pa.string(), nullable=False),
        pa.field("workspace_id", pa.string()),
        pa.field("task_id", pa.string()),
        pa.field("revision", pa.int64()),
        pa.field("code", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
    ],
    metadata={"description": "one row per turn-checkpoint finding (the turn_* codes)"},
)


@dataclass(frozen=True, slots=True)
class TurnFinding:
    """A finding about one record (or one index ref): which workspace, task and revision, and what."""

    workspace_id: str | None
    task_id: str | None
    revision: int | None
    code: str
    severity: Severity
    message: str
    location: str | None = None  # the stored record's path or key, when the finding is about one

    @classmethod
    def of(cls, record: TurnRecord | None, code: str, message: str, location: str | None = None) -> TurnFinding:
        if record is None:
            return cls(None, None, None, code, TURN_FINDING_SEVERITY[code], message, location)
        where = f"workspace {record.workspace_id!r} task {record.task_id!r} revision {record.revision}: "
        return cls(
            record.workspace_id,
            record.task_id,
            record.revision,
            code,
            TURN_FINDING_SEVERITY[code],
            where + message,
            location,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "workspace_id": self.workspace_id,
            "task_id": self.task_id,
            "revision": self.revision,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class TurnAudit:
    """The analysis of one turn store: its tables and findings, as of ``now``."""

    store: str
    now: datetime
    stuck_after: timedelta
    records: pa.Table
    tool_calls: pa.Table
    turn_findings: list[TurnFinding]

    @property
    def findings(self) -> list[Finding]:
        """The findings as ``Finding`` values for ``audit`` (no run or seq; the source is the store's URL)."""
        return [Finding(None, None, f.code, f.severity, f.message, self.store) for f in self.turn_findings]

    def findings_table(self) -> pa.Table:
        rows = [{"store": self.store, **finding.to_json()} for finding in self.turn_findings]
        return pa.Table.from_pylist(rows, schema=TURN_FINDINGS_SCHEMA)

    def to_pandas(self) -> dict[str, pd.DataFrame]:
        """Every table as a DataFrame with Arrow-backed dtypes."""
        tables = {"records": self.records, "tool_calls": self.tool_calls, "findings": self.findings_table()}
        return {name: table.to_pandas(types_mapper=pd.ArrowDtype) for name, table in tables.items()}

    def to_json(self) -> dict[str, Any]:
        active = [row for row in self.records.to_pylist() if row["valid"] and not row["terminal"]]
        return {
            "store": self.store,
            "records": self.records.num_rows,
            "active": len(active),
            "tool_calls": self.tool_calls.num_rows,
            "stuck_after_s": self.stuck_after.total_seconds(),
            "findings": [finding.to_json() for finding in self.turn_findings],
        }


# -- what needs an operator ---------------------------------------------------------------------------


def _age(record: TurnRecord, now: datetime) -> timedelta:
    # In nanoseconds: a store's time may lie outside the years a datetime holds (Go reads years 0 to 9999).
    return timedelta(microseconds=(GoTime.from_datetime(now).unix_ns - record.updated_at.unix_ns) // 1000)


def _describe_age(age: timedelta) -> str:
    seconds = int(age.total_seconds())
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}m"
    return f"{seconds}s"


def record_findings(record: TurnRecord, now: datetime, stuck_after: timedelta) -> list[TurnFinding]:
    """The findings of one readable record on its own (the index checks need the whole store)."""
    findings: list[TurnFinding] = []
    if record.terminal():
        return findings
    age = _age(record, now)
    late = age > stuck_after
    limit = _describe_age(stuck_after)
    if record.pending_terminal():
        if late:
            findings.append(
                TurnFinding.of(
                    record,
                    "turn_unacknowledged",
                    f"{record.phase} for {_describe_age(age)} (threshold {limit}): the task host never acknowledged "
                    f"{record.acknowledged_phase()}; finish the handshake, do not replay the turn",
                )
            )
        else:
            findings.append(
                TurnFinding.of(
                    record,
                    "turn_outbox_pending",
                    f"{record.phase}: the outcome is durable, the task host has not acknowledged "
                    f"{record.acknowledged_phase()} yet ({_describe_age(age)})",
                )
            )
        return findings
    if late:
        hint = "it may resume" if record.phase in RESUMABLE else "it may not resume by itself"
        findings.append(
            TurnFinding.of(
                record,
                "turn_stuck",
                f"in phase {record.phase} for {_describe_age(age)} (threshold {limit}), owner "
                f"{record.owner_identity!r}; {hint}",
            )
        )
    for call in record.calls():
        if call.outcome in (ToolOutcome.REQUESTED, ToolOutcome.UNCERTAIN):
            code = "turn_call_requested" if call.outcome == ToolOutcome.REQUESTED else "turn_call_uncertain"
            findings.append(
                TurnFinding.of(
                    record,
                    code,
                    f"call {call.invocation_id!r} ({call.name}) is {call.outcome} in phase {record.phase}: it may or "
                    "may not have had its effect; it is never replayed automatically, an operator decides",
                )
            )
    return findings


def index_findings(records: list[TurnRecord], index: IndexScan) -> tuple[list[TurnFinding], set[tuple[str, str]]]:
    """Findings from checking the CAS index against the records, and every (workspace, task) it holds."""
    if index.problem is not None:
        return [TurnFinding.of(None, "turn_index_invalid", f"{index.key}: {index.problem}")], set()
    findings: list[TurnFinding] = []
    by_key = {record.key(): record for record in records}
    indexed = {(ref.workspace_id, ref.task_id) for ref in index.refs}
    for ref in index.refs:
        record = by_key.get((ref.workspace_id, ref.task_id))
        where = f"workspace {ref.workspace_id!r} task {ref.task_id!r}: "
        if record is None:
            findings.append(
                TurnFinding(
                    ref.workspace_id,
                    ref.task_id,
                    None,
                    "turn_index_orphan",
                    TURN_FINDING_SEVERITY["turn_index_orphan"],
                    where + f"indexed for owner {ref.owner_identity!r} but no record exists (a create that "
                    "crashed between the index and the record); the runtime skips it",
                )
            )
        elif record.owner_identity != ref.owner_identity:
            findings.append(
                TurnFinding.of(
                    record,
                    "turn_index_invalid",
                    f"indexed for owner {ref.owner_identity!r} but the record belongs to {record.owner_identity!r}: "
                    "the runtime's ListActive fails for every owner",
                )
            )
    for record in records:
        if not record.terminal() and record.key() not in indexed:
            findings.append(
                TurnFinding.of(
                    record,
                    "turn_index_missing",
                    f"active ({record.phase}) but missing from the index {index.key}: startup recovery of owner "
                    f"{record.owner_identity!r} will never see it",
                )
            )
    return findings, indexed


# -- the tables --------------------------------------------------------------------------------------

_NS_RANGE: Final = (-(2**63), 2**63 - 1)


def _ns(moment: GoTime | None) -> int | None:
    if moment is None or not _NS_RANGE[0] <= moment.unix_ns <= _NS_RANGE[1]:
        return None
    return moment.unix_ns


def _record_row(store: str, stored: StoredTurn, now: datetime, indexed: set[tuple[str, str]] | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "store": store,
        "key": stored.location,
        "valid": stored.readable,
        "problem": stored.problem,
        "body": stored.raw.decode("utf-8", "replace") if stored.raw is not None else None,
    }
    record = stored.record
    if record is None:
        return row
    calls = record.calls()
    outcomes = [call.outcome for call in calls]
    plan = plan_resume(record)
    row.update(
        workspace_id=record.workspace_id,
        session_id=record.session_id,
        task_id=record.task_id,
        owner_identity=record.owner_identity,
        phase=record.phase,
        revision=record.revision,
        iteration=record.iteration,
        terminal=record.terminal(),
        pending_terminal=record.pending_terminal(),
        acknowledged_phase=record.acknowledged_phase(),
        resumable=plan.resumable,
        needs_operator=bool(plan.needs_operator),
        created_at=_ns(record.created_at),
        updated_at=_ns(record.updated_at),
        completed_at=_ns(record.completed_at),
        age_s=_age(record, now).total_seconds(),
        input_message_id=record.input.message_id,
        last_message_id=record.last_message_id or None,
        failure_reason=record.failure_reason or None,
        assistant_message_id=record.tool_batch.assistant.message_id if record.tool_batch is not None else None,
        tool_calls=len(calls),
        calls_requested=outcomes.count(ToolOutcome.REQUESTED),
        calls_admitted=outcomes.count(ToolOutcome.ADMITTED),
        calls_confirmed=outcomes.count(ToolOutcome.CONFIRMED),
        calls_uncertain=outcomes.count(ToolOutcome.UNCERTAIN),
        indexed=None if indexed is None else record.key() in indexed,
    )
    return row


def _call_rows(store: str, record: TurnRecord) -> Iterable[dict[str, Any]]:
    from journaltools.goencoding.json import go_utf8
    from journaltools.goencoding.json_values import compact

    for position, (call, checkpoint) in enumerate(zip(plan_resume(record).calls, record.calls(), strict=True)):
        external = checkpoint.external
        yield {
            "store": store,
            "workspace_id": record.workspace_id,
            "task_id": record.task_id,
            "revision": record.revision,
            "phase": record.phase,
            "position": position,
            "invocation_id": call.invocation_id,
            "name": call.name,
            "args_digest": checkpoint.args_digest,
            "outcome": call.outcome,
            "decision": call.decision.value,
            "why": call.why,
            "external_task_id": external.task_id if external is not None else None,
            "external_execution_id": external.execution_id if external is not None else None,
            "child_session_id": external.child_session_id if external is not None else None,
            "descriptor": go_utf8(compact(external.descriptor)) if external is not None else None,
            "result_message_id": checkpoint.result.message_id if checkpoint.result is not None else None,
        }


def analyse_scan(
    store: str, scan: TurnScan, *, now: datetime | None = None, stuck_after: timedelta = DEFAULT_STUCK_AFTER
) -> TurnAudit:
    """The analysis of what ``TurnStore.scan`` returned (pure: no I/O)."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        raise JournalError("now must be timezone-aware (UTC)")
    stored = sorted(scan.records, key=lambda s: (s.record.key() if s.record else ("", ""), s.location))
    readable = [s.record for s in stored if s.record is not None and s.problem is None]
    findings: list[TurnFinding] = []
    for s in stored:
        if s.problem is not None:
            message = (
                f"{store} {s.location}: the runtime refuses this record, and one such record makes its ListActive "
                f"fail for every owner: {s.problem}"
            )
            findings.append(TurnFinding.of(s.record, "turn_record_invalid", message, s.location))
    for record in readable:
        findings.extend(record_findings(record, moment, stuck_after))
    indexed: set[tuple[str, str]] | None = None
    if scan.index is not None:
        from_index, indexed = index_findings([s.record for s in stored if s.record is not None], scan.index)
        findings.extend(from_index)
    rows = [_record_row(store, s, moment, indexed) for s in stored]
    calls = [row for record in readable for row in _call_rows(store, record)]
    return TurnAudit(
        store,
        moment,
        stuck_after,
        pa.Table.from_pylist(rows, schema=TURN_RECORDS_SCHEMA),
        pa.Table.from_pylist(calls, schema=TURN_TOOL_CALLS_SCHEMA),
        findings,
    )


def audit_turns(
    store: TurnStore | str, *, now: datetime | None = None, stuck_after: timedelta = DEFAULT_STUCK_AFTER
) -> TurnAudit:
    """Load every checkpoint record of ``store`` (a ``TurnStore`` or its URL) and find what needs an operator.

    Never raises for what the store holds (an unreadable record is a finding); a store that cannot be opened
    or read raises its ``JournalError``.
    """
    if isinstance(store, TurnStore):
        return analyse_scan(store.url, store.scan(), now=now, stuck_after=stuck_after)
    from journaltools.stores import open_turn_store

    with open_turn_store(store) as opened:
        return analyse_scan(opened.url, opened.scan(), now=now, stuck_after=stuck_after)


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``90``, ``90s``, ``30m``, ``2h`` or ``1d`` as a duration (seconds when no unit is given)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise JournalError(f"duration {text!r}: use a number of seconds, or a number with s, m, h or d (e.g. 30m)")
    try:
        return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2) or "s"])
    except OverflowError:  # past timedelta's range (or float's): no record stays in a phase that long
        raise JournalError(f"duration {text!r} is longer than {timedelta.max.days:,} days") from None


__all__ = [
    "DEFAULT_STUCK_AFTER",
    "TURN_FINDINGS_SCHEMA",
    "TURN_FINDING_SEVERITY",
    "TURN_RECORDS_SCHEMA",
    "TURN_TOOL_CALLS_SCHEMA",
    "TurnAudit",
    "TurnFinding",
    "analyse_scan",
    "audit_turns",
    "parse_duration",
    "record_findings",
]
