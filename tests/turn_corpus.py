"""The agent-harness-go turnjournal corpus (tests/corpus/turnjournal/, written by the real Go code; its MANIFEST.md
says how) and helpers that replay its calls through journaltools' stores and compare the outcomes."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journaltools.errors import JournalError, TurnJournalError
from journaltools.goencoding.json_values import Node, compact, html_escape, parse_value
from journaltools.goencoding.time import GoTime, parse_go_time
from journaltools.stores.turns.cas import CASStore, MemoryBlobStore
from journaltools.stores.turns.codec import encode_record, parse_record_node
from journaltools.stores.turns.contract import TurnStore
from journaltools.stores.turns.file import FileStore
from journaltools.stores.turns.records import TurnRecord

CORPUS = Path(__file__).parent / "corpus" / "turnjournal"
FILE_STORE = CORPUS / "file-store"


@dataclass
class Entry:
    """One line of a corpus file: the parsed JSON, and the line's bytes with its parse tree (so records embedded in
    it are read from their own bytes, number spellings and all)."""

    body: dict[str, Any]
    raw: bytes
    node: Node

    def __getitem__(self, name: str) -> Any:
        return self.body[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.body.get(name, default)

    def child(self, *path: str | int) -> Node | None:
        node: Node | None = self.node
        for step in path:
            if node is None:
                return None
            if isinstance(step, int):
                node = node.items()[step] if node.kind == "array" and step < len(node.items()) else None
            else:
                node = dict(node.pairs()).get(step) if node.kind == "object" else None
        return node

    def record(self, *path: str | int) -> TurnRecord:
        node = self.child(*path)
        assert node is not None, path
        return parse_record_node(self.raw, node)

    def raw_of(self, *path: str | int) -> bytes:
        node = self.child(*path)
        assert node is not None, path
        return self.raw[node.start : node.end]


def entries(name: str) -> list[Entry]:
    found = []
    for line in (CORPUS / name).read_bytes().splitlines():
        if line.strip():
            found.append(Entry(json.loads(line), line, parse_value(line)[0]))
    return found


def cas_blobs(store: str = "main") -> dict[str, bytes]:
    return {
        entry["key"]: base64.b64decode(entry["value_b64"])
        for entry in entries("cas-blobs.jsonl")
        if entry["store"] == store
    }


def stored_bytes(side: dict[str, Any], name: str = "stored") -> bytes | None:
    if f"{name}_b64" in side:
        return base64.b64decode(side[f"{name}_b64"])
    value = side.get(name)
    return value.encode() if isinstance(value, str) else None


class FixedClock:
    """The corpus clock: one value per call, set before it."""

    def __init__(self) -> None:
        self.moment = GoTime.zero()

    def set(self, text: str | None) -> None:
        if text:
            self.moment = parse_go_time(text)

    def __call__(self) -> GoTime:
        return self.moment


def sentinels_of(error: BaseException | None) -> list[str]:
    """The Go sentinels an error stands for, as the corpus lists them (``is``)."""
    if error is None:
        return []
    if isinstance(error, TurnJournalError):
        return [error.sentinel]
    return []


@dataclass
class Outcome:
    ok: bool
    value: Any = None
    error: BaseException | None = None

    @property
    def sentinels(self) -> list[str]:
        return sentinels_of(self.error)


def attempt(call: Any) -> Outcome:
    try:
        return Outcome(True, call())
    except JournalError as exc:
        return Outcome(False, error=exc)


def record_matches(record: TurnRecord, entry: Entry, *path: str | int) -> bool:
    """The record equals the Go ``Record`` printed at ``path`` of the entry (compared as Go's Marshal bytes)."""
    return encode_record(record) == html_escape(compact(entry.raw_of(*path)))


def copy_file_store(destination: Path) -> Path:
    shutil.copytree(FILE_STORE, destination)
    return destination


def file_tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (relative posix path → bytes), journaltools' lock left out."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".journaltools.lock"
    }


def both_stores(tmp: Path, clock: FixedClock, blobs: MemoryBlobStore | None = None) -> Iterator[tuple[str, TurnStore]]:
    yield "file", FileStore(tmp, now=clock)
    yield "cas", CASStore(blobs or MemoryBlobStore(), now=clock)
