"""Arrow tables over journals: ``records``, ``runs``, ``segments``, ``messages``, ``tool_calls``, ``findings``.

One loader for every source (the runtime's default directory when none is given, a directory, a journal file,
``file://``, ``nats://host:port/STREAM``, ``embedded``), from one run to all of them::

    tables = load("runs/", strict=False)           # lenient: every journal, every record, every finding
    tables.runs, tables.findings                   # pyarrow.Table
    frames = tables.to_pandas()                    # pandas.DataFrame per table, Arrow-backed dtypes

The package, by what each file holds: ``schema`` (the seven schemas, ``Tables``), ``reads`` (the shape of what
the builder reads), ``build`` (the pure builder from reads and folds), ``records`` (the records table),
``options`` (``LoadOptions``, shared with the audit), ``batch`` (one batch of runs), ``loader`` (``load``,
``iter_tables``), ``parallel`` and ``workers`` (how the work is spread), ``parquet`` (audits on disk).
"""

from journaltools.tables.build import Folded, TablesBuilder, fold_read, tables_of, tables_of_reads
from journaltools.tables.columns import findings_of, findings_table
from journaltools.tables.loader import iter_tables, load
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
    "Tables",
    "TablesBuilder",
    "empty_table",
    "findings_of",
    "findings_table",
    "fold_read",
    "iter_tables",
    "load",
    "read_audit",
    "tables_of",
    "tables_of_reads",
    "to_pandas",
]
