"""Following a run in the notebook (``widgets.live``): records appended by the project's own writer reach the
conversation view's model once each, in order, as a whole read of the journal would show them; new messages are
added below the window already drawn (which is never drawn again); the badge and the banner change when the run
ends; closing the view stops its thread. Every wait is on the view's condition, with a timeout."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from journaltools.exports.conversation import ConversationModel
from journaltools.goencoding.time import now_go_time
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import AUGUST, NEWEST, Generation
from journaltools.samples.builder import JournalBuilder, calls_of, text, tool_use
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.file import FileBackend, FileJournalWriter
from journaltools.widgets import ConversationView, RunBrowser
from tests.browser_table import rows as table_rows

RUN = "run-1"
TIMEOUT = 10.0


def _builder(generation: Generation = NEWEST, run: str = RUN) -> JournalBuilder:
    return JournalBuilder(
        run,
        prompt="follow me",
        created="2026-11-29T10:00:00.123456789+01:00",
        fingerprint=sample_fingerprint(),
        conversation_token="conversation-secret-7f3e",
        generation=generation,
        clock=now_go_time,
    )


def _create(root: Path, built: JournalBuilder, run: str = RUN) -> FileJournalWriter:
    writer = FileBackend(root, create=True).create_journal(run, built.meta)
    assert isinstance(writer, FileJournalWriter)
    return writer


@pytest.fixture
def views() -> Iterator[list[ConversationView]]:
    made: list[ConversationView] = []
    yield made
    for view in made:
        view.close()


def _seqs(view: ConversationView) -> list[int]:
    return [message.seq for message in view.model.messages]


def _drawn(view: ConversationView) -> str:
    """Every message HTML the view holds: the window drawn, then what was added below it."""
    return view.body.value + "".join(piece.value for piece in view.tail.children)


def _drawn_seqs(view: ConversationView) -> list[int]:
    return [
        int(seq)
        for seq in re.findall(r'class="jt-msg [^"]*" id="[^"]*" data-index="\d+" data-seq="(\d+)"', _drawn(view))
    ]


def _whole(root: Path, run: str = RUN) -> ConversationModel:
    return ConversationModel.from_source(root, run)


@pytest.mark.parametrize("generation", [AUGUST, NEWEST], ids=["august", "newest"])
def test_appended_messages_reach_the_view_once_each_and_the_run_ending_stops_the_follow(
    tmp_path: Path, views: list[ConversationView], generation: Generation
) -> None:
    built = _builder(generation)
    writer = _create(tmp_path, built)
    writer.append(built.user("first question"))
    view = ConversationView.from_source(tmp_path, RUN)
    views.append(view)
    assert view.is_following and ">live<" in view.badge.value
    assert _seqs(view) == _seqs_of(_whole(tmp_path)) == [1]  # the prompt and the question: one user message
    turn = built.assistant(text("looking"), tool_use("toolu_a", "lookup", {"q": 1}))
    writer.append(turn)
    # The turn in flight shows apart from the window, and changes with each record.
    assert view.wait_for(lambda: "turn in flight" in view.in_flight.value, TIMEOUT)
    writer.append(built.result(calls_of(turn)[0], "found it"))
    writer.append(built.assistant(text("the answer is 42")))
    writer.append(built.user("thanks"))
    assert view.wait_for(lambda: _seqs(view) == _seqs_of(_whole(tmp_path)) and len(_seqs(view)) == 5, TIMEOUT)
    assert _drawn_seqs(view) == _seqs(view)  # each message drawn once, in order
    assert view.in_flight.value == ""
    assert "open" in view.header.value and view.model.status == "open"
    writer.append(built.terminal("completed", "all done"))
    assert view.wait_for(lambda: not view.is_following, TIMEOUT)
    assert view.live is not None and view.live.stopped.is_set()
    assert "the run ended (completed)" in view.badge.value and ">live<" not in view.badge.value
    assert "jt-banner" in view.header.value and view.model.why.terminal_reason == "completed"
    whole = _whole(tmp_path)
    assert _seqs(view) == _seqs_of(whole) and view.model.status == whole.status
    assert "conversation-secret" not in _drawn(view) + view.header.value
    writer.close()


def _seqs_of(model: ConversationModel) -> list[int]:
    return [message.seq for message in model.messages]


def test_closing_the_view_stops_its_thread(tmp_path: Path) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    view = ConversationView.from_source(tmp_path, RUN)
    live = view.live
    assert live is not None and live.following
    view.close()  # joins the thread: it looks again every quarter second, so it ends well within the join's 5 s
    assert live.stopped.is_set() and not live.following
    assert not any(thread.name == f"journaltools-follow-{RUN}" for thread in threading.enumerate())
    assert view.live is None and view.badge.value == ""
    writer.append(built.user("after the close"))  # nobody reads it, nothing fails
    writer.close()


def test_closing_the_widget_alone_stops_the_follow(tmp_path: Path) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    view = ConversationView.from_source(tmp_path, RUN)
    live = view.live
    assert live is not None
    view.widget.close()  # what ``Widget.close_all()`` or a kernel closing the comm does
    assert live.stopped.wait(TIMEOUT)
    assert view.wait_for(lambda: "closed" in view.badge.value, TIMEOUT)
    writer.close()


def test_an_ended_run_is_not_followed_unless_asked(tmp_path: Path, views: list[ConversationView]) -> None:
    built = _builder(AUGUST)
    writer = _create(tmp_path, built)
    writer.append(built.user("hello"))
    writer.append(built.terminal("completed"))
    writer.close()
    view = ConversationView.from_source(tmp_path, RUN)
    views.append(view)
    assert not view.is_following and view.live is None and view.badge.layout.display == "none"
    asked = ConversationView.from_source(tmp_path, RUN, follow=True)
    views.append(asked)
    assert asked.is_following
    off = _builder(run="run-2")
    _create(tmp_path, off, "run-2").close()
    never = ConversationView.from_source(tmp_path, "run-2", follow=False)
    assert never.live is None


def test_the_window_drawn_is_never_drawn_again_and_a_full_page_grows_the_next(
    tmp_path: Path, views: list[ConversationView]
) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    writer.append(built.assistant(text("one")))
    writer.append(built.user("two"))
    view = ConversationView.from_source(tmp_path, RUN, page_size=2)
    views.append(view)
    view.show_page(1)  # the last page: one message, room for one more
    drawn = view.body.value
    assert _drawn_seqs(view) == [3]
    writer.append(built.assistant(text("three")))
    assert view.wait_for(lambda: len(view.model.messages) == 4, TIMEOUT)
    assert view.body.value == drawn and len(view.tail.children) == 1 and "three" in view.tail.children[0].value
    assert _drawn_seqs(view) == [3, 4]
    assert view.pager_text.startswith("messages 3-4 of 4") and view.following.disabled
    writer.append(built.user("four"))
    assert view.wait_for(lambda: len(view.model.messages) == 5, TIMEOUT)
    # The page is full: the new message waits on the next page, and the window shown stays as it was.
    assert view.body.value == drawn and len(view.tail.children) == 1 and not view.following.disabled
    assert view.pager_text.startswith("messages 3-4 of 5")
    view.show_page(2)
    assert _drawn_seqs(view) == [5] and view.tail.children == ()
    writer.close()


def test_a_journal_turned_corrupt_shows_invalid_in_the_banner(tmp_path: Path, views: list[ConversationView]) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    view = ConversationView.from_source(tmp_path, RUN)
    views.append(view)
    writer.close()
    with (tmp_path / f"{RUN}.json").open("ab") as journal:
        journal.write(b'{"not": "a record"\n')
        journal.write(encode_record(built.user("after the damage")) + b"\n")
    assert view.wait_for(lambda: view.model.status == "invalid", TIMEOUT)
    assert "invalid" in view.header.value and view.is_following


def test_the_browser_pane_and_its_row_follow_the_opened_run(tmp_path: Path) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    writer.append(built.user("hello"))
    browser = RunBrowser.from_source(str(tmp_path), progress=False)
    try:
        assert browser.loaded.wait(TIMEOUT)
        browser.select(RUN)
        view: Any = browser.conversation
        assert view is not None and view.is_following and browser.live.pane is not None
        writer.append(built.assistant(text("hi there")))
        writer.append(built.terminal("completed"))
        assert view.wait_for(lambda: not view.is_following, TIMEOUT)
        row = browser.row_of(RUN)
        assert row is not None and row.status == "completed" and row.last_seq == 4, row
        assert any("completed" in cell.text for cell in table_rows(browser)[0])
        browser.select(None)
        assert browser.live.pane is None
    finally:
        browser.close()
        writer.close()


@pytest.mark.slow  # follows journals as they are written: `make test` runs it
def test_the_browser_rows_of_open_runs_follow_their_journals(tmp_path: Path) -> None:
    built = _builder()
    writer = _create(tmp_path, built)
    writer.append(built.user("hello"))
    browser = RunBrowser.from_source(str(tmp_path), progress=False)
    try:
        assert browser.loaded.wait(TIMEOUT)
        live = browser.live
        assert live.wait_for(lambda: RUN in live._seen, TIMEOUT)  # the first look notes the journal
        writer.append(built.assistant(text("hi there")))
        assert live.wait_for(lambda: (browser.row_of(RUN) or row_missing()).last_seq == 3, TIMEOUT)
        writer.append(built.terminal("failed", "out of budget"))
        assert live.wait_for(lambda: (browser.row_of(RUN) or row_missing()).status == "failed", TIMEOUT)
        assert browser.model.status_counts().get("failed") == 1 and "failed" in browser.chips
    finally:
        browser.close()
        writer.close()
    assert browser.live._rows is not None and not browser.live._rows.is_alive()


def row_missing() -> Any:
    raise AssertionError("the row is gone")


@pytest.mark.integration
def test_a_followed_stream_run_reaches_the_view_once_each_until_it_ends(
    jetstream_url: str, views: list[ConversationView]
) -> None:
    """The same follow on a real nats-server: an ordered consumer on the run's subjects (``follow_stream``)."""
    from journaltools.sources.jetstream import open_jetstream_source
    from tests.nats_fixtures import TEST_OPTIONS

    built = _builder()
    with open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS) as backend:
        writer = backend.create_journal(RUN, built.meta)
        view = ConversationView.from_source(jetstream_url, RUN)
        views.append(view)
        assert view.is_following and ">live<" in view.badge.value
        writer.append(built.assistant(text("hello from the stream")))
        writer.append(built.user("and back"))
        assert view.wait_for(lambda: len(view.model.messages) == 3, TIMEOUT)
        assert _drawn_seqs(view) == _seqs(view) == [1, 2, 3]
        assert view.model.facts is not None and view.model.facts.store == "jetstream"
        writer.append(built.terminal("completed"))
        assert view.wait_for(lambda: not view.is_following, TIMEOUT)
        assert "the run ended (completed)" in view.badge.value and view.model.why.terminal_reason == "completed"
        writer.close()
    assert view.stop_following()
