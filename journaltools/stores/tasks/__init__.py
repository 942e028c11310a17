"""fisk-ai task records (``internal/tasks``, REAL-SYSTEM.md H): what was asked and what came back.

A record is ``{"id", "state", "request", "submitted", "result"?, "completed"?}`` in that order, written as Go's
``json.Marshal`` writes it: compact, no trailing newline, UTC times to the nanosecond, ``request`` and ``result``
the A2A messages' bytes (compacted, ``<``, ``>``, ``&`` escaped). ``state`` is ``submitted`` or ``completed``
and says only whether an answer was written: success or failure is the result message's ``protocol``
(``io.choria.fisk-ai.v1.result`` vs ``io.choria.fisk-ai.v1.error``). The id is the request message's own
``request`` tag, never minted.

Two stores keep one contract (``TaskStore``): ``FileTaskStore`` (the runtime's ``<dir>/<id>.json``: staged in a
``.tasktmp-*`` file, created by hard link, completed by rename) and ``NatsTaskStore`` (``tasks.kv``, the same bytes
under the key ``<id>`` of a JetStream key-value bucket). Both complete **once across processes**, which the
runtime's file store does not: the file store holds an exclusive lock on a hidden ``.<id>.lock`` while it checks
and renames, the bucket writes by revision. A late completer gets ``TaskAlreadyCompleted`` naming when the first
answer landed.
"""

from __future__ import annotations

import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from journaltools._base.durable import IrregularFile, create_file, exclusive_lock, read_regular_file, replace_file
from journaltools.errors import InvalidTask, StorageError, TaskAlreadyCompleted, TaskExists, TaskNotFound
from journaltools.goencoding.json import GoJSONError, is_valid
from journaltools.goencoding.json_values import (
    Node,
    go_raw_field,
    go_string,
    go_string_field,
    go_struct,
    marshal_raw,
    parse_single,
)
from journaltools.goencoding.time import GoTime, go_time_field

STATE_SUBMITTED: Final = "submitted"
STATE_COMPLETED: Final = "completed"
TASK_STATES: Final = frozenset({STATE_SUBMITTED, STATE_COMPLETED})
PROTOCOL_NAMESPACE: Final = "io.choria.fisk-ai.v1"
REQUEST_PROTOCOL: Final = f"{PROTOCOL_NAMESPACE}.request"
REQUEST_KINDS: Final = ("prompt", "answer", "resume", "read")
RESULT_PROTOCOL: Final = f"{PROTOCOL_NAMESPACE}.result"
ERROR_PROTOCOL: Final = f"{PROTOCOL_NAMESPACE}.error"
_TASK_ID: Final = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_-]*")
MAX_TASK_ID: Final = 128

Clock = Callable[[], GoTime]


def _system_clock() -> GoTime:
    return GoTime(time.time_ns())


def validate_task_id(task_id: str) -> str:
    """The runtime's id rule (the run-id rule): 1-128 of ``[a-zA-Z0-9_-]``, starting with a letter or digit."""
    if len(task_id) > MAX_TASK_ID or not _TASK_ID.fullmatch(task_id):
        raise InvalidTask(f"invalid task id {task_id!r} (use letters, digits, '-' or '_', at most {MAX_TASK_ID})")
    return task_id


def is_valid_task_id(task_id: object) -> bool:
    return isinstance(task_id, str) and len(task_id) <= MAX_TASK_ID and _TASK_ID.fullmatch(task_id) is not None


# -- reading the messages' headers (json.Unmarshal: lenient, unknown fields ignored) ------------------------------

_HEADER = go_struct(
    {"protocol": go_string_field, "request": go_string_field, "error": go_string_field, "code": go_string_field},
    lambda: {"protocol": "", "request": "", "error": "", "code": ""},
    strict=False,
)


