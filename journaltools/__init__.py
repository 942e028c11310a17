"""journaltools: read, fold, audit and compare append-only agent-run journals."""

from journaltools.backends.registry import open_source
from journaltools.fold import FoldResult, fold
from journaltools.protocol.records import RawRecord, decode_record
from journaltools.protocol.sequence import AppendVerdict, check_append

__all__ = ["AppendVerdict", "FoldResult", "RawRecord", "check_append", "decode_record", "fold", "open_source"]
__version__ = "0.1.0"
