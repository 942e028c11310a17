"""Batch audits: every record and run of one or more sources checked, every problem a finding.

An audit never stops at the first bad journal. It checks what the source system never checks
(PROTOCOL.md section 9): every record against its schema, the optional-flag rules, run ids against
file names and subjects, sequence gaps, approvals without deferrals, and every fold rule.

``audit_sources(urls, parquet=DIR)`` also writes the tables of ``journaltools.tables`` (``runs``,
``messages``, ``tool_calls``, ``findings``, and ``records`` with ``include_records=True``) as Parquet
that pandas, pyarrow and DuckDB read with the right types (UTC timestamps, int64 counts, nullable
columns). Every run of the sources is in ``runs``; a run with an error finding has status ``invalid``.

How it runs:

* Locally (default), the sources are loaded batch by batch (``tables.iter_tables``): batches of
  journals are folded in worker processes (both cores), and each batch is appended to one
  ``pyarrow.parquet.ParquetWriter`` per table as soon as it comes back, so peak memory holds a few
  batches whatever the number of runs. Output: ``DIR/<table>.parquet``, one file per table, written
  under a temporary name and renamed when complete.
* With ``dask=True`` (or a ``distributed.Client``), one Dask task per batch of journals folds it and
  writes its own partition: ``DIR/<table>.parquet/part.<n>.parquet`` (the Dask/Spark layout, a
  directory per table). pandas and pyarrow read either layout with the same path; DuckDB reads a
  directory with a glob: ``read_parquet('DIR/runs.parquet/*.parquet')``. ``read_audit(DIR)`` reads both.

Given one file source and one JetStream source, the audit also compares their listings, taken while each
source is open (``listing_findings``): ``listing_documented``, ``listing_summary_rule`` and
``listing_discrepancy`` findings, after the others and in the Parquet ``findings`` table too.

Progress: a tqdm bar per source (a widget in notebooks), silent when stderr is not a terminal or with
``quiet=True``.

Beyond the journals: ``task_store=`` (a task store or its URL) fills the ``task_state`` column of ``runs`` for
every run whose meta names a task; ``turn_store=`` (a turnjournal store or its URL) adds the turn-checkpoint
findings (``turnjournal.analysis``: calls waiting for an operator, stuck or unacknowledged records, owner-index
problems) to the result and to the ``findings`` table, after the journals' findings.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict, Unpack

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from journaltools.backends.base import Backend, RunRead, RunSummary
from journaltools.backends.oserrors import mapped
from journaltools.backends.registry import open_source, scheme_of
from journaltools.backends.scan import DEFAULT_MAX_LINE_BYTES
from journaltools.compare import compare_listings, findings_from_comparison
from journaltools.fold import FoldResult, fold
from journaltools.protocol.findings import Finding, at_least
from journaltools.tables import SCHEMAS, LoadOptions, Tables, empty_table, findings_of, findings_table, iter_tables
from journaltools.tables.batch import BatchJob, jobs_for, run_job
from journaltools.tables.loader import open_task_store_of, with_task_states
from journaltools.turnjournal.analysis import DEFAULT_STUCK_AFTER

if TYPE_CHECKING:
    from journaltools.tasks import TaskStore
    from journaltools.turnjournal.stores import TurnStore

#: The tables an audit writes; ``records`` only with ``include_records=True`` (it holds every record's bytes).
AUDIT_TABLES: Final = ("runs", "messages", "tool_calls", "findings")


@dataclass(slots=True)
class RunAudit:
    """One run's audit: what was read, its lenient fold (None when the journal was refused) and its findings."""

    source: str
    read: RunRead
    result: FoldResult | None
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """How to audit. Change a field with a keyword of ``audit_sources`` (``audit_sources(urls, parquet="out")``)."""

    parquet: str | os.PathLike[str] | None = None
    """A directory to write the tables into as Parquet (see the module doc)."""
    include_records: bool = False
    """Write the ``records`` table too (every record's bytes)."""
    dask: Any = None
    """True: one Dask task per batch on the current scheduler; or a ``distributed.Client`` to use."""
    batch_bytes: int = 8 << 20
    """Journal bytes per batch (and per Dask task of file journals)."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """A longer line is a ``line_too_long`` finding, skipped without being held whole."""
    row_group_bytes: int = 8 << 20
    """Arrow bytes buffered per table before a Parquet row group is written (local audits)."""
    runs_per_task: int = 256
    """Runs per Dask task of a JetStream source (each task reads its own from the server)."""
    workers: int | None = None
    """Processes that fold (see ``LoadOptions.workers``)."""
    progress: bool | None = None
    """A progress bar; by default only in a notebook or on a terminal."""
    quiet: bool = False
    """No progress bar, whatever ``progress`` says."""
    keep_findings: bool = True
    """Keep every finding in ``AuditResult.findings``; False keeps only counts (memory then stays flat however
    many findings there are: an audit of millions of runs streams them to ``on_finding`` and Parquet)."""
    on_finding: Callable[[Finding], None] | None = None
    """Called with each finding as its batch is done, in source, run and journal order."""
    task_store: str | os.PathLike[str] | TaskStore | None = None
    """A task store (or its URL; a URL only with ``dask``): fills ``runs.task_state`` for runs whose meta names a
    task."""
    turn_store: str | os.PathLike[str] | TurnStore | None = None
    """A turnjournal store (or its URL): its turn-checkpoint findings are added after the journals'."""
    stuck_after: timedelta = DEFAULT_STUCK_AFTER
    """With ``turn_store``: how long a record may stay in one phase, or wait for its acknowledgement."""

    def load_options(self) -> LoadOptions:
        return LoadOptions(
            strict=False,
            records=self.include_records,
            batch_bytes=self.batch_bytes,
            max_line_bytes=self.max_line_bytes,
            progress=False if self.quiet else self.progress,
            workers=self.workers,
        )


