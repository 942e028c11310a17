"""Runs read from a source on demand, for the views that open a conversation (the models never read).

A browser over ten thousand runs needs only their ``runs`` rows up front; a conversation is read and folded
when it is opened, once, and kept while a few others are. The reader's verdict travels with the fold: a
journal the reader refused (``complete=False``: a corrupt interior line, a resume after a torn tail) is shown
``invalid`` with the reader's findings first, never as if it were whole.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

from journaltools.errors import JournalError
from journaltools.exports.facts import RecordFacts, facts_of_read
from journaltools.folding import FoldResult
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.sources.base import Backend, RunRead


def folded_read(run: str, read: RunRead) -> FoldedRun:
    """What the reader kept, folded leniently under the name it was asked for (``folding.run``)."""
    return fold_run(dataclasses.replace(read, run=run) if read.run != run else read)


def fold_read(run: str, read: RunRead) -> FoldResult:
    """The lenient fold of what the reader kept, the reader's findings first; ``invalid`` when the reader
    refused the journal or reported an error, whatever the records that parse fold to (``folding.run``)."""
    return folded_read(run, read).as_fold_result()


class RunFolds:
    """``runs(run)``: the run's lenient fold (with the reader's findings), read when first asked for, or None
    when the source has no such run. Usable as a ``RunLoader``; ``close()`` closes the source if it owns it.
    ``facts(run)`` gives what the records say beyond the fold (times, tokens per turn), from the same read."""

    def __init__(self, backend: Backend, *, owned: bool = False, keep: int = 32) -> None:
        self.backend = backend
        self.owned = owned
        self.keep = max(1, keep)
        self._folds: OrderedDict[str, FoldResult | None] = OrderedDict()
        self._facts: dict[str, RecordFacts] = {}
        self.errors: dict[str, str] = {}

    @classmethod
    def open(cls, url: str) -> RunFolds:
        from journaltools.sources.registry import open_source

        return cls(open_source(url), owned=True)

    def read(self, run: str) -> RunRead:
        """Every record of ``run`` as stored (lenient: a refused journal comes back with what parses)."""
        return self.backend.read_run(run, strict=False)

    def __call__(self, run: str) -> FoldResult | None:
        if run in self._folds:
            self._folds.move_to_end(run)
            return self._folds[run]
        try:
            read = self.read(run)
            result: FoldResult | None = fold_read(run, read)
            self._facts[run] = facts_of_read(read)
        except JournalError as error:  # no such run, or an id that cannot name one: say so, never raise
            self.errors[run] = str(error)
            result = None
        self._folds[run] = result
        while len(self._folds) > self.keep:
            dropped, _ = self._folds.popitem(last=False)
            self._facts.pop(dropped, None)
        return result

    def folded(self, run: str) -> FoldedRun:
        """``run`` read afresh and folded with its records (what a comparison needs); raises ``JournalError``."""
        return folded_read(run, self.read(run))

    def facts(self, run: str) -> RecordFacts | None:
        """The facts of ``run``'s records, read with its fold (None when it cannot be read)."""
        if run not in self._facts:
            self(run)
        return self._facts.get(run)

    def close(self) -> None:
        if self.owned:
            self.backend.close()
