"""A large run in the conversation view: folded once, each page made from the fold's messages of its range alone
(``folding.conversation.MessageViews``), a jump to a seq a search in the messages' seqs. Small generated runs and
small pages stand in for 100,000 records (``benchmarks/bench_large_runs.py`` times the real size)."""

from __future__ import annotations

import bisect
import gc
import re
from pathlib import Path

import msgspec
import pytest

from journaltools.exports import conversation as conversation_module
from journaltools.exports.conversation import ConversationModel
from journaltools.folding.conversation import MessageView, MessageViews, message_views
from journaltools.folding.run import fold_run
from journaltools.protocol.blocks import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from journaltools.sources.registry import open_source
from journaltools.testing.generate import generate_corpus, run_id
from journaltools.widgets import ConversationView
from journaltools.widgets import conversation as view_module
from journaltools.widgets.conversation import collection_due
from journaltools.widgets.conversation_surface import ConversationPlace

PAGE = 7
RECORDS = 400


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("long-run")
    generate_corpus(root, runs=1, records=RECORDS, seed=3, workers=1)
    return root, run_id(0, 3)


def _shown_seqs(html: str) -> list[int]:
    return [
        int(seq)
        for seq in re.findall(
            r'<div class="jt-msg jt-msg-\w+[^"]*" id="jt-\w+-seq-\d+" data-index="\d+" '
            r'data-seq="(\d+)"',
            html,
        )
    ]


def _folded_seqs(source: Path, run: str) -> list[int]:
    with open_source(source) as backend:
        return fold_run(backend.read_run(run, strict=False)).result.message_seqs


def test_every_page_shows_exactly_the_folds_messages_of_its_range(long_run: tuple[Path, str]) -> None:
    source, run = long_run
    seqs = _folded_seqs(source, run)
    view = ConversationView.from_source(source, run, page_size=PAGE, follow=False)
    model = view.model
    assert isinstance(model.messages, MessageViews) and len(model.messages) == len(seqs) > 10 * PAGE
    assert model.messages.made <= PAGE  # opening made the first page's views, not the run's
    for number in range(model.page_count):
        view.show_page(number)
        assert _shown_seqs(view.body.value) == seqs[number * PAGE : (number + 1) * PAGE], number
        assert view.pager_text.startswith(f"messages {number * PAGE + 1:,}-")
        assert f"(page {number + 1} of {model.page_count})" in view.pager_text
    # The views made page by page are the views the whole run makes at once.
    with open_source(source) as backend:
        result = fold_run(backend.read_run(run, strict=False)).result
    assert list(model.messages) == message_views(result.messages, result.message_seqs)


def test_a_jump_to_any_seq_lands_on_the_window_holding_its_message(long_run: tuple[Path, str]) -> None:
    source, run = long_run
    seqs = _folded_seqs(source, run)
    view = ConversationView.from_source(source, run, page_size=PAGE, follow=False)
    model = view.model
    last = int(model.header["last_seq"])
    for seq in [*range(1, last + 1, 37), seqs[-1], last]:
        view.jump_to_seq(seq)
        holding = seqs[max(0, bisect.bisect_right(seqs, seq) - 1)]
        if model.pending is not None and seq >= model.pending.seq:
            holding = model.pending.seq
        marked = re.findall(r'jt-target" id="jt-\w+-seq-(\d+)"', view.body.value)
        assert marked == [str(holding)], seq
        if holding in seqs:
            shown = _shown_seqs(view.body.value)
            assert holding in shown and shown == seqs[view.start : view.start + PAGE]
    assert model.messages.made < len(seqs)  # jumping made the windows it showed, not the run


def test_the_anywidget_pages_the_same_ranges(long_run: tuple[Path, str]) -> None:
    source, run = long_run
    seqs = _folded_seqs(source, run)
    place = ConversationPlace(ConversationModel.from_source(source, run, page_size=PAGE))
    for number in range(4):
        assert _shown_seqs(place.html()) == seqs[number * PAGE : (number + 1) * PAGE]
        assert place.act("messages", "1")
    assert place.act("jump", str(seqs[-3]))
    assert seqs[-3] in _shown_seqs(place.html())