def message_header(message: bytes) -> dict[str, str]:
    """``protocol``, ``request``, ``error`` and ``code`` of an A2A message, read as Go's ``json.Unmarshal`` reads
    them; ``GoJSONError`` when Go would refuse the bytes."""
    values = _HEADER(message, parse_single(message), None)
    return values if values is not None else {"protocol": "", "request": "", "error": "", "code": ""}


def request_id(request: bytes) -> str:
    """``tasks.RequestID``: the id a request is stored under, its ``request`` tag; ``InvalidTask`` when the body is
    not a request message carrying a usable one."""
    try:
        header = message_header(request)
    except GoJSONError as exc:
        raise InvalidTask(f"invalid request: {exc}") from None
    protocol = header["protocol"]
    if protocol not in {f"{REQUEST_PROTOCOL}.{kind}" for kind in REQUEST_KINDS}:
        raise InvalidTask(f"invalid request: protocol is {protocol!r}, want one under {REQUEST_PROTOCOL}")
    if not is_valid_task_id(header["request"]):
        raise InvalidTask(f"invalid request: invalid task id {header['request']!r}")
    return header["request"]


# -- the record ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Task:
    """One task record. ``request`` and ``result`` are the messages' JSON bytes as held (``to_bytes`` writes them
    as Go does: compacted, HTML characters escaped); ``completed`` None is Go's zero time (omitted)."""

    id: str
    state: str
    request: bytes
    submitted: GoTime
    result: bytes | None = None
    completed: GoTime | None = None

    def to_bytes(self) -> bytes:
        """The record as the runtime writes it: ``json.Marshal`` of ``tasks.Task``, no newline."""
        parts = [
            b'{"id":',
            go_string(self.id),
            b',"state":',
            go_string(self.state),
            b',"request":',
            marshal_raw(self.request) if self.request else b"null",
            b',"submitted":',
            go_string(self.submitted.text()),
        ]
        if self.result:
            parts += [b',"result":', marshal_raw(self.result)]
        if self.completed is not None and not self.completed.is_zero():
            parts += [b',"completed":', go_string(self.completed.text())]
        return b"".join([*parts, b"}"])

    @property
    def request_kind(self) -> str | None:
        """``prompt``, ``answer``, ``resume`` or ``read``: the request protocol's last part."""
        try:
            protocol = message_header(self.request)["protocol"]
        except GoJSONError:
            return None
        prefix = f"{REQUEST_PROTOCOL}."
        return protocol[len(prefix) :] if protocol.startswith(prefix) else None

    @property
    def result_protocol(self) -> str | None:
        if not self.result:
            return None
        try:
            return message_header(self.result)["protocol"]
        except GoJSONError:
            return None

    @property
    def outcome(self) -> str:
        """``answered`` (a result message), ``error`` (an error message, or a result the runtime could not read)
        or ``waiting`` (no result yet). Told by the result's protocol, never by ``state``."""
        if not self.result:
            return "waiting"
        return "answered" if self.result_protocol == RESULT_PROTOCOL else "error"

    @property
    def error_text(self) -> str | None:
        """The error message's ``error`` (with its ``code``), for an ``error`` outcome."""
        if self.outcome != "error":
            return None
        try:
            header = message_header(self.result or b"")
        except GoJSONError as exc:
            return f"the result is not JSON: {exc}"
        if header["protocol"] != ERROR_PROTOCOL:
            return f"the result's protocol is {header['protocol']!r}, neither a result nor an error"
        return f"{header['error']} ({header['code']})" if header["code"] else header["error"]

    @property
    def seconds_to_answer(self) -> float | None:
        if self.completed is None or self.completed.is_zero():
            return None
        return (self.completed.unix_ns - self.submitted.unix_ns) / 1e9


_RECORD = go_struct(
    {
        "id": go_string_field,
        "state": go_string_field,
        "request": go_raw_field,
        "submitted": go_time_field,
        "result": go_raw_field,
        "completed": go_time_field,
    },
    lambda: {
        "id": "",
        "state": "",
        "request": b"",
        "submitted": GoTime.zero(),
        "result": b"",
        "completed": GoTime.zero(),
    },
    strict=False,
)


