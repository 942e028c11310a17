"""A writer of one run on a JetStream stream: each record published behind the run-wide fence, so that a second
writer is refused at its first append after another's (``AnotherWriter``), as the runtime's writers are."""

from __future__ import annotations

from typing import Protocol

from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Record
from journaltools.protocol.sequence import AppendVerdict
from journaltools.sources.base import (
    AppendOutcome,
    AppendResult,
    JournalWriter,
    raw_seq,
)
from journaltools.sources.jetstream_messages import (
    new_nonce,
)


class FencedPublisher(Protocol):
    """What a writer publishes through (``JetStreamBackend``): one record behind the writer's fence."""

    async def publish_record_async(
        self, writer: JetStreamJournalWriter, seq: int, raw: bytes
    ) -> tuple[int, AppendOutcome]: ...


class JetStreamJournalWriter(JournalWriter):
    """Appends to one run behind the run-wide fence. No lock is taken: a second writer is refused at its first
    append after another writer's (``AnotherWriter``), as the runtime's writers are."""

    def __init__(self, backend: FencedPublisher, run: str, last_seq: int, tail: int) -> None:
        self.run = run
        self.last_seq = last_seq
        #: The stream sequence of the run's last message as this writer last saw it: the fence.
        self.tail = tail
        #: One per opened journal; message ids are ``<nonce>-<seq>``.
        self.nonce = new_nonce()
        self._backend = backend
        self._closed = False

    def msg_id(self, seq: int) -> str:
        return f"{self.nonce}-{seq}"

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"writer for run {self.run!r} is closed")

    async def append_async(self, record: Record) -> AppendResult:
        self._check_open()
        if self.verdict(record.seq) is AppendVerdict.DUPLICATE:
            return AppendResult(record.seq, AppendOutcome.DUPLICATE)
        return await self._store(record.seq, encode_record(record))

    async def append_raw_async(self, raw: bytes) -> AppendResult:
        self._check_open()
        seq = raw_seq(self.run, raw)
        if self.verdict(seq) is AppendVerdict.DUPLICATE:
            return AppendResult(seq, AppendOutcome.DUPLICATE)
        return await self._store(seq, raw)

    async def _store(self, seq: int, raw: bytes) -> AppendResult:
        """Publish behind the fence; ``last_seq`` and the tail move only after the ack (or an adopted one)."""
        sequence, outcome = await self._backend.publish_record_async(self, seq, raw)
        self.tail = sequence
        self.last_seq = seq
        return AppendResult(seq, outcome)

    async def aclose(self) -> None:
        self._closed = True
