"""``load`` and ``iter_tables``: any source, one run or all of them, into the five tables.

Strict (the default) raises at the first bad journal: ``CorruptJournal`` for an unparsable interior line,
``FoldError`` for a broken record (``RecordRefused`` with ``fold=False``), ``SourceError`` for a file in the
source that cannot be read as a journal. A torn tail is a warning, never an error. Lenient
(``strict=False``) keeps every run (one with an error finding has status ``invalid``), every parseable
record and every finding: nothing the source holds disappears without a finding.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict, Unpack

import pyarrow as pa

from journaltools._perf import paused_gc
from journaltools.backends.base import Backend, RunRead
from journaltools.backends.registry import open_source
from journaltools.backends.scan import DEFAULT_MAX_LINE_BYTES, read_journal, scan_lines
from journaltools.errors import FoldError, RecordRefused, SourceError, VersionMismatch
from journaltools.fold import fold
from journaltools.protocol.envelope import check_envelope
from journaltools.protocol.findings import Finding
from journaltools.protocol.runid import validate_run_id
from journaltools.tables.build import RecordColumns, TablesBuilder
from journaltools.tables.columns import findings_table, with_source
from journaltools.tables.parallel import Progress, pipelined, processes_for, progress_enabled, shared_batches
from journaltools.tables.records import (
    BatchBytes,
    BatchLines,
    JournalFile,
    batches_by_size,
    journal_files,
    new_buffer,
    read_batch,
    read_journals,
    records_of_batch,
    split_batch,
)
from journaltools.tables.schema import Tables

if TYPE_CHECKING:
    from journaltools.tasks import TaskStore

Source = str | Path | Backend


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load. Every field has the default a notebook user wants; change one with a keyword of ``load``."""

    strict: bool = True
    """Raise at the first bad journal; False: keep everything and report it in ``findings``."""
    fold: bool = True
    """Fold every run (``runs``, ``messages``, ``tool_calls``); False: only ``records`` and ``findings``."""
    records: bool = True
    """Build the ``records`` table (every record's bytes); False skips it."""
    batch_bytes: int = 16 << 20
    """Journal bytes per batch of work: memory holds about two batches, never the whole source."""
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
        return BatchResult(builder.finish(), len(batch.journals), builder.bad_runs)


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


# -- a source ------------------------------------------------------------------------------------------------


def _runs_wanted(backend: Backend, runs: Sequence[str] | str | None) -> list[str]:
    wanted = [runs] if isinstance(runs, str) else list(runs) if runs is not None else backend.list_runs()
    return [validate_run_id(run) for run in wanted]


#: Runs whose journals are listed and batched at a time: a source of a million runs is never held as a million
#: paths and sizes at once.
_CHUNK_RUNS: Final = 8192


def _batches(backend: Backend, runs: list[str], options: LoadOptions) -> Iterator[BatchResult]:
    """Every run's tables, batch by batch: journal files read here (or by worker processes), other runs
    through the backend."""
    chunks = [runs[start : start + _CHUNK_RUNS] for start in range(0, len(runs), _CHUNK_RUNS)] or [[]]
    for chunk in chunks:
        paths = backend.local_journals(chunk)
        if paths is None:
            yield from _read_batches(backend, chunk, options)
        else:
            yield from _file_batches(paths, backend.url, options, of_chunks=len(chunks))


def _file_batches(
    paths: list[tuple[str, str]], source: str, options: LoadOptions, of_chunks: int = 1
) -> Iterator[BatchResult]:
    journals: list[JournalFile] = journal_files(paths)
    batches = batches_by_size(journals, options.batch_bytes, options.max_line_bytes)
    # The load's size, estimated from the chunk at hand: the pool decision is made before the rest is listed.
    estimate = sum(j.size for j in journals) * of_chunks
    processes = processes_for(options.workers, estimate) if options.fold else 1
    if processes > 1 and len(batches) > 1:
        yield from shared_batches(batches, processes - 1, source, options, _batch_here)
        return
    buffers = [new_buffer(), new_buffer()]  # two: one batch is read while the one before is worked on

    def read(numbered: tuple[int, list[JournalFile]]) -> BatchBytes:
        number, batch = numbered
        read, buffers[number % 2] = read_journals(batch, buffers[number % 2], options.max_line_bytes)
        return read

    for lines in pipelined(list(enumerate(batches)), read, split_batch):
        yield tables_of_lines(lines, source, options)


def _batch_here(batch: list[JournalFile], source: str, options: LoadOptions) -> BatchResult:
    lines, _ = read_batch(batch, new_buffer(), options.max_line_bytes)
    return tables_of_lines(lines, source, options)


