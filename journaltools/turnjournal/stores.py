"""The turnjournal stores behind one contract: ``FileStore`` (one writing process per state directory) and
``CASStore`` (many writers over a compare-and-swap blob backend: ``MemoryBlobStore`` in this process, or a
JetStream key-value bucket, ``turnjournal.kv.NatsBlobStore``, shared by many hosts).

The CAS store keeps a small CAS-maintained owner index (one blob per owner identity listing its active
records), so startup recovery never needs to scan keys. ``scan()`` reads everything a store holds, for the
analysis (``turnjournal.analysis``), which checks the index against the records.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from journaltools._durable import exclusive_lock, write_atomically
from journaltools.errors import JournalError, TaskNotFound
from journaltools.turnjournal.records import InvalidTurnRecord, TurnRecord

_PREFIX = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


def validate_prefix(prefix: str) -> str:
    """A CAS store's key prefix: dot-separated tokens of ``[A-Za-z0-9_-]`` (safe as key-value subject tokens)."""
    if not _PREFIX.fullmatch(prefix):
        raise JournalError(f"turnjournal key prefix {prefix!r} must be dot-separated tokens of [A-Za-z0-9_-]")
    return prefix


TurnKey = tuple[str, str]
"""(workspace_id, task_id): the identity of one parent task's record."""


