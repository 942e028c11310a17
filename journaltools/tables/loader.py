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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Final, Unpack

import pyarrow as pa

from journaltools.backends.base import Backend, RunRead
from journaltools.backends.registry import open_source
from journaltools.backends.scan import read_journal
from journaltools.errors import FoldError, RecordRefused, SourceError, VersionMismatch
from journaltools.fold import fold
from journaltools.protocol.envelope import check_envelope
from journaltools.protocol.findings import Finding
from journaltools.protocol.runid import validate_run_id
from journaltools.tables.batch import (
    BatchJob,
    BatchResult,
    LoadChanges,
    LoadOptions,
    jobs_for,
    resolve,
    run_job,
    tables_of_lines,
    tables_of_reads,
)
from journaltools.tables.columns import findings_table, with_source
from journaltools.tables.parallel import Progress, processes_for, progress_enabled, shared_batches
from journaltools.tables.records import (
    JournalFile,
    batches_by_size,
    decode_envelopes,
    journal_files,
    new_buffer,
    read_batch,
    read_journals,
    split_batch,
)
from journaltools.tables.schema import Tables

if TYPE_CHECKING:
    from journaltools.tasks import TaskStore

Source = str | Path | Backend

__all__ = ["BatchJob", "LoadOptions", "iter_tables", "jobs_for", "load", "run_job"]


# -- a source ------------------------------------------------------------------------------------------------


def _runs_wanted(backend: Backend, runs: Sequence[str] | str | None) -> pa.StringArray:
    """The run ids to load, validated, held as one Arrow array: a few bytes a run rather than a Python string
    and a list slot each, since a load holds them from start to end and a source may have millions."""
    if runs is None:
        listed = backend.list_runs()  # a backend lists valid run ids only
    else:
        listed = [validate_run_id(run) for run in ([runs] if isinstance(runs, str) else runs)]
    return pa.array(listed, pa.string())


#: Runs whose journals are listed and batched at a time: a source of a million runs is never held as a million
#: paths and sizes at once.
_CHUNK_RUNS: Final = 8192


def _batches(backend: Backend, runs: pa.StringArray, options: LoadOptions) -> Iterator[BatchResult]:
    """Every run's tables, batch by batch: journal files read here (or by worker processes), other runs
    through the backend."""
    chunks = max(1, -(-len(runs) // _CHUNK_RUNS))
    for start in range(0, chunks * _CHUNK_RUNS, _CHUNK_RUNS):
        chunk: list[str] = runs.slice(start, _CHUNK_RUNS).to_pylist()
        paths = backend.local_journals(chunk)
        if paths is None:
            yield from _read_batches(backend, chunk, options)
        else:
            yield from _file_batches(paths, backend.url, options, of_chunks=chunks)


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
    yield from _pipelined_batches(batches, source, options)


def _pipelined_batches(batches: list[list[JournalFile]], source: str, options: LoadOptions) -> Iterator[BatchResult]:
    """Each batch's tables, with the helper thread splitting batch n while this thread decodes its envelopes
    (both read the one buffer), then splitting batch n + 1 while this thread builds the tables of n."""
    if not batches:
        return
    wants_envelopes = not options.fold
    buffer = new_buffer()
    with ThreadPoolExecutor(1, thread_name_prefix="journaltools-split") as helper:
        read, buffer = read_journals(batches[0], buffer, options.max_line_bytes)
        splitting = helper.submit(split_batch, read)
        for index in range(len(batches)):
            envelopes = decode_envelopes(read) if wants_envelopes else None
            lines = splitting.result()  # both readers are done with the buffer
            lines.envelopes = envelopes
            if index + 1 < len(batches):
                read, buffer = read_journals(batches[index + 1], buffer, options.max_line_bytes)
                splitting = helper.submit(split_batch, read)
            yield tables_of_lines(lines, source, options)
            del lines, envelopes


def _batch_here(batch: list[JournalFile], source: str, options: LoadOptions) -> BatchResult:
    lines, _ = read_batch(batch, new_buffer(), options.max_line_bytes, envelopes=not options.fold)
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
