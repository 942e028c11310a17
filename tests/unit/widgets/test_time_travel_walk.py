"""TimeTravel's status changes come from one walk fed a record at a time; they are what folding every prefix gives,
on every journal of both generations (the definition, kept here as the reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.folding import fold
from journaltools.protocol.kinds import Record
from journaltools.sources.registry import open_source
from journaltools.widgets.timetravel import TimeTravelModel
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

FOLDERS = [CORPUS / "file", CORPUS / "broken", NEWEST_CORPUS / "file", NEWEST_CORPUS / "random"]


def _by_every_prefix(run: str, records: list[Record]) -> list[tuple[int, str, str]]:
    changes: list[tuple[int, str, str]] = []
    previous: str | None = None
    for index, record in enumerate(records):
        status = fold(records[: index + 1], strict=False, run=run).status
        if previous is not None and status != previous:
            changes.append((record.seq, previous, status))
        previous = status
    return changes


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_the_status_changes_are_those_of_every_prefix_folded(folder: Path) -> None:
    compared = 0
    with open_source(folder) as source:
        for run in source.list_runs():
            records = [stored.record for stored in source.read_run(run, strict=False).records]
            if records:
                assert TimeTravelModel(run, records).status_changes() == _by_every_prefix(run, records), run
                compared += 1
    assert compared