class AuditChanges(TypedDict, total=False):
    """The fields of ``AuditOptions`` as keywords."""

    parquet: str | os.PathLike[str] | None
    include_records: bool
    dask: Any
    batch_bytes: int
    max_line_bytes: int
    row_group_bytes: int
    runs_per_task: int
    workers: int | None
    progress: bool | None
    quiet: bool
    keep_findings: bool
    on_finding: Callable[[Finding], None] | None
    task_store: str | os.PathLike[str] | TaskStore | None
    turn_store: str | os.PathLike[str] | TurnStore | None
    stuck_after: timedelta


@dataclass(slots=True)
class AuditResult:
    findings: list[Finding] = field(default_factory=list)
    """Every finding, unless the audit was asked not to keep them (``keep_findings=False``)."""
    counts: dict[str, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "info": 0})
    """Findings by severity (kept or not)."""
    runs: int = 0
    records: int = 0
    parquet: dict[str, Path] = field(default_factory=dict)  # table -> the file (or directory) written
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows written

    def add(self, finding: Finding, options: AuditOptions) -> None:
        self.counts[finding.severity] = self.counts.get(finding.severity, 0) + 1
        if options.keep_findings:
            self.findings.append(finding)
        if options.on_finding is not None:
            options.on_finding(finding)

    def worst(self) -> str | None:
        return next((s for s in ("error", "warning", "info") if self.counts.get(s)), None)

    def fails(self, threshold: str) -> bool:
        return any(count and at_least(severity, threshold) for severity, count in self.counts.items())


def _with_source(findings: list[Finding], source: str) -> list[Finding]:
    return [
        Finding(f.run, f.seq, f.code, f.severity, f.message, f.source or source) if not f.source else f
        for f in findings
    ]


def audit_run(backend: Backend, run: str) -> RunAudit:
    """Read leniently and fold leniently: the findings of one run, in journal order."""
    read = backend.read_run(run, strict=False)
    findings = list(read.findings)
    result = None
    if read.complete:
        result = fold(read.records, strict=False, run=run)
        findings.extend(result.findings)
    return RunAudit(backend.url, read, result, _with_source(findings, backend.url))


def iter_run_audits(backend: Backend, runs: Sequence[str] | None = None) -> Iterator[RunAudit]:
    """One run at a time, so memory holds one journal, not the source."""
    for run in runs if runs is not None else backend.list_runs():
        yield audit_run(backend, run)


def source_findings(backend: Backend) -> list[Finding]:
    """Findings about the source itself rather than one readable run (e.g. journals with unusable names)."""
    return backend.source_findings()