class RevisionConflict(JournalError):
    """An update named a revision that is no longer current: another writer advanced the record."""

    def __init__(self, task_id: str, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(f"turnjournal task {task_id!r}: expected revision {expected}, store holds {actual}")


class TurnRecordExists(JournalError):
    """``create`` of a task that already has a record (create never replaces one)."""

    def __init__(self, task_id: str, where: str) -> None:
        self.task_id = task_id
        super().__init__(f"turnjournal task {task_id!r} already has a record in {where}")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One stored record as ``scan`` found it: decoded, or the reason it could not be (``record`` None)."""

    key: str
    raw: bytes
    record: TurnRecord | None
    problem: str | None = None

    @property
    def digest(self) -> str:
        """The key's record digest (``record_digest`` of workspace and task), known even when the bytes are not."""
        return self.key.removesuffix(".json").rsplit(".", 1)[-1]


def owner_digest(owner_identity: str) -> str:
    """The last token of an owner's index key: the SHA-256 of the owner identity."""
    return hashlib.sha256(owner_identity.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class OwnerIndex:
    """One owner's index blob: the records recovery of this owner looks at. ``owner_digest`` comes from the key,
    so an index that does not parse (``problem``) still says whose it is."""

    key: str
    owner_identity: str | None
    entries: tuple[TurnKey, ...]
    problem: str | None = None

    @property
    def owner_digest(self) -> str:
        return self.key.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class TurnScan:
    """Everything a store holds. ``indexes`` is None for a store without an owner index (the file store)."""

    records: list[StoredTurn]
    indexes: list[OwnerIndex] | None


class TurnStore(ABC):
    """The backend-neutral optimistic contract (the seed's ``Store``).

    - ``create`` stores a new record at revision 1 and refuses a task that has one (``TurnRecordExists``).
    - ``update`` needs the revision ``get``/``create`` returned: of concurrent writers naming one revision
      exactly one advances it by one; the others get ``RevisionConflict``. Identity and owner never change,
      and a terminal record is final.
    - ``list_active(owner)`` is every non-terminal record of that owner: the startup-recovery scan.
    Every record is validated (``TurnRecord.validate_rules``) before it is stored.
    """

    url: str

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

    @abstractmethod
    def scan(self) -> TurnScan:
        """Every stored record (readable or not) and, where the store keeps one, every owner index."""

    def close(self) -> None:
        """Release the store's connection, if it has one (the file stores have none)."""
        return None

    def __enter__(self) -> TurnStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stamp_new(self, record: TurnRecord) -> TurnRecord:
        now = self._now()
        stamped = record.with_changes(revision=1, created_at=now, updated_at=now)
        stamped.validate_rules()
        return stamped

    def _stamp_update(self, current: TurnRecord, record: TurnRecord) -> TurnRecord:
        if record.key() != current.key() or record.owner_identity != current.owner_identity:
            raise JournalError(f"turnjournal task {record.task_id!r}: identity and owner never change")
        if current.terminal():
            raise JournalError(
                f"turnjournal task {record.task_id!r} is {current.phase} at revision {current.revision}: "
                "a terminal record is final"
            )
        stamped = record.with_changes(
            revision=current.revision + 1, created_at=current.created_at, updated_at=self._now()
        )
        stamped.validate_rules()
        return stamped


def record_digest(workspace_id: str, task_id: str) -> str:
    """The name of a record in a store: the SHA-256 of its workspace and task (safe as a file name and a key)."""
    return hashlib.sha256(orjson.dumps([workspace_id, task_id])).hexdigest()


def _decode(key: str, raw: bytes) -> StoredTurn:
    try:
        return StoredTurn(key, raw, TurnRecord.from_bytes(raw))
    except InvalidTurnRecord as exc:
        return StoredTurn(key, raw, None, str(exc))


class FileStore(TurnStore):
    """One file per parent task. Safe across threads of one process; one writing process per directory
    (a flock on the directory's lock file serialises each transition)."""

    def __init__(self, state_dir: str | Path, now: Callable[[], datetime] = _now) -> None:
        super().__init__(now)
        self.root = Path(state_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = str(self.root)
        self._thread_lock = threading.Lock()

    def _path(self, workspace_id: str, task_id: str) -> Path:
        return self.root / f"{record_digest(workspace_id, task_id)}.json"

    def _read(self, workspace_id: str, task_id: str) -> TurnRecord:
        path = self._path(workspace_id, task_id)
        try:
            return TurnRecord.from_bytes(path.read_bytes(), where=str(path))
        except FileNotFoundError:
            raise TaskNotFound(f"turnjournal: no record for task {task_id!r} in workspace {workspace_id!r}") from None

    def create(self, record: TurnRecord) -> TurnRecord:
        with self._thread_lock, exclusive_lock(self.root / ".lock"):
            path = self._path(*record.key())
            if path.exists():
                raise TurnRecordExists(record.task_id, self.url)
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
        paths = sorted(self.root.glob("*.json"))
        records = (TurnRecord.from_bytes(path.read_bytes(), where=str(path)) for path in paths)
        return [r for r in records if r.owner_identity == owner_identity and not r.terminal()]

    def scan(self) -> TurnScan:
        return TurnScan([_decode(path.name, path.read_bytes()) for path in sorted(self.root.glob("*.json"))], None)


class CasBlobs(Protocol):
    """The compare-and-swap blob contract ``CASStore`` needs. Versions are opaque positive integers; 0 is "absent".

    ``put`` with ``expected_version=0`` creates; otherwise it replaces only the named version. It returns the new
    version, or None when the blob's version is another.
    """

    url: str

    def get(self, key: str) -> tuple[bytes, int] | None: ...

    def put(self, key: str, data: bytes, expected_version: int) -> int | None: ...

    def keys(self, prefix: str) -> list[str]:
        """Every key starting with ``prefix``, sorted."""
        ...

    def get_many(self, keys: list[str]) -> dict[str, tuple[bytes, int]]:
        """The blobs of ``keys`` that exist."""
        ...

    def close(self) -> None: ...


class MemoryBlobStore:
    """A compare-and-swap blob store in this process's memory (tests, notebooks, the ``memory`` turn store)."""

    def __init__(self, name: str = "") -> None:
        self.url = f"memory:{name}" if name else "memory"
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

    def keys(self, prefix: str) -> list[str]:
        with self._lock:
            return sorted(key for key in self._blobs if key.startswith(prefix))

    def get_many(self, keys: list[str]) -> dict[str, tuple[bytes, int]]:
        with self._lock:
            return {key: self._blobs[key] for key in keys if key in self._blobs}

    def close(self) -> None:
        """Nothing to release: the blobs live as long as this object."""


def _decode_index(key: str, raw: bytes) -> OwnerIndex:
    try:
        body: Any = orjson.loads(raw)
        entries = tuple((str(ws), str(task)) for ws, task in body["entries"])
        return OwnerIndex(key, str(body["owner"]), entries)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        return OwnerIndex(key, None, (), f"owner index {key!r} does not parse: {exc}")


class CASStore(TurnStore):
    """Many writers over a CAS blob backend (the seed's ``CASStore``).

    Layout (dot-separated, so a key-value bucket lists one part with a subject filter):
    ``<prefix>.records.<sha256 of workspace and task>`` holds one record; ``<prefix>.owners.<sha256 of owner>``
    holds ``{"owner": ..., "entries": [[workspace, task], ...]}``, the owner's active records. The index is
    changed by compare-and-swap, retried up to ``max_retries`` times when other writers change it at once,
    so no writer's entry is ever lost:

    - ``create`` adds the entry **before** writing the record: a crash in between leaves an entry without a
      record (recovery skips it; the analysis reports it), never a record recovery cannot find.
    - an update that makes a record terminal removes its entry **after** writing the record: a crash in between
      leaves an entry of a terminal record (skipped), never an active record missing from the index.
    Because a terminal record is final, an entry once removed is never needed again.
    """

    def __init__(
        self,
        blobs: CasBlobs,
        prefix: str = "turnjournal",
        max_retries: int = 16,
        now: Callable[[], datetime] = _now,
    ) -> None:
        super().__init__(now)
        self.blobs = blobs
        self.prefix = validate_prefix(prefix)
        self.max_retries = max_retries
        self.url = blobs.url

    def _key(self, workspace_id: str, task_id: str) -> str:
        return f"{self.prefix}.records.{record_digest(workspace_id, task_id)}"

    def _index_key(self, owner_identity: str) -> str:
        return f"{self.prefix}.owners.{owner_digest(owner_identity)}"

    def _change_index(self, record: TurnRecord, add: bool) -> None:
        """Add or remove the record's entry in its owner's index by compare-and-swap, with bounded retries."""
        key = self._index_key(record.owner_identity)
        entry = record.key()
        for _ in range(self.max_retries):
            stored = self.blobs.get(key)
            index = _decode_index(key, stored[0]) if stored else OwnerIndex(key, record.owner_identity, ())
            if index.problem is not None:
                raise JournalError(f"turnjournal {self.url}: {index.problem}; repair it before writing")
            if (entry in index.entries) == add:
                return
            entries = [*index.entries, entry] if add else [e for e in index.entries if e != entry]
            body = orjson.dumps({"owner": record.owner_identity, "entries": entries})
            if self.blobs.put(key, body, stored[1] if stored else 0) is not None:
                return
        raise JournalError(
            f"turnjournal owner index for {record.owner_identity!r} in {self.url}: "
            f"lost {self.max_retries} compare-and-swap retries to other writers; try again"
        )

    def create(self, record: TurnRecord) -> TurnRecord:
        stamped = self._stamp_new(record)
        self._change_index(stamped, add=True)
        if self.blobs.put(self._key(*stamped.key()), stamped.to_bytes(), 0) is None:
            raise TurnRecordExists(record.task_id, self.url)
        return stamped

    def _load(self, workspace_id: str, task_id: str) -> tuple[TurnRecord, int]:
        key = self._key(workspace_id, task_id)
        stored = self.blobs.get(key)
        if stored is None:
            raise TaskNotFound(f"turnjournal: no record for task {task_id!r} in workspace {workspace_id!r}")
        return TurnRecord.from_bytes(stored[0], where=f"{self.url} {key}"), stored[1]

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
        if stamped.terminal():
            # The update is stored either way: an entry of a terminal record is skipped by recovery, so a prune
            # that loses to other writers (or to the server) leaves only a harmless entry behind.
            with contextlib.suppress(JournalError):
                self._change_index(stamped, add=False)
        return stamped

    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        key = self._index_key(owner_identity)
        stored = self.blobs.get(key)
        index = _decode_index(key, stored[0]) if stored else OwnerIndex(key, owner_identity, ())
        if index.problem is not None:
            raise JournalError(f"turnjournal {self.url}: {index.problem}")
        keys = [self._key(*entry) for entry in index.entries]
        blobs = self.blobs.get_many(keys)  # an entry without a record: a create that crashed before writing it
        records = (TurnRecord.from_bytes(blobs[key][0], where=f"{self.url} {key}") for key in keys if key in blobs)
        return [r for r in records if r.owner_identity == owner_identity and not r.terminal()]

    def scan(self) -> TurnScan:
        records = self.blobs.get_many(self.blobs.keys(f"{self.prefix}.records."))
        indexes = self.blobs.get_many(self.blobs.keys(f"{self.prefix}.owners."))
        return TurnScan(
            [_decode(key, stored[0]) for key, stored in sorted(records.items())],
            [_decode_index(key, stored[0]) for key, stored in sorted(indexes.items())],
        )

    def close(self) -> None:
        self.blobs.close()
