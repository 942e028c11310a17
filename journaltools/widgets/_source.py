"""Runs read from a source on demand, for the views that open a conversation (the models never read).

A browser over ten thousand runs needs only their ``runs`` rows up front; a conversation is read and folded
when it is opened, once, and kept while a few others are.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

from journaltools.backends.base import Backend, RunRead
from journaltools.errors import JournalError
from journaltools.fold import FoldResult, fold


def fold_with_reader_findings(run: str, read: RunRead) -> FoldResult:
    """The lenient fold of what the reader kept, with the reader's own findings (a torn tail, a corrupt line)
    first, so the status by the listing's rule matches ``ls`` even for a journal the reader refused."""
    result = fold(read.records, strict=False, run=run)
    if read.findings:
        result = dataclasses.replace(result, findings=[*read.findings, *result.findings])
    return result


class RunFolds:
    """``runs(run)``: the run's lenient fold (with the reader's findings), read when first asked for, or None
    when the source has no such run. Usable as a ``RunLoader``; ``close()`` closes the source if it owns it."""

    def __init__(self, backend: Backend, *, owned: bool = False, keep: int = 32) -> None:
        self.backend = backend
        self.owned = owned
        self.keep = max(1, keep)
        self._folds: OrderedDict[str, FoldResult | None] = OrderedDict()
        self.errors: dict[str, str] = {}

    @classmethod
    def open(cls, url: str) -> RunFolds:
        from journaltools.backends.registry import open_source

        return cls(open_source(url), owned=True)

    def read(self, run: str) -> RunRead:
        """Every record of ``run`` as stored (lenient: a refused journal comes back with what parses)."""
        return self.backend.read_run(run, strict=False)

    def __call__(self, run: str) -> FoldResult | None:
        if run in self._folds:
            self._folds.move_to_end(run)
            return self._folds[run]
        try:
            result: FoldResult | None = fold_with_reader_findings(run, self.read(run))
        except JournalError as error:  # no such run, or an id that cannot name one: say so, never raise
            self.errors[run] = str(error)
            result = None
        self._folds[run] = result
        while len(self._folds) > self.keep:
            self._folds.popitem(last=False)
        return result

    def close(self) -> None:
        if self.owned:
            self.backend.close()
