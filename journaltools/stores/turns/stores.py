"""The agent-harness-go turn stores in their real layouts (REAL-SYSTEM.md I.5-I.7), behind one contract.

- ``FileStore(state_dir)``: ``<state>/turn-executions/workspaces/<seg(workspace)>/tasks/<seg(task)>.json``, Go's
  indented JSON plus a newline, replaced by an atomic rename. Beyond the runtime, the staged file and its directory
  are fsynced, and a writer holds a flock on ``<state>/turn-executions/.journaltools.lock`` (the runtime relies on
  one writing process per state directory; the lock makes two journaltools writers safe too). Reads take no lock
  and create nothing, so a read-only state directory can be analysed.
- ``CASStore(blobs, prefix)``: ``<prefix>/workspaces/<seg>/tasks/<seg>`` holding compact JSON, and one global
  identity index ``<prefix>/index``, over any ``BlobStore`` (Read / Create / CompareAndSwap on whole values):
  ``MemoryBlobStore``, ``DirectoryBlobStore`` (one file per key) or a JetStream key-value bucket
  (``turnjournal.kv``).

Every call behaves as the runtime's: the same checks in the same order, the same error classes
(``journaltools.errors.TurnJournalError`` subclasses, ``sentinel`` naming the Go error), the same bytes. Two
things are refused that the runtime would write and then never read back (``records.check_writable``), and a
record path that is a link, FIFO or directory is refused without being followed or blocking on it.

``scan()`` reads everything a store holds, readable or not, for the analysis (``turnjournal.analysis``).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from journaltools._base.durable import IrregularFile, create_file, exclusive_lock, read_regular_file, replace_file
from journaltools.errors import (
    CASRetryLimit,
    CorruptTurnStore,
    InvalidSource,
    InvalidTurnRecord,
    RevisionConflict,
    StorageError,
    TurnAlreadyExists,
    TurnNotFound,
)
from journaltools.goencoding.json import GoJSONError
from journaltools.goencoding.time import GoTime
from journaltools.stores.turns.records import (
    INDEX_SCHEMA_VERSION,
    SCHEMA,
    SCHEMA_REVISION,
    IndexRef,
    Phase,
    TurnRecord,
    check_writable,
    decode_record,
    encode_index,
    encode_record,
    encode_record_indented,
    explain_descriptor_mismatch,
    is_identifier,
    parse_index,
    parse_record,
    validate,
    validate_transition,
)

DEFAULT_PREFIX: Final = "agent-harness/turn-executions/v2"
DEFAULT_MAX_RETRIES: Final = 32
LOCK_NAME: Final = ".journaltools.lock"
_CORRUPT: Final = "turnjournal: corrupt execution store"

Clock = Callable[[], GoTime]


def system_clock() -> GoTime:
    return GoTime(time.time_ns())


def path_segment(identifier: str) -> str:
    """``workspace.PathSegment``: unpadded URL-safe base64 of the UTF-8 bytes; ``empty`` for ``""``; above 160
    characters, ``sha256-`` and the hex SHA-256 of the id."""
    raw = identifier.encode("utf-8", "surrogatepass")
    encoded = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if not encoded:
        return "empty"
    if len(encoded) <= 160:
        return encoded
    return "sha256-" + hashlib.sha256(raw).hexdigest()


def _check_lookup(workspace_id: str, task_id: str) -> None:
    for name, value in (("workspace_id", workspace_id), ("task_id", task_id)):
        if not is_identifier(value):
            raise InvalidTurnRecord(f"turnjournal: invalid execution record: invalid {name} {value[:80]!r}")


def _check_owner(owner_identity: str) -> None:
    if not is_identifier(owner_identity):
        raise InvalidTurnRecord(f"turnjournal: invalid execution record: invalid owner_identity {owner_identity!r}")


def _sort_key(record: TurnRecord) -> tuple[str, str, str]:
    return (record.workspace_id, record.session_id, record.task_id)


def why_undecodable(data: bytes) -> str | None:
    """Why the runtime's decoder refuses these record bytes (with the runtime's own trap explained), or None."""
    try:
        decode_record(data)
    except (GoJSONError, InvalidTurnRecord) as exc:
        why = str(exc)
        if "descriptor digest mismatch" in why:
            try:
                record = parse_record(data)
            except GoJSONError:
                return why
            for call in record.calls():
                explained = explain_descriptor_mismatch(call.external) if call.external is not None else None
                if explained is not None:
                    return f"{why}: call {call.invocation_id!r}: {explained}"
        return why
    return None


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One stored record as ``scan`` found it: ``location`` (path relative to the state directory, or the blob
    key), its bytes (None when it is not a regular file), the record when the runtime can read it, and otherwise
    the ``problem``. ``record`` may be set with a ``problem`` when the bytes decode but sit at the wrong path."""

    location: str
    raw: bytes | None
    record: TurnRecord | None
    problem: str | None = None

    @property
    def readable(self) -> bool:
        return self.record is not None and self.problem is None


