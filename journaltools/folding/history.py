"""A run's history: its records in stored order and the lenient fold of each prefix of them, made when first asked
for (stepping through a long run costs one fold per position visited, not one per record up front), and the
moments its status moved, from one walk. What a face that steps through a run reads, never the records."""

from __future__ import annotations

from collections.abc import Sequence

from journaltools.folding.fold import FoldResult, Walk, fold
from journaltools.folding.texts import record_text
from journaltools.protocol.kinds import Record

#: What a history is made of: typed records in stored order (as a read's ``typed()`` gives them).
Records = Sequence[Record]


class RunHistory:
    """The records of run ``run`` (None when unknown), each prefix folded leniently when first asked for."""

    def __init__(self, run: str | None, records: Records) -> None:
        self.run = run
        self.records = records
        self._folds: dict[int, FoldResult] = {}

    @property
    def seqs(self) -> list[int]:
        return [record.seq for record in self.records]

    def __len__(self) -> int:
        return len(self.records)

    def fold_at(self, index: int) -> FoldResult:
        """The lenient fold of the records up to and with the one at ``index``."""
        if not 0 <= index < len(self.records):
            raise IndexError(f"no record at position {index} (the run has {len(self.records)})")
        if index not in self._folds:
            self._folds[index] = fold(self.records[: index + 1], strict=False, run=self.run)
        return self._folds[index]

    def index_of_seq(self, seq: int) -> int:
        return self.seqs.index(seq)

    def seq_at(self, index: int) -> int:
        return self.records[index].seq

    def kind_at(self, index: int) -> str:
        """The record's kind, or its protocol id when this reader knows no kind by it."""
        record = self.records[index]
        return record.kind or record.protocol

    def record_text_at(self, index: int) -> str:
        """The record as indented JSON with nothing secret in it (``folding.texts.record_text``)."""
        return record_text(self.records[index])

    def status_changes(self) -> list[tuple[int, str, str]]:
        """``(seq, before, after)`` for every record after which the status differs from the one before.

        One walk fed a record at a time (``folding.fold.Walk``: each prefix's result at the cost of its new
        record), not a fold of every prefix: 2,000 records took 10 s that way, and the time grew as their square."""
        changes: list[tuple[int, str, str]] = []
        previous: str | None = None
        walk = Walk(self.run, strict=False)
        for record in self.records:
            walk.feed([record])
            status = walk.result().status
            if previous is not None and status != previous:
                changes.append((record.seq, previous, status))
            previous = status
        return changes


__all__ = ["Records", "RunHistory"]
