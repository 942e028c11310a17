"""Small record builders for tests: readable journals without repeating envelopes."""

from __future__ import annotations

from typing import Any

from journaltools.backends.base import RunSummary
from journaltools.backends.registry import open_source
from journaltools.listing import summarize_two_records
from journaltools.protocol.records import RawRecord, decode_record, encode_record
from journaltools.samples import sample_fingerprint

TS = "2026-11-29T10:00:00.000000Z"


class JournalBuilder:
    """Appends records with consecutive seqs; ``raw()`` gives RawRecords, ``bytes()`` the file content."""

    def __init__(self, run: str = "run-1", *, meta: bool = True) -> None:
        self.run = run
        self.seq = 0
        self.bodies: list[dict[str, Any]] = []
        if meta:
            self.add("meta", version=1, fingerprint=sample_fingerprint())

    def add(self, kind: str, *, seq: int | None = None, **payload: Any) -> JournalBuilder:
        self.seq = seq if seq is not None else self.seq + 1
        self.bodies.append({"type": kind, "run": self.run, "seq": self.seq, "ts": TS, **payload})
        return self

    def user(self, content: Any = "hello") -> JournalBuilder:
        return self.add("user", content=content)

    def assistant(self, *calls: str, text: str = "ok", tokens: int = 10) -> JournalBuilder:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "tool_use", "id": call, "name": "tool", "input": {"n": i}} for i, call in enumerate(calls)]
        return self.add(
            "assistant",
            content=content,
            stop_reason="tool_use" if calls else "end_turn",
            usage={"input_tokens": tokens, "output_tokens": tokens},
        )

    def result(self, call: str, content: str = "done", is_error: bool = False) -> JournalBuilder:
        payload: dict[str, Any] = {"call": call, "content": content}
        if is_error:
            payload["is_error"] = True
        return self.add("tool_result", **payload)

    def raw(self) -> list[RawRecord]:
        return [decode_record(encode_record(body), index + 1) for index, body in enumerate(self.bodies)]

    def bytes(self) -> bytes:
        return b"".join(encode_record(body) + b"\n" for body in self.bodies)


def two_record_listing(source: str) -> list[RunSummary]:
    """JetStream's listing rule applied to a file source, without a server: each run from its first and last record."""
    with open_source(source) as backend:
        rows = []
        for run in backend.list_runs():
            read = backend.read_run(run, strict=False)
            if read.records and read.complete:  # a corrupt journal is never migrated
                rows.append(summarize_two_records(run, read.records[0], read.records[-1]))
    return rows