@dataclass(frozen=True, slots=True)
class IndexScan:
    """The CAS store's index blob: its bytes (None when absent), its refs, and why the runtime refuses it."""

    key: str
    raw: bytes | None
    refs: list[IndexRef]
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class TurnScan:
    """Everything a store holds. ``index`` is None for a store without one (the file store)."""

    records: list[StoredTurn]
    index: IndexScan | None


class TurnStore(ABC):
    """The runtime's ``Store`` contract: ``create`` / ``get`` / ``update`` / ``list_active``, plus ``scan``.

    - ``create`` needs revision 0, stamps schema, revision 1 and both times (``now``, UTC, nanoseconds), clears
      ``completed_at`` and ``failure_reason``, defaults an empty phase to ``prepared``, and refuses an existing task.
    - ``update(record, expected_revision)`` needs the revision ``get``/``create`` returned, both as the argument and
      in the record: of concurrent writers naming one revision exactly one advances it; the others get
      ``RevisionConflict``. The transition rules and ``validate`` hold for the stored result.
    - ``list_active(owner)`` is every non-terminal record of that owner (outbox phases included), sorted by
      workspace, session, task; one record the runtime cannot read fails the whole call (``CorruptTurnStore``).
    """

    url: str

    def __init__(self, now: Clock | None = None) -> None:
        self._now = now or system_clock

    @abstractmethod
    def create(self, record: TurnRecord) -> TurnRecord: ...

    @abstractmethod
    def get(self, workspace_id: str, task_id: str) -> TurnRecord: ...

    @abstractmethod
    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord: ...

    @abstractmethod
    def list_active(self, owner_identity: str) -> list[TurnRecord]: ...

    @abstractmethod
    def scan(self) -> TurnScan:
        """Every stored record (readable or not) and, where the store keeps one, its index."""

    def close(self) -> None:
        """Release the store's connection, if it has one."""
        return None

    def __enter__(self) -> TurnStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stamp_new(self, record: TurnRecord) -> TurnRecord:
        if record.revision != 0:
            raise InvalidTurnRecord("turnjournal: invalid execution record: create requires zero revision")
        now = self._now().utc()
        return record.with_changes(
            schema=SCHEMA,
            schema_revision=SCHEMA_REVISION,
            revision=1,
            created_at=now,
            updated_at=now,
            completed_at=None,
            failure_reason="",
            phase=record.phase or Phase.PREPARED.value,
        )

    def _next(self, current: TurnRecord, record: TurnRecord, expected_revision: int) -> TurnRecord:
        """The record ``update`` stores: stamped as the runtime stamps it, transition-checked and validated."""
        updated = self._now().utc()
        if updated.before(current.updated_at):
            updated = current.updated_at  # a clock behind the stored record never moves updated_at backwards
        following = record.with_changes(
            schema=SCHEMA,
            schema_revision=SCHEMA_REVISION,
            revision=expected_revision + 1,
            created_at=current.created_at,
            updated_at=updated,
        )
        if following.terminal():
            following = following.with_changes(completed_at=updated)
        else:
            keeps_reason = following.phase in (Phase.FAILING, Phase.INTERRUPTING)
            following = following.with_changes(
                completed_at=None, failure_reason=following.failure_reason if keeps_reason else ""
            )
        validate_transition(current, following)
        validate(following)
        check_writable(following)
        return following


