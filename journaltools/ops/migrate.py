"""Copy runs between backends with every record's bytes unchanged, then verify (``journaltools migrate``).

Per run: read the source leniently; refuse a journal that is corrupt, holds an invalid record, or whose
sequence the destination writer could not reproduce (a duplicate or a gap), before anything is written.
Then append every record through the destination's own writer, so CheckAppend's duplicate rule makes a
re-run idempotent (records the destination already holds are skipped, not written twice), and the
destination's guarantees (fsync, the JetStream slot rule) apply to every copied record. Finally read the
destination back and compare the SHA-256 digest of every record with the source's.

A refused run is reported and the others carry on; a run that the destination already holds with
different records is refused rather than mixed.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

from journaltools.aio import run_sync
from journaltools.backends.base import AppendVerdictTaken, Backend, RunRead, prepare_record
from journaltools.errors import JournalError, RecordRefused, RunNotFound, StorageError
from journaltools.protocol.records import RawRecord
from journaltools.protocol.runid import validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append

#: Runs copied at once (each run is copied in order; runs are independent).
CONCURRENT_RUNS = 8


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
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(run, reason) for every run not migrated."""
    mismatches: list[tuple[str, str]] = field(default_factory=list)
    """(run, what differs) for every run whose read-back did not match the source."""
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(run, note) worth knowing that did not stop the run, e.g. a torn tail left behind."""

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "records": self.records,
            "verified": self.verified,
            "copied": self.copied,
            "skipped": self.skipped,
            "refused": [{"run": run, "reason": reason} for run, reason in self.refused],
            "mismatches": [{"run": run, "reason": reason} for run, reason in self.mismatches],
            "notes": [{"run": run, "note": note} for run, note in self.notes],
        }


def record_digest(record: RawRecord) -> str:
    return hashlib.sha256(record.raw).hexdigest()


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(slots=True)
class _RunOutcome:
    run: str
    records: int = 0
    copied: int = 0
    skipped: int = 0
    refused: str | None = None
    mismatch: str | None = None
    notes: list[str] = field(default_factory=list)


def check_copyable(run: str, records: list[RawRecord]) -> None:
    """Refuse (``_Refused``) a journal the destination writer would not store exactly as it is.

    Every record must pass the writers' validation, and seqs must run 1, 2, 3…: a repeated seq would be
    skipped as a duplicate (a record lost) and a gap would be refused half-way through the copy.
    """
    if not records:
        raise _Refused("the journal holds no records")
    last = 0
    for record in records:
        try:
            prepare_record(run, last, record.raw)
        except RecordRefused as exc:
            raise _Refused(f"seq {exc.seq}: {exc.code}: {exc.rule}") from None
        seq = record.seq
        assert seq is not None  # prepare_record validated the envelope
        verdict = check_append(last, seq)
        if verdict is AppendVerdict.DUPLICATE:
            raise _Refused(f"seq {seq} follows seq {last}: seqs must increase, a copy would drop the record")
        if verdict is AppendVerdict.GAP:
            raise _Refused(f"seq {seq} follows seq {last}: a gap the destination writer refuses (CheckAppend)")
        last = seq


async def _read_source(source: Backend, run: str) -> RunRead:
    try:
        read = await source.read_run_async(run, strict=False)
    except RunNotFound as exc:
        raise _Refused(str(exc)) from None
    if not read.complete:
        reasons = "; ".join(finding.message for finding in read.findings) or "the journal was refused"
        raise _Refused(f"corrupt journal, not copied: {reasons}")
    return read


async def _copy(dest: Backend, run: str, records: list[RawRecord], outcome: _RunOutcome) -> None:
    writer = await dest.open_writer_async(run)
    try:
        held = writer.last_seq
        if held > len(records):
            raise _Refused(f"the destination already holds {held} records, more than the source's {len(records)}")
        if held:
            existing = (await dest.read_run_async(run, strict=True)).records
            for ours, theirs in zip(records, existing, strict=False):
                if ours.raw != theirs.raw:
                    raise _Refused(f"the destination already holds a different record at seq {theirs.seq}")
        for record in records:
            result = await writer.append_async(record.raw)
            if result.outcome is AppendVerdictTaken.DUPLICATE:
                outcome.skipped += 1
            else:
                outcome.copied += 1
    finally:
        await writer.aclose()


async def _verify(dest: Backend, run: str, records: list[RawRecord]) -> str | None:
    """None when the destination holds exactly these records (by SHA-256 digest), else what differs."""
    stored = (await dest.read_run_async(run, strict=True)).records
    if len(stored) != len(records):
        return f"the destination holds {len(stored)} records, the source {len(records)}"
    for ours, theirs in zip(records, stored, strict=True):
        if record_digest(ours) != record_digest(theirs):
            return f"seq {ours.seq}: digest {record_digest(theirs)} in the destination, {record_digest(ours)} in source"
    return None


async def _migrate_run(source: Backend, dest: Backend, run: str) -> _RunOutcome:
    outcome = _RunOutcome(run)
    try:
        validate_run_id(run)
        read = await _read_source(source, run)
        outcome.notes = [finding.message for finding in read.findings]  # a torn tail: dropped, as a writer would
        check_copyable(run, read.records)
        await _copy(dest, run, read.records, outcome)
        outcome.mismatch = await _verify(dest, run, read.records)
        outcome.records = len(read.records)
    except _Refused as exc:
        outcome.refused = exc.reason
    except StorageError:
        raise  # the destination's disk is full or read-only: every other run would fail the same way
    except JournalError as exc:  # the destination refused: another writer, a conflict, an unusable source
        outcome.refused = str(exc)
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
            report.refused.append((outcome.run, outcome.refused))
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
