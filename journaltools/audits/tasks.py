"""Task-store analysis: one row per task record as an Arrow table, and the records that need a look.

``audit_tasks(store)`` reads every record of a task store (a fisk-ai task directory or a NATS bucket) once, as the
runtime would read it, and returns the ``tasks`` table (id, state, request kind, submitted, completed, seconds to
answer, outcome ``answered`` / ``error`` / ``waiting``, the error text) and these findings:

=================================== ======== ===========================================================
code                                severity meaning
=================================== ======== ===========================================================
``task_record_invalid``             error    a stored record the runtime cannot read (not JSON, a type it
                                             refuses, a link or FIFO, a file holding another task's id)
``task_completed_without_result``   error    ``completed`` with no result message: the caller gets no answer
``task_result_before_submission``   warning  completed earlier than submitted: a clock went backwards
``task_state_unknown``              warning  a state other than ``submitted`` and ``completed``
=================================== ======== ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa

from journaltools.protocol.findings import Finding, Severity
from journaltools.stores.tasks import STATE_COMPLETED, TASK_STATES, StoredTask, Task, TaskStore

TASK_FINDING_SEVERITY: Final[dict[str, Severity]] = {
    "task_record_invalid": "error",
    "task_completed_without_result": "error",
    "task_result_before_submission": "warning",
    "task_state_unknown": "warning",
}
TIMESTAMP: Final = pa.timestamp("ns", tz="UTC")

TASKS_SCHEMA: Final = pa.schema(
    [
        pa.field("store", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("valid", pa.bool_(), nullable=False),
        pa.field("problem", pa.string()),
        pa.field("id", pa.string()),
        pa.field("state", pa.string()),
        pa.field("request_kind", pa.string()),
        pa.field("submitted", TIMESTAMP),
        pa.field("completed", TIMESTAMP),
        pa.field("seconds_to_answer", pa.float64()),
        pa.field("outcome", pa.string()),
        pa.field("error", pa.string()),
        pa.field("body", pa.large_string()),
    ],
    metadata={
        "description": "one row per task record; valid=false: the runtime cannot read it (problem says why); "
        "request_kind = prompt, answer, resume or read; outcome = answered (a result message), error (an error "
        "message) or waiting (no answer yet), told by the result's protocol, never by state; times to the "
        "nanosecond; body = the stored bytes (null for a link or FIFO, never read through)"
    },
)


@dataclass(frozen=True, slots=True)
class TaskAudit:
    store: str
    tasks: pa.Table
    findings: list[Finding]

    def to_json(self) -> dict[str, Any]:
        rows = [{key: value for key, value in row.items() if key != "body"} for row in self.tasks.to_pylist()]
        for row in rows:
            for column in ("submitted", "completed"):
                row[column] = row[column].isoformat() if row[column] is not None else None
        return {"store": self.store, "tasks": rows, "findings": [finding.to_json() for finding in self.findings]}


def _finding(store: str, code: str, message: str) -> Finding:
    return Finding(None, None, code, TASK_FINDING_SEVERITY[code], message, store)


def task_findings(store: str, stored: StoredTask) -> list[Finding]:
    """The findings of one stored record."""
    if stored.task is None or stored.problem is not None:
        return [_finding(store, "task_record_invalid", f"task record {stored.key}: {stored.problem}")]
    task = stored.task
    findings = []
    if task.state not in TASK_STATES:
        findings.append(_finding(store, "task_state_unknown", f"task {task.id!r}: state {task.state!r}"))
    if task.state == STATE_COMPLETED and not task.result:
        findings.append(
            _finding(store, "task_completed_without_result", f"task {task.id!r}: completed, but holds no result")
        )
    if task.completed is not None and task.completed.before(task.submitted):
        findings.append(
            _finding(
                store,
                "task_result_before_submission",
                f"task {task.id!r}: completed at {task.completed.text()}, before its submission at "
                f"{task.submitted.text()}",
            )
        )
    return findings


def _ns(task: Task, column: str) -> int | None:
    moment = task.submitted if column == "submitted" else task.completed
    if moment is None or moment.is_zero() or not -(2**63) <= moment.unix_ns < 2**63:
        return None
    return moment.unix_ns


def task_row(store: str, stored: StoredTask) -> dict[str, Any]:
    row: dict[str, Any] = {
        "store": store,
        "key": stored.key,
        "valid": stored.task is not None and stored.problem is None,
        "problem": stored.problem,
        "body": stored.raw.decode("utf-8", "replace") if stored.raw is not None else None,
    }
    task = stored.task
    if task is not None:
        row.update(
            id=task.id,
            state=task.state,
            request_kind=task.request_kind,
            submitted=_ns(task, "submitted"),
            completed=_ns(task, "completed"),
            seconds_to_answer=task.seconds_to_answer,
            outcome=task.outcome,
            error=task.error_text,
        )
    return row


def analyse_tasks(store: str, stored: list[StoredTask]) -> TaskAudit:
    """The analysis of what ``TaskStore.scan`` returned (pure: no I/O)."""
    rows = [task_row(store, s) for s in stored]
    findings = [finding for s in stored for finding in task_findings(store, s)]
    return TaskAudit(store, pa.Table.from_pylist(rows, schema=TASKS_SCHEMA), findings)


def audit_tasks(store: TaskStore | str) -> TaskAudit:
    """Every record of ``store`` (a ``TaskStore`` or its URL) as a table, with its findings. Never raises for what
    the store holds (an unreadable record is a finding); a store that cannot be opened or listed raises."""
    if isinstance(store, TaskStore):
        return analyse_tasks(store.url, store.scan())
    from journaltools.stores import open_task_store

    with open_task_store(store) as opened:
        return analyse_tasks(opened.url, opened.scan())


__all__ = ["TASKS_SCHEMA", "TASK_FINDING_SEVERITY", "TaskAudit", "analyse_tasks", "audit_tasks", "task_findings"]
