"""Comparing two loads' tables row by row (their dictionaries may differ: each chunk has its own), and the parts a
strict load gives before it refuses a journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.errors import JournalError
from journaltools.tables import Tables
from journaltools.tables.loader import iter_tables
from journaltools.tables.options import LoadOptions
from journaltools.tables.schema import TABLE_NAMES, with_plain_strings


def same_tables(a: Tables, b: Tables) -> None:
    for name in TABLE_NAMES:
        assert with_plain_strings(a[name]).equals(with_plain_strings(b[name])), name


def parts_until_refused(source: Path, options: LoadOptions) -> tuple[list[Tables], str]:
    """The tables a strict ``iter_tables`` of ``source`` gives, part by part, until it refuses, and why it refused."""
    parts: list[Tables] = []
    with pytest.raises(JournalError) as refused:
        parts.extend(iter_tables(source, None, options))
    return parts, str(refused.value)
