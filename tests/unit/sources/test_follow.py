"""A followed journal file reads as the whole file reads, however its bytes arrive: every real journal of both
generations (the broken ones too) written in pieces cut anywhere, the follower looking after each piece, gives the
whole read's records, with their line numbers and bytes, and its verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.protocol.journal import read_file_journal
from journaltools.sources.follow import FileFollower
from journaltools.sources.scan import run_read
from tests.runstate_corpus import CORPUS

JOURNALS = sorted(
    path for folder in ("file", "broken", "newest/file", "newest/broken") for path in (CORPUS / folder).glob("*.json")
)


def _followed(path: Path, data: bytes, cuts: list[int]) -> tuple[list[tuple[int, bytes, int]], FileFollower, bool]:
    """Write ``data`` to ``path`` in pieces ending at ``cuts``, looking after each: the records taken, the follower,
    and its last verdict."""
    path.write_bytes(b"")
    follower = FileFollower(path, "run-1")
    taken = [(stored.record.seq, stored.raw, stored.position) for stored in follower.start().records]
    complete = True
    written = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        if cut <= written:
            continue
        with path.open("ab") as journal:
            journal.write(data[written:cut])
        written = cut
        change = follower.look()
        assert change.gone is None
        taken += [(stored.record.seq, stored.raw, stored.position) for stored in change.records]
        if change.complete is not None:
            complete = change.complete
    # A look with nothing new, as the follower's own poll makes: a last line with no newline is taken once quiet.
    quiet = follower.look()
    taken += [(stored.record.seq, stored.raw, stored.position) for stored in quiet.records]
    if quiet.complete is not None:
        complete = quiet.complete
    return taken, follower, complete


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(JOURNALS), st.lists(st.floats(0, 1), max_size=6))
def test_a_journal_written_in_pieces_is_followed_as_its_whole_read(
    tmp_path: Path, journal: Path, fractions: list[float]
) -> None:
    data = journal.read_bytes()
    whole = read_file_journal(data)
    expected = [(stored.record.seq, stored.raw, stored.position) for stored in whole.records]
    cuts = [int(fraction * len(data)) for fraction in fractions]
    taken, follower, complete = _followed(tmp_path / "run-1.json", data, cuts)
    follower.close()
    assert taken == expected, journal.name
    verdict = run_read("run-1", whole, source="", where="", strict=False, updated=None)
    assert complete == verdict.complete, journal.name


@pytest.mark.parametrize("journal", JOURNALS[:: max(1, len(JOURNALS) // 20)], ids=lambda path: path.name)
def test_a_journal_written_a_byte_at_a_time_is_followed_as_its_whole_read(tmp_path: Path, journal: Path) -> None:
    data = journal.read_bytes()[:3000]
    whole = read_file_journal(data)
    taken, follower, _ = _followed(tmp_path / "run-1.json", data, list(range(len(data))))
    follower.close()
    assert taken == [(stored.record.seq, stored.raw, stored.position) for stored in whole.records], journal.name


def test_a_journal_cut_below_what_was_read_ends_the_follow(tmp_path: Path) -> None:
    path = tmp_path / "run-1.json"
    data = (CORPUS / "newest" / "file").glob("*.json").__next__().read_bytes()
    path.write_bytes(data)
    follower = FileFollower(path, "run-1")
    follower.start()
    path.write_bytes(data[: len(data) // 2])
    gone = follower.look().gone
    follower.close()
    assert gone is not None and "records already shown are gone" in gone


@pytest.mark.parametrize("rest", [b"\r\n", b'{"seq":99}\n'], ids=["a CR before the newline", "a record glued on"])
def test_a_last_line_that_decodes_before_its_newline_is_held_until_its_line_ends(tmp_path: Path, rest: bytes) -> None:
    """A writer cut right after a record's closing brace: the line decodes, but its bytes are not all there yet (a
    ``\\r``, or a resumed writer's record glued to it). Shown once, as the whole read has it once complete."""
    lines = (CORPUS / "newest" / "file").glob("*.json").__next__().read_bytes().split(b"\n")
    data = b"\n".join(lines[:3]) + rest
    whole = read_file_journal(data)
    expected = [(stored.record.seq, stored.raw, stored.position) for stored in whole.records]
    taken, follower, complete = _followed(tmp_path / "run-1.json", data, [len(data) - len(rest)])
    follower.close()
    assert taken == expected
    verdict = run_read("run-1", whole, source="", where="", strict=False, updated=None)
    assert complete == verdict.complete