@dataclass(frozen=True, slots=True)
class SourceListing:
    """One source's listing, taken while the source is open (an embedded server stops when it closes)."""

    kind: str
    url: str
    rows: list[RunSummary]

    @classmethod
    def of(cls, backend: Backend) -> SourceListing:
        return cls(backend.kind, backend.url, backend.listing())


def compares_listings(urls: Sequence[str]) -> bool:
    """Whether an audit of ``urls`` compares their listings: one file source and one JetStream source."""
    kinds = sorted("nats" if scheme_of(url) in ("nats", "embedded") else scheme_of(url) for url in urls)
    return kinds == ["file", "nats"]


def listing_findings(listings: Sequence[SourceListing]) -> list[Finding]:
    """For one file listing and one JetStream listing (either order), the ``listing_*`` finding of every run
    they disagree on (``journaltools.compare``, file as side a); [] for any other listings.

    Each finding's ``source`` names both sides (``FILE_URL vs NATS_URL``). Memory holds the two listings: one
    small row per run.
    """
    by_kind = {listing.kind: listing for listing in listings}
    file_side, nats_side = by_kind.get("file"), by_kind.get("jetstream")
    if len(listings) != 2 or file_side is None or nats_side is None:
        return []
    table = compare_listings(file_side.rows, nats_side.rows, "file", "jetstream")
    return findings_from_comparison(table, f"{file_side.url} vs {nats_side.url}")


# -- Parquet ----------------------------------------------------------------------------------------


def _table_names(include_records: bool) -> tuple[str, ...]:
    return (*AUDIT_TABLES, "records") if include_records else AUDIT_TABLES


def _statistics_columns(name: str) -> list[str]:
    """Columns worth min/max statistics: not the long texts (bodies, messages, inputs). Their statistics
    would be useless for filtering, and a writer keeps every row group's statistics in memory until it
    closes, so they would make memory grow with the number of batches."""
    return [f.name for f in SCHEMAS[name] if f.type != pa.large_string() and f.name != "message"]


def _parquet_writer(path: Path, name: str) -> pq.ParquetWriter:
    return pq.ParquetWriter(path, SCHEMAS[name], compression="zstd", write_statistics=_statistics_columns(name))