def decode_task(data: bytes) -> Task:
    """A stored record read as the runtime reads it (``json.Unmarshal`` into ``tasks.Task``: keys matched
    case-insensitively, unknown ones ignored); ``GoJSONError`` when the runtime could not read it."""
    node: Node = parse_single(data)
    if node.kind != "object" and node.kind != "null":
        raise GoJSONError(f"json: cannot unmarshal {node.kind} into Go value of type tasks.Task")
    values = _RECORD(data, node, None)
    assert values is not None
    completed: GoTime = values["completed"]
    return Task(
        values["id"],
        values["state"],
        values["request"],
        values["submitted"],
        values["result"] or None,
        None if completed.is_zero() else completed,
    )


def already_completed(task: Task) -> TaskAlreadyCompleted:
    when = task.completed.text() if task.completed is not None else "an unknown time"
    return TaskAlreadyCompleted(f"task {task.id!r} was already completed at {when}; the first answer wins")


@dataclass(frozen=True, slots=True)
class StoredTask:
    """One record as ``scan`` found it: the task, or why the runtime could not read it (``task`` None)."""

    key: str
    raw: bytes | None
    task: Task | None
    problem: str | None = None


class TaskStore(ABC):
    """What every task store guarantees:

    - ``submit(request)`` stores a new ``submitted`` record under the request's own id; a second submit of one id is
      ``TaskExists``; a body that is not a request message with a usable id is ``InvalidTask``.
    - ``complete(id, result)`` attaches the answer once: of several completers (threads, processes, hosts) exactly one
      wins; every other gets ``TaskAlreadyCompleted`` naming when the first answer landed.
    - ``get(id)`` is the record or ``TaskNotFound``; a stored record the runtime could not read is ``InvalidTask``.
    """

    url: str

    def __init__(self, now: Clock | None = None) -> None:
        self._now = now or _system_clock

    def _new(self, request: bytes) -> Task:
        task_id = request_id(request)
        return Task(task_id, STATE_SUBMITTED, request, self._now().utc())

    def _completed(self, task: Task, result: bytes) -> Task:
        if not is_valid(result):
            raise InvalidTask(f"task {task.id!r}: the result is not one JSON value")
        return Task(task.id, STATE_COMPLETED, task.request, task.submitted, result, self._now().utc())

    @abstractmethod
    def submit(self, request: bytes) -> Task: ...

    @abstractmethod
    def get(self, task_id: str) -> Task: ...

    @abstractmethod
    def complete(self, task_id: str, result: bytes) -> Task: ...

    @abstractmethod
    def scan(self) -> list[StoredTask]:
        """Every record the store holds, readable or not, sorted by key."""

    def get_many(self, task_ids: Iterable[str | None]) -> dict[str, Task]:
        """The readable tasks of ``task_ids`` (ids that cannot name a task, missing and unreadable ones skipped)."""
        found = {}
        for task_id in dict.fromkeys(task_ids):
            if not is_valid_task_id(task_id):
                continue
            assert task_id is not None
            try:
                found[task_id] = self.get(task_id)
            except (TaskNotFound, InvalidTask):
                continue
        return found

    def close(self) -> None:
        """Release the store's connection, if it has one."""
        return None

    def __enter__(self) -> TaskStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def task_states(store: TaskStore, task_ids: Iterable[str | None]) -> dict[str, str]:
    """task id → its state (``submitted`` or ``completed``) for every id the store holds a readable record of.

    For the ``task_state`` column of the ``runs`` table: an id the store does not hold, or holds a record of that
    the runtime could not read, is absent (a null ``task_state``; ``tasks STORE`` reports the unreadable record).
    """
    return {task_id: task.state for task_id, task in store.get_many(task_ids).items()}


