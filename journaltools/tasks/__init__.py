"""The task store: what was asked and what came back (PROTOCOL.md section 8).

The journal holds how the work was done, which is private working state; a caller reads answers
here, never from a journal. The state vocabulary is only what the store can observe: ``pending``,
``succeeded``, ``failed`` (queue states such as claimed or retrying are the queue's, not ours).
Completing twice is refused: with at-least-once delivery the loser is usually the failed worker,
so the first write wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from journaltools._durable import exclusive_lock, write_atomically
from journaltools.errors import TaskAlreadyCompleted, TaskError, TaskNotFound
from journaltools.ops.clock import now_ts
from journaltools.protocol.runid import validate_run_id

TaskState = Literal["pending", "succeeded", "failed"]


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    state: TaskState
    request: Any
    result: Any = None
    error: str | None = None
    created: str = ""
    completed: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "request": self.request,
            "result": self.result,
            "error": self.error,
            "created": self.created,
            "completed": self.completed,
        }


class FileTaskStore:
    """One JSON file per task under ``root``; a per-task flock serialises completion across processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, task_id: str) -> Path:
        return self.root / f"{validate_run_id(task_id)}.task.json"

    def create(self, task_id: str, request: Any, *, ts: str | None = None) -> Task:
        path = self._path(task_id)
        with exclusive_lock(path.with_suffix(".lock")):
            if path.exists():
                raise TaskError(f"task {task_id!r} already exists")
            task = Task(task_id, "pending", request, created=ts or now_ts())
            write_atomically(path, orjson.dumps(task.to_json()))
        return task

    def get(self, task_id: str) -> Task:
        try:
            body = orjson.loads(self._path(task_id).read_bytes())
        except FileNotFoundError:
            raise TaskNotFound(f"task {task_id!r} is not in {self.root}") from None
        return Task(**body)

    def complete(self, task_id: str, *, result: Any = None, error: str | None = None, ts: str | None = None) -> Task:
        """Record the outcome once: ``succeeded`` with a result, or ``failed`` with an error."""
        path = self._path(task_id)
        with exclusive_lock(path.with_suffix(".lock")):
            current = self.get(task_id)
            if current.state != "pending":
                raise TaskAlreadyCompleted(
                    f"task {task_id!r} already {current.state} at {current.completed}; the first write wins"
                )
            state: TaskState = "failed" if error is not None else "succeeded"
            done = Task(task_id, state, current.request, result, error, current.created, ts or now_ts())
            write_atomically(path, orjson.dumps(done.to_json()))
        return done
