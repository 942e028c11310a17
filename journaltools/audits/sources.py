"""Batch audits: every journal of one or more sources read and folded leniently, every problem a finding.

An audit never stops at the first bad journal: it is a lenient load (``tables.iter_tables``) whose findings are
collected and whose tables may be written as Parquet (``tables.parquet``). Every journal of the sources is in
``runs``; a refused one has status ``invalid``. Given prices (``prices=``, ``audit --prices FILE``), ``runs`` and
``responses`` carry the cost columns (``tables.costs``), ``AuditResult.cost`` sums them, and every run without a
cost has a ``no_price`` finding.

How it runs:

* Locally (default), the sources are loaded batch by batch (worker processes fold large loads) and each batch
  is appended to one Parquet writer per table as soon as it is done (``ParquetTables``): memory holds a few
  batches whatever the number of runs. Output: ``DIR/<table>.parquet``.
* With ``dask=True`` (or a ``distributed.Client``), one Dask task per batch loads it (opening the source
  itself: file journals must be reachable at the same path, a stream at the same URL) and writes its own
  partition: ``DIR/<table>.parquet/part.<n>.parquet``. ``read_audit(DIR)`` reads either layout.

Given one file source and one JetStream source, the audit also compares their listings, taken while each
source is open: ``listing_documented``, ``listing_summary_rule`` and ``listing_discrepancy`` findings, after the
others and in the Parquet ``findings`` table too. ``task_store=`` fills ``runs.task_state``; ``turn_store=`` adds
the turn-checkpoint findings after the journals'. ``where=`` (``audit --where``, docs/filter.md) audits only the runs
a filter expression keeps: their findings, their rows of every table, and the counts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Unpack

import pyarrow as pa
import pyarrow.compute as pc

from journaltools._base.oserrors import mapped
from journaltools.audits.listings import compare_listings, findings_from_comparison
from journaltools.protocol.findings import Finding, at_least
from journaltools.sources.listing import RunSummary
from journaltools.sources.registry import open_source, scheme_of
from journaltools.tables import LoadOptions, Tables, findings_of, findings_table, iter_tables
from journaltools.tables.batch import BatchResult, RunBatch, batches_of, run_batch
from journaltools.tables.costs import with_costs
from journaltools.tables.loader import open_task_store_of, with_task_states
from journaltools.tables.options import LoadChanges, resolve
from journaltools.tables.parquet import (
    ParquetTables,
    is_partitions,
    parquet_writer,
    read_audit,
    refuse_unreplaceable_table,
)
from journaltools.tables.prices import prices_of
from journaltools.tables.schema import is_priced, schema_of
from journaltools.tables.where import filtered_tables, where_filter

if TYPE_CHECKING:
    from journaltools.sources.base import Backend
    from journaltools.stores.tasks import TaskStore
    from journaltools.stores.turns.contract import TurnStore

__all__ = ["AUDIT_TABLES", "AuditResult", "audit_sources", "listing_findings", "read_audit"]

#: The tables an audit writes; ``records`` only with ``records=True`` (it holds every record's bytes).
AUDIT_TABLES: Final = ("runs", "segments", "messages", "tool_calls", "responses", "findings")

Sources = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None


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
    cost: float | None = None
    """With prices: the sum of ``runs.cost`` over the runs that have one (None without prices)."""
    unpriced_runs: int = 0
    """With prices: the runs whose cost is null (their ``no_price`` findings say why; refused journals too)."""
    currency: str | None = None
    """With prices: the price table's currency, when it names one."""

    def add_costs(self, runs: pa.Table) -> None:
        """Count the costs of one batch's ``runs`` (priced by a load given prices)."""
        if not is_priced(runs.schema):
            return
        column = runs["cost"]
        self.cost = (self.cost or 0.0) + float(pc.sum(column).as_py() or 0.0)
        self.unpriced_runs += column.null_count

    def add(self, finding: Finding, options: LoadOptions) -> None:
        self.counts[finding.severity] = self.counts.get(finding.severity, 0) + 1
        if options.keep_findings:
            self.findings.append(finding)
        if options.on_finding is not None:
            options.on_finding(finding)

    def worst(self) -> str | None:
        return next((s for s in ("error", "warning", "info") if self.counts.get(s)), None)

    def fails(self, threshold: str) -> bool:
        return any(count and at_least(severity, threshold) for severity, count in self.counts.items())


def source_list(sources: Sources) -> list[str]:
    """The sources as a list: a bare string or path is one source (never its characters), None the runtime's
    default directory."""
    if sources is None:
        from journaltools.sources.registry import default_source

        return [os.fspath(default_source())]
    if isinstance(sources, (str, os.PathLike)):
        return [os.fspath(sources)]
    return [os.fspath(source) for source in sources]


