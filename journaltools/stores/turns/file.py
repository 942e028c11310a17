"""agent-harness-go's file turn store: one JSON file per record under ``turn-executions/workspaces/``, the owner
index beside them, written and read as the runtime's ``FileStore`` writes and reads them."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from journaltools._base.durable import IrregularFile, exclusive_lock, read_regular_file, replace_file
from journaltools.errors import (
    CorruptTurnStore,
    InvalidSource,
    RevisionConflict,
    TurnAlreadyExists,
    TurnNotFound,
)
from journaltools.stores.turns.codec import (
    decode_record,
    encode_record_indented,
)
from journaltools.stores.turns.contract import (
    _CORRUPT,
    LOCK_NAME,
    Clock,
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
from journaltools.stores.turns.records import (
    TurnRecord,
    check_writable,
    validate,
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