class ParquetTables:
    """One ``ParquetWriter`` per table; ``write`` buffers a batch's tables and writes a row group once a
    table has ``row_group_bytes`` pending (and at ``close``).

    Buffering bounds memory (at most ``row_group_bytes`` pending per table) and keeps the number of row
    groups, whose metadata every writer holds until it closes, proportional to the data, not to the
    number of batches. Files are written as ``<table>.parquet.partial`` and renamed by ``close`` once
    complete, so a failed audit never leaves a file that looks finished.
    """

    def __init__(
        self, directory: str | os.PathLike[str], names: Sequence[str], *, row_group_bytes: int = 8 << 20
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.row_group_bytes = row_group_bytes
        self.rows = dict.fromkeys(names, 0)
        self._pending: dict[str, list[pa.Table]] = {name: [] for name in names}
        self._pending_bytes = dict.fromkeys(names, 0)
        self._writers: dict[str, pq.ParquetWriter] = {}
        try:
            for name in names:
                self._writers[name] = _parquet_writer(self._partial(name), name)
        except BaseException:
            self.abort()  # a full disk can refuse the third file after the first two were made
            with contextlib.suppress(OSError):
                self._partial(name).unlink(missing_ok=True)
            raise

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.parquet"

    def _partial(self, name: str) -> Path:
        return self.directory / f"{name}.parquet.partial"

    def write_table(self, name: str, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._pending[name].append(table.cast(SCHEMAS[name]))
        self._pending_bytes[name] += table.nbytes
        self.rows[name] += table.num_rows
        if self._pending_bytes[name] >= self.row_group_bytes:
            self._flush(name)

    def _flush(self, name: str) -> None:
        pending = self._pending[name]
        if pending:
            self._writers[name].write_table(pa.concat_tables(pending), row_group_size=1 << 30)
        pending.clear()
        self._pending_bytes[name] = 0
        pa.default_memory_pool().release_unused()  # hand the row group's buffers back, not just to the pool

    def write(self, tables: Tables) -> None:
        for name in self._writers:
            self.write_table(name, tables[name])

    def close(self) -> dict[str, Path]:
        written = {}
        for name, writer in self._writers.items():
            self._flush(name)
            writer.close()
            target = self.path(name)
            if target.is_dir():  # an earlier Dask audit into the same directory
                shutil.rmtree(target)
            os.replace(self._partial(name), target)
            written[name] = target
        return written

    def abort(self) -> None:
        """Remove every partial file, even when closing a writer fails too (a full disk fails its last flush)."""
        for name, writer in self._writers.items():
            self._pending[name].clear()
            with contextlib.suppress(OSError):
                writer.close()
            with contextlib.suppress(OSError):
                self._partial(name).unlink(missing_ok=True)


def read_audit(directory: str | os.PathLike[str], names: Sequence[str] | None = None) -> Tables:
    """The tables an audit wrote into ``directory`` (either layout), with their schemas; missing ones empty."""
    root = Path(directory)
    tables: dict[str, pa.Table] = {}
    for name in SCHEMAS:
        path = root / f"{name}.parquet"
        if (names is not None and name not in names) or not path.exists():
            tables[name] = empty_table(name)
            continue
        parts = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        pieces = [pq.read_table(part, schema=SCHEMAS[name]) for part in parts]
        tables[name] = pa.concat_tables(pieces) if pieces else empty_table(name)
    return Tables(**tables)


# -- the audit --------------------------------------------------------------------------------------


def _count_records(runs: pa.Table) -> int:
    total = pc.sum(runs["records"]).as_py()
    return int(total or 0)


# -- task states and turn checkpoints ---------------------------------------------------------------


def _turn_findings(store: str | os.PathLike[str] | TurnStore | None, stuck_after: timedelta) -> list[Finding]:
    if store is None:
        return []
    from journaltools.turnjournal.analysis import audit_turns

    opened = os.fspath(store) if isinstance(store, os.PathLike) else store
    return audit_turns(opened, stuck_after=stuck_after).findings


def audit_sources(
    urls: Sequence[str], options: AuditOptions | None = None, **changes: Unpack[AuditChanges]
) -> AuditResult:
    """Audit every run of every source; findings in source, run and journal order.

    ``options`` (or its fields as keywords): see ``AuditOptions``. Locally the sources are loaded batch by
    batch and each batch is written out before the next is loaded; with ``dask`` each task writes its own
    partition (file journals must then be reachable at the same path from the workers).
    """
    opts = dataclasses.replace(options or AuditOptions(), **changes) if changes else options or AuditOptions()
    if opts.dask is not None and opts.dask is not False:
        if opts.parquet is None:
            raise ValueError("the Dask audit writes Parquet partitions: give parquet=DIR")
        if opts.task_store is not None and not isinstance(opts.task_store, (str, os.PathLike)):
            raise ValueError("the Dask audit's tasks open the task store themselves: give its URL")
        return _audit_dask(urls, Path(opts.parquet), opts)
    result = AuditResult()
    compare = compares_listings(urls)
    listed: list[SourceListing] = []
    writer = None
    if opts.parquet is not None:
        with mapped(opts.parquet, "write the Parquet tables"):
            writer = ParquetTables(
                opts.parquet, _table_names(opts.include_records), row_group_bytes=opts.row_group_bytes
            )
    tasks, close_tasks = None, False
    try:
        tasks, close_tasks = open_task_store_of(opts.task_store)  # both stores first: a wrong URL fails before work
        turns = _turn_findings(opts.turn_store, opts.stuck_after)
        load_options = dataclasses.replace(opts.load_options(), task_store=tasks)
        for url in urls:
            backend = open_source(url)
            try:
                if compare:
                    listed.append(SourceListing.of(backend))
                for tables in iter_tables(backend, options=load_options):
                    result.runs += tables.runs.num_rows
                    result.records += _count_records(tables.runs)
                    for finding in findings_of(tables.findings):
                        result.add(finding, opts)
                    if writer is not None:
                        with mapped(writer.directory, "write the Parquet tables"):
                            writer.write(tables)
            finally:
                backend.close()
        comparison = listing_findings(listed)
        for finding in [*turns, *comparison]:  # after the journals' findings
            result.add(finding, opts)
        if writer is not None:
            with mapped(writer.directory, "write the Parquet tables"):
                writer.write_table("findings", findings_table([*turns, *comparison]))
                result.parquet = writer.close()
            result.rows = dict(writer.rows)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        if tasks is not None and close_tasks:
            tasks.close()
    return result


@dataclass(frozen=True, slots=True)
class _PartitionDone:
    findings: pa.Table
    runs: int
    records: int
    rows: dict[str, int]


def audit_partition(
    job: BatchJob, directory: str, number: int, names: tuple[str, ...], task_store: str | None = None
) -> _PartitionDone:
    """One Dask task: fold a batch of journals and write its partition of every table (``task_store``: the URL
    of the task store the task reads ``task_state`` from)."""
    output = run_job(job)
    tables = output.tables
    if task_store is not None:
        from journaltools.stores import open_task_store

        with open_task_store(task_store) as store:
            tables = with_task_states(tables, store)
    rows = {}
    for name in names:
        table = tables[name]
        folder = Path(directory) / f"{name}.parquet"
        folder.mkdir(parents=True, exist_ok=True)
        with _parquet_writer(folder / f"part.{number:05d}.parquet", name) as writer:
            writer.write_table(table.cast(SCHEMAS[name]))
        rows[name] = table.num_rows
    records = _count_records(tables.runs)
    return _PartitionDone(tables.findings, output.runs, records, rows)


def _audit_dask(urls: Sequence[str], directory: Path, opts: AuditOptions) -> AuditResult:
    dask_module: Any = importlib.import_module("dask")  # the optional "dask" extra; untyped, hence Any
    delayed = dask_module.delayed

    names = _table_names(opts.include_records)
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:  # a previous audit's partitions must not mix with this one's
        target = directory / f"{name}.parquet"
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    result = AuditResult()
    early: list[Finding] = []
    compare = compares_listings(urls)
    listed: list[SourceListing] = []
    tasks: list[Any] = []
    task_store = os.fspath(opts.task_store) if isinstance(opts.task_store, (str, os.PathLike)) else None
    turns = _turn_findings(opts.turn_store, opts.stuck_after)  # first: a wrong URL fails before any work
    # The sources stay open until the tasks are done: closing an embedded source stops its server.
    with contextlib.ExitStack() as opened:
        for url in urls:
            backend = opened.enter_context(open_source(url))
            if compare:
                listed.append(SourceListing.of(backend))
            early.extend(source_findings(backend))
            # A JetStream task connects to the server itself, with the URL as given (it may carry credentials);
            # "embedded" names the server this process started.
            reopen = url if scheme_of(url) == "nats" else backend.url
            jobs = jobs_for(backend, reopen, opts.load_options(), opts.runs_per_task)
            # Partition 0 holds the source-level findings; batches are numbered from 1, in run order.
            tasks.extend(
                delayed(audit_partition)(job, str(directory), len(tasks) + 1, names, task_store) for job in jobs
            )
        early.extend(turns)  # partition 0 holds them too: findings about the sources, not one batch
        comparison = listing_findings(listed)
        scheduler = None if opts.dask is True else opts.dask
        done: Sequence[_PartitionDone] = dask_module.compute(*tasks, scheduler=scheduler) if tasks else ()
    result.rows = dict.fromkeys(names, 0)
    for name in names:
        if (early and name == "findings") or not tasks:  # every table directory gets at least one file
            table = findings_table(early) if name == "findings" else empty_table(name)
            folder = directory / f"{name}.parquet"
            folder.mkdir(parents=True, exist_ok=True)
            with _parquet_writer(folder / "part.00000.parquet", name) as writer:
                writer.write_table(table)
            result.rows[name] += table.num_rows
    for finding in early:
        result.add(finding, opts)
    for part in done:
        for finding in findings_of(part.findings):
            result.add(finding, opts)
        result.runs += part.runs
        result.records += part.records
        for name, count in part.rows.items():
            result.rows[name] += count
    if comparison:  # after every batch, as in the local audit: the last partition of the findings
        folder = directory / "findings.parquet"
        folder.mkdir(parents=True, exist_ok=True)
        with _parquet_writer(folder / f"part.{len(tasks) + 1:05d}.parquet", "findings") as writer:
            writer.write_table(findings_table(comparison))
        result.rows["findings"] += len(comparison)
        for finding in comparison:
            result.add(finding, opts)
    result.parquet = {name: directory / f"{name}.parquet" for name in names}
    return result
