"""A table with rows per run (segments, messages, tool_calls, responses) as ``TablesBuilder`` builds it: the
native fold's rows and the Python path's in two sets of buffers, put back in journal order once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from journaltools.tables.columns import ColumnBuffer, rows_in_order, strings_repeated


class PerRunTable:
    """A table with rows per run (segments, messages, tool_calls, responses) being built: a buffer per column but
    ``run``, which is made once at the end from each run and its row count (``strings_repeated``).

    The native fold appends to one set of buffers (``native``), the Python path to another (``columns``), so
    neither waits for the other; ``table`` puts each journal's rows back in journal order with one gather."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.columns = {field.name: ColumnBuffer(field.type) for field in schema if field.name != "run"}
        self._native_columns = {field.name: ColumnBuffer(field.type) for field in schema if field.name != "run"}
        self._runs: list[str] = []
        self._counts: list[int] = []
        #: Per run, whether its rows are in the native buffers (else in ``columns``).
        self._natively: list[bool] = []

    def rows_of(self, run: str, count: int, *, natively: bool = False) -> None:
        """Say that the last ``count`` rows added (to the native buffers when ``natively``) are ``run``'s."""
        self._runs.append(run)
        self._counts.append(count)
        self._natively.append(natively)

    def tool_errors(self, table: pa.Table, runs: Sequence[Any], tool_calls: Sequence[Any]) -> list[int | None]:
        """Each run row's calls whose result is an error, from the finished ``tool_calls`` ``table`` (rows in
        journal order, ``_counts`` per journal): one count for either fold. None where the run was not folded
        (``tool_calls`` null), which is also where no rows were said for it."""
        errors = np.asarray(table.column("is_error").fill_null(False).to_numpy(zero_copy_only=False), np.int64)
        ends = np.cumsum(np.asarray(self._counts, np.int64))
        totals = np.concatenate(([0], np.cumsum(errors)))
        per_journal = totals[ends] - totals[ends - np.asarray(self._counts, np.int64)] if len(ends) else ends
        counted: list[int | None] = []
        journal = 0
        for run, calls in zip(runs, tool_calls, strict=True):
            if calls is None:
                counted.append(None)
                if journal < len(self._runs) and self._runs[journal] == run:
                    journal += 1  # folded without a state: its rows were said all the same
                continue
            if journal < len(self._runs) and self._runs[journal] == run:
                counted.append(int(per_journal[journal]))
                journal += 1
            else:
                counted.append(0)
        return counted

    def native(self, names: Sequence[str]) -> tuple[tuple[bytearray, bytearray, bytearray | None], ...]:
        return tuple(self._native_columns[name].native() for name in names)

    def _order(self) -> np.ndarray | None:
        """Each row's index in the native rows followed by the Python path's; None when that is already the order
        of the journals (all rows of one kind, or every native journal before every Python one)."""
        natively = np.asarray(self._natively, np.bool_)
        counts = np.asarray(self._counts, np.int64)
        if natively.all() or not natively.any() or not natively[np.argmin(natively) :].any():
            return None
        native_counts = np.where(natively, counts, 0)
        python_counts = counts - native_counts
        # Where each journal's rows start in the joined rows: among its kind, the Python rows after the native.
        native_starts = np.cumsum(native_counts) - native_counts
        python_starts = np.cumsum(python_counts) - python_counts + int(native_counts.sum())
        starts = np.where(natively, native_starts, python_starts)
        ends_before = np.cumsum(counts) - counts  # where each journal's rows start in the table
        return np.repeat(starts - ends_before, counts) + np.arange(int(counts.sum()), dtype=np.int64)

    def table(self) -> pa.Table:
        order = self._order()
        arrays = [
            strings_repeated(self._runs, self._counts)
            if field.name == "run"
            else rows_in_order(self._native_columns[field.name], self.columns[field.name], order)
            for field in self.schema
        ]
        return pa.Table.from_arrays(arrays, schema=self.schema)


__all__ = ["PerRunTable"]
