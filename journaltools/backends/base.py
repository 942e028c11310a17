"""The backend contract: what both the file and the JetStream backends do, written once as ``async def``.

Backends only move bytes. Each async method has a blocking twin (``read_run`` / ``read_run_async``)
that runs it on the process-wide background loop (see ``journaltools.aio``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from journaltools.aio import run_sync
from journaltools.errors import RecordRefused
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import (
    PROTOCOL_VERSION,
    MetaRecord,
    RawRecord,
    check_record,
    decode_record,
    encode_record,
    validate_record,
)
from journaltools.protocol.runid import validate_run_id


@dataclass(slots=True)
class RunRead:
    """One run as read from a backend. ``complete`` is False when the journal was refused (a corrupt or
    over-long line): ``records`` then holds the lines that parse and ``findings`` one finding per line that
    does not, but the run must not be folded or copied as if whole."""

    run: str
    records: list[RawRecord]
    findings: list[Finding] = field(default_factory=list)
    source: str = ""
    complete: bool = True


ListingStatus = Literal["failed", "cancelled", "suspended", "open", "completed", "invalid"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One row of a listing (``ls --json``). ``records`` is None where the backend does not count them.
    ``findings``: why a row is ``invalid`` when the journal could not be read at all (shown, not in the JSON).

    Beyond the ``ls`` columns, a row carries what a comparison of two listings needs to tell *why* they
    differ (``journaltools.compare``): the digests of the first and last record, so two sides can be shown
    to hold the same records, and the status JetStream's two-record rule gives on this run's own first and
    last record, so a difference that rule alone causes can be recognised as such.
    """

    run: str
    status: ListingStatus
    created: str | None
    last_seq: int
    records: int | None
    model: str | None
    last_type: str | None = None
    last_has_calls: bool = False
    findings: tuple[Finding, ...] = ()
    first_sha256: str | None = None
    """SHA-256 (hex) of the first record's bytes; None when the listing did not read it."""
    last_sha256: str | None = None
    """SHA-256 (hex) of the last record's bytes; None when the listing did not read it."""
    two_record_status: ListingStatus | None = None
    """What ``listing.summarize_two_records`` says on this run's own first and last record: the JetStream
    listing's status itself, or for the file listing the status JetStream would list the same records with.
    None when the run was not read whole (a corrupt journal), so no rule can be applied to its records."""
    problem: str | None = None
    """Why the listing says ``invalid``, in one line (the first error found); None for any other status."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "status": self.status,
            "created": self.created,
            "last_seq": self.last_seq,
            "records": self.records,
            "model": self.model,
        }


class AppendVerdictTaken(Enum):
    STORED = "stored"
    DUPLICATE = "duplicate"
    ADOPTED = "adopted"  # JetStream: the ack was lost but the server holds our message


@dataclass(frozen=True, slots=True)
class AppendResult:
    seq: int
    outcome: AppendVerdictTaken


def prepare_record(run: str, last_seq: int, record: bytes | dict[str, Any]) -> RawRecord:
    """Validate a record before any write: its shape, its run, and meta-first with the exact version.

    Unlike the source system, journaltools' writers validate what they write; the audits still
    check stored journals because other writers may not.
    """
    raw = record if isinstance(record, bytes) else encode_record(record)
    if b"\n" in raw:
        raise RecordRefused(run, None, "schema_violation", "a record must be one line (its bytes contain a newline)")
    try:
        parsed = decode_record(raw)
    except ValueError as exc:
        raise RecordRefused(run, None, "schema_violation", f"not one JSON object: {exc}") from None
    problem = check_record(parsed)  # the models' hand-written twins; pydantic only to word a refusal
    if problem is not None:
        raise RecordRefused(run, problem.seq, problem.code, problem.message)
    seq = parsed.seq
    if parsed.run != run:
        raise RecordRefused(run, seq, "run_mismatch", f"record names run {parsed.run!r}")
    if seq == 1 or last_seq == 0:
        validated = validate_record(parsed)  # a meta: once per journal
        if not isinstance(validated, MetaRecord) or seq != 1:
            raise RecordRefused(run, seq, "not_meta_first", "a journal starts with meta at seq 1")
        if validated.version != PROTOCOL_VERSION:
            raise RecordRefused(
                run, 1, "version_mismatch", f"meta.version {validated.version} is not {PROTOCOL_VERSION}"
            )
    elif parsed.type == "meta":
        raise RecordRefused(run, seq, "not_meta_first", "meta is only ever seq 1")
    return parsed


def prepare_raw_record(run: str, record: bytes) -> RawRecord:
    """Check a stored record for a verbatim copy: one line, one JSON object, naming ``run``, with an integer seq.

    Migration writes through this instead of ``prepare_record``: a copy must keep what a journal holds, so the
    payload schema (and meta-first, and the version) are not checked here; the audits report those. What a
    writer needs to place the record is still enforced: its bytes are one line, it belongs to this run, and
    its seq goes through CheckAppend like any other append.
    """
    if b"\n" in record:
        raise RecordRefused(run, None, "schema_violation", "a record must be one line (its bytes contain a newline)")
    try:
        parsed = decode_record(record)
    except ValueError as exc:
        raise RecordRefused(run, None, "corrupt_line", f"not one JSON object: {exc}") from None
    if parsed.run != run:
        raise RecordRefused(run, parsed.seq, "run_mismatch", f"record names run {parsed.body.get('run')!r}")
    if parsed.seq is None or parsed.seq < 1:
        raise RecordRefused(
            run, None, "schema_violation", f"seq {parsed.body.get('seq')!r} is not an integer of at least 1"
        )
    return parsed


class JournalWriter(ABC):
    """Appends records to one run through CheckAppend. ``last_seq`` moves only once a record is durable.

    ``append`` validates every record before writing it (``prepare_record``); ``append_raw`` is migration's
    path, which copies stored bytes as they are (``prepare_raw_record``): CheckAppend, one line and the run
    id still hold, the payload schema is not checked.
    """

    run: str
    last_seq: int

    @abstractmethod
    async def append_async(self, record: bytes | dict[str, Any]) -> AppendResult: ...

    @abstractmethod
    async def append_raw_async(self, record: bytes) -> AppendResult:
        """Append stored bytes unchanged (see ``prepare_raw_record``); for copying journals, not for runtimes."""

    def append_raw(self, record: bytes) -> AppendResult:
        return run_sync(self.append_raw_async(record))

    @abstractmethod
    async def aclose(self) -> None: ...

    def append(self, record: bytes | dict[str, Any]) -> AppendResult:
        return run_sync(self.append_async(record))

    def close(self) -> None:
        run_sync(self.aclose())

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Backend(ABC):
    """A source of journals. Implementations: ``FileBackend``, ``JetStreamBackend``."""

    url: str
    kind: str

    @abstractmethod
    async def list_runs_async(self) -> list[str]:
        """Every run id in the source, sorted; only valid run ids (a journal named otherwise is a source finding)."""

    @abstractmethod
    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        """All records of one run in order. Strict: a corrupt journal raises ``CorruptJournal``;
        lenient: it comes back with ``complete=False``, its parseable records and a finding per bad line."""

    @abstractmethod
    async def listing_async(self) -> list[RunSummary]:
        """The backend's listing of runs (file: fold every run; JetStream: two-record summary)."""

    @abstractmethod
    async def open_writer_async(self, run: str) -> JournalWriter: ...

    async def aclose(self) -> None:  # noqa: B027 - backends without connections have nothing to close
        pass

    def local_journals(self, runs: Sequence[str]) -> list[tuple[str, str]] | None:
        """``(run, path)`` of each run's journal when the journals are local files a loader may read itself;
        None for a backend whose journals are not files (the loader then reads through the backend)."""
        return None

    def source_findings(self) -> list[Finding]:
        """Findings about the source itself rather than one of its runs (say, a file that is not a journal)."""
        return []

    async def read_runs_async(self, runs: list[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        return [await self.read_run_async(run, strict=strict) for run in (runs or await self.list_runs_async())]

    # -- the blocking face --------------------------------------------------------------------

    def list_runs(self) -> list[str]:
        return run_sync(self.list_runs_async())

    def read_run(self, run: str, *, strict: bool = True) -> RunRead:
        return run_sync(self.read_run_async(validate_run_id(run), strict=strict))

    def read_runs(self, runs: list[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        return run_sync(self.read_runs_async(runs, strict=strict))

    def listing(self) -> list[RunSummary]:
        return run_sync(self.listing_async())

    def open_writer(self, run: str) -> JournalWriter:
        return run_sync(self.open_writer_async(validate_run_id(run)))

    def close(self) -> None:
        run_sync(self.aclose())

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