def _storage(exc: OSError, path: Path, doing: str) -> StorageError:
    return StorageError(str(path), doing, exc.strerror or type(exc).__name__, "check the directory", exc.errno)


STAGING_PREFIX: Final = ".tasktmp-"


class FileTaskStore(TaskStore):
    """The runtime's file store: ``<dir>/<id>.json``, the directory 0700 and records 0600."""

    def __init__(self, directory: str | os.PathLike[str], now: Clock | None = None) -> None:
        super().__init__(now)
        self.root = Path(directory)
        self.url = str(self.root)

    def path(self, task_id: str) -> Path:
        return self.root / f"{validate_task_id(task_id)}.json"

    def _read(self, task_id: str) -> Task:
        path = self.path(task_id)
        try:
            data = read_regular_file(path)
        except FileNotFoundError:
            raise TaskNotFound(f"task {task_id!r} is not in {self.root}") from None
        except IrregularFile as exc:
            raise InvalidTask(f"task record {exc}; it is never read through") from None
        except OSError as exc:
            raise _storage(exc, path, "read the task record") from None
        try:
            return decode_task(data)
        except GoJSONError as exc:
            raise InvalidTask(f"task record {path}: the runtime cannot read it: {exc}") from None

    def submit(self, request: bytes) -> Task:
        task = self._new(request)
        path = self.path(task.id)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            create_file(path, task.to_bytes(), staging_prefix=STAGING_PREFIX, staging_suffix="")
        except FileExistsError:
            raise TaskExists(f"task {task.id!r} already exists in {self.root}") from None
        except OSError as exc:
            raise _storage(exc, path, "create the task record") from None
        return task

    def get(self, task_id: str) -> Task:
        return self._read(task_id)

    def complete(self, task_id: str, result: bytes) -> Task:
        path = self.path(task_id)
        self._read(task_id)  # a missing task is not found before any lock file is made for it
        lock = self.root / f".{task_id}.lock"
        try:
            with exclusive_lock(lock):
                current = self._read(task_id)
                if current.state == STATE_COMPLETED:
                    raise already_completed(current)
                done = self._completed(current, result)
                replace_file(path, done.to_bytes(), staging_prefix=STAGING_PREFIX, staging_suffix="")
                return done
        except IrregularFile as exc:
            raise InvalidTask(f"task lock {exc}; move it away") from None
        except OSError as exc:
            raise _storage(exc, path, "complete the task record") from None

    def scan(self) -> list[StoredTask]:
        try:
            names = sorted(os.listdir(self.root))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise _storage(exc, self.root, "list the task store") from None
        found = []
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            path = self.root / name
            try:
                data = read_regular_file(path)
            except FileNotFoundError:
                continue
            except IrregularFile as exc:
                found.append(StoredTask(name, None, None, f"it is {exc.kind}, not a regular file: never read through"))
                continue
            except OSError as exc:
                found.append(StoredTask(name, None, None, f"cannot be read: {exc.strerror}"))
                continue
            found.append(stored_task(name, data, name.removesuffix(".json")))
        return found


def stored_task(key: str, data: bytes, expected_id: str) -> StoredTask:
    """One stored record decoded for ``scan``: the task, or why the runtime could not read it."""
    try:
        task = decode_task(data)
    except GoJSONError as exc:
        return StoredTask(key, data, None, f"the runtime cannot read it: {exc}")
    if task.id != expected_id:
        return StoredTask(key, data, task, f"it holds task {task.id!r}, not {expected_id!r}")
    return StoredTask(key, data, task)


__all__ = [
    "ERROR_PROTOCOL",
    "REQUEST_PROTOCOL",
    "RESULT_PROTOCOL",
    "STATE_COMPLETED",
    "STATE_SUBMITTED",
    "TASK_STATES",
    "FileTaskStore",
    "StoredTask",
    "Task",
    "TaskStore",
    "decode_task",
    "is_valid_task_id",
    "request_id",
    "stored_task",
    "task_states",
    "validate_task_id",
]
