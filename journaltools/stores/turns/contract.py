"""The contract every agent-harness-go turn store keeps (``TurnStore``), and the two stores behind it in their real
layouts (REAL-SYSTEM.md I.5-I.7):

- ``file.FileStore(state_dir)``: ``<state>/turn-executions/workspaces/<seg(workspace)>/tasks/<seg(task)>.json``, Go's
  indented JSON plus a newline, replaced by an atomic rename. Beyond the runtime, the staged file and its directory
  are fsynced, and a writer holds a flock on ``<state>/turn-executions/.journaltools.lock`` (the runtime relies on
  one writing process per state directory; the lock makes two journaltools writers safe too). Reads take no lock
  and create nothing, so a read-only state directory can be analysed.
- ``cas.CASStore(blobs, prefix)``: ``<prefix>/workspaces/<seg>/tasks/<seg>`` holding compact JSON, and one global
  identity index ``<prefix>/index``, over any ``BlobStore`` (Read / Create / CompareAndSwap on whole values):
  ``MemoryBlobStore``, ``DirectoryBlobStore`` (one file per key) or a JetStream key-value bucket
  (``kv``).

Every call behaves as the runtime's: the same checks in the same order, the same error classes
(``journaltools.errors.TurnJournalError`` subclasses, ``sentinel`` naming the Go error), the same bytes. Two
things are refused that the runtime would write and then never read back (``records.check_writable``), and a
record path that is a link, FIFO or directory is refused without being followed or blocking on it.

``scan()`` reads everything a store holds, readable or not, for the analysis (``audits.turns``).
"""

from __future__ import annotations

import base64
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from journaltools.errors import (
    InvalidTurnRecord,
    RevisionConflict,
    StorageError,
)
from journaltools.goencoding.json import GoJSONError
from journaltools.goencoding.time import GoTime
from journaltools.stores.turns.codec import (
    IndexRef,
    decode_record,
    parse_record,
)
from journaltools.stores.turns.records import (
    SCHEMA,
    SCHEMA_REVISION,
    Phase,
    TurnRecord,
    check_writable,
    explain_descriptor_mismatch,
    is_identifier,
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


# -- blob stores -----------------------------------------------------------------------------------------------


# -- the CAS store -------------------------------------------------------------------------------------------------


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_PREFIX",
    "Clock",
    "IndexScan",
    "StoredTurn",
    "TurnScan",
    "TurnStore",
    "path_segment",
    "system_clock",
    "why_undecodable",
]
