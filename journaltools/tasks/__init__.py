"""The task store: what was asked and what came back (PROTOCOL.md section 8).

The journal holds how the work was done, which is private working state; a caller reads answers
here, never from a journal. The state vocabulary is only what the store can observe: ``pending``,
``succeeded``, ``failed`` (queue states such as claimed or retrying are the queue's, not ours).
Completing twice is refused: with at-least-once delivery the loser is usually the failed worker,
so the first write wins, and a failure can never replace a success.

Two backends keep one contract (``TaskStore``): ``FileTaskStore`` (one JSON file per task, a flock per
task) and ``NatsTaskStore`` (a JetStream key-value bucket, creation and completion by compare-and-swap,
so any number of hosts may complete tasks). ``open_task_store(url)`` picks one by URL (``journaltools.stores``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import orjson

from journaltools._durable import exclusive_lock, write_atomically
from journaltools.errors import TaskAlreadyCompleted, TaskError, TaskNotFound
from journaltools.ops.clock import now_ts
from journaltools.protocol.runid import is_valid_run_id, validate_run_id

TaskState = Literal["pending", "succeeded", "failed"]
TASK_STATES: frozenset[str] = frozenset(get_args(TaskState))


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

    def to_bytes(self) -> bytes:
        return orjson.dumps(self.to_json())

    @classmethod
    def from_bytes(cls, data: bytes, task_id: str, where: str) -> Task:
        """Decode a stored task; raises ``TaskError`` naming the task and where it is stored when it is not one."""
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise TaskError(f"task {task_id!r} in {where}: not JSON: {exc}") from None
        fields = {"id", "state", "request", "result", "error", "created", "completed"}
        if not isinstance(body, dict) or set(body) != fields:
            raise TaskError(f"task {task_id!r} in {where}: not a task record (fields {sorted(fields)})")
        if body["id"] != task_id or body["state"] not in TASK_STATES:
            raise TaskError(f"task {task_id!r} in {where}: id {body['id']!r} or state {body['state']!r} is wrong")
        return cls(**body)

    def completed_as(self, result: Any, error: str | None, ts: str | None) -> Task:
        """This pending task with its outcome: ``failed`` with an error, else ``succeeded`` with a result."""
        if error is not None and result is not None:
            raise TaskError(f"task {self.id!r}: an outcome is a result or an error, not both")
        state: TaskState = "failed" if error is not None else "succeeded"
        return Task(self.id, state, self.request, result, error, self.created, ts or now_ts())


def already_completed(task: Task) -> TaskAlreadyCompleted:
    return TaskAlreadyCompleted(f"task {task.id!r} already {task.state} at {task.completed}; the first write wins")


class TaskStore(ABC):
    """What every task store guarantees:

    - ``create`` is create-only: a second create of one id is refused, whatever it asks.
    - ``complete`` records the outcome once: the first completion wins and every later one is refused with
      ``TaskAlreadyCompleted``, even a success after a failure; so a failure never replaces a success either.
      Of several concurrent completers (threads, processes or hosts) exactly one wins.
    - Task ids are run ids (1-128 characters of ``[A-Za-z0-9_-]``): safe as file names and key-value keys.
    """

    url: str

    @abstractmethod
    def create(self, task_id: str, request: Any, *, ts: str | None = None) -> Task: ...

    @abstractmethod
    def get(self, task_id: str) -> Task:
        """The task, or ``TaskNotFound``."""

    @abstractmethod
    def complete(self, task_id: str, *, result: Any = None, error: str | None = None, ts: str | None = None) -> Task:
        """Record the outcome once: ``succeeded`` with a result, or ``failed`` with an error."""

    def get_many(self, task_ids: Iterable[str]) -> dict[str, Task]:
        """The tasks of ``task_ids`` that exist (ids that cannot name a task are skipped)."""
        found = {}
        for task_id in dict.fromkeys(task_ids):
            if not is_valid_run_id(task_id):
                continue
            try:
                found[task_id] = self.get(task_id)
            except TaskNotFound:
                continue
        return found

    def close(self) -> None:
        """Release the store's connection, if it has one (the file stores have none)."""
        return None

    def __enter__(self) -> TaskStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def task_states(store: TaskStore, task_ids: Iterable[str | None]) -> dict[str, str]:
    """task id → its state (``pending``, ``succeeded`` or ``failed``) for every id the store holds.

    For the ``task_state`` column of the ``runs`` table: give the ``task`` of every run's meta (None and ids
    that cannot name a task are skipped); a task the store does not hold is absent from the answer.
    """
    wanted = [task_id for task_id in task_ids if task_id is not None]
    return {task_id: task.state for task_id, task in store.get_many(wanted).items()}


class FileTaskStore(TaskStore):
    """One JSON file per task under ``root``; a per-task flock serialises creation and completion across
    processes of one machine."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = str(self.root)

    def _path(self, task_id: str) -> Path:
        return self.root / f"{validate_run_id(task_id)}.task.json"

    def create(self, task_id: str, request: Any, *, ts: str | None = None) -> Task:
        path = self._path(task_id)
        with exclusive_lock(path.with_suffix(".lock")):
            if path.exists():
                raise TaskError(f"task {task_id!r} already exists in {self.root}")
            task = Task(task_id, "pending", request, created=ts or now_ts())
            write_atomically(path, task.to_bytes())
        return task

    def get(self, task_id: str) -> Task:
        path = self._path(task_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TaskNotFound(f"task {task_id!r} is not in {self.root}") from None
        return Task.from_bytes(data, task_id, str(path))

    def complete(self, task_id: str, *, result: Any = None, error: str | None = None, ts: str | None = None) -> Task:
        path = self._path(task_id)
        with exclusive_lock(path.with_suffix(".lock")):
            current = self.get(task_id)
            if current.state != "pending":
                raise already_completed(current)
            done = current.completed_as(result, error, ts)
            write_atomically(path, done.to_bytes())
        return done


__all__ = ["TASK_STATES", "FileTaskStore", "Task", "TaskState", "TaskStore", "task_states"]
