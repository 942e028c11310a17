"""One batch of work: a few runs of one source, read through its backend, folded and tabled.

Below the loader, the worker processes and the Dask tasks, which all call ``tables_of_batch``: a worker
imports this module, never the loader that starts workers. A batch names its source by URL, so whoever runs
it (this process, a worker process, a Dask worker on another machine) can open the source itself and the
journals never travel through a pipe.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa

from journaltools._base.perf import paused_gc
from journaltools.protocol import native
from journaltools.protocol.findings import Finding
from journaltools.sources.base import Backend
from journaltools.sources.in_place import BATCH_JOURNALS, InPlace, Proven, batched, in_place_available, read_ahead
from journaltools.sources.registry import open_source
from journaltools.tables.build import TablesBuilder
from journaltools.tables.options import LoadOptions
from journaltools.tables.records import records_table, scanned_batch_rows
from journaltools.tables.schema import Tables

#: Journals per batch at most (``sources.in_place``: a load and a listing batch alike).
BATCH_RUNS: Final = BATCH_JOURNALS


@dataclass(frozen=True, slots=True)
class RunBatch:
    """Consecutive runs of one source; ``size`` their journal bytes where the source knows them (else 0)."""

    url: str
    runs: tuple[str, ...]
    size: int = 0
    #: The journals' paths, one per run, where they are local plain files (``Backend.local_journals``).
    paths: tuple[str, ...] | None = None


@dataclass(slots=True)
class BatchResult:
    tables: Tables
    runs: int
    bad: list[tuple[str, Finding]]  # (run, its first error finding), in run order


def batches_of(backend: Backend, runs: Sequence[str], options: LoadOptions) -> Iterator[RunBatch]:
    """``runs`` in batches of about ``batch_bytes`` of journal files where the journals are local files (their
    sizes as the backend listed them, nothing read), else of ``runs_per_batch`` runs."""
    paths = backend.local_journals(runs)
    if paths is None:
        step = max(1, options.runs_per_batch)
        for start in range(0, len(runs), step):
            yield RunBatch(backend.url, tuple(runs[start : start + step]))
        return
    for part in batched(paths, options.batch_bytes, BATCH_RUNS):
        runs_of = tuple(journal.run for journal in part)
        yield RunBatch(backend.url, runs_of, sum(journal.size for journal in part), tuple(j.path for j in part))


def reads_in_place(batch: RunBatch, options: LoadOptions) -> bool:
    """Whether ``tables_of_batch`` reads ``batch`` into one buffer the scanner proves (``_records_read_in_place``):
    a records-only load of local plain journals, with the scanner built."""
    return not options.fold and options.wants_records(default=True) and native.active() and batch.paths is not None


def folds_natively(batch: RunBatch, options: LoadOptions) -> bool:
    """Whether a folded load's ``batch`` is folded natively where its journals allow (``folding.native``): local plain
    journals, read and proven by the C scanner, with the native fold in use."""
    return options.fold and in_place_available() and batch.paths is not None


def tables_of_batch(backend: Backend, batch: RunBatch, options: LoadOptions) -> BatchResult:
    """The tables of one batch, read leniently through ``backend`` and folded leniently here."""
    if reads_in_place(batch, options) and batch.paths is not None:
        return _records_read_in_place(backend, batch, list(zip(batch.runs, batch.paths, strict=True)))
    if folds_natively(batch, options) and batch.paths is not None:
        return _folded_in_place(backend, batch, options, list(zip(batch.runs, batch.paths, strict=True)))
    builder = TablesBuilder(records=options.wants_records(default=True), folded=options.fold)
    # One pause for the batch: a collection between journals would walk every record held so far.
    with paused_gc():
        if batch.paths is None:
            reads = backend.read_runs(list(batch.runs), strict=False)
        else:  # where the backend said the journals are: no run looked up again
            reads = backend.read_local_runs(batch.runs, batch.paths, strict=False)
        for read in reads:
            builder.add_folding(read)
        done = BatchResult(builder.finish(), len(reads), builder.bad_runs)
        # Freed while the collector is still paused: resumed first, it would walk every record and fold of
        # the batch once more just before they die.
        del reads, builder
    return done


def _records_read_in_place(backend: Backend, batch: RunBatch, paths: list[tuple[str, str]]) -> BatchResult:
    """``records`` and ``findings`` of local plain journals, read into one buffer that becomes the body column:
    the scanner proves each journal and moves its lines into place, so no journal's bytes are kept twice and no
    record is decoded. A journal it does not prove (or that would not read whole) is read the usual way, and its
    rows and findings take its place in run order."""
    batch_read = InPlace.read(paths, batch.size)
    counts, august = batch_read.counts, batch_read.beside_august()
    scanned = _scanned_rows(paths, counts, backend.url, batch_read.scan, batch_read.buffer)
    if all(count >= 0 for count in counts) and not august:
        return BatchResult(Tables.of(records=scanned), len(paths), [])
    usual: dict[int, pa.Table] = {}
    findings: list[pa.Table] = []
    bad: list[tuple[str, Finding]] = []
    for index, ((run, _), count) in enumerate(zip(paths, counts, strict=True)):
        if count >= 0 and index not in august:
            continue
        builder = TablesBuilder(records=True, folded=False)
        with paused_gc():
            for read in backend.read_runs([run], strict=False):
                builder.add(read, None)
        alone = builder.finish()
        usual[index] = alone.records
        findings.append(alone.findings)
        bad.extend(builder.bad_runs)
    tables = Tables.of(records=_records_in_order(scanned, counts, usual), findings=pa.concat_tables(findings))
    return BatchResult(tables, len(paths), bad)


def _scanned_rows(
    paths: list[tuple[str, str]], counts: list[int], source: str, scan: native.BatchScan, body: np.ndarray
) -> pa.Table:
    """The records rows of every journal ``scan_batch`` proved, in order (an August one with newest fields
    included: ``_records_in_order`` leaves its rows out)."""
    proven = [(run, count) for (run, _), count in zip(paths, counts, strict=True) if count >= 0]
    return scanned_batch_rows([run for run, _ in proven], [count for _, count in proven], source, scan, body)


def _records_in_order(scanned: pa.Table, counts: list[int], usual: dict[int, pa.Table]) -> pa.Table:
    """The batch's records table: the ``scanned`` rows of the journals the scan proved (``counts``: per journal
    its line count, -1 where not proven), with the rows of each journal read the usual way (``usual``, by its
    index: an unproven one, or a proven August one with newest fields, whose scanned rows are left out) in its
    place."""
    if not usual:
        return scanned
    parts: list[pa.Table] = []
    row = start = 0
    for index, count in enumerate(counts):
        rows = usual.get(index)
        if rows is None:
            row += count
            continue
        parts.append(scanned.slice(start, row - start))
        row += max(count, 0)
        start = row
        parts.append(rows)
    parts.append(scanned.slice(start))
    return pa.concat_tables(parts)


def folded_reading_ahead(backend: Backend, batches: Sequence[RunBatch], options: LoadOptions) -> Iterator[BatchResult]:
    """``tables_of_batch`` of each of ``batches`` in turn, every one folded in place (``folds_natively``), the next
    batch read and proven on a thread while this one is folded (``in_place.read_ahead``)."""

    def read(batch: RunBatch) -> InPlace:
        return InPlace.read(_paths_of(batch), batch.size)

    with contextlib.closing(read_ahead(batches, read)) as reads:
        for batch, batch_read in reads:
            yield _folded_in_place(backend, batch, options, _paths_of(batch), batch_read)


def _paths_of(batch: RunBatch) -> list[tuple[str, str]]:
    """(run, path) of each journal of a batch of local journals."""
    return list(zip(batch.runs, batch.paths or (), strict=True))


def _folded_in_place(
    backend: Backend,
    batch: RunBatch,
    options: LoadOptions,
    paths: list[tuple[str, str]],
    batch_read: InPlace | None = None,
) -> BatchResult:
    """``tables_of_batch`` of local plain journals read into one buffer and proven there (``sources.in_place``),
    as ``_records_read_in_place`` reads them, each proven journal then folded natively from its lines where the
    walk takes it (``TablesBuilder.add_lines``): no journal becomes a read or a record object. A proven journal the
    walk gives back is folded in Python from the same bytes; any other journal is read again and taken the usual
    way (``add_folding``). Rows stay in run order. ``batch_read``: the batch read already (``folded_reading_ahead``).
    """
    if batch_read is None:
        batch_read = InPlace.read(paths, batch.size)
    builder = TablesBuilder(records=False, folded=True)
    usual: dict[int, pa.Table] = {}
    source = backend.url
    with paused_gc():
        for journal in batch_read.journals():
            if isinstance(journal, Proven):
                usable = journal.usable
                if usable is None or not builder.add_lines(
                    journal.run, source, journal.modified_ns, usable, journal.data, journal.starts, journal.kinds
                ):
                    builder.add_folding(journal.read(source))
                continue
            read = backend.read_local_runs([journal.run], [journal.path], strict=False)[0]
            builder.add_folding(read)
            if options.wants_records(default=True):
                usual[journal.position] = records_table([read])
        tables = builder.finish()
    if options.wants_records(default=True):
        counts = batch_read.counts
        scanned = _scanned_rows(paths, counts, source, batch_read.scan, batch_read.buffer)
        tables = dataclasses.replace(tables, records=_records_in_order(scanned, counts, usual))
    return BatchResult(tables, len(paths), builder.bad_runs)


_opened: dict[str, Backend] = {}


def run_batch(batch: RunBatch, options: LoadOptions) -> BatchResult:
    """One batch in a process that has no backend open (a worker process, a Dask task): the source is opened
    once per process and URL and kept, as opening a stream binding costs a round trip."""
    backend = _opened.get(batch.url)
    if backend is None:
        backend = _opened[batch.url] = open_source(batch.url)
    return tables_of_batch(backend, batch, options.for_batches())
