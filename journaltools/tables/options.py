"""``LoadOptions``: the one options object of ``load``, ``iter_tables`` and ``audit_sources``.

A load reads what it needs from it and an audit reads the rest: one declaration, so the two can never drift
apart in a name, a type or a default. Change a field with a keyword (``load(source, strict=False)``,
``audit_sources(urls, parquet="out")``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from journaltools.protocol.findings import Finding
from journaltools.sources.in_place import BATCH_BYTES
from journaltools.stores.turns.recovery import DEFAULT_STUCK_AFTER
from journaltools.tables.prices import PricesLike

if TYPE_CHECKING:
    from journaltools.stores.tasks import TaskStore
    from journaltools.stores.turns.contract import TurnStore
    from journaltools.tables.where import RunFilter


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load (and audit). Every field has the default a notebook user wants."""

    strict: bool = True
    """Raise the first refusal (the reader's ``CorruptJournal``, the fold's ``FoldError``); False keeps every
    journal (a refused one with status ``invalid``) and reports it in ``findings``. Audits are always lenient."""
    fold: bool = True
    """Fold every run (``runs``, ``segments``, ``messages``, ``tool_calls``); False: ``records`` and
    ``findings`` only."""
    records: bool | None = None
    """Build the ``records`` table (every record's bytes). None: a load builds it, an audit does not write it."""
    batch_bytes: int = BATCH_BYTES
    """Journal bytes per batch of work (and per Dask task of file journals): memory holds a few batches
    besides the tables, never the whole source."""
    runs_per_batch: int = 256
    """Runs per batch where the source cannot say how large its journals are (JetStream)."""
    workers: int | None = None
    """Processes that fold (this one included): None decides by the source and the size of the load
    (``parallel.processes_for``: local journals the native fold takes stay in this process, a large load folded in
    Python shares its batches with worker processes); 1 folds in this process only. A records-only load
    (``fold=False``) of local journals reads on this many threads instead (None: one per core, at most four)."""
    progress: bool | None = None
    """A progress bar; by default only in a notebook or on a terminal."""
    task_store: str | os.PathLike[str] | TaskStore | None = None
    """A task store (or its URL): fills ``runs.task_state`` for every run whose id names a task it holds."""
    prices: PricesLike | None = None
    """The user's prices (a price file's path, its document, ``{model: {tier: price}}`` or a ``PriceTable``; see
    ``journaltools.tables.prices``): adds the cost columns to ``runs`` and ``responses``, and a ``no_price`` finding for
    each run whose cost cannot be known. None: no cost columns (journaltools ships no prices)."""
    where: str | RunFilter | None = None
    """A filter expression over the ``runs`` table (docs/filter.md): ``runs`` keeps the runs it keeps, and every other
    table the rows of those runs only (the source's own findings, which name no run, stay). Parsed before any
    journal is read, so a wrong one (``InvalidFilter``) costs nothing."""
    # -- audits ---------------------------------------------------------------------------------------------
    parquet: str | os.PathLike[str] | None = None
    """``audit_sources``: a directory to write the tables into as Parquet."""
    dask: Any = None
    """``audit_sources``: True for one Dask task per batch on the current scheduler, or a ``distributed.Client``."""
    row_group_bytes: int = 8 << 20
    """``audit_sources``: Arrow bytes buffered per table before a Parquet row group is written."""
    keep_findings: bool = True
    """``audit_sources``: keep every finding in the result; False keeps only counts (memory then stays flat
    however many findings there are: stream them to ``on_finding`` and Parquet)."""
    on_finding: Callable[[Finding], None] | None = None
    """``audit_sources``: called with each finding as its batch is done, in source, run and journal order."""
    turn_store: str | os.PathLike[str] | TurnStore | None = None
    """``audit_sources``: a turnjournal store (or its URL): its turn-checkpoint findings follow the journals'."""
    stuck_after: timedelta = DEFAULT_STUCK_AFTER
    """``audit_sources`` with ``turn_store``: how long a record may stay in one phase."""

    def wants_records(self, *, default: bool) -> bool:
        return default if self.records is None else self.records

    def for_batches(self) -> LoadOptions:
        """These options as a batch in another process needs them: lenient, nothing that cannot cross a pipe
        (the task store and the callback stay with the loader, which applies them)."""
        return dataclasses.replace(self, strict=False, task_store=None, on_finding=None, turn_store=None, dask=None)


class LoadChanges(TypedDict, total=False):
    """The fields of ``LoadOptions`` as keywords."""

    strict: bool
    fold: bool
    records: bool | None
    batch_bytes: int
    runs_per_batch: int
    workers: int | None
    progress: bool | None
    task_store: str | os.PathLike[str] | TaskStore | None
    prices: PricesLike | None
    where: str | RunFilter | None
    parquet: str | os.PathLike[str] | None
    dask: Any
    row_group_bytes: int
    keep_findings: bool
    on_finding: Callable[[Finding], None] | None
    turn_store: str | os.PathLike[str] | TurnStore | None
    stuck_after: timedelta


def resolve(options: LoadOptions | None, changes: LoadChanges) -> LoadOptions:
    base = options if options is not None else LoadOptions()
    return dataclasses.replace(base, **changes) if changes else base
