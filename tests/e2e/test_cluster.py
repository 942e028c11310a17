"""Replicated streams: ``?replicas=N`` in the URL, and an R3 stream on a real 3-node cluster on loopback that keeps
every acknowledged record while its leader is killed and restarted under a writer. The cluster's own start is
tested too: it plans its ports again when one is taken before a node can bind it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from journaltools.errors import SourceError
from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Terminal
from journaltools.samples.builder import JournalBuilder
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.base import AppendOutcome, AppendResult
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.jetstream import open_jetstream_source
from journaltools.sources.jetstream_stream import stream_config_for
from journaltools.sources.nats import JetStreamOptions, parse_nats_url
from journaltools.testing.cluster import EmbeddedCluster, distinct_free_ports
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
    assert stream_config_for("RUNS", "fisk.sessions", 3)["num_replicas"] == 3
    assert stream_config_for("RUNS", "fisk.sessions")["num_replicas"] == 1


def test_replicas_on_a_single_server_are_refused_naming_the_url(nats_server: EmbeddedServer) -> None:
    stream, prefix = unique_stream()
    with pytest.raises(SourceError, match=f"{stream}.*replicas"):
        open_jetstream_source(f"{nats_server.url}/{stream}?prefix={prefix}&replicas=3", create=True)


def test_distinct_free_ports_never_repeat() -> None:
    ports = distinct_free_ports("127.0.0.1", 64)
    assert len(set(ports)) == 64


def test_a_cluster_plans_its_ports_again_when_one_is_taken_before_its_node_binds_it() -> None:
    cluster = EmbeddedCluster(3)
    taken = cluster.nodes[2].port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        with cluster:
            assert taken not in [node.port for node in cluster.nodes]
            assert all(node.running for node in cluster.nodes)  # and start() waited for a meta leader


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
    """Kill the stream leader twice under a writer that keeps appending (the second kill lands on a leader elected
    after the first); restart it each time and let it catch up. Every acknowledged record is there afterwards, in
    order, and the writer goes on."""
    kills, cap = 2, 50_000
    backend = open_jetstream_source(nats_cluster.source_url("R3", replicas=3), create=True, options=CLUSTER_OPTIONS)
    admin = NatsAdmin(nats_cluster.url)
    try:
        info = admin.api("STREAM.INFO.R3")
        assert info["config"]["num_replicas"] == 3 and len(info["cluster"]["replicas"]) == 2
        journal = JournalBuilder(
            "replicated", prompt="replicated", created="2026-12-01T10:00:00.5Z", fingerprint=sample_fingerprint()
        )
        writer = backend.create_journal("replicated", journal.meta)
        acknowledged: list[AppendResult] = []
        failures: list[BaseException] = []
        stop = threading.Event()
        started = time.monotonic()

        def append_until_stopped() -> None:
            try:
                while not stop.is_set() and len(acknowledged) < cap:
                    record = journal.user(f"message {journal.last_seq + 1}")
                    acknowledged.append(writer.append(record))
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
        assert [result.seq for result in acknowledged] == list(range(2, len(acknowledged) + 2))
        assert {result.outcome for result in acknowledged} <= {AppendOutcome.STORED, AppendOutcome.ADOPTED}
        stored = [stored.raw for stored in backend.read_run("replicated").records]
        assert stored == [encode_record(record) for record in journal.records[: len(acknowledged) + 1]]
        more = journal.add(Terminal(reason="completed"))
        assert writer.append(more).outcome is AppendOutcome.STORED
        assert admin.stream_state("R3")["messages"] == len(acknowledged) + 2
        writer.close()
    finally:
        admin.close()
        backend.close()
