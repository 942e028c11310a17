"""turnjournal: one versioned checkpoint record per parent task, in a file store or a CAS store.

A ``TurnRecord`` is the last durably confirmed boundary of one parent turn (its ``phase``), with
the tool batch of the assistant message being executed. ``revision`` is store-owned: it starts at
1 and grows by one on every successful transition, and an update names the revision it read, so
exactly one of two concurrent writers advances it.
"""

from journaltools.turnjournal.records import (
    ExternalChildRef,
    HistoryMessageRef,
    Phase,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    ToolOutcome,
    TurnRecord,
)
from journaltools.turnjournal.stores import CASStore, FileStore, MemoryBlobStore, RevisionConflict, TurnStore

__all__ = [
    "CASStore",
    "ExternalChildRef",
    "FileStore",
    "HistoryMessageRef",
    "MemoryBlobStore",
    "Phase",
    "RevisionConflict",
    "ToolBatchCheckpoint",
    "ToolCheckpoint",
    "ToolOutcome",
    "TurnRecord",
    "TurnStore",
]
