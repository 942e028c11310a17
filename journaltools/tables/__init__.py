"""Arrow tables over journals: ``records``, ``runs``, ``segments``, ``messages``, ``tool_calls``, ``findings``.

One loader for every source (the runtime's default directory when none is given, a directory, a journal file,
``file://``, ``nats://host:port/STREAM``, ``embedded``), from one run to all of them::

    tables = load("runs/", strict=False)           # lenient: every journal, every record, every finding
    tables.runs, tables.findings                   # pyarrow.Table
    frames = tables.to_pandas()                    # pandas.DataFrame per table, Arrow-backed dtypes

The package, by what each file holds: ``schema`` (the seven schemas, ``Tables``), ``build`` (the pure builder
from reads and folds; the shape of what it reads is ``folding.reads``), ``records`` (the records table),
``options`` (``LoadOptions``, shared with the audit), ``batch`` (one batch of runs), ``loader`` (``load``,
``iter_tables``), ``parallel`` and ``workers`` (how the work is spread), ``parquet`` (audits on disk), ``where`` (the
one filter expression over the runs table: ``load(where=)``, ``--where``, the run browser's search box).

Each name is imported on first use: ``journaltools.tables.prices`` and the other light modules of the package are
read by commands that must not pay for pyarrow and pandas (``show`` prices a run without building a table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from journaltools._base.lazy import lazy_names

if TYPE_CHECKING:
    from journaltools.tables.build import Folded, TablesBuilder, fold_read, tables_of, tables_of_reads
    from journaltools.tables.columns import findings_of, findings_table
    from journaltools.tables.loader import iter_tables, kept_runs, load
    from journaltools.tables.options import LoadOptions
    from journaltools.tables.parquet import read_audit
    from journaltools.tables.schema import (
        FINDINGS_SCHEMA,
        MESSAGES_SCHEMA,
        RECORDS_SCHEMA,
        RUNS_SCHEMA,
        SCHEMAS,
        SEGMENTS_SCHEMA,
        TABLE_NAMES,
        TIMESTAMP,
        TOOL_CALLS_SCHEMA,
        PandasTables,
        Tables,
        empty_table,
        to_pandas,
    )
    from journaltools.tables.where import RunFilter, filtered_tables, parse_filter

_LAZY = {
    "Folded": "journaltools.tables.build",
    "TablesBuilder": "journaltools.tables.build",
    "fold_read": "journaltools.tables.build",
    "tables_of": "journaltools.tables.build",
    "tables_of_reads": "journaltools.tables.build",
    "findings_of": "journaltools.tables.columns",
    "findings_table": "journaltools.tables.columns",
    "iter_tables": "journaltools.tables.loader",
    "load": "journaltools.tables.loader",
    "kept_runs": "journaltools.tables.loader",
    "LoadOptions": "journaltools.tables.options",
    "read_audit": "journaltools.tables.parquet",
    "FINDINGS_SCHEMA": "journaltools.tables.schema",
    "MESSAGES_SCHEMA": "journaltools.tables.schema",
    "RECORDS_SCHEMA": "journaltools.tables.schema",
    "RUNS_SCHEMA": "journaltools.tables.schema",
    "SCHEMAS": "journaltools.tables.schema",
    "SEGMENTS_SCHEMA": "journaltools.tables.schema",
    "TABLE_NAMES": "journaltools.tables.schema",
    "TIMESTAMP": "journaltools.tables.schema",
    "TOOL_CALLS_SCHEMA": "journaltools.tables.schema",
    "PandasTables": "journaltools.tables.schema",
    "Tables": "journaltools.tables.schema",
    "empty_table": "journaltools.tables.schema",
    "to_pandas": "journaltools.tables.schema",
    "RunFilter": "journaltools.tables.where",
    "filtered_tables": "journaltools.tables.where",
    "parse_filter": "journaltools.tables.where",
}


__all__ = [
    "FINDINGS_SCHEMA",
    "MESSAGES_SCHEMA",
    "RECORDS_SCHEMA",
    "RUNS_SCHEMA",
    "SCHEMAS",
    "SEGMENTS_SCHEMA",
    "TABLE_NAMES",
    "TIMESTAMP",
    "TOOL_CALLS_SCHEMA",
    "Folded",
    "LoadOptions",
    "PandasTables",
    "RunFilter",
    "Tables",
    "TablesBuilder",
    "empty_table",
    "filtered_tables",
    "findings_of",
    "findings_table",
    "fold_read",
    "iter_tables",
    "kept_runs",
    "load",
    "parse_filter",
    "read_audit",
    "tables_of",
    "tables_of_reads",
    "to_pandas",
]

__getattr__, __dir__ = lazy_names("journaltools.tables", _LAZY, __all__, globals())
