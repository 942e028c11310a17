"""Comparing two loads' tables row by row (their dictionaries may differ: each chunk has its own)."""

from __future__ import annotations

from journaltools.tables import Tables
from journaltools.tables.schema import TABLE_NAMES, with_plain_strings


def same_tables(a: Tables, b: Tables) -> None:
    for name in TABLE_NAMES:
        assert with_plain_strings(a[name]).equals(with_plain_strings(b[name])), name
