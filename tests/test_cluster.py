"""Replicated streams: ``?replicas=N`` in the URL, and an R3 stream on a real 3-node cluster on loopback that keeps
every acknowledged record while its leader is killed and restarted under a writer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from journaltools.backends.base import AppendResult, AppendVerdictTaken
from journaltools.backends.jetstream import open_jetstream_source, stream_config_for
from journaltools.backends.nats_connection import JetStreamOptions, parse_nats_url
from journaltools.embedded import EmbeddedCluster, EmbeddedServer
from journaltools.errors import SourceError
from tests.builders import JournalBuilder
from tests.nats_fixtures import NatsAdmin, unique_stream

#: Generous enough for a leader election (followers wait several seconds before they elect a new one).
CLUSTER_OPTIONS = JetStreamOptions(request_timeout=1.0, operation_timeout=60.0, reconnect_wait=0.05)


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout}s: {what}")
        time.sleep(0.05)


@pytest.fixture
def nats_cluster() -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(3) as cluster:
        yield cluster


def test_replicas_come_from_the_url() -> None:
    assert parse_nats_url("nats://localhost:4222/RUNS?replicas=3").replicas == 3
    assert parse_nats_url("nats://localhost:4222/RUNS?prefix=a.b&replicas=5").prefix == "a.b"
    assert parse_nats_url("nats://localhost:4222/RUNS").replicas == 1
    for bad in ["0", "6", "three", "-1", "2.5"]:
        with pytest.raises(SourceError, match="replicas"):
            parse_nats_url(f"nats://localhost:4222/RUNS?replicas={bad}")
    assert stream_config_for("RUNS", "journal", 3)["num_replicas"] == 3
    assert stream_config_for("RUNS", "journal")["num_replicas"] == 1


def test_replicas_on_a_single_server_are_refused_naming_the_url(nats_server: EmbeddedServer) -> None:
    stream, prefix = unique_stream()
    with pytest.raises(SourceError, match=f"{stream}.*replicas"):
        open_jetstream_source(f"{nats_server.url}/{stream}?prefix={prefix}&replicas=3", create=True)


def test_an_existing_stream_is_checked_as_before_whatever_replicas_the_url_asks(nats_cluster: EmbeddedCluster) -> None:
    with open_jetstream_source(nats_cluster.source_url("ONE"), create=True, options=CLUSTER_OPTIONS):
        pass
    admin = NatsAdmin(nats_cluster.url)
    try:
        with open_jetstream_source(nats_cluster.source_url("ONE", replicas=3), options=CLUSTER_OPTIONS):
            assert admin.api("STREAM.INFO.ONE")["config"]["num_replicas"] == 1  # never changed behind the user
    finally:
        admin.close()


def test_r3_stream_keeps_every_acknowledged_record_while_its_leader_is_killed(nats_cluster: EmbeddedCluster) -> None:
    """Kill the stream leader three times under a writer that keeps appending; restart it each time and let it
    catch up. Every acknowledged record is there afterwards, in order, and the writer goes on."""
    kills, cap = 3, 50_000
    backend = open_jetstream_source(nats_cluster.source_url("R3", replicas=3), create=True, options=CLUSTER_OPTIONS)
    admin = NatsAdmin(nats_cluster.url)
    try:
        info = admin.api("STREAM.INFO.R3")
        assert info["config"]["num_replicas"] == 3 and len(info["cluster"]["replicas"]) == 2
        journal = JournalBuilder("replicated")
        writer = backend.open_writer("replicated")
        acknowledged: list[AppendResult] = []
        failures: list[BaseException] = []
        stop = threading.Event()
        started = time.monotonic()

        def append_until_stopped() -> None:
            try:
                while not stop.is_set() and len(acknowledged) < cap:
                    if len(journal.bodies) == len(acknowledged):
                        journal.user(f"message {journal.seq}")
                    acknowledged.append(writer.append(journal.bodies[len(acknowledged)]))
            except BaseException as exc:
                failures.append(exc)

        appender = threading.Thread(target=append_until_stopped, name="appender")
        appender.start()
        try:
            for _ in range(kills):
                before = len(acknowledged)
                wait_until(lambda b=before: len(acknowledged) > b + 20 or bool(failures), 60, "appends")
                leader = nats_cluster.stream_leader("R3")
                assert leader is not None
                nats_cluster.kill(leader)  # mid-stream: the writer may be between publish and ack
                during = len(acknowledged)
                wait_until(lambda d=during: len(acknowledged) > d + 20 or bool(failures), 60, "appends on a new leader")
                nats_cluster.restart(leader)
                wait_until(lambda: nats_cluster.stream_current("R3"), 60, "the restarted node caught up")
        finally:
            stop.set()
            appender.join(90)
        assert not appender.is_alive() and failures == []
        assert time.monotonic() - started < 120
        assert len(acknowledged) < cap  # the kills happened while the writer was still writing
        assert [result.seq for result in acknowledged] == list(range(1, len(acknowledged) + 1))
        assert {result.outcome for result in acknowledged} <= {AppendVerdictTaken.STORED, AppendVerdictTaken.ADOPTED}
        stored = [record.raw for record in backend.read_run("replicated").records]
        assert stored == [record.raw for record in journal.raw()][: len(acknowledged)]
        more = JournalBuilder("replicated").add("note", seq=len(acknowledged) + 1, text="after the kills").bodies[-1]
        assert writer.append(more).outcome is AppendVerdictTaken.STORED
        assert admin.stream_state("R3")["messages"] == len(acknowledged) + 1
        writer.close()
    finally:
        admin.close()
        backend.close()