# -- comparing a file listing with a JetStream listing ------------------------------------------------------


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
    they disagree on (file as side a); [] for any other listings. Each finding's ``source`` names both sides."""
    by_kind = {listing.kind: listing for listing in listings}
    file_side, nats_side = by_kind.get("file"), by_kind.get("jetstream")
    if len(listings) != 2 or file_side is None or nats_side is None:
        return []
    table = compare_listings(file_side.rows, nats_side.rows, "file", "jetstream")
    return findings_from_comparison(table, f"{file_side.url} vs {nats_side.url}")


# -- the audit ----------------------------------------------------------------------------------------------


def _currency(options: LoadOptions) -> str | None:
    prices = prices_of(options.prices)
    return prices.currency if prices is not None else None


def _table_names(options: LoadOptions) -> tuple[str, ...]:
    return (*AUDIT_TABLES, "records") if options.wants_records(default=False) else AUDIT_TABLES


def _count_records(runs: pa.Table) -> int:
    total = pc.sum(runs["records"]).as_py()
    return int(total or 0)


def _turn_findings(store: str | os.PathLike[str] | TurnStore | None, stuck_after: timedelta) -> list[Finding]:
    if store is None:
        return []
    from journaltools.audits.turns import audit_turns

    opened = os.fspath(store) if isinstance(store, os.PathLike) else store
    return audit_turns(opened, stuck_after=stuck_after).findings


def _task_findings(store: str | os.PathLike[str] | TaskStore | None) -> list[Finding]:
    """What the task store holds that needs a look (a record the runtime cannot read, a completion without a
    result...): findings of the audit, while such a record's run simply gets a null ``task_state``."""
    if store is None:
        return []
    from journaltools.audits.tasks import audit_tasks

    return audit_tasks(os.fspath(store) if isinstance(store, os.PathLike) else store).findings


def audit_sources(
    sources: Sources = None, options: LoadOptions | None = None, **changes: Unpack[LoadChanges]
) -> AuditResult:
    """Audit every run of every source; findings in source, run and journal order.

    ``sources``: one source (a string or path), several, or None for the runtime's default directory.
    ``options`` (or its fields as keywords): the ``LoadOptions`` a load takes; an audit is always lenient, and
    writes ``records`` only with ``records=True``.
    """
    opts = resolve(options, changes)
    # A wrong price file is refused before any work; the checked table then travels to every batch.
    opts = dataclasses.replace(opts, strict=False, prices=prices_of(opts.prices))
    # And a wrong filter: parsed once, here, and handed to every batch as parsed.
    opts = dataclasses.replace(opts, where=where_filter(opts.where, priced=opts.prices is not None))
    urls = source_list(sources)
    if opts.dask is not None and opts.dask is not False:
        if opts.parquet is None:
            raise ValueError("the Dask audit writes Parquet partitions: give parquet=DIR")
        if opts.task_store is not None and not isinstance(opts.task_store, (str, os.PathLike)):
            raise ValueError("the Dask audit's tasks open the task store themselves: give its URL")
        return _audit_dask(urls, Path(opts.parquet), opts)
    result = AuditResult(currency=_currency(opts))
    compare = compares_listings(urls)
    listed: list[SourceListing] = []
    names = _table_names(opts)
    writer = None
    if opts.parquet is not None:
        with mapped(opts.parquet, "write the Parquet tables"):
            writer = ParquetTables(
                opts.parquet, names, row_group_bytes=opts.row_group_bytes, priced=opts.prices is not None
            )
    tasks, close_tasks = None, False
    try:
        tasks, close_tasks = open_task_store_of(opts.task_store)  # both stores first: a wrong URL fails before work
        turns = [*_task_findings(tasks), *_turn_findings(opts.turn_store, opts.stuck_after)]
        load_options = dataclasses.replace(opts, task_store=tasks, records=opts.wants_records(default=False))
        for url in urls:
            with open_source(url) as backend:
                if compare:
                    listed.append(SourceListing.of(backend))
                for tables in iter_tables(backend, options=load_options):
                    result.runs += tables.runs.num_rows
                    result.records += _count_records(tables.runs)
                    result.add_costs(tables.runs)
                    for finding in findings_of(tables.findings):
                        result.add(finding, opts)
                    if writer is not None:
                        with mapped(writer.directory, "write the Parquet tables"):
                            writer.write(tables)
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


# -- Dask ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PartitionDone:
    findings: pa.Table
    runs: int
    records: int
    rows: dict[str, int]
    #: The partition's ``runs`` costs (with prices): nothing else of its tables comes back.
    costs: pa.Table | None = None


