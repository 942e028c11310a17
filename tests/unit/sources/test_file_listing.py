"""The file rule's listing, batch by batch: rows made from the native walk equal the rows of the Python fold, field
for field, on every kind of journal a directory holds, both generations; and the batches read in place only when
they can."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.folding import native as native_fold
from journaltools.protocol.kinds import Claim, make_record
from journaltools.sources import file_listing
from journaltools.sources.base import meta_record
from journaltools.sources.file import FileBackend
from journaltools.sources.listing import RunSummary
from tests.backend_records import line, meta, terminal, user
from tests.mixed_journals import mixed_directory
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS


def listing_both_ways(directory: Path) -> tuple[list[RunSummary], list[RunSummary]]:
    ours = FileBackend(directory).listing_now()
    with native_fold.disabled():
        reference = FileBackend(directory).listing_now()
    return ours, reference


def _runs_taken_natively(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runs the listing makes rows of from the native walk, in order, as the listing goes."""
    taken: list[str] = []
    natively = file_listing._natively

    def spied(journal: file_listing.Proven) -> RunSummary | None:
        summary = natively(journal)
        if summary is not None:
            taken.append(summary.run)
        return summary

    monkeypatch.setattr(file_listing, "_natively", spied)
    return taken


@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
def test_every_row_of_a_mixed_directory_is_the_python_folds_row(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = mixed_directory(tmp_path / "runs", root)
    taken = _runs_taken_natively(monkeypatch)
    ours, reference = listing_both_ways(directory)
    assert [row.run for row in ours] == [row.run for row in reference]
    for mine, theirs in zip(ours, reference, strict=True):
        assert mine == theirs, mine.run
    # Most rows came from the walk; the others (given back, unproven, August with a newest field) from Python.
    assert len(reference) // 2 < len(taken) < len(reference)
    assert any(row.ended for row in ours if row.run in taken) or root is CORPUS
    assert any(row.after_terminal for row in ours if row.run in taken)


@pytest.mark.parametrize("folder", ["file", "random", "broken"])
@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
def test_the_corpus_listings_are_the_same_both_ways(root: Path, folder: str) -> None:
    ours, reference = listing_both_ways(root / folder)
    assert ours == reference


def test_batches_keep_the_order_and_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Journals past a batch's bound in bytes or in count go to the next batch, in order, none lost."""
    monkeypatch.setattr(file_listing, "BATCH_JOURNALS", 3)
    directory = mixed_directory(tmp_path / "runs", NEWEST_CORPUS)
    ours, reference = listing_both_ways(directory)
    assert ours == reference
    monkeypatch.setattr(file_listing, "BATCH_BYTES", 1)
    assert FileBackend(directory).listing_now() == reference


def test_records_after_the_terminal_are_named_by_their_protocol_known_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The labels of what follows a run's terminal record come from the scan's protocols, a line decoded only for
    an id the scan does not know: the same labels the Python fold's row gives."""
    directory = tmp_path / "runs"
    directory.mkdir()
    claim = line(make_record(3, Claim(by="worker@host pid 1", claimed="2026-08-21T10:00:00Z")))
    unknown = line(user(5)).replace(b"session.user", b"session.unheard_of")
    for run, tail in {"known": line(user(5)), "unknown": unknown, "both": line(user(5)) + unknown}.items():
        journal = line(meta_record(meta(run))) + line(terminal(2)) + claim + line(user(4)) + tail
        (directory / f"{run}.json").write_bytes(journal)
    taken = _runs_taken_natively(monkeypatch)
    ours, reference = listing_both_ways(directory)
    assert ours == reference
    assert "known" in taken  # (the walk gives a journal holding an unknown id back today: its rows are compared too)
    labels = {row.run: row.after_terminal for row in ours}
    assert labels["both"] == ("claim", "user", "user", "io.choria.fisk-ai.v1.session.unheard_of")
