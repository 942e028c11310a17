"""One journal read, folded: the one place a store's read becomes a fold (``fold_run``), and what it gives.

Every face of journaltools (tables, listings, widgets, the command line) starts from a read a backend returned and
asks the same questions of it: what the runtime's fold gives, whether the runtime would have read the journal at
all, what the reader and the fold found, and what the records say beyond the fold. ``FoldedRun`` answers them once,
with one meaning of ``invalid``: the reader refused the journal (an interior line that does not decode, a resume
glued onto torn bytes), the reader reported an error, or the fold refused a record. A refused journal is still
folded as far as its readable records go, so a post-mortem can look at them, but its status says it is not whole.

Which generation's rules apply is decided where the records were decoded (``protocol``), never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from journaltools.errors import FoldError
from journaltools.folding.facts import RunFacts
from journaltools.folding.fold import FoldResult, fold
from journaltools.folding.state import RunState
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import Generation
from journaltools.protocol.journal import HoldsRecord, typed_records


class ReadLike(Protocol):
    """A journal as a backend read it (``sources.base.RunRead`` and the tables' reads are such)."""

    @property
    def run(self) -> str: ...
    @property
    def records(self) -> Sequence[HoldsRecord]: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def complete(self) -> bool: ...


class FoldedRun:
    """A read and its fold. ``status`` is the run's, ``invalid`` when the reader or the fold refused anything;
    ``findings`` are the reader's, then the fold's; ``facts()`` what the records say beyond the fold."""

    __slots__ = ("_facts", "findings", "read", "result", "status")

    def __init__(
        self, read: ReadLike, result: FoldResult, status: str, findings: list[Finding], facts: RunFacts | None = None
    ) -> None:
        self.read = read
        self.result = result
        self.status = status
        self.findings = findings
        #: Made when first asked for, unless the caller already walked the records (``folding.incremental``).
        self._facts = facts

    def __repr__(self) -> str:
        return f"FoldedRun({self.run!r}, {self.status!r}, {len(self.findings)} findings)"

    @property
    def run(self) -> str:
        return self.read.run

    @property
    def state(self) -> RunState | None:
        return self.result.state

    @property
    def complete(self) -> bool:
        """Whether the runtime's reader reads the journal whole (it then folds it; otherwise it refuses it)."""
        return self.read.complete

    @property
    def generation(self) -> Generation | None:
        """The build whose rules read and folded the journal; None without a meta record."""
        state = self.result.state
        return state.generation if state is not None else None

    def facts(self) -> RunFacts:
        """The calls, responses and times of the records, from one walk (made when first asked for)."""
        if self._facts is None:
            self._facts = RunFacts.of(typed_records(self.read.records))
        return self._facts

    def as_fold_result(self) -> FoldResult:
        """The fold with this run's status and every finding, the reader's first: what a view of one run shows."""
        result = self.result
        if self.status == result.status and len(self.findings) == len(result.findings):
            return result
        from dataclasses import replace

        return replace(result, status=self.status, findings=list(self.findings))


def fold_run(read: ReadLike, *, strict: bool = False) -> FoldedRun:
    """Fold what ``read`` holds. ``strict`` raises ``FoldError`` where the runtime's fold refuses (naming why a
    journal whose only line was a torn tail holds no record); lenient, the refusals are findings and the run is
    ``invalid``."""
    records = typed_records(read.records)
    try:
        result = fold(records, run=read.run, strict=strict)
    except FoldError as error:
        raise explained(error, read) from None
    return folded_run(read, result)


def folded_run(read: ReadLike, result: FoldResult, facts: RunFacts | None = None) -> FoldedRun:
    """``read`` and the fold of its records as one run: the reader's findings first, ``invalid`` when the reader
    refused the journal or reported an error. The one place a read and its fold are put together."""
    reader = list(read.findings)
    refused = not read.complete or any(finding.severity == "error" for finding in reader)
    return FoldedRun(read, result, "invalid" if refused else result.status, [*reader, *result.findings], facts)


def explained(error: FoldError, read: ReadLike) -> FoldError:
    """The fold's refusal, saying why a journal holds no record when the reader dropped its only line as a torn
    tail ("no records" alone hides it)."""
    dropped = next((finding for finding in read.findings if finding.code == "torn_tail"), None)
    if error.code != "empty_journal" or dropped is None:
        return error
    return FoldError(error.run, error.seq, error.code, f"{error.rule}: {dropped.message}")


__all__ = ["FoldedRun", "ReadLike", "explained", "fold_run", "folded_run"]
