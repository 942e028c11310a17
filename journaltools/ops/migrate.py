"""Copy runs between backends with every record's bytes unchanged, then verify (``journaltools migrate``).

Migration moves what exists. It copies every journal whose lines the runtime's decoder reads and whose seqs
pass CheckAppend (1, 2, 3, … with nothing repeated or skipped), bytes unchanged, including records the fold
refuses (an unknown version, an unknown protocol): the audit reports those, and a copy that dropped them would
lose stored data. Files are ``<id>.json`` journals and JetStream records the runtime's subjects, since the
destination backend places the bytes. It refuses only what it cannot copy faithfully, and says which run and
why (``Refusal``): a journal that does not decode whole, a seq out of order or skipped (the runtime's writer
refuses a gap too), or a destination that already holds different records for the run.

Per run: read the source leniently and check it (``check_copyable``) before anything is written. Then append
every record through the destination writer's raw path (``JournalWriter.append_raw``): CheckAppend, one line
per record and the run id still hold there, so a re-run is idempotent (records the destination already holds
are skipped as duplicates, not written twice) and the destination's guarantees (fsync, the JetStream slot
rule) apply to every copied record. Finally read the destination back and compare the SHA-256 digest of every
record with the source's.

A refused run is reported and the others carry on.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from journaltools._base.aio import run_sync
from journaltools.errors import (
    InvalidRunId,
    JournalError,
    NotAJournalFile,
    RunNotFound,
    ServerNotAnswering,
    StorageError,
    StreamFull,
)
from journaltools.protocol.runid import validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append
from journaltools.sources.base import AppendOutcome, Backend, RunRead, StoredRecord

#: Runs copied at once (each run is copied in order; runs are independent).
CONCURRENT_RUNS = 8

#: Refusals that say the *source journal* cannot be copied faithfully: ``--skip-invalid`` accepts these.
#: The other codes (``run_not_found``, ``destination_differs``, ``destination_refused``, ``destination_unwritable``,
#: ``source_unreadable``)
#: are about the request or the destination, and always fail a migration.
INVALID_SOURCE_CODES: Final = frozenset(
    {
        "invalid_run_id",  # the run id cannot name a file or a subject
        "corrupt_line",  # a line that does not parse, with more after it
        "empty_journal",  # nothing to copy
        "resumed_after_torn_tail",  # torn bytes glued into the interior by a resume
        "seq_not_increasing",  # a repeated or lower seq: the copy would drop the record as a duplicate
        "seq_gap",  # a skipped seq: the destination writer refuses the gap
        "subject_seq_mismatch",  # a subject naming another seq than its body: a copy would move the record
    }
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A run not migrated: which, a code (``INVALID_SOURCE_CODES`` or a request/destination code) and why."""

    run: str
    code: str
    message: str

    @property
    def invalid_source(self) -> bool:
        """The source journal itself cannot be copied faithfully (what ``--skip-invalid`` skips)."""
        return self.code in INVALID_SOURCE_CODES

    def to_json(self) -> dict[str, str]:
        return {"run": self.run, "code": self.code, "message": self.message}


