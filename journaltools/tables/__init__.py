"""Arrow tables over journals: ``records``, ``runs``, ``messages``, ``tool_calls`` and ``findings``.

One loader for every source (a directory, ``file://``, ``nats://host:port/STREAM``, ``embedded``), from one
run to all of them::

    tables = load("data/samples", strict=False)     # lenient: every run, every record, every finding
    tables.runs, tables.findings                    # pyarrow.Table
    frames = tables.to_pandas()                     # pandas.DataFrame per table

The package, by what each file holds: ``schema`` (the five schemas, ``Tables``), ``build`` (the pure
builder from folds), ``records`` (the records path: journal files into the ``records`` table),
``batch`` (``LoadOptions`` and the tables of one batch), ``loader`` (``load``, ``iter_tables``),
``parallel`` and ``workers`` (how the work is spread).
"""

from journaltools.tables.batch import LoadOptions
from journaltools.tables.build import TablesBuilder, tables_of_runs
from journaltools.tables.columns import findings_of, findings_table, timestamps
from journaltools.tables.loader import iter_tables, load
from journaltools.tables.schema import (
    FINDINGS_SCHEMA,
    MESSAGES_SCHEMA,
    RECORDS_SCHEMA,
    RUNS_SCHEMA,
    SCHEMAS,
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
    "TABLE_NAMES",
    "TIMESTAMP",
    "TOOL_CALLS_SCHEMA",
    "LoadOptions",
    "PandasTables",
    "Tables",
    "TablesBuilder",
    "empty_table",
    "findings_of",
    "findings_table",
    "iter_tables",
    "load",
    "tables_of_runs",
    "timestamps",
    "to_pandas",
]
