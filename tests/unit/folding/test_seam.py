"""The seam between the wire format and the faces of journaltools: a read becomes a fold in one place.

``folding.run.fold_run`` is where a read a backend returned is folded, with one meaning of ``invalid``; the tables,
listings, widgets and command line ask it, and take calls, responses and times from ``folding.facts.RunFacts``, so
that a future generation of the format changes ``protocol/`` and ``folding/`` only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from journaltools.folding.facts import RunFacts
from journaltools.folding.run import fold_run
from journaltools.protocol.journal import read_file_journal
from tests.paths import ROOT
from tests.runstate_corpus import CORPUS

PACKAGE = ROOT / "journaltools"
FACES = [*sorted((PACKAGE / "tables").glob("*.py")), *sorted((PACKAGE / "widgets").glob("*.py"))]
FACES += [*sorted((PACKAGE / "cli").glob("*.py")), *sorted((PACKAGE / "audits").glob("*.py"))]
FACES += [*sorted((PACKAGE / "exports").glob("*.py")), PACKAGE / "sources" / "listing.py"]
#: Faces that fold something other than a read, each with its reason. None: the time-travel view, which shows the
#: state as it stood after each record, reads each prefix's fold from ``folding.history``.
FOLDS_OF_THEIR_OWN: set[Path] = set()


def _calls_the_fold(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    folding_modules = ("journaltools.folding", "journaltools.folding.fold")
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module in folding_modules
        and any(alias.name == "fold" for alias in node.names)
        for node in ast.walk(tree)
    )


@pytest.mark.parametrize("path", FACES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_faces_fold_reads_only_through_fold_run(path: Path) -> None:
    assert _calls_the_fold(path) == (path in FOLDS_OF_THEIR_OWN), f"{path.name} folds reads itself"


class _Read:
    def __init__(self, run: str, data: bytes) -> None:
        journal = read_file_journal(data)
        self.run, self.records, self.complete = run, journal.records, journal.readable
        self.findings: list[object] = []


@pytest.mark.parametrize("folder", ["file", "newest/file", "newest/broken"])
def test_fold_run_is_the_fold_and_facts_are_its_records_calls(folder: str) -> None:
    for path in sorted((CORPUS / folder).glob("*.json")):
        read = _Read(path.stem, path.read_bytes())
        folded = fold_run(read)
        assert folded.status == ("invalid" if not read.complete else folded.result.status), path.name
        facts = folded.facts()
        assert facts is folded.facts() and isinstance(facts, RunFacts)
        calls = [
            block.tool_use.id
            for r in read.records
            if r.record.assistant
            for block in r.record.assistant.message.content or ()
            if block.tool_use
        ]
        assert [call.tool_use_id for call in facts.calls] == calls, path.name
        assert len(facts.responses) == sum(1 for r in read.records if r.record.kind == "assistant")