def audit_partition(
    batch: RunBatch,
    options: LoadOptions,
    directory: str,
    number: int,
    names: tuple[str, ...],
    task_store: str | None = None,
) -> _PartitionDone:
    """One Dask task: load a batch and write its partition of every table (``task_store``: the URL of the task
    store the task reads ``task_state`` from)."""
    output: BatchResult = run_batch(batch, options)
    tables = output.tables
    if task_store is not None:
        from journaltools.stores import open_task_store

        with open_task_store(task_store) as store:
            tables = with_task_states(tables, store)
    prices = prices_of(options.prices)
    run_filter = where_filter(options.where, priced=prices is not None)
    tables = filtered_tables(with_costs(tables, prices), run_filter)
    runs = output.runs if run_filter is None else tables.runs.num_rows
    rows = {}
    for name in names:
        table = tables[name]
        _write_partition(Path(directory), name, number, table)
        rows[name] = table.num_rows
    costs = tables.runs.select(["cost"]) if is_priced(tables.runs.schema) else None
    return _PartitionDone(tables.findings, runs, _count_records(tables.runs), rows, costs)


def _write_partition(directory: Path, name: str, number: int, table: pa.Table) -> None:
    folder = directory / f"{name}.parquet"
    folder.mkdir(parents=True, exist_ok=True)
    priced = is_priced(table.schema)
    with parquet_writer(folder / f"part.{number:05d}.parquet", name, priced=priced) as writer:
        writer.write_table(table.cast(schema_of(name, priced=priced)))


def _audit_dask(urls: Sequence[str], directory: Path, opts: LoadOptions) -> AuditResult:
    dask_module: Any = importlib.import_module("dask")  # the optional "dask" extra; untyped, hence Any
    delayed = dask_module.delayed

    names = _table_names(opts)
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:  # a previous audit's partitions must not mix with this one's
        target = directory / f"{name}.parquet"
        refuse_unreplaceable_table(target)
        if is_partitions(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            target.unlink()  # a file, or a link: never followed into another directory
    result = AuditResult(currency=_currency(opts))
    early: list[Finding] = []
    compare = compares_listings(urls)
    listed: list[SourceListing] = []
    tasks: list[Any] = []
    task_store = os.fspath(opts.task_store) if isinstance(opts.task_store, (str, os.PathLike)) else None
    batch_options = dataclasses.replace(opts.for_batches(), records=opts.wants_records(default=False))
    # First: a wrong URL fails before any work.
    turns = [*_task_findings(opts.task_store), *_turn_findings(opts.turn_store, opts.stuck_after)]
    # The sources stay open until the tasks are done: closing an embedded source stops its server.
    with contextlib.ExitStack() as opened:
        for url in urls:
            backend = opened.enter_context(open_source(url))
            if compare:
                listed.append(SourceListing.of(backend))
            early.extend(backend.source_findings())
            # A JetStream task connects to the server itself, with the URL as given (it may carry credentials);
            # "embedded" names the server this process started.
            reopen = url if scheme_of(url) == "nats" else backend.url
            for batch in batches_of(backend, backend.list_runs(), opts):
                job = dataclasses.replace(batch, url=reopen)
                # Partition 0 holds the source-level findings; batches are numbered from 1, in run order.
                tasks.append(
                    delayed(audit_partition)(job, batch_options, str(directory), len(tasks) + 1, names, task_store)
                )
        early.extend(turns)  # partition 0 holds them too: findings about the sources, not one batch
        comparison = listing_findings(listed)
        scheduler = None if opts.dask is True else opts.dask
        done: Sequence[_PartitionDone] = dask_module.compute(*tasks, scheduler=scheduler) if tasks else ()
    result.rows = dict.fromkeys(names, 0)
    priced = opts.prices is not None
    for name in names:
        if (early and name == "findings") or not tasks:  # every table directory gets at least one file
            table = findings_table(early) if name == "findings" else schema_of(name, priced=priced).empty_table()
            _write_partition(directory, name, 0, table)
            result.rows[name] += table.num_rows
    for finding in early:
        result.add(finding, opts)
    for part in done:
        for finding in findings_of(part.findings):
            result.add(finding, opts)
        result.runs += part.runs
        result.records += part.records
        if part.costs is not None:
            result.add_costs(part.costs)
        for name, count in part.rows.items():
            result.rows[name] += count
    if comparison:  # after every batch, as in the local audit: the last partition of the findings
        _write_partition(directory, "findings", len(tasks) + 1, findings_table(comparison))
        result.rows["findings"] += len(comparison)
        for finding in comparison:
            result.add(finding, opts)
    result.parquet = {name: directory / f"{name}.parquet" for name in names}
    return result


def audit_tables(result: AuditResult) -> Tables:
    """The tables an audit wrote (``read_audit`` of its directory); empty when it wrote none."""
    if not result.parquet:
        return Tables.empty()
    return read_audit(next(iter(result.parquet.values())).parent)
