"""Task stores and turn-checkpoint stores by URL: the one registry for both (journal sources have their own,
``sources.registry``).

- a directory, or ``file:///abs/path``: a fisk-ai task directory (``FileTaskStore``) / an agent-harness-go state
  directory (``FileStore``, records under ``turn-executions/workspaces/``);
- ``nats://host:port/BUCKET[?replicas=N]``: ``NatsTaskStore`` (bucket ``TASKS`` by default) / a ``CASStore`` over
  the bucket (``TURNS`` by default; ``&prefix=`` is the runtime's key prefix, default
  ``agent-harness/turn-executions/v2``);
- ``blobs:DIR[?prefix=...]``: turn stores only, a ``CASStore`` over one file per blob key under DIR;
- ``memory`` or ``memory:NAME``: turn stores only, a ``CASStore`` in this process (one per NAME).

``create=False`` (the default, what the analysis commands use) refuses a store that does not exist yet instead of
making an empty one; writers pass ``create=True``. The NATS modules are imported only when a NATS store is asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from journaltools._base.urls import file_url_path, parse_url
from journaltools.errors import InvalidSource, SourceError

if TYPE_CHECKING:
    from journaltools.stores.tasks import TaskStore
    from journaltools.stores.turns.cas import MemoryBlobStore
    from journaltools.stores.turns.contract import TurnStore

_NATS_SCHEMES = frozenset({"nats", "tls", "ws", "wss"})
_memory_stores: dict[str, MemoryBlobStore] = {}
_memory_lock = threading.Lock()


def store_scheme(url: str) -> str:
    """``file``, ``nats`` or ``memory`` (anything else is returned as written, and refused by the openers)."""
    if url == "memory" or url.startswith("memory:"):
        return "memory"
    if url.startswith("blobs:"):
        return "blobs"
    if url == "embedded" or url.startswith("embedded:"):
        return "embedded"  # a journal source only: a store that vanishes with the process would hold no answers
    parsed = parse_url(url)
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # a bare path (or a Windows drive letter)
        return "file"
    return "nats" if parsed.scheme in _NATS_SCHEMES else parsed.scheme


def _directory(url: str, create: bool, what: str) -> Path:
    if not url.strip():
        raise InvalidSource(f"{url!r}: an empty path is not a {what} (give a directory, use . for this one)")
    path = Path(file_url_path(url) if url.startswith("file://") else url)
    if path.exists() and not path.is_dir():
        raise SourceError(f"{url!r}: a {what} is a directory, and this is a file")
    if not path.exists() and not create:
        raise SourceError(f"{url!r}: no {what} here (the directory does not exist)")
    return path


def _open_file_tasks(url: str, create: bool) -> TaskStore:
    from journaltools.stores.tasks import FileTaskStore

    return FileTaskStore(_directory(url, create, "task store"))


def _open_nats_tasks(url: str, create: bool) -> TaskStore:
    from journaltools.stores.tasks.kv import NatsTaskStore

    return NatsTaskStore.open(url, create=create)


def _open_file_turns(url: str, create: bool) -> TurnStore:
    from journaltools.stores.turns.file import FileStore

    return FileStore(_directory(url, create, "turn store"))


def _open_nats_turns(url: str, create: bool) -> TurnStore:
    from journaltools.stores.turns.kv import open_nats_turn_store

    return open_nats_turn_store(url, create=create)


def _open_blob_directory_turns(url: str, create: bool) -> TurnStore:
    """``blobs:DIR[?prefix=...]``: the CAS layout, one file per blob key under DIR."""
    from urllib.parse import parse_qs

    from journaltools.stores.turns.cas import CASStore, DirectoryBlobStore

    location, _, query = url.removeprefix("blobs:").partition("?")
    parameters = {name: values[-1] for name, values in parse_qs(query).items()}
    unknown = sorted(set(parameters) - {"prefix"})
    if unknown:
        raise InvalidSource(f"{url!r}: unknown parameter {unknown[0]!r} (known: prefix)")
    return CASStore(DirectoryBlobStore(_directory(location, create, "blob store")), prefix=parameters.get("prefix", ""))


def _open_memory_turns(url: str, create: bool) -> TurnStore:
    """``memory`` is a new empty store; ``memory:NAME`` is this process's store of that name (made on first use)."""
    from journaltools.stores.turns.cas import CASStore, MemoryBlobStore

    name = url.partition(":")[2]
    if not name:
        return CASStore(MemoryBlobStore())
    with _memory_lock:
        if name not in _memory_stores:
            if not create:
                raise SourceError(f"{url!r}: no turn store of that name in this process")
            _memory_stores[name] = MemoryBlobStore(name)
        return CASStore(_memory_stores[name])


_TASK_OPENERS: dict[str, Callable[[str, bool], TaskStore]] = {"file": _open_file_tasks, "nats": _open_nats_tasks}
_TURN_OPENERS: dict[str, Callable[[str, bool], TurnStore]] = {
    "file": _open_file_turns,
    "nats": _open_nats_turns,
    "memory": _open_memory_turns,
    "blobs": _open_blob_directory_turns,
}


def open_task_store(url: str | Path, *, create: bool = False) -> TaskStore:
    """The task store at ``url``: a directory (``FileTaskStore``) or ``nats://host:port/BUCKET`` (``NatsTaskStore``)."""
    text = str(url)
    opener = _TASK_OPENERS.get(store_scheme(text))
    if opener is None:
        raise InvalidSource(f"{text!r}: not a task store URL (use a directory or nats://host:port/BUCKET)")
    return opener(text, create)


def open_turn_store(url: str | Path, *, create: bool = False) -> TurnStore:
    """The turn-checkpoint store at ``url``: a state directory (``FileStore``), ``blobs:DIR``, ``memory[:NAME]``
    or ``nats://host:port/BUCKET`` (a ``CASStore`` over the bucket)."""
    text = str(url)
    opener = _TURN_OPENERS.get(store_scheme(text))
    if opener is None:
        raise InvalidSource(
            f"{text!r}: not a turn store URL (use a state directory, blobs:DIR, memory[:NAME] or "
            "nats://host:port/BUCKET)"
        )
    return opener(text, create)


__all__ = ["open_task_store", "open_turn_store", "store_scheme"]
