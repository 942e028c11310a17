"""The two turnjournal stores behind one contract: ``FileStore`` (one writing process per state
directory) and ``CASStore`` (many writers over a compare-and-swap blob backend, with a small
CAS-maintained owner index so startup recovery never needs to scan keys)."""

from __future__ import annotations

import hashlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson

from journaltools._durable import exclusive_lock, write_atomically
from journaltools.errors import JournalError, TaskNotFound
from journaltools.turnjournal.records import TurnRecord


class RevisionConflict(JournalError):
    """An update named a revision that is no longer current: another writer advanced the record."""

    def __init__(self, task_id: str, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(f"turnjournal task {task_id!r}: expected revision {expected}, store holds {actual}")


def _now() -> datetime:
    return datetime.now(UTC)


class TurnStore(ABC):
    """The backend-neutral optimistic contract: ``update`` needs the revision ``get``/``create`` returned."""

    def __init__(self, now: Callable[[], datetime] = _now) -> None:
        self._now = now

    @abstractmethod
    def create(self, record: TurnRecord) -> TurnRecord: ...

    @abstractmethod
    def get(self, workspace_id: str, task_id: str) -> TurnRecord: ...

    @abstractmethod
    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord: ...

    @abstractmethod
    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        """Every record of this owner that is not terminal: the startup-recovery scan."""

    def _stamp_new(self, record: TurnRecord) -> TurnRecord:
        now = self._now()
        stamped = record.with_changes(revision=1, created_at=now, updated_at=now)
        stamped.validate_rules()
        return stamped

    def _stamp_update(self, current: TurnRecord, record: TurnRecord) -> TurnRecord:
        if record.key() != current.key() or record.owner_identity != current.owner_identity:
            raise JournalError(f"turnjournal task {record.task_id!r}: identity and owner never change")
        stamped = record.with_changes(
            revision=current.revision + 1, created_at=current.created_at, updated_at=self._now()
        )
        stamped.validate_rules()
        return stamped


def _file_name(workspace_id: str, task_id: str) -> str:
    return hashlib.sha256(orjson.dumps([workspace_id, task_id])).hexdigest() + ".json"


class FileStore(TurnStore):
    """One file per parent task. Safe across threads of one process; one writing process per directory
    (a flock on the directory's lock file serialises each transition)."""

    def __init__(self, state_dir: str | Path, now: Callable[[], datetime] = _now) -> None:
        super().__init__(now)
        self.root = Path(state_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self._thread_lock = threading.Lock()

    def _path(self, workspace_id: str, task_id: str) -> Path:
        return self.root / _file_name(workspace_id, task_id)

    def _read(self, workspace_id: str, task_id: str) -> TurnRecord:
        try:
            return TurnRecord.from_bytes(self._path(workspace_id, task_id).read_bytes())
        except FileNotFoundError:
            raise TaskNotFound(f"turnjournal: no record for task {task_id!r} in workspace {workspace_id!r}") from None

    def create(self, record: TurnRecord) -> TurnRecord:
        with self._thread_lock, exclusive_lock(self.root / ".lock"):
            path = self._path(*record.key())
            if path.exists():
                raise JournalError(f"turnjournal task {record.task_id!r} already has a record")
            stamped = self._stamp_new(record)
            write_atomically(path, stamped.to_bytes())
            return stamped

    def get(self, workspace_id: str, task_id: str) -> TurnRecord:
        return self._read(workspace_id, task_id)

    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord:
        with self._thread_lock, exclusive_lock(self.root / ".lock"):
            current = self._read(*record.key())
            if current.revision != expected_revision:
                raise RevisionConflict(record.task_id, expected_revision, current.revision)
            stamped = self._stamp_update(current, record)
            write_atomically(self._path(*record.key()), stamped.to_bytes())
            return stamped

    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        records = (TurnRecord.from_bytes(path.read_bytes()) for path in sorted(self.root.glob("*.json")))
        return [r for r in records if r.owner_identity == owner_identity and not r.terminal()]


class MemoryBlobStore:
    """A compare-and-swap blob store in memory (the contract ``CASStore`` needs; tests and notebooks use it).

    ``put`` with ``expected_version=0`` creates; otherwise it replaces only the named version.
    """

    def __init__(self) -> None:
        self._blobs: dict[str, tuple[bytes, int]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[bytes, int] | None:
        with self._lock:
            return self._blobs.get(key)

    def put(self, key: str, data: bytes, expected_version: int) -> int | None:
        """Store ``data`` if the current version is ``expected_version``; returns the new version or None."""
        with self._lock:
            current = self._blobs.get(key, (b"", 0))[1]
            if current != expected_version:
                return None
            self._blobs[key] = (data, current + 1)
            return current + 1


class CASStore(TurnStore):
    """Many writers over a CAS blob backend. The owner index is itself a CAS blob, retried on contention."""

    def __init__(
        self,
        blobs: MemoryBlobStore,
        prefix: str = "turnjournal",
        max_retries: int = 16,
        now: Callable[[], datetime] = _now,
    ) -> None:
        super().__init__(now)
        self.blobs = blobs
        self.prefix = prefix
        self.max_retries = max_retries

    def _key(self, workspace_id: str, task_id: str) -> str:
        return f"{self.prefix}/records/{_file_name(workspace_id, task_id)}"

    def _index_key(self, owner_identity: str) -> str:
        return f"{self.prefix}/owners/{hashlib.sha256(owner_identity.encode()).hexdigest()}"

    def _add_to_index(self, record: TurnRecord) -> None:
        key = self._index_key(record.owner_identity)
        for _ in range(self.max_retries):
            stored = self.blobs.get(key)
            entries: list[list[str]] = orjson.loads(stored[0]) if stored else []
            if list(record.key()) in entries:
                return
            if self.blobs.put(key, orjson.dumps([*entries, list(record.key())]), stored[1] if stored else 0):
                return
        raise JournalError(
            f"turnjournal owner index for {record.owner_identity!r}: {self.max_retries} CAS retries lost"
        )

    def create(self, record: TurnRecord) -> TurnRecord:
        stamped = self._stamp_new(record)
        # Index first: an index entry without a record is skipped on recovery; a record missing from the
        # index would be lost to recovery.
        self._add_to_index(stamped)
        if self.blobs.put(self._key(*stamped.key()), stamped.to_bytes(), 0) is None:
            raise JournalError(f"turnjournal task {record.task_id!r} already has a record")
        return stamped

    def _load(self, workspace_id: str, task_id: str) -> tuple[TurnRecord, int]:
        stored = self.blobs.get(self._key(workspace_id, task_id))
        if stored is None:
            raise TaskNotFound(f"turnjournal: no record for task {task_id!r} in workspace {workspace_id!r}")
        return TurnRecord.from_bytes(stored[0]), stored[1]

    def get(self, workspace_id: str, task_id: str) -> TurnRecord:
        return self._load(workspace_id, task_id)[0]

    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord:
        current, blob_version = self._load(*record.key())
        if current.revision != expected_revision:
            raise RevisionConflict(record.task_id, expected_revision, current.revision)
        stamped = self._stamp_update(current, record)
        if self.blobs.put(self._key(*record.key()), stamped.to_bytes(), blob_version) is None:
            latest = self._load(*record.key())[0]
            raise RevisionConflict(record.task_id, expected_revision, latest.revision)
        return stamped

    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        stored = self.blobs.get(self._index_key(owner_identity))
        active = []
        for workspace_id, task_id in orjson.loads(stored[0]) if stored else []:
            try:
                record = self.get(workspace_id, task_id)
            except TaskNotFound:
                continue  # indexed by a create that lost its race or crashed before writing the record
            if not record.terminal():
                active.append(record)
        return active