def _conflict_unless_expected(record: TurnRecord, expected_revision: int) -> None:
    if expected_revision == 0 or record.revision != expected_revision:
        raise RevisionConflict(
            f"turnjournal: revision conflict: task {record.task_id!r}: expected revision {expected_revision}, "
            f"the record given holds {record.revision}"
        )


def _storage(exc: OSError, path: Path, doing: str) -> StorageError:
    return StorageError(
        str(path), doing, exc.strerror or type(exc).__name__, "check the path and its permissions", exc.errno
    )


class FileStore(TurnStore):
    """The runtime's file store on ``state_dir`` (which need not exist until the first write)."""

    def __init__(self, state_dir: str | os.PathLike[str], now: Clock | None = None) -> None:
        super().__init__(now)
        if not os.fspath(state_dir):
            raise InvalidSource("turnjournal: a state directory is required (give a path; . for this one)")
        self.state_dir = Path(os.path.normpath(os.fspath(state_dir)))
        self.url = str(self.state_dir)
        self._mutex = threading.Lock()

    @property
    def root(self) -> Path:
        return self.state_dir / "turn-executions" / "workspaces"

    def path(self, workspace_id: str, task_id: str) -> Path:
        return self.root / path_segment(workspace_id) / "tasks" / f"{path_segment(task_id)}.json"

    @contextmanager
    def _writing(self) -> Iterator[None]:
        lock_dir = self.state_dir / "turn-executions"
        try:
            lock_dir.mkdir(parents=True, exist_ok=True)
            with self._mutex, exclusive_lock(lock_dir / LOCK_NAME):
                yield
        except IrregularFile as exc:
            raise CorruptTurnStore(f"{_CORRUPT}: {exc}; move it away") from None
        except OSError as exc:
            raise _storage(exc, lock_dir, "lock the turn store") from None

    def _read(self, path: Path) -> bytes | None:
        try:
            return read_regular_file(path)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        except IrregularFile as exc:
            raise CorruptTurnStore(f"{_CORRUPT}: {exc}; records are never read through it") from None
        except OSError as exc:
            raise _storage(exc, path, "read the turn record") from None

    def _load(self, workspace_id: str, task_id: str) -> TurnRecord:
        path = self.path(workspace_id, task_id)
        data = self._read(path)
        if data is None:
            raise TurnNotFound(f"turnjournal: execution not found: workspace {workspace_id!r} task {task_id!r}")
        why = why_undecodable(data)
        if why is not None:
            raise CorruptTurnStore(f"{_CORRUPT}: decode {path}: {why}")
        record = decode_record(data)
        if record.key() != (workspace_id, task_id):
            raise CorruptTurnStore(f"{_CORRUPT}: {path}: stored execution identity does not match")
        return record

    def _persist(self, record: TurnRecord) -> None:
        path = self.path(record.workspace_id, record.task_id)
        try:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            replace_file(path, encode_record_indented(record))
        except OSError as exc:
            raise _storage(exc, path, "write the turn record") from None

    def create(self, record: TurnRecord) -> TurnRecord:
        if record.revision != 0:
            self._stamp_new(record)  # raises: create requires zero revision
        with self._writing():
            path = self.path(record.workspace_id, record.task_id)
            if os.path.lexists(path):
                raise TurnAlreadyExists(f"turnjournal: execution already exists: {path}")
            stamped = self._stamp_new(record)
            validate(stamped)
            check_writable(stamped)
            self._persist(stamped)
            return stamped

    def get(self, workspace_id: str, task_id: str) -> TurnRecord:
        _check_lookup(workspace_id, task_id)
        return self._load(workspace_id, task_id)

    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord:
        _conflict_unless_expected(record, expected_revision)
        with self._writing():
            current = self._load(record.workspace_id, record.task_id)
            if current.revision != expected_revision:
                raise RevisionConflict(
                    f"turnjournal: revision conflict: task {record.task_id!r}: expected revision "
                    f"{expected_revision}, the store holds {current.revision}"
                )
            following = self._next(current, record, expected_revision)
            self._persist(following)
            return following

    def _candidates(self) -> Iterator[Path]:
        """The paths ListActive decodes: every ``*.json`` whose parent directory is named ``tasks`` anywhere under
        the root, in lexical walk order; links are yielded (to be refused), never descended into."""

        def walk(directory: Path) -> Iterator[Path]:
            try:
                entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
            except FileNotFoundError:
                return
            except NotADirectoryError:
                return
            except OSError as exc:
                raise _storage(exc, directory, "list the turn store") from None
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    yield from walk(Path(entry.path))
                elif entry.name.endswith(".json") and directory.name == "tasks":
                    yield Path(entry.path)

        yield from walk(self.root)

    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        _check_owner(owner_identity)
        records = []
        with self._mutex:
            for path in self._candidates():
                data = self._read(path)
                if data is None:
                    continue  # removed while walking
                why = why_undecodable(data)
                if why is not None:
                    raise CorruptTurnStore(f"{_CORRUPT}: decode {path}: {why}")
                record = decode_record(data)
                if path != self.path(record.workspace_id, record.task_id):
                    raise CorruptTurnStore(f"{_CORRUPT}: {path}: stored execution path does not match identity")
                if record.owner_identity == owner_identity and not record.terminal():
                    records.append(record)
        return sorted(records, key=_sort_key)

    def scan(self) -> TurnScan:
        stored = []
        for path in self._candidates():
            location = path.relative_to(self.state_dir).as_posix()
            try:
                data = read_regular_file(path)
            except FileNotFoundError:
                continue
            except IrregularFile as exc:
                irregular = f"it is {exc.kind}, not a regular file: the runtime would read through it or fail on it"
                stored.append(StoredTurn(location, None, None, irregular))
                continue
            except OSError as exc:
                stored.append(StoredTurn(location, None, None, f"cannot be read: {exc.strerror}"))
                continue
            why = why_undecodable(data)
            if why is not None:
                stored.append(StoredTurn(location, data, None, why))
                continue
            record = decode_record(data)
            expected = self.path(record.workspace_id, record.task_id)
            if path != expected:
                stored.append(StoredTurn(location, data, record, _misplaced(record, expected, self.state_dir)))
            else:
                stored.append(StoredTurn(location, data, record))
        return TurnScan(stored, None)