def _read_batches(backend: Backend, runs: list[str], options: LoadOptions) -> Iterator[BatchResult]:
    group: list[RunRead] = []
    size = 0
    for start in range(0, len(runs), 64):
        for read in backend.read_runs(runs[start : start + 64], strict=False):
            group.append(read)
            size += sum(len(record.raw) for record in read.records)
            if size >= options.batch_bytes:
                yield tables_of_reads(group, backend.url, options)
                group, size = [], 0
    if group:
        yield tables_of_reads(group, backend.url, options)


def _raise_for(backend: Backend, run: str, finding: Finding, options: LoadOptions) -> None:
    """Strict mode: redo the first bad run strictly here, with the load's reader, so its genuine exception is
    raised (``CorruptJournal``, ``FoldError``, ``VersionMismatch``, ``RecordRefused``)."""
    paths = backend.local_journals([run])
    if paths is not None:
        scanned = read_journal(paths[0][1], run, options.max_line_bytes)
        if scanned.corrupt is not None:
            raise scanned.corrupt
        records = scanned.records
    else:
        records = backend.read_run(run, strict=True).records
    if options.fold:
        fold(records, strict=True, run=run)
    else:
        for record in records:
            problem = check_envelope(record.body, expected_run=run)
            if problem is not None and problem.severity == "error":
                raise RecordRefused(problem.run or run, problem.seq, problem.code, problem.message)
    error_type = VersionMismatch if finding.code == "version_mismatch" else FoldError
    raise error_type(run, finding.seq, finding.code, finding.message)


def iter_tables(
    source: Source,
    runs: Sequence[str] | str | None = None,
    options: LoadOptions | None = None,
    **changes: Unpack[LoadChanges],
) -> Iterator[Tables]:
    """The tables of a source batch by batch, in run order, so a caller can stream them to disk.

    Memory holds about two batches, never the whole source. Arguments as for ``load``.
    """
    opts = resolve(options, changes)
    backend, owned = (source, False) if isinstance(source, Backend) else (open_source(source), True)
    try:
        wanted = _runs_wanted(backend, runs)
        early = backend.source_findings() if runs is None else []
        if early:
            problem = next((f for f in early if f.severity == "error"), None)
            if opts.strict and problem is not None:
                raise SourceError(problem.message)
            yield Tables.of(findings=findings_table([with_source(f, backend.url) for f in early]))
        bar = Progress(len(wanted), progress_enabled(opts.progress), "journaltools load")
        tasks, close_tasks = open_task_store_of(opts.task_store)
        try:
            for part in _batches(backend, wanted, opts):
                if opts.strict and part.bad:
                    _raise_for(backend, *part.bad[0], opts)
                bar.update(part.runs)
                yield with_task_states(part.tables, tasks) if tasks is not None else part.tables
        finally:
            bar.close()
            if tasks is not None and close_tasks:
                tasks.close()
    finally:
        if owned:
            backend.close()


def load(
    source: Source,
    runs: Sequence[str] | str | None = None,
    options: LoadOptions | None = None,
    **changes: Unpack[LoadChanges],
) -> Tables:
    """The tables of a source: one run (``runs="r1"``), some, or all (``runs=None``).

    ``source``: a directory, ``file://`` URL, ``nats://host:port/STREAM``, ``embedded``, or an open backend.
    ``options`` (or its fields as keywords, ``load(source, strict=False)``): see ``LoadOptions``.
    """
    return Tables.concat(iter_tables(source, runs, options, **changes))


def with_task_states(tables: Tables, store: TaskStore) -> Tables:
    """``tables`` with the ``task_state`` of every run whose meta names a task the store holds (else null)."""
    runs = tables.runs
    if not runs.num_rows:
        return tables
    from journaltools.tasks import task_states  # the task store is needed only by loads that name one

    tasks = runs.column("task").to_pylist()
    states = task_states(store, tasks)
    column = pa.array([states.get(task) if task is not None else None for task in tasks], pa.string())
    position = runs.schema.get_field_index("task_state")
    return dataclasses.replace(tables, runs=runs.set_column(position, runs.schema.field(position), column))


def open_task_store_of(store: str | os.PathLike[str] | TaskStore | None) -> tuple[TaskStore | None, bool]:
    """The task store to use and whether this call opened it (and so closes it)."""
    if store is None or not isinstance(store, (str, os.PathLike)):
        return store, False
    from journaltools.stores import open_task_store

    return open_task_store(os.fspath(store)), True


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
            tables_of_lines(read_batch(batch, new_buffer(), options.max_line_bytes)[0], job.source, options)
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