@dataclass(slots=True)
class MigrationReport:
    """What a migration did. ``verified`` is True when every migrated record read back with the same digest."""

    runs: int = 0
    """Runs that are in the destination, record for record, after this migration (copied now or before)."""
    records: int = 0
    """Records of those runs."""
    copied: int = 0
    """Records written by this migration (a re-run copies none)."""
    skipped: int = 0
    """Records the destination already held (CheckAppend duplicates)."""
    verified: bool = True
    refused: list[Refusal] = field(default_factory=list)
    """Every run not migrated, with its reason."""
    mismatches: list[tuple[str, str]] = field(default_factory=list)
    """(run, what differs) for every run whose read-back did not match the source."""
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(run, note) worth knowing that did not stop the run, e.g. a torn tail left behind."""

    def failed(self, *, skip_invalid: bool = False) -> bool:
        """Whether the migration failed: verification failed, or a run was refused (with ``skip_invalid``,
        only a refusal that is not about an invalid source journal counts)."""
        if not self.verified:
            return True
        return any(not (skip_invalid and refusal.invalid_source) for refusal in self.refused)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "records": self.records,
            "verified": self.verified,
            "refused": [refusal.to_json() for refusal in self.refused],
            "copied": self.copied,
            "skipped": self.skipped,
            "mismatches": [{"run": run, "message": message} for run, message in self.mismatches],
            "notes": [{"run": run, "note": note} for run, note in self.notes],
        }


def record_digest(record: StoredRecord) -> str:
    return hashlib.sha256(record.raw).hexdigest()


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)


@dataclass(slots=True)
class _RunOutcome:
    run: str
    records: int = 0
    copied: int = 0
    skipped: int = 0
    refused: Refusal | None = None
    mismatch: str | None = None
    notes: list[str] = field(default_factory=list)


def check_copyable(run: str, records: Sequence[StoredRecord]) -> None:
    """Refuse (``_Refused``) a journal the destination writer could not store exactly as it is.

    The payloads are not checked (a copy keeps records the fold refuses). The seqs are: they must run 1, 2,
    3…: a repeated seq would be skipped as a duplicate (a record lost) and a gap would be refused half-way
    through the copy, as the runtime's own writer refuses it.
    """
    if not records:
        raise _Refused("empty_journal", "the journal holds no records")
    last = 0
    for stored in records:
        seq = stored.record.seq
        verdict = check_append(last, seq)
        if verdict is AppendVerdict.DUPLICATE:
            raise _Refused(
                "seq_not_increasing", f"seq {seq} follows seq {last}: seqs must increase, a copy would drop the record"
            )
        if verdict is AppendVerdict.GAP:
            raise _Refused(
                "seq_gap", f"seq {seq} follows seq {last}: a gap the destination writer refuses (CheckAppend)"
            )
        last = seq


async def _read_source(source: Backend, run: str) -> RunRead:
    try:
        read = await source.read_run_async(run, strict=False)
    except RunNotFound as exc:
        raise _Refused("run_not_found", str(exc)) from None
    except ServerNotAnswering:
        raise  # the whole source is gone, not this run: said once, for the migration
    except JournalError as exc:
        raise _Refused("source_unreadable", str(exc)) from None
    if not read.complete:
        bad = [finding for finding in read.findings if finding.severity == "error"] or read.findings
        code = bad[0].code if bad else "corrupt_line"
        reasons = "; ".join(finding.message for finding in bad) or "the journal was refused"
        raise _Refused(code, f"the journal does not parse whole, not copied: {reasons}")
    lying = [finding for finding in read.findings if finding.code == "subject_seq_mismatch"]
    if lying:
        raise _Refused("subject_seq_mismatch", f"not copied: {lying[0].message}")
    return read


async def _copy(dest: Backend, run: str, records: Sequence[StoredRecord], outcome: _RunOutcome) -> None:
    created = False
    try:
        writer = await dest.open_writer_async(run)
    except RunNotFound:
        # A new run: created from the source's own meta bytes, so even a non-canonical meta line is kept.
        writer = await dest.create_journal_async(run, records[0].raw)
        created = True
    try:
        held = writer.last_seq
        if held > len(records):
            raise _Refused(
                "destination_differs",
                f"the destination already holds {held} records, more than the source's {len(records)}",
            )
        if held:
            existing = (await dest.read_run_async(run, strict=True)).records
            for ours, theirs in zip(records, existing, strict=False):
                if ours.raw != theirs.raw:
                    raise _Refused(
                        "destination_differs",
                        f"the destination already holds a different record at seq {theirs.record.seq}",
                    )
        for stored in records[held:]:
            result = await writer.append_raw_async(stored.raw)
            if result.outcome is AppendOutcome.DUPLICATE:
                outcome.skipped += 1
            else:
                outcome.copied += 1
        if created:
            outcome.copied += 1
        else:
            outcome.skipped += held  # a re-run: the destination already holds these, byte for byte
    finally:
        await writer.aclose()


async def _verify(dest: Backend, run: str, records: Sequence[StoredRecord]) -> str | None:
    """None when the destination holds exactly these records (by SHA-256 digest), else what differs."""
    stored = (await dest.read_run_async(run, strict=True)).records
    if len(stored) != len(records):
        return f"the destination holds {len(stored)} records, the source {len(records)}"
    for ours, theirs in zip(records, stored, strict=True):
        if record_digest(ours) != record_digest(theirs):
            theirs_digest, ours_digest = record_digest(theirs), record_digest(ours)
            return f"seq {ours.record.seq}: digest {theirs_digest} in the destination, {ours_digest} in the source"
    return None


#: Failures of one destination journal's own path (what is there, who may write it): that run is refused and the
#: others go on. Any other ``StorageError`` (a full or read-only disk) would fail every run alike and ends it all.
_JOURNAL_PATH_ERRNOS: Final = frozenset(
    {errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.ELOOP, errno.ENXIO, errno.ENAMETOOLONG}
)


def _of_this_journal(exc: StorageError) -> bool:
    return isinstance(exc, NotAJournalFile) or exc.errno in _JOURNAL_PATH_ERRNOS


async def _migrate_run(source: Backend, dest: Backend, run: str) -> _RunOutcome:
    outcome = _RunOutcome(run)
    try:
        try:
            validate_run_id(run)
        except InvalidRunId as exc:
            raise _Refused("invalid_run_id", str(exc)) from None
        read = await _read_source(source, run)
        outcome.notes = [finding.message for finding in read.findings]  # a torn tail: dropped, as a writer would
        check_copyable(run, read.records)
        try:
            await _copy(dest, run, read.records, outcome)
            outcome.mismatch = await _verify(dest, run, read.records)
        except StorageError as exc:
            if not _of_this_journal(exc):
                raise  # the destination is full, read-only or gone: every other run would fail the same way
            raise _Refused("destination_unwritable", str(exc)) from None
        except (StreamFull, ServerNotAnswering):
            raise
        except JournalError as exc:  # the destination refused: another writer, a lock, an unusable store
            raise _Refused("destination_refused", str(exc)) from None
        outcome.records = len(read.records)
    except _Refused as exc:
        outcome.refused = Refusal(run, exc.code, exc.message)
    return outcome


async def migrate_async(source: Backend, dest: Backend, runs: list[str] | None = None) -> MigrationReport:
    """Copy ``runs`` (default: every run of ``source``) into ``dest`` and verify them; see the module doc."""
    wanted = list(runs) if runs is not None else await source.list_runs_async()
    outcomes: list[_RunOutcome] = [_RunOutcome(run) for run in wanted]
    work = iter(enumerate(wanted))

    failed: list[BaseException] = []

    async def worker() -> None:  # a few workers share one iterator: memory stays flat for any number of runs
        for index, run in work:
            if failed:
                return
            try:
                outcomes[index] = await _migrate_run(source, dest, run)
            except BaseException as exc:
                failed.append(exc)  # the other workers stop before their next run
                raise

    await asyncio.gather(*(worker() for _ in range(CONCURRENT_RUNS)))
    report = MigrationReport()
    for outcome in outcomes:
        report.notes.extend((outcome.run, note) for note in outcome.notes)
        if outcome.refused is not None:
            report.refused.append(outcome.refused)
            continue
        report.copied += outcome.copied
        report.skipped += outcome.skipped
        if outcome.mismatch is not None:
            report.mismatches.append((outcome.run, outcome.mismatch))
            report.verified = False
            continue
        report.runs += 1
        report.records += outcome.records
    return report


def migrate(source: Backend, dest: Backend, runs: list[str] | None = None) -> MigrationReport:
    """The blocking face of ``migrate_async``."""
    return run_sync(migrate_async(source, dest, runs))
