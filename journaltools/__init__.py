"""journaltools: understand what a fisk-ai agent run actually did, from its journal.

The analysis job first::

    import journaltools as jt

    tables = jt.load("data/samples", strict=False)   # Arrow tables: records, runs, segments, messages, tool_calls,
    tables.runs                                      # findings; a refused journal is a row with status invalid
    frames = tables.to_pandas()                      # pandas with Arrow-backed dtypes
    result = jt.audit_sources(["data/samples"], parquet="out/audit")
    again = jt.read_audit("out/audit")
    jt.export_otlp("data/samples", path="out/traces.ndjson")  # OpenTelemetry traces; jt.export_atif: ATIF
    jt.report("data/samples", "deferred-waiting", "out/report.html")  # one run as one offline HTML file

One run, folded as the runtime folds it::

    with jt.open_source("data/samples") as source:   # a directory, file://, nats://host:port/STREAM, embedded
        folded = jt.fold(source.read_run("deferred-waiting").typed())
    folded.status, folded.state.terminal, folded.pending_calls, folded.segments

The newest runtime's own inspection commands, with the same rules and the same ``--json`` bytes::

    jt.stats(source, run)       # session stats: tokens per response, a row per tool with calls and time
    jt.calls(source, run, errors=True, output_match="(?i)denied")   # session query (Go regular expressions)
    jt.search(source, agent="ops", status="open")                  # session search

``jt.open_source()`` with no argument (and ``jt.load()``) reads the runtime's own directory,
``jt.default_source()``. Every error journaltools raises on purpose is a ``JournalError`` (the tree is drawn
in ``journaltools.errors``). Each name is imported on first use, so ``import journaltools`` (and with it every
command's start) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from journaltools._base.lazy import lazy_names
from journaltools._base.version import __version__ as __version__

if TYPE_CHECKING:
    from journaltools.analyses.query import calls
    from journaltools.analyses.rundiff import diff
    from journaltools.analyses.search import search
    from journaltools.analyses.stats import stats
    from journaltools.analyses.textgrep import grep
    from journaltools.audits.sources import audit_sources, read_audit
    from journaltools.errors import (
        CorruptJournal,
        FoldError,
        JournalError,
        RunNotFound,
        SourceError,
        VersionMismatch,
        WriterConflict,
    )
    from journaltools.exports.interchange import export_atif, export_otlp
    from journaltools.exports.report import report
    from journaltools.folding import FoldResult, RunState, fold
    from journaltools.protocol.blocks import Message
    from journaltools.protocol.decode import decode_line
    from journaltools.protocol.findings import Finding
    from journaltools.protocol.kinds import Record
    from journaltools.sources.registry import default_source, open_source
    from journaltools.stores import open_task_store, open_turn_store
    from journaltools.tables import LoadOptions, Tables, iter_tables, load

#: name -> the module that defines it, imported when the name is first used. Every name is, not only the ones that
#: pull in pyarrow: ``import journaltools`` runs before any of its modules (``journaltools --help`` included), so
#: whatever it imported eagerly every command would pay for at start.
_LAZY = {
    "load": "journaltools.tables",
    "iter_tables": "journaltools.tables",
    "Tables": "journaltools.tables",
    "LoadOptions": "journaltools.tables",
    "audit_sources": "journaltools.audits.sources",
    "read_audit": "journaltools.audits.sources",
    "open_source": "journaltools.sources.registry",
    "default_source": "journaltools.sources.registry",
    "fold": "journaltools.folding",
    "FoldResult": "journaltools.folding",
    "RunState": "journaltools.folding",
    "Finding": "journaltools.protocol.findings",
    "Record": "journaltools.protocol.kinds",
    "Message": "journaltools.protocol.blocks",
    "decode_line": "journaltools.protocol.decode",
    "grep": "journaltools.analyses.textgrep",
    "diff": "journaltools.analyses.rundiff",
    "report": "journaltools.exports.report",
    "export_otlp": "journaltools.exports.interchange",
    "export_atif": "journaltools.exports.interchange",
    "open_task_store": "journaltools.stores",
    "open_turn_store": "journaltools.stores",
    "stats": "journaltools.analyses.stats",
    "calls": "journaltools.analyses.query",
    "search": "journaltools.analyses.search",
    "JournalError": "journaltools.errors",
    "SourceError": "journaltools.errors",
    "RunNotFound": "journaltools.errors",
    "CorruptJournal": "journaltools.errors",
    "FoldError": "journaltools.errors",
    "VersionMismatch": "journaltools.errors",
    "WriterConflict": "journaltools.errors",
}


# The analysis job first, then one run, the format's values, the stores, and the error tree.
__all__ = [  # noqa: RUF022 - in reading order, not alphabetical
    "load",
    "iter_tables",
    "Tables",
    "LoadOptions",
    "audit_sources",
    "read_audit",
    "open_source",
    "default_source",
    "fold",
    "grep",
    "diff",
    "report",
    "FoldResult",
    "RunState",
    "stats",
    "calls",
    "search",
    "Finding",
    "Record",
    "Message",
    "decode_line",
    "export_otlp",
    "export_atif",
    "open_task_store",
    "open_turn_store",
    "JournalError",
    "SourceError",
    "RunNotFound",
    "CorruptJournal",
    "FoldError",
    "VersionMismatch",
    "WriterConflict",
]

__getattr__, __dir__ = lazy_names("journaltools", _LAZY, __all__, globals())
