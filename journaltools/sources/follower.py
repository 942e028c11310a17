"""What a follower of a run is, whatever holds the journal (``follow``: a file; ``follow_stream``: a stream): it reads
the journal once whole, then hands out what each look found appended (a ``Change``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import StoredRecord
from journaltools.sources.base import RunRead


@dataclass(slots=True)
class Change:
    """What a followed journal gained. ``findings`` and ``complete``: the reader's verdict on the whole journal
    now (None when it did not change); ``notices``: lines for a person; ``gone``: why the journal can no longer be
    followed (deleted, replaced, cut short, the stream's messages removed), None while it can."""

    records: list[StoredRecord] = field(default_factory=list)
    findings: list[Finding] | None = None
    complete: bool | None = None
    notices: list[str] = field(default_factory=list)
    gone: str | None = None

    def __bool__(self) -> bool:
        return bool(self.records or self.findings is not None or self.notices or self.gone)


class Follower(ABC):
    """One run's journal, read once whole and then as it grows."""

    run: str

    @abstractmethod
    def start(self) -> RunRead:
        """The journal as it is now (lenient: a refused journal comes back incomplete, with its findings)."""

    @abstractmethod
    def wait(self, timeout: float) -> Change:
        """What was appended since the last look, waiting up to ``timeout`` seconds for something to be."""

    def close(self) -> None:  # noqa: B027 - a follower without a connection has nothing to close
        pass


__all__ = ["Change", "Follower"]
