"""What the table builder reads: the backends' ``RunRead`` and ``StoredRecord``, by their shape.

The builder depends on the fields of the backend contract (``journaltools.sources.base``), not on the classes,
so it stays a pure function of typed values: any value with these fields (a backend's read, or one a test or a
notebook builds from bytes with ``protocol.decode.decode_line``) can be tabled.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from journaltools.protocol.findings import Finding
from journaltools.protocol.kinds import Record


class StoredRecordLike(Protocol):
    """One record as a backend read it: the typed record, its exact bytes, and where and when it was stored."""

    @property
    def record(self) -> Record: ...
    @property
    def raw(self) -> bytes: ...
    @property
    def position(self) -> int: ...
    @property
    def time(self) -> datetime | None: ...
    @property
    def noncanonical(self) -> str | None: ...


class RunReadLike(Protocol):
    """One journal as a backend read it. ``complete`` is False when the read was refused: never fold it."""

    @property
    def run(self) -> str: ...
    @property
    def records(self) -> Sequence[StoredRecordLike]: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def source(self) -> str: ...
    @property
    def complete(self) -> bool: ...
    @property
    def updated(self) -> datetime | None: ...
    @property
    def last_seq(self) -> int: ...
