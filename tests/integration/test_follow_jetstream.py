"""``show --follow`` and ``ls --watch`` on a real nats-server: each record a writer appends shows once, through a
server restart (SIGKILL, back on the same port and store) between records, and the follow ends with the run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from journaltools._base.aio import run_sync
from journaltools.goencoding.time import now_go_time
from journaltools.protocol.generations import NEWEST
from journaltools.samples.builder import JournalBuilder, calls_of, text, tool_use
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.follow_stream import StreamFollower
from journaltools.sources.jetstream import open_jetstream_source
from tests.backend_records import meta, user
from tests.follow_process import Watched, count_holding
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream

RUN = "run-1"


@pytest.fixture
def restartable() -> Iterator[EmbeddedServer]:
    """A server of this test's own, so restarting it disturbs no other test's connections."""
    with EmbeddedServer() as server:
        yield server


def _builder() -> JournalBuilder:
    return JournalBuilder(
        RUN,
        prompt="follow me",
        created="2026-11-29T10:00:00.123456789+01:00",
        fingerprint=sample_fingerprint(),
        conversation_token="conversation-secret-7f3e",
        generation=NEWEST,
        clock=now_go_time,
    )


def test_each_record_shows_once_through_a_server_restart(restartable: EmbeddedServer, watched: list[Watched]) -> None:
    stream, prefix = unique_stream()
    url = restartable.source_url(stream, prefix=prefix)
    built = _builder()
    with open_jetstream_source(f"{url}&create=1", create=True, options=TEST_OPTIONS) as backend:
        writer = backend.create_journal(RUN, built.meta)
        follow = Watched("show", "--follow", url, RUN)
        watched.append(follow)
        follow.until("--- following")
        turn = built.assistant(text("looking"), tool_use("toolu_a", "lookup", {"q": 1}))
        writer.append(turn)
        follow.until("[seq 2] assistant")
        writer.append(built.result(calls_of(turn)[0], "found it"))
        follow.until("[seq 3] <- lookup")
        restartable.restart()  # the writer's and the follower's clients reconnect; the consumer is gone
        for words in ("after the restart", "and once more"):
            record = built.user(words)
            writer.append(record)  # retried until the server answers again
            follow.until(f"[seq {record.seq}] user")
        writer.append(built.terminal("completed"))
        follow.until("terminal: completed")
        follow.rest()
        assert follow.wait() == 0
        writer.close()
    for seq in range(2, 7):
        assert count_holding(follow.lines, f"[seq {seq}]") == 1, follow.lines
    assert any("run ended: completed" in line for line in follow.lines)
    assert all("conversation-secret" not in line for line in follow.lines)
    assert sum("after it was journaled" in line for line in follow.lines) == 5


def test_a_follower_takes_every_message_once_whatever_the_consumer_delivers_again(
    restartable: EmbeddedServer,
) -> None:
    stream, prefix = unique_stream()
    url = restartable.source_url(stream, prefix=prefix)
    with (
        open_jetstream_source(f"{url}&create=1", create=True, options=TEST_OPTIONS) as backend,
        backend.create_journal(RUN, meta(RUN)) as writer,
    ):
        writer.append(user(2))
        follower = StreamFollower(backend, RUN)
        assert [stored.record.seq for stored in follower.start().records] == [1, 2]
        writer.append(user(3))
        assert _taken_through(follower, 3) == [3]
        # A consumer made again from the start (as after a restart) delivers everything again: none of it is
        # taken twice, and what comes after it is taken.
        taken_up_to, follower.last = follower.last, 0
        run_sync(follower._subscribe())
        follower.last = taken_up_to
        writer.append(user(4))
        assert _taken_through(follower, 4) == [4]
        follower.close()


def _taken_through(follower: StreamFollower, seq: int) -> list[int]:
    """The seqs the follower takes until it takes ``seq`` (each wait ends as soon as a message comes)."""
    taken: list[int] = []
    for _ in range(12):
        taken += [stored.record.seq for stored in follower.wait(5).records]
        if seq in taken:
            return taken
    raise AssertionError(f"seq {seq} never came; took {taken}")


def test_ls_watch_redraws_when_a_stream_run_changes(restartable: EmbeddedServer, watched: list[Watched]) -> None:
    stream, prefix = unique_stream()
    url = restartable.source_url(stream, prefix=prefix)
    with (
        open_jetstream_source(f"{url}&create=1", create=True, options=TEST_OPTIONS) as backend,
        backend.create_journal(RUN, meta(RUN)) as writer,
    ):
        listing = Watched("ls", "--watch", url)
        watched.append(listing)
        listing.until("watching since")
        writer.append(user(2))
        redrawn = listing.until("watching since")
    assert any("the runs changed" in line for line in redrawn)
    assert any(RUN in line for line in redrawn)
    assert listing.interrupt() == 0


def test_a_body_that_does_not_decode_mid_follow_makes_the_run_invalid_with_a_finding(
    restartable: EmbeddedServer,
) -> None:
    stream, prefix = unique_stream()
    url = restartable.source_url(stream, prefix=prefix)
    admin = NatsAdmin(restartable.url)
    try:
        with (
            open_jetstream_source(f"{url}&create=1", create=True, options=TEST_OPTIONS) as backend,
            backend.create_journal(RUN, meta(RUN)) as writer,
        ):
            writer.append(user(2))
            follower = StreamFollower(backend, RUN)
            assert follower.start().complete
            assert "error" not in admin.publish(f"{prefix}.{RUN}.3", b'{"seq":3,"protocol":')
            change = follower.wait(5)
            for _ in range(10):
                if change.complete is not None:
                    break
                change = follower.wait(5)
            follower.close()
    finally:
        admin.close()
    assert change.complete is False
    assert change.findings is not None and [finding.code for finding in change.findings] == ["corrupt_line"]
    assert any("refused from here on" in notice for notice in change.notices)
