"""One batch of work: a few runs of one source, read through its backend, folded and tabled.

Below the loader, the worker processes and the Dask tasks, which all call ``tables_of_batch``: a worker
imports this module, never the loader that starts workers. A batch names its source by URL, so whoever runs
it (this process, a worker process, a Dask worker on another machine) can open the source itself and the
journals never travel through a pipe.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa

from journaltools._base.perf import paused_gc
from journaltools.folding import native as native_fold
from journaltools.protocol import native
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import journal_generation
from journaltools.sources.base import Backend
from journaltools.sources.registry import open_source
from journaltools.sources.scan import max_journal_bytes, read_journals_into
from journaltools.tables.build import TablesBuilder
from journaltools.tables.options import LoadOptions
from journaltools.tables.records import scanned_batch_rows
from journaltools.tables.schema import Tables

#: Journals per batch at most: what a batch holds per run (its fold, its rows) is bounded too, not only bytes.
BATCH_RUNS: Final = 1024


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
    current: list[str] = []
    current_paths: list[str] = []
    size = 0
    for run, path, length in paths:
        if current and (size + length > options.batch_bytes or len(current) >= BATCH_RUNS):
            yield RunBatch(backend.url, tuple(current), size, tuple(current_paths))
            current, current_paths, size = [], [], 0
        current.append(run)
        current_paths.append(path)
        size += length
    if current:
        yield RunBatch(backend.url, tuple(current), size, tuple(current_paths))


def reads_in_place(batch: RunBatch, options: LoadOptions) -> bool:
    """Whether ``tables_of_batch`` reads ``batch`` into one buffer the scanner proves (``_records_read_in_place``):
    a records-only load of local plain journals, with the scanner built."""
    return not options.fold and options.wants_records(default=True) and native.active() and batch.paths is not None


def folds_natively(batch: RunBatch, options: LoadOptions) -> bool:
    """Whether a folded load's ``batch`` is folded natively where its journals allow (``folding.native``): local plain
    journals, read and proven by the C scanner, with the native fold in use."""
    return options.fold and native.active() and native_fold.active() and batch.paths is not None


def tables_of_batch(backend: Backend, batch: RunBatch, options: LoadOptions) -> BatchResult:
    """The tables of one batch, read leniently through ``backend`` and folded leniently here."""
    if reads_in_place(batch, options) and batch.paths is not None:
        return _records_read_in_place(backend, batch, list(zip(batch.runs, batch.paths, strict=True)))
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
    # A journal past the bound is never read here, so the buffer need not hold more than the bound per journal
    # (a sparse file of a terabyte lists as a terabyte).
    capacity = min(batch.size, max_journal_bytes() * len(paths))
    buffer, lengths = read_journals_into([path for _, path in paths], capacity)
    scan = native.scan_batch(buffer, [length or 0 for length in lengths])
    assert scan is not None  # the caller checked the scanner is active
    # A journal left to the usual read was given length 0, which the scan never proves: its count is -1 too.
    counts: list[int] = np.frombuffer(scan.proven, np.int64).tolist()
    proven = [(run, count) for (run, _), count in zip(paths, counts, strict=True) if count >= 0]
    scanned = scanned_batch_rows([run for run, _ in proven], [count for _, count in proven], backend.url, scan, buffer)
    august = _august_with_newest_fields(scan, counts, buffer)
    if len(proven) == len(paths) and not august:
        return BatchResult(Tables.of(records=scanned), len(paths), [])
    parts: list[pa.Table] = []
    findings: list[pa.Table] = []
    bad: list[tuple[str, Finding]] = []
    row = start = 0
    for index, ((run, _), count) in enumerate(zip(paths, counts, strict=True)):
        if count >= 0 and index not in august:
            row += count
            continue
        parts.append(scanned.slice(start, row - start))
        # An August journal proven with newest fields is not canonical for its build: its rows are left out.
        row += max(count, 0)
        start = row
        builder = TablesBuilder(records=True, folded=False)
        with paused_gc():
            for read in backend.read_runs([run], strict=False):
                builder.add(read, None)
        alone = builder.finish()
        parts.append(alone.records)
        findings.append(alone.findings)
        bad.extend(builder.bad_runs)
    parts.append(scanned.slice(start))
    tables = Tables.of(records=pa.concat_tables(parts), findings=pa.concat_tables(findings))
    return BatchResult(tables, len(paths), bad)


def _august_with_newest_fields(scan: native.BatchScan, counts: list[int], body: np.ndarray) -> set[int]:
    """The journals the scan proved holding fields only the newest line writes whose meta record is the August
    build's: what its encoder never writes, so they are read the usual way (as noncanonical lines)."""
    if not any(scan.newest):
        return set()
    offsets = np.frombuffer(scan.offsets, np.int64)
    found: set[int] = set()
    first_line = 0
    for index, count in enumerate(counts):
        if count < 0:
            continue
        if scan.newest[index]:
            line = bytes(body[offsets[first_line] : offsets[first_line + 1]])
            if not journal_generation(line).extended_records:
                found.add(index)
        first_line += count
    return found


_opened: dict[str, Backend] = {}


def run_batch(batch: RunBatch, options: LoadOptions) -> BatchResult:
    """One batch in a process that has no backend open (a worker process, a Dask task): the source is opened
    once per process and URL and kept, as opening a stream binding costs a round trip."""
    backend = _opened.get(batch.url)
    if backend is None:
        backend = _opened[batch.url] = open_source(batch.url)
    return tables_of_batch(backend, batch, options.for_batches())
