"""A run folded as it is written: the records appended since it was folded update it, at the cost of those records.

``fold_run`` folds a whole read; a run someone watches grows a record at a time, and folding the whole journal again
for each would make the thousandth record cost a thousand. ``IncrementalRun`` keeps the fold's walk
(``folding.fold.Walk``), the facts' walk (``folding.facts.FactsWalk``) and the segments' walk going, and after each
``append`` gives the ``FoldedRun`` that ``fold_run`` gives for the whole journal so far: the same result, status,
findings and facts (the tests fold every prefix split of both real corpora both ways and hold them equal).

What the reader says of the journal (a torn tail, a corrupt interior line, a noncanonical one) is the source's to
say, and it changes as the journal grows: a torn tail is completed, or becomes an interior line the runtime refuses.
So ``append`` takes the reader's findings and verdict as they stand now, replacing the ones before; the fold's own
findings only ever grow. Nothing is ever folded again from the start: a journal that turns corrupt mid-follow keeps
its records and is ``invalid`` from then on, with the reader's finding saying why.

A result's ``state``, ``message_seqs`` and the run's ``read`` and ``facts()`` belong to the run and are kept
current by every later ``append`` (copying them would cost the whole journal); every other field of an earlier
result stays as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from journaltools.errors import FoldError
from journaltools.folding.facts import FactsWalk, RunFacts
from journaltools.folding.fold import Walk
from journaltools.folding.run import FoldedRun, ReadLike, explained, folded_run
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import HoldsRecord, typed_records


@dataclass(slots=True)
class GrowingRead:
    """The read of a journal being followed: every record so far, and the reader's findings as they stand now."""

    run: str
    records: list[HoldsRecord] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    complete: bool = True


class IncrementalRun:
    """One run, folded as its records arrive (see the module doc). ``strict`` raises ``FoldError`` from
    ``append`` where ``fold_run`` would raise it for the journal so far, and from then on."""

    __slots__ = ("_facts", "_folded", "_read", "_walk", "strict")

    def __init__(self, run: str, *, strict: bool = False) -> None:
        self.strict = strict
        self._read = GrowingRead(run)
        self._walk = Walk(run, strict)
        self._facts = FactsWalk()
        self._folded: FoldedRun | None = None

    @classmethod
    def of(cls, read: ReadLike, *, strict: bool = False) -> IncrementalRun:
        """A run that starts from ``read`` (a source's whole read) and goes on with what is appended to it."""
        incremental = cls(read.run, strict=strict)
        incremental.append(read.records, findings=read.findings, complete=read.complete)
        return incremental

    @property
    def run(self) -> str:
        return self._read.run

    @property
    def records(self) -> int:
        return len(self._read.records)

    @property
    def folded(self) -> FoldedRun:
        """The run as of the last ``append`` (or an empty journal's, before the first)."""
        if self._folded is None:
            return self._fold_now()
        return self._folded

    @property
    def facts(self) -> RunFacts:
        return self._facts.facts

    def append(
        self,
        records: Sequence[HoldsRecord],
        *,
        findings: Sequence[Finding] | None = None,
        complete: bool | None = None,
    ) -> FoldedRun:
        """Fold ``records``, the ones stored after those appended before, and give the run as it now stands.
        ``findings`` and ``complete`` are the reader's verdict on the whole journal now (unchanged when None)."""
        read = self._read
        if findings is not None:
            read.findings = list(findings)
        if complete is not None:
            read.complete = complete
        typed = typed_records(records)
        read.records.extend(records)
        self._facts.add(typed)
        try:
            self._walk.feed(typed)
        except FoldError as error:
            raise explained(error, read) from None
        return self._fold_now()

    def _fold_now(self) -> FoldedRun:
        try:
            result = self._walk.result()
        except FoldError as error:
            raise explained(error, self._read) from None
        self._folded = folded_run(self._read, result, self._facts.facts)
        return self._folded


__all__ = ["GrowingRead", "IncrementalRun"]
