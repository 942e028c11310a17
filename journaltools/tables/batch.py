"""One batch of work: the options of a load, and the tables of a batch of journals.

Below the loader and the worker processes, which both call it: a worker imports this module, never the
loader that starts workers.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import pyarrow as pa

from journaltools._perf import paused_gc
from journaltools.backends.base import Backend, RunRead
from journaltools.backends.registry import open_source
from journaltools.backends.scan import DEFAULT_MAX_LINE_BYTES, read_journal, scan_lines
from journaltools.fold import fold
from journaltools.protocol.envelope import check_envelope
from journaltools.protocol.findings import Finding
from journaltools.tables.build import RecordColumns, TablesBuilder
from journaltools.tables.columns import findings_table, with_source
from journaltools.tables.records import (
    BatchLines,
    batches_by_size,
    journal_files,
    new_buffer,
    read_batch,
    records_of_batch,
)
from journaltools.tables.schema import Tables

if TYPE_CHECKING:
    from journaltools.tasks import TaskStore


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load. Every field has the default a notebook user wants; change one with a keyword of ``load``."""

    strict: bool = True
    """Raise at the first bad journal; False: keep everything and report it in ``findings``."""
    fold: bool = True
    """Fold every run (``runs``, ``messages``, ``tool_calls``); False: only ``records`` and ``findings``."""
    records: bool = True
    """Build the ``records`` table (every record's bytes); False skips it."""
    batch_bytes: int = 8 << 20
    """Journal bytes per batch of work: memory holds about two batches besides the tables, never the whole
    source (measured: 8 MB is as fast as 16 and holds 5% of a corpus less at the peak)."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """A longer line is a ``line_too_long`` finding, skipped without being held whole."""
    progress: bool | None = None
    """A progress bar; by default only in a notebook or on a terminal."""
    workers: int | None = None
    """Processes that fold (this one included): None decides by the size of the load (see
    ``parallel.processes_for``); 1 folds in this process only."""
    task_store: str | os.PathLike[str] | TaskStore | None = None
    """A task store (or its URL: a directory or ``nats://host:port/BUCKET``): fills ``task_state`` in ``runs``
    for every run whose meta names a task it holds."""


class LoadChanges(TypedDict, total=False):
    """The fields of ``LoadOptions`` as keywords (``load(source, strict=False)``)."""

    strict: bool
    fold: bool
    records: bool
    batch_bytes: int
    max_line_bytes: int
    progress: bool | None
    workers: int | None
    task_store: str | os.PathLike[str] | TaskStore | None


def resolve(options: LoadOptions | None, changes: LoadChanges) -> LoadOptions:
    base = options if options is not None else LoadOptions()
    return dataclasses.replace(base, **changes) if changes else base


# -- one batch -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class BatchResult:
    tables: Tables
    runs: int
    bad: list[tuple[str, Finding]]  # (run, its first error finding), in run order


def tables_of_lines(batch: BatchLines, source: str, options: LoadOptions) -> BatchResult:
    """The tables of a batch of journal files already read and split (see ``records.read_batch``)."""
    if not options.fold:
        part = records_of_batch(batch, source, options.max_line_bytes)
        records = part.records if options.records else Tables.empty().records
        tables = Tables.of(records=records, findings=findings_table(part.findings))
        return BatchResult(tables, len(batch.journals), part.bad)
    builder = TablesBuilder(source, records=True)
    # One pause for the batch: a collection between journals would walk every record held so far.
    with paused_gc():
        scans = []
        for index, journal in enumerate(batch.journals):
            if batch.streamed:
                scans.append(read_journal(journal.path, journal.run, options.max_line_bytes, journal.size))
            else:
                scans.append(scan_lines(batch.journal_lines(index), journal.run, journal.path))
        # The envelopes of the whole batch checked column-wise, once, rather than record by record in the fold.
        for journal, scanned in zip(batch.journals, scans, strict=True):
            builder.records.add(journal.run, scanned.records)
        every = [record for scanned in scans for record in scanned.records]
        runs = [journal.run for journal, scanned in zip(batch.journals, scans, strict=True) for _ in scanned.records]
        builder.records.check_envelopes(0, every, runs)
        if not options.records:
            builder.records = RecordColumns()
            builder.want_records = False
        del every, runs
        for journal, scanned in zip(batch.journals, scans, strict=True):
            result = fold(scanned.records, strict=False, run=journal.run) if scanned.corrupt is None else None
            builder.add_run(journal.run, scanned.records, scanned.findings, result, records_added=True)
        done = BatchResult(builder.finish(), len(batch.journals), builder.bad_runs)
        # Freed while the collector is still paused: resumed first, it would walk every record and fold of
        # the batch once more just before they die (measured: a tenth of a load).
        del scans, builder
    return done


def tables_of_reads(reads: Sequence[RunRead], source: str, options: LoadOptions) -> BatchResult:
    """The tables of runs read through a backend (JetStream, say), in the order given."""
    if options.fold:
        builder = TablesBuilder(source, records=options.records)
        for read in reads:
            result = fold(read.records, strict=False, run=read.run) if read.complete else None
            builder.add_run(read.run, read.records, read.findings, result)
        return BatchResult(builder.finish(), len(reads), builder.bad_runs)
    columns = RecordColumns()
    findings: list[Finding] = []
    bad: list[tuple[str, Finding]] = []
    for read in reads:
        found = list(read.findings)
        found.extend(f for record in read.records if (f := check_envelope(record.body, read.run)) is not None)
        first_error = next((f for f in found if f.severity == "error"), None)
        if first_error is not None:
            bad.append((read.run, first_error))
        findings.extend(with_source(f, source) for f in found)
        if options.records:
            columns.add(read.run, read.records)
    records = pa.Table.from_batches([columns.batch(source)]) if options.records else Tables.empty().records
    return BatchResult(Tables.of(records=records, findings=findings_table(findings)), len(reads), bad)


# -- batches a task loads itself (Dask) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchJob:
    """A batch of runs that whoever runs the job loads itself: file journals by path (a shared filesystem),
    or the runs of a source URL it opens (a Dask worker connecting to the NATS server)."""

    source: str  # the source URL, for the tables' source column
    runs: tuple[str, ...]
    paths: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    options: LoadOptions = LoadOptions(strict=False)


def run_job(job: BatchJob) -> BatchResult:
    """Load one batch, leniently, in the calling process."""
    options = dataclasses.replace(job.options, strict=False)
    if job.paths:
        journals = journal_files(list(job.paths))
        parts = [
            tables_of_lines(
                read_batch(batch, new_buffer(), options.max_line_bytes, envelopes=not options.fold)[0],
                job.source,
                options,
            )
            for batch in batches_by_size(journals, options.batch_bytes, options.max_line_bytes)
        ]
    else:
        if job.url is None:
            raise ValueError("a BatchJob names either paths or a source url")
        with open_source(job.url) as backend:
            parts = [tables_of_reads(backend.read_runs(list(job.runs), strict=False), job.source, options)]
    return BatchResult(
        Tables.concat(part.tables for part in parts),
        sum(part.runs for part in parts),
        [entry for part in parts for entry in part.bad],
    )


def jobs_for(backend: Backend, url: str, options: LoadOptions, runs_per_job: int) -> Iterator[BatchJob]:
    """Jobs over every run of ``backend``: about ``options.batch_bytes`` of journals each for file journals,
    ``runs_per_job`` runs each otherwise (the job opens ``url`` itself, so journals never pass through here)."""
    runs = backend.list_runs()
    paths = backend.local_journals(runs)
    if paths is not None:
        by_run = dict(paths)
        batches = batches_by_size(journal_files(paths), options.batch_bytes, options.max_line_bytes)
        for batch in batches:
            yield BatchJob(
                backend.url, tuple(j.run for j in batch), tuple((j.run, by_run[j.run]) for j in batch), None, options
            )
        return
    for start in range(0, len(runs), runs_per_job):
        yield BatchJob(backend.url, tuple(runs[start : start + runs_per_job]), (), url, options)
