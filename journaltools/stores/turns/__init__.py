"""agent-harness-go turn checkpoints (``pkg/turnjournal``, schema revision 3): one versioned record per parent
task, in the runtime's file store or CAS store layout, read and written byte for byte as the runtime does.

A ``TurnRecord`` is the last durably confirmed boundary of one parent turn (its ``phase``), with the tool batch of
the assistant message being executed. ``revision`` is store-owned: 1 on create, +1 on every update, and an update
names the revision it read, so exactly one of two concurrent writers advances it.
"""

from journaltools.goencoding.time import GoTime
from journaltools.stores.turns.cas import BlobStore, CASStore, DirectoryBlobStore, MemoryBlobStore
from journaltools.stores.turns.codec import IndexRef, decode_record, encode_record, encode_record_indented
from journaltools.stores.turns.contract import TurnStore, path_segment
from journaltools.stores.turns.file import FileStore
from journaltools.stores.turns.records import (
    ExternalChildRef,
    HistoryMessageRef,
    Phase,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    ToolOutcome,
    TurnRecord,
    validate,
    validate_transition,
)

__all__ = [
    "BlobStore",
    "CASStore",
    "DirectoryBlobStore",
    "ExternalChildRef",
    "FileStore",
    "GoTime",
    "HistoryMessageRef",
    "IndexRef",
    "MemoryBlobStore",
    "Phase",
    "ToolBatchCheckpoint",
    "ToolCheckpoint",
    "ToolOutcome",
    "TurnRecord",
    "TurnStore",
    "decode_record",
    "encode_record",
    "encode_record_indented",
    "path_segment",
    "validate",
    "validate_transition",
]