def _misplaced(record: TurnRecord, expected: Path | str, base: Path | None = None) -> str:
    shown = expected.relative_to(base).as_posix() if isinstance(expected, Path) and base is not None else expected
    why = (
        f"its ids belong at {shown}: the runtime's ListActive fails for every owner on it, and Get by its ids "
        "does not find it"
    )
    if "\ufffd" in record.workspace_id + record.task_id:
        why += (
            " (its id holds U+FFFD: it was created with an id that was not valid UTF-8, which the runtime stores "
            "as U+FFFD under a path made from the original bytes)"
        )
    return why


# -- blob stores -----------------------------------------------------------------------------------------------


class BlobStore(Protocol):
    """``casblob.Store``: whole values under string keys.

    ``read`` is the value or None; ``create`` stores only when the key is absent (False otherwise);
    ``compare_and_swap`` replaces only when the key's whole current value equals ``expected`` (False otherwise).
    ``keys`` (for the analysis only; the runtime never lists keys) is every key starting with ``prefix``."""

    url: str

    def read(self, key: str) -> bytes | None: ...

    def create(self, key: str, value: bytes) -> bool: ...

    def compare_and_swap(self, key: str, expected: bytes, value: bytes) -> bool: ...

    def keys(self, prefix: str) -> list[str]: ...

    def close(self) -> None: ...


