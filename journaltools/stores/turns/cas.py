"""agent-harness-go's compare-and-swap turn store (``CASStore``) over any blob store with the runtime's contract:
in memory (``MemoryBlobStore``), one file per key (``DirectoryBlobStore``), or a JetStream key-value bucket
(``stores.turns.kv``). Of several writers, exactly one swaps each value."""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Protocol

from journaltools._base.durable import IrregularFile, create_file, exclusive_lock, read_regular_file, replace_file
from journaltools.errors import (
    CASRetryLimit,
    CorruptTurnStore,
    InvalidTurnRecord,
    RevisionConflict,
    TurnAlreadyExists,
    TurnNotFound,
)
from journaltools.goencoding.json import GoJSONError
from journaltools.stores.turns.codec import (
    INDEX_SCHEMA_VERSION,
    IndexRef,
    decode_record,
    encode_index,
    encode_record,
    parse_index,
)
from journaltools.stores.turns.contract import (
    _CORRUPT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_PREFIX,
    LOCK_NAME,
    Clock,
    IndexScan,
    StoredTurn,
    TurnScan,
    TurnStore,
    _check_lookup,
    _check_owner,
    _conflict_unless_expected,
    _sort_key,
    _storage,
    path_segment,
    why_undecodable,
)
from journaltools.stores.turns.file import _misplaced
from journaltools.stores.turns.records import (
    TurnRecord,
    check_writable,
    is_identifier,
    validate,
)


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