def test_a_header_of_many_process_runs_shows_the_first_and_last_and_counts_the_rest(
    long_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, run = long_run
    model = ConversationModel.from_source(source, run, page_size=PAGE)
    segments = len(model.segments)
    assert segments > 6
    monkeypatch.setattr(conversation_module, "SEGMENT_CHIPS", 6)
    header = model.header_html()
    chips = [int(index) for index in re.findall(r'class="jt-segment [^"]*" data-segment="(\d+)"', header)]
    assert chips == [0, 1, 2, segments - 3, segments - 2, segments - 1]
    assert f"… {segments - 6:,} more process runs …" in header
    # Every process run is still a place "jump to" reaches.
    assert sum(1 for target in model.targets() if target.label.startswith("process run #")) == segments


def test_closing_the_view_lets_go_of_every_widget_it_made(long_run: tuple[Path, str]) -> None:
    # Every widget model made and not closed: a view left in it keeps its run's records alive for the kernel's life.
    from ipywidgets.widgets.widget import _instances

    source, run = long_run
    before = set(_instances)
    view = ConversationView.from_source(source, run, page_size=PAGE, follow=False)
    view.show_page(1)
    assert set(_instances) - before
    view.close()
    assert set(_instances) - before == set()


def _marks_drawn(views: list[MessageView]) -> list[tuple[int, str, bool, str]]:
    """What a page draws of each call: the seq of its message, its tool, error and state."""
    return [
        (view.seq, part.call.name, part.call.is_error, part.call.state)
        for view in views
        for part in view.parts
        if part.call is not None
    ]


def test_the_jump_lists_calls_are_the_calls_the_pages_draw(long_run: tuple[Path, str]) -> None:
    # "jump to" reads each call's mark off the one walk that pairs results with calls, without drawing a page.
    source, run = long_run
    with open_source(source) as backend:
        result = fold_run(backend.read_run(run, strict=False)).result
    views = MessageViews(result.messages, result.message_seqs)
    drawn = _marks_drawn(message_views(result.messages, result.message_seqs))
    assert list(views.call_marks()) == drawn
    assert list(views.call_marks(settled=False)) == [mark for mark in drawn if mark[2] or mark[3] != "answered"]
    assert views.made == 0


def test_the_calls_of_hand_made_messages_pair_as_drawn() -> None:
    # A call made twice, a result before its call, one after it in the same message, an error, a call never answered.
    def use(call: str) -> Block:
        return Block(tool_use=ToolUseBlock(id=call, name=f"tool-{call}", input=msgspec.Raw(b"{}")))

    def answer(call: str, error: bool = False) -> Block:
        return Block(tool_result=ToolResultBlock(tool_use_id=call, content=f"ran {call}", is_error=error))

    messages = [
        Message(role="user", content=[answer("early"), Block(text=TextBlock(text="hi"))]),
        Message(role="assistant", content=[use("a"), use("early"), use("b"), answer("b", error=True)]),
        Message(role="assistant", content=None),
        Message(role="user", content=[answer("a"), answer("a")]),
        Message(role="assistant", content=[use("a"), use("never")]),
    ]
    views = MessageViews(messages, [1, 2, 4])
    assert views.seqs == [1, 2, 4, 0, 0]
    assert list(views.call_marks()) == _marks_drawn(list(views))
    assert [state for *_, state in views.call_marks()] == ["answered", "answered", "answered", "answered", "waiting"]
    assert [(name, error) for _seq, name, error, _state in views.call_marks(settled=False)] == [
        ("tool-b", True),
        ("tool-never", False),
    ]


def _collections() -> tuple[int, int]:
    """How many young (generation 1) and full collections have run."""
    stats = gc.get_stats()
    return int(stats[1]["collections"]), int(stats[2]["collections"])


@pytest.mark.parametrize("due", [True, False])
def test_an_open_that_made_many_objects_collects_once_at_its_end(
    long_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, due: bool
) -> None:
    # Left to itself, the collector scanned a long run's objects again inside the first pages (137 and 184 ms).
    source, run = long_run
    monkeypatch.setattr(view_module, "collection_due", lambda _held, _holds: due)

    def collections_of_an_open() -> tuple[int, int]:
        # Counted around the open alone: closing the view makes objects, which may start a collection of its own.
        gc.collect()
        young, full = _collections()
        view = ConversationView.from_source(source, run, page_size=PAGE, follow=False)
        after = _collections()
        view.close()
        return after[0] - young, after[1] - full

    assert collections_of_an_open() == (0, 0) and gc.isenabled()  # a small run: nothing collected for it
    monkeypatch.setattr(view_module, "COLLECT_AFTER", 0)
    assert collections_of_an_open() == ((0, 1) if due else (1, 0)) and gc.isenabled()
    gc.disable()  # a caller that turned the collector off keeps it off, and has nothing collected for it
    try:
        assert collections_of_an_open() == (0, 0) and not gc.isenabled()
    finally:
        gc.enable()


def test_a_full_collection_is_due_once_the_process_grew_by_a_quarter() -> None:
    assert collection_due(1_000, 1_251) and not collection_due(1_000, 1_250)
    assert collection_due(400_000, 1_750_000)  # a fresh process opening 100,000 records
    assert not collection_due(8_000_000, 9_350_000)  # one holding much more than the open made