class MemoryBlobStore:
    """Blobs in this process's memory (tests, notebooks, the ``memory`` turn store)."""

    def __init__(self, name: str = "", blobs: dict[str, bytes] | None = None) -> None:
        self.url = f"memory:{name}" if name else "memory"
        self._blobs: dict[str, bytes] = dict(blobs or {})
        self._lock = threading.Lock()

    def read(self, key: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(key)

    def create(self, key: str, value: bytes) -> bool:
        with self._lock:
            if key in self._blobs:
                return False
            self._blobs[key] = bytes(value)
            return True

    def compare_and_swap(self, key: str, expected: bytes, value: bytes) -> bool:
        with self._lock:
            if self._blobs.get(key) != expected:
                return False
            self._blobs[key] = bytes(value)
            return True

    def keys(self, prefix: str) -> list[str]:
        with self._lock:
            return sorted(key for key in self._blobs if key.startswith(prefix))

    def snapshot(self) -> dict[str, bytes]:
        with self._lock:
            return dict(self._blobs)

    def close(self) -> None:
        """Nothing to release: the blobs live as long as this object."""


class DirectoryBlobStore:
    """One regular file per key under ``root`` (the key's ``/`` parts are directories), for a CAS store on a
    local disk shared by several processes: ``create`` hard-links a staged file into place, ``compare_and_swap``
    compares and renames under a flock on ``root/.journaltools.lock``; values are fsynced."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.url = f"blobs:{self.root}"

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(part in ("", ".", "..") or "\x00" in part or part == LOCK_NAME for part in parts):
            raise InvalidTurnRecord(f"blob key {key!r} cannot name a file (empty, '.' or '..' parts)")
        return self.root.joinpath(*parts)

    def read(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return read_regular_file(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IrregularFile as exc:
            raise CorruptTurnStore(f"{_CORRUPT}: blob {key!r}: {exc}") from None
        except OSError as exc:
            raise _storage(exc, path, "read the blob") from None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with exclusive_lock(self.root / LOCK_NAME):
                yield
        except IrregularFile as exc:
            raise CorruptTurnStore(f"{_CORRUPT}: {exc}; move it away") from None

    def create(self, key: str, value: bytes) -> bool:
        path = self._path(key)
        try:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            create_file(path, value, staging_prefix=f".{path.name}.")
        except FileExistsError:
            return False
        except OSError as exc:
            raise _storage(exc, path, "create the blob") from None
        return True

    def compare_and_swap(self, key: str, expected: bytes, value: bytes) -> bool:
        path = self._path(key)
        with self._locked():
            if self.read(key) != expected:
                return False
            try:
                replace_file(path, value, staging_prefix=f".{path.name}.")
            except OSError as exc:
                raise _storage(exc, path, "write the blob") from None
            return True

    def keys(self, prefix: str) -> list[str]:
        found = []
        for directory, names, files in os.walk(self.root):
            names[:] = sorted(name for name in names if not name.startswith("."))
            for name in files:
                if name.startswith("."):
                    continue  # the lock and staging files
                key = Path(directory, name).relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    found.append(key)
        return sorted(found)

    def close(self) -> None:
        """Nothing to release."""


# -- the CAS store -------------------------------------------------------------------------------------------------

#: ``unicode.IsSpace``: what Go's ``strings.TrimSpace`` trims.
_TRIMMED: Final = "\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def normalize_prefix(prefix: str) -> str:
    """The runtime's prefix rule: white space trimmed, then ``/`` trimmed; empty means the default prefix."""
    return prefix.strip(_TRIMMED).strip("/") or DEFAULT_PREFIX


class CASStore(TurnStore):
    """The runtime's CAS store over ``blobs``: one compact record blob per task and one global, sorted, only
    growing index of (workspace, task, owner) refs. Create indexes first, then creates the record (a crash can
    leave a ref to a missing record, never a record recovery cannot find); Update swaps the record against the
    exact bytes it read. ``max_retries`` (default 32) bounds the index retries against other writers."""

    def __init__(self, blobs: BlobStore, prefix: str = "", max_retries: int = 0, now: Clock | None = None) -> None:
        super().__init__(now)
        self.blobs = blobs
        self.prefix = normalize_prefix(prefix)
        self.max_retries = max_retries if max_retries > 0 else DEFAULT_MAX_RETRIES
        self.url = blobs.url

    def key(self, workspace_id: str, task_id: str) -> str:
        return f"{self.prefix}/workspaces/{path_segment(workspace_id)}/tasks/{path_segment(task_id)}"

    @property
    def index_key(self) -> str:
        return f"{self.prefix}/index"

    def _read_record(self, workspace_id: str, task_id: str) -> tuple[bytes, TurnRecord] | None:
        _check_lookup(workspace_id, task_id)
        key = self.key(workspace_id, task_id)
        raw = self.blobs.read(key)
        if raw is None:
            return None
        if not raw:
            raise CorruptTurnStore(f"{_CORRUPT}: {key}: distributed execution is empty")
        why = why_undecodable(raw)
        if why is not None:
            raise CorruptTurnStore(f"{_CORRUPT}: decode distributed execution {key}: {why}")
        record = decode_record(raw)
        if record.key() != (workspace_id, task_id):
            raise CorruptTurnStore(f"{_CORRUPT}: {key}: distributed execution identity does not match")
        return raw, record

    def read_index(self) -> tuple[bytes | None, list[IndexRef]]:
        """The index blob's bytes (None when absent) and its refs; ``CorruptTurnStore`` when the runtime would
        refuse it."""
        raw = self.blobs.read(self.index_key)
        if raw is None:
            return None, []
        problem = index_problem(raw)
        if problem is not None:
            raise CorruptTurnStore(f"{_CORRUPT}: {self.index_key}: {problem}")
        return raw, parse_index(raw)[1]

    def _ensure_indexed(self, ref: IndexRef) -> None:
        for _ in range(self.max_retries):
            previous, refs = self.read_index()
            position = bisect.bisect_left([(r.workspace_id, r.task_id) for r in refs], (ref.workspace_id, ref.task_id))
            if position < len(refs) and (refs[position].workspace_id, refs[position].task_id) == (
                ref.workspace_id,
                ref.task_id,
            ):
                if refs[position].owner_identity != ref.owner_identity:
                    raise RevisionConflict(
                        f"turnjournal: revision conflict: indexed execution owner differs (task {ref.task_id!r} is "
                        f"indexed for {refs[position].owner_identity!r})"
                    )
                return
            encoded = encode_index([*refs[:position], ref, *refs[position:]])
            if previous is None:
                committed = self.blobs.create(self.index_key, encoded)
            else:
                committed = self.blobs.compare_and_swap(self.index_key, previous, encoded)
            if committed:
                return
        raise CASRetryLimit(
            f"turnjournal: distributed update retry limit exceeded: index {self.index_key!r} after "
            f"{self.max_retries} attempts"
        )

    def create(self, record: TurnRecord) -> TurnRecord:
        stamped = self._stamp_new(record)
        validate(stamped)
        check_writable(stamped)
        self._ensure_indexed(IndexRef(stamped.workspace_id, stamped.task_id, stamped.owner_identity))
        if not self.blobs.create(self.key(stamped.workspace_id, stamped.task_id), encode_record(stamped)):
            raise TurnAlreadyExists(f"turnjournal: execution already exists: {self.key(*stamped.key())}")
        return stamped

    def get(self, workspace_id: str, task_id: str) -> TurnRecord:
        found = self._read_record(workspace_id, task_id)
        if found is None:
            raise TurnNotFound(f"turnjournal: execution not found: workspace {workspace_id!r} task {task_id!r}")
        return found[1]

    def update(self, record: TurnRecord, expected_revision: int) -> TurnRecord:
        _conflict_unless_expected(record, expected_revision)
        found = self._read_record(record.workspace_id, record.task_id)
        if found is None:
            raise TurnNotFound(
                f"turnjournal: execution not found: workspace {record.workspace_id!r} task {record.task_id!r}"
            )
        previous, current = found
        if current.revision != expected_revision:
            raise RevisionConflict(
                f"turnjournal: revision conflict: task {record.task_id!r}: expected revision {expected_revision}, "
                f"the store holds {current.revision}"
            )
        following = self._next(current, record, expected_revision)
        if not self.blobs.compare_and_swap(self.key(*following.key()), previous, encode_record(following)):
            raise RevisionConflict(
                f"turnjournal: revision conflict: task {record.task_id!r}: another writer replaced revision "
                f"{expected_revision}"
            )
        return following

    def list_active(self, owner_identity: str) -> list[TurnRecord]:
        _check_owner(owner_identity)
        records = []
        for ref in self.read_index()[1]:
            found = self._read_record(ref.workspace_id, ref.task_id)
            if found is None:
                continue  # a create that crashed between the index and the record
            record = found[1]
            if record.owner_identity != ref.owner_identity:
                raise CorruptTurnStore(f"{_CORRUPT}: distributed index owner does not match record {ref.task_id!r}")
            if ref.owner_identity == owner_identity and not record.terminal():
                records.append(record)
        return sorted(records, key=_sort_key)

    def scan(self) -> TurnScan:
        raw_index = self.blobs.read(self.index_key)
        if raw_index is None:
            index = IndexScan(self.index_key, None, [])
        else:
            problem = index_problem(raw_index)
            index = IndexScan(self.index_key, raw_index, parse_index(raw_index)[1] if problem is None else [], problem)
        records = []
        head = f"{self.prefix}/workspaces/"
        for key in self.blobs.keys(head):
            parts = key[len(head) :].split("/")
            if len(parts) != 3 or parts[1] != "tasks":
                continue  # not a record key of this layout
            raw = self.blobs.read(key)
            if raw is None:
                continue
            why = "the blob is empty" if not raw else why_undecodable(raw)
            if why is not None:
                records.append(StoredTurn(key, raw, None, why))
                continue
            record = decode_record(raw)
            expected = self.key(record.workspace_id, record.task_id)
            problem = None if key == expected else _misplaced(record, expected)
            records.append(StoredTurn(key, raw, record, problem))
        return TurnScan(records, index)

    def close(self) -> None:
        self.blobs.close()


def index_problem(raw: bytes) -> str | None:
    """Why the runtime refuses this index blob (empty, undecodable, unsupported schema, an invalid ref, not
    strictly sorted), or None."""
    if not raw:
        return "distributed execution index is empty"
    try:
        version, refs = parse_index(raw)
    except GoJSONError as exc:
        return f"decode distributed execution index: {exc}"
    if version != INDEX_SCHEMA_VERSION:
        return "distributed execution index schema is unsupported"
    for position, ref in enumerate(refs):
        for name in ("workspace_id", "task_id", "owner_identity"):
            if not is_identifier(getattr(ref, name)):
                return f"ref {position}: invalid {name} {getattr(ref, name)!r}"
        if position and (refs[position - 1].workspace_id, refs[position - 1].task_id) >= (
            ref.workspace_id,
            ref.task_id,
        ):
            return f"distributed execution index is not strictly sorted (at ref {position})"
    return None


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_PREFIX",
    "BlobStore",
    "CASStore",
    "Clock",
    "DirectoryBlobStore",
    "FileStore",
    "IndexScan",
    "MemoryBlobStore",
    "StoredTurn",
    "TurnScan",
    "TurnStore",
    "index_problem",
    "normalize_prefix",
    "path_segment",
    "system_clock",
    "why_undecodable",
]
