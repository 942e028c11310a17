"""Test helpers over ``journaltools.samples.builder.JournalBuilder``: real-format journals in a line or two.

``journal()`` starts a run with a meta record (fixed times, the samples' fingerprint); the builder's methods
append the other nine kinds. The damage helpers turn a journal's bytes into what a crash, the Go backend's
resume or a hand edit leave behind, for the reader's and the fold's tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Fingerprint, Record
from journaltools.samples.builder import (
    JournalBuilder,
    calls_of,
    claimant,
    journal_bytes,
    provider,
    text,
    thinking,
    tool_use,
)
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.base import StoredRecord
from journaltools.sources.listing import RunSummary, summarize_stream
from journaltools.sources.registry import open_source

#: ``meta.created`` in the writer's local zone, ``claim.claimed`` in UTC, as the runtime writes them.
CREATED = "2026-11-29T10:00:00.123456789+01:00"
CLAIMED = "2026-11-29T09:15:00.5Z"
CLAIMANT = claimant("fisk", "ops-7", 4242)


def journal(
    run: str = "run-1",
    *,
    prompt: str = "hello",
    fingerprint: Fingerprint | None = None,
    interactive: bool = False,
    conversation_token: str = "",
    caller: str = "",
    version: int = 3,
) -> JournalBuilder:
    """A new journal holding only its meta record."""
    return JournalBuilder(
        run,
        prompt=prompt,
        created=CREATED,
        fingerprint=fingerprint or sample_fingerprint(),
        interactive=interactive,
        conversation_token=conversation_token,
        caller=caller,
        version=version,
    )


def completed_run(run: str = "run-1", *, calls: int = 2) -> JournalBuilder:
    """meta, one assistant turn with ``calls`` parallel calls, their results, the answer, terminal completed."""
    built = journal(run)
    if calls:
        turn = built.assistant(*(tool_use(f"toolu_{n}", "stream_info", {"n": n}) for n in range(calls)))
        for call in calls_of(turn):
            built.result(call, f"result of {call.id}")
    built.assistant(text("done"))
    built.terminal("completed")
    return built


def stored(records: Sequence[Record]) -> list[StoredRecord]:
    """Records as a file backend returns them (position = line number)."""
    return [StoredRecord(record, encode_record(record), number) for number, record in enumerate(records, start=1)]


# -- damage ------------------------------------------------------------------------------------------------------


def torn_tail(data: bytes, keep: float = 0.5) -> bytes:
    """The last line cut part way, without its newline: a crash mid-write."""
    lines = data.rstrip(b"\n").split(b"\n")
    last = lines[-1]
    return b"\n".join([*lines[:-1], last[: max(1, int(len(last) * keep))]])


def resumed_after_torn_tail(data: bytes, resumed: Sequence[Record]) -> bytes:
    """What the Go backend leaves when it resumes a torn journal: no truncation, the next record glued onto
    the torn bytes, the rest after it."""
    return torn_tail(data) + journal_bytes(resumed)


def corrupt_line(data: bytes, number: int, garbage: bytes = b"#not json") -> bytes:
    """Line ``number`` (1-based) replaced by bytes the decoder refuses."""
    lines = data.split(b"\n")
    lines[number - 1] = garbage
    return b"\n".join(lines)


def case_variant_keys(line: bytes) -> bytes:
    """A line the Go decoder reads like the original (keys match case-insensitively) but that no writer wrote."""
    return line.replace(b'{"seq":', b'{"SEQ":', 1).replace(b'"protocol":', b'"Protocol":', 1)


def two_record_listing(source: str) -> list[RunSummary]:
    """JetStream's listing rule applied to a file source, without a server: each run from its first and last
    record (a refused journal is never migrated, so it is left out)."""
    with open_source(source) as backend:
        rows = []
        for run in backend.list_runs():
            read = backend.read_run(run, strict=False)
            if read.records and read.complete:
                rows.append(summarize_stream(run, read.records[0], read.records[-1]))
    return rows


__all__ = [
    "CLAIMANT",
    "CLAIMED",
    "CREATED",
    "JournalBuilder",
    "calls_of",
    "case_variant_keys",
    "completed_run",
    "corrupt_line",
    "journal",
    "journal_bytes",
    "provider",
    "resumed_after_torn_tail",
    "stored",
    "text",
    "thinking",
    "tool_use",
    "torn_tail",
    "two_record_listing",
]
