"""``load`` and ``iter_tables``: any source, one run or all of them, into the seven tables.

Strict (the default) raises the first refusal: the reader's (``CorruptJournal`` for a corrupt interior line or
a journal resumed after a torn tail), or the fold's (``FoldError``, ``VersionMismatch``), naming the run, the
seq and the rule; ``SourceError`` for a source-level error finding. A torn tail or a noncanonical line is a
warning, never an error. Lenient (``strict=False``) keeps every journal in ``runs`` (a refused one with status
``invalid`` and its findings), every decodable record in ``records`` and every finding.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import pyarrow as pa

from journaltools.errors import FoldError, InvalidFilter, SourceError, VersionMismatch
from journaltools.folding.run import fold_run
from journaltools.protocol.findings import Finding
from journaltools.protocol.runid import validate_run_id
from journaltools.sources.base import Backend
from journaltools.sources.registry import open_source
from journaltools.tables.batch import (
    BatchResult,
    RunBatch,
    batches_of,
    folded_reading_ahead,
    folds_natively,
    reads_in_place,
    tables_of_batch,
)
from journaltools.tables.columns import findings_table, with_source
from journaltools.tables.costs import with_costs
from journaltools.tables.options import LoadChanges, LoadOptions, resolve
from journaltools.tables.parallel import (
    Progress,
    processes_for,
    progress_enabled,
    shared_batches,
    threaded_batches,
    threads_for,
)
from journaltools.tables.prices import prices_of
from journaltools.tables.schema import Tables
from journaltools.tables.where import RunFilter, filtered_tables, where_filter

if TYPE_CHECKING:
    from journaltools.stores.tasks import TaskStore

Source = str | Path | Backend

__all__ = ["iter_tables", "kept_runs", "load"]


def _runs_wanted(backend: Backend, runs: Sequence[str] | str | None) -> list[str]:
    if runs is None:
        return backend.list_runs()  # a backend lists valid run ids only
    return [validate_run_id(run) for run in ([runs] if isinstance(runs, str) else runs)]


def _batch_results(backend: Backend, runs: list[str], options: LoadOptions) -> Iterator[BatchResult]:
    batches = list(batches_of(backend, runs, options))
    size = sum(batch.size for batch in batches)
    here = _here(backend)
    # The reads in place release the GIL (file reads, the C scanner): those batches share a thread per core.
    threads = threads_for(options.workers, len(batches))
    if threads > 1 and batches and all(reads_in_place(batch, options) for batch in batches):
        yield from threaded_batches(batches, threads, options, here)
        return
    natively = all(folds_natively(batch, options) for batch in batches)
    processes = processes_for(options.workers, size, folds_natively=natively) if options.fold and size else 1
    if processes > 1 and len(batches) > 1:
        yield from shared_batches(batches, processes - 1, options.for_batches(), here)
        return
    if natively and threads > 1:  # a second thread reads the next batch while this one is folded
        yield from folded_reading_ahead(backend, batches, options)
        return
    for batch in batches:
        yield here(batch, options)


def _here(backend: Backend) -> _Here:
    return _Here(backend)


@dataclasses.dataclass(frozen=True, slots=True)
class _Here:
    """A batch done in this process, through the backend the load already holds open."""

    backend: Backend

    def __call__(self, batch: RunBatch, options: LoadOptions) -> BatchResult:
        return tables_of_batch(self.backend, batch, options)


def _raise_for(backend: Backend, run: str, finding: Finding, options: LoadOptions) -> None:
    """Strict mode: redo the first refused run strictly, so its genuine exception is raised: the reader's
    refusal from the backend's strict read, else the fold's from the strict fold."""
    read = backend.read_run(run, strict=True)
    if options.fold and read.complete:
        fold_run(read, strict=True)
    error_type = VersionMismatch if finding.code == "version_mismatch" else FoldError
    raise error_type(run, finding.seq, finding.code, finding.message)


def iter_tables(
    source: Source | None = None,
    runs: Sequence[str] | str | None = None,
    options: LoadOptions | None = None,
    **changes: Unpack[LoadChanges],
) -> Iterator[Tables]:
    """The tables of a source batch by batch, in run order, so a caller can stream them to disk.

    Memory holds a few batches, never the whole source. Arguments as for ``load``.
    """
    opts = resolve(options, changes)
    prices = prices_of(opts.prices)  # a wrong price file is refused before any journal is read
    run_filter = where_filter(opts.where, priced=prices is not None)  # and so is a wrong filter
    if run_filter is not None and not opts.fold:
        raise InvalidFilter("where= judges runs by the runs table, which a load with fold=False does not build")
    backend, owned = (source, False) if isinstance(source, Backend) else (open_source(source), True)
    try:
        wanted = _runs_wanted(backend, runs)
        early = backend.source_findings() if runs is None else []
        if early:
            problem = next((f for f in early if f.severity == "error"), None)
            if opts.strict and problem is not None:
                raise SourceError(problem.message)
            source_only = Tables.of(findings=findings_table([with_source(f, backend.url) for f in early]))
            yield filtered_tables(with_costs(source_only, prices), run_filter)
        bar = Progress(len(wanted), progress_enabled(opts.progress), "journaltools load")
        tasks, close_tasks = open_task_store_of(opts.task_store)
        try:
            for part in _batch_results(backend, wanted, opts):
                if opts.strict and part.bad:
                    _raise_for(backend, *part.bad[0], opts)
                bar.update(part.runs)
                tables = with_task_states(part.tables, tasks) if tasks is not None else part.tables
                # Filtered last: a filter may ask for the task's state or the cost.
                yield filtered_tables(with_costs(tables, prices), run_filter)
        finally:
            bar.close()
            if tasks is not None and close_tasks:
                tasks.close()
    finally:
        if owned:
            backend.close()


def load(
    source: Source | None = None,
    runs: Sequence[str] | str | None = None,
    options: LoadOptions | None = None,
    **changes: Unpack[LoadChanges],
) -> Tables:
    """The tables of a source: one run (``runs="r1"``), some, or all (``runs=None``).

    ``source``: a directory, a journal file or glob, ``file://`` URL, ``nats://host:port/STREAM``, ``embedded``,
    an open backend, or None for the runtime's default directory (``sources.registry.default_source``).
    ``options`` (or its fields as keywords, ``load(source, strict=False)``): see ``LoadOptions``;
    ``prices=`` adds cost columns to ``runs`` and ``responses`` (``journaltools.tables.prices``); ``where=`` keeps
    the runs a filter expression keeps (``status == "error" and model ~ "sonnet"``, docs/filter.md) and, in every
    other table, the rows of those runs.
    """
    parts = list(iter_tables(source, runs, options, **changes))
    if not parts:
        return Tables.empty(priced=resolve(options, changes).prices is not None)
    return Tables.concat(parts)


def kept_runs(source: Source | None, where: str | RunFilter) -> set[str]:
    """The ids of the runs of ``source`` that the filter expression keeps: a lenient load whose tables are let go
    batch by batch, so memory stays flat (what ``ls --where`` and ``search --where`` restrict their listings to)."""
    kept: set[str] = set()
    for part in iter_tables(source, strict=False, records=False, progress=False, where=where):
        kept.update(str(run) for run in part.runs.column("run").to_pylist())
    return kept


# -- the task store: the one place the tables call it -----------------------------------------------------------


def with_task_states(tables: Tables, store: TaskStore) -> Tables:
    """``tables`` with the ``task_state`` of every run whose id names a task the store holds (else null).

    fisk-ai's meta names no task: a task's id is the request's correlation tag, which the A2A server also uses
    as the run id, so the run id is the key.
    """
    runs = tables.runs
    if not runs.num_rows:
        return tables
    from journaltools.stores.tasks import task_states  # the task store is needed only by loads that name one

    ids = runs.column("run").to_pylist()
    states = task_states(store, ids)
    column = pa.array([states.get(run) for run in ids], pa.string())
    position = runs.schema.get_field_index("task_state")
    return dataclasses.replace(tables, runs=runs.set_column(position, runs.schema.field(position), column))


def open_task_store_of(store: str | os.PathLike[str] | TaskStore | None) -> tuple[TaskStore | None, bool]:
    """The task store to use and whether this call opened it (and so closes it)."""
    if store is None or not isinstance(store, (str, os.PathLike)):
        return store, False
    from journaltools.stores import open_task_store

    return open_task_store(os.fspath(store)), True
