"""``in_place.read_ahead``: each item with its read, in order, the next one read on a thread and never more than
one ahead; a read's error raised at its item's turn; and no thread left once the items are read or the caller
stops."""

from __future__ import annotations

import threading

import pytest

from journaltools.sources.in_place import InPlace, read_ahead


class Refused(Exception):
    pass


def _reading_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("journaltools-read")]


@pytest.mark.parametrize("ahead", [True, False])
def test_each_item_comes_in_order_with_its_read_never_more_than_one_read_ahead(ahead: bool) -> None:
    asked: list[int] = []

    def read(item: int) -> InPlace | None:
        asked.append(item)
        return None

    seen = []
    for item, got in read_ahead(range(5), read, ahead=ahead):
        assert got is None
        assert asked[: item + 1] == list(range(item + 1)) and len(asked) <= item + (2 if ahead else 1)
        seen.append(item)
    assert seen == list(range(5)) and asked == list(range(5))
    assert _reading_threads() == []


def test_a_reads_error_is_raised_at_its_items_turn() -> None:
    def read(item: int) -> InPlace | None:
        if item == 1:
            raise Refused(item)
        return None

    reads = read_ahead(range(4), read)
    assert next(reads) == (0, None)
    with pytest.raises(Refused):
        next(reads)
    assert _reading_threads() == []


def test_a_caller_that_stops_leaves_no_thread_behind() -> None:
    reads = read_ahead(range(4), lambda item: None)
    next(reads)
    assert _reading_threads()
    reads.close()
    assert _reading_threads() == []
