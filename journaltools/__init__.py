"""journaltools: understand what an LLM agent run actually did.

The analysis job first::

    import journaltools as jt

    tables = jt.load("data/samples", strict=False)   # five Arrow tables: records, runs, messages, tool_calls, findings
    frames = tables.to_pandas()                      # pandas with Arrow-backed dtypes
    result = jt.audit_sources(["data/samples"], parquet="out/audit")
    again = jt.read_audit("out/audit")

One run, folded::

    with jt.open_source("data/samples") as source:       # a directory, file://, nats://host:port/STREAM, embedded
        folded = jt.fold(source.read_run("failed-provider").records)
    folded.status, folded.ending, folded.messages

Every error journaltools raises on purpose is a ``JournalError`` (the tree is drawn in ``journaltools.errors``).
The names that need pyarrow or pandas are imported on first use, so ``import journaltools`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from journaltools.backends.registry import open_source
from journaltools.errors import (
    CorruptJournal,
    FoldError,
    JournalError,
    RecordRefused,
    RunNotFound,
    SourceError,
    VersionMismatch,
)
from journaltools.fold import Ending, FoldResult, fold
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import RawRecord, decode_record
from journaltools.protocol.sequence import AppendVerdict, check_append

if TYPE_CHECKING:
    from journaltools.audit import AuditOptions, AuditResult, audit_sources, read_audit
    from journaltools.stores import open_task_store, open_turn_store
    from journaltools.tables import LoadOptions, Tables, iter_tables, load

#: name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "load": "journaltools.tables",
    "iter_tables": "journaltools.tables",
    "Tables": "journaltools.tables",
    "LoadOptions": "journaltools.tables",
    "audit_sources": "journaltools.audit",
    "read_audit": "journaltools.audit",
    "AuditOptions": "journaltools.audit",
    "AuditResult": "journaltools.audit",
    "open_task_store": "journaltools.stores",
    "open_turn_store": "journaltools.stores",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'journaltools' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AppendVerdict",
    "AuditOptions",
    "AuditResult",
    "CorruptJournal",
    "Ending",
    "Finding",
    "FoldError",
    "FoldResult",
    "JournalError",
    "LoadOptions",
    "RawRecord",
    "RecordRefused",
    "RunNotFound",
    "SourceError",
    "Tables",
    "VersionMismatch",
    "audit_sources",
    "check_append",
    "decode_record",
    "fold",
    "iter_tables",
    "load",
    "open_source",
    "open_task_store",
    "open_turn_store",
    "read_audit",
]
__version__ = "0.1.0"
