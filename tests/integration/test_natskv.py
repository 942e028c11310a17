"""The compare-and-swap bucket under the NATS stores, against a real server: conditional writes, a lost ack
adopted by its message id, a create over a delete marker, bucket checks, and writes across server crashes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import orjson
import pytest

from journaltools.errors import JournalError, SourceError
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.nats import JetStreamOptions
from journaltools.stores.natskv import (
    BucketLocation,
    CasBucket,
    bucket_config_for,
    check_bucket_config,
    parse_bucket_url,
)
from tests.concurrency import run_in_threads
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin


@pytest.fixture
def bucket(bucket_url: str) -> Iterator[CasBucket]:
    opened = CasBucket.open(parse_bucket_url(bucket_url, "UNUSED"), create=True, options=TEST_OPTIONS)
    yield opened
    opened.close()


def test_writes_are_conditional_on_the_revision(bucket: CasBucket) -> None:
    assert bucket.get("k") is None
    first = bucket.put("k", b"one", 0)
    assert first is not None and bucket.put("k", b"again", 0) is None  # create-only
    second = bucket.put("k", b"two", first)
    assert second is not None and second > first
    assert bucket.put("k", b"stale", first) is None
    stored = bucket.get("k")
    assert stored is not None and (stored.data, stored.revision) == (b"two", second)


def test_a_repeated_write_with_its_message_id_is_adopted_not_a_conflict(bucket: CasBucket) -> None:
    """The process lost the answer to a write that was stored: repeating it with the same id finds it stored."""
    revision = bucket.put("k", b"mine", 0, msg_id="write-1")
    assert revision is not None
    assert bucket.put("k", b"mine", 0, msg_id="write-1") == revision
    assert bucket.put("k", b"someone else", 0, msg_id="write-2") is None


def test_exactly_one_of_many_concurrent_writers_wins(bucket: CasBucket, bucket_url: str) -> None:
    base = bucket.put("k", b"0", 0)
    assert base is not None
    others = [CasBucket.open(parse_bucket_url(bucket_url, "UNUSED"), options=TEST_OPTIONS) for _ in range(3)]
    results: list[int | None] = []
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        handle = [bucket, *others][n % 4]
        barrier.wait()
        results.append(handle.put("k", str(n).encode(), base))

    run_in_threads(writer, 8, timeout=30)
    for other in others:
        other.close()
    winners = [revision for revision in results if revision is not None]
    assert len(results) == 8 and len(winners) == 1
    assert bucket.get("k") is not None and bucket.get("k").revision == winners[0]  # type: ignore[union-attr]


def test_a_create_goes_over_a_delete_marker(bucket: CasBucket, nats_admin: NatsAdmin) -> None:
    assert bucket.put("k", b"old", 0) is not None
    nats_admin.request(f"$KV.{bucket.location.bucket}.k", b"", headers={"KV-Operation": "DEL"})
    assert bucket.get("k") is None
    assert bucket.put("k", b"new", 0) is not None
    assert bucket.get("k") is not None and bucket.get("k").data == b"new"  # type: ignore[union-attr]


def test_keys_are_listed_by_prefix_past_a_page(bucket: CasBucket) -> None:
    for index in range(30):
        assert bucket.put(f"p.records.k{index:02d}", b"x", 0) is not None
    assert bucket.put("p.owners.o", b"x", 0) is not None
    assert bucket.put("other", b"x", 0) is not None
    assert bucket.keys("p.records.") == [f"p.records.k{index:02d}" for index in range(30)]
    assert bucket.keys("p.own") == ["p.owners.o"]
    assert len(bucket.keys()) == 32
    assert sorted(bucket.get_many(["other", "p.owners.o", "missing"])) == ["other", "p.owners.o"]


def test_keys_are_validated(bucket: CasBucket) -> None:
    for bad in ["", ".k", "k.", "a b", "a*", "a>", "k..x"]:
        with pytest.raises(JournalError, match="key-value key"):
            bucket.put(bad, b"x", 0)


def test_bucket_urls() -> None:
    location = parse_bucket_url("nats://user:pw@example.com:4333/TASKS?replicas=3", "DEFAULT")
    assert (location.servers, location.bucket, location.replicas) == ("nats://user:pw@example.com:4333", "TASKS", 3)
    assert location.display_url == "nats://example.com:4333/TASKS" and location.stream == "KV_TASKS"
    assert parse_bucket_url("nats://localhost:4222", "DEFAULT").bucket == "DEFAULT"
    assert parse_bucket_url("nats://h:1/B?prefix=a.b", "D", ("prefix",)).parameters == {"prefix": "a.b"}
    for bad in ["http://h/B", "nats:///B", "nats://h:1/a.b", "nats://h:1/B?replicas=9", "nats://h:1/B?color=red"]:
        with pytest.raises(SourceError):
            parse_bucket_url(bad, "D")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"max_age": 60_000_000_000}, "expire"),
        ({"storage": "memory"}, "lost when the server stops"),
        ({"subjects": ["other.>"]}, "not a key-value bucket"),
        ({"discard": "old", "max_bytes": 1024}, "delete stored values"),
        ({"max_msgs_per_subject": 0}, "history"),
    ],
)
def test_buckets_whose_values_could_vanish_are_refused(change: dict[str, object], why: str) -> None:
    location = BucketLocation("nats://h:1", "B")
    check_bucket_config(location, bucket_config_for(location))
    with pytest.raises(SourceError, match=why):
        check_bucket_config(location, {**bucket_config_for(location), **change})


def test_a_bucket_created_by_another_tool_is_used(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    """A standard key-value bucket (history 5, say) made elsewhere is accepted as it is."""
    location = BucketLocation(nats_server.url, "FOREIGN")
    nats_admin.create_stream({**bucket_config_for(location, history=5), "allow_msg_ttl": True})
    try:
        with CasBucket.open(location, options=TEST_OPTIONS) as bucket:
            assert bucket.put("k", b"v", 0) is not None
    finally:
        nats_admin.delete_stream("KV_FOREIGN")


def test_writes_across_server_crashes_are_never_lost_nor_mistaken_for_conflicts() -> None:
    """One writer advances a key 40 times while the server is SIGKILLed and restarted three times: every write is
    retried until it is stored and returns its revision; none is lost, none is reported as somebody else's."""
    options = JetStreamOptions(request_timeout=0.5, operation_timeout=30.0, reconnect_wait=0.05)
    with EmbeddedServer() as server:
        bucket = CasBucket.open(BucketLocation(server.url, "CRASHY"), create=True, options=options)
        done: list[int] = []
        failures: list[BaseException] = []

        def write_all() -> None:
            try:
                revision = 0
                for value in range(40):
                    stored = bucket.put("counter", orjson.dumps(value), revision)
                    assert stored is not None, f"write {value} from revision {revision} reported as a conflict"
                    revision = stored
                    done.append(value)
            except BaseException as exc:
                failures.append(exc)

        writer = threading.Thread(target=write_all)
        writer.start()
        for kill in range(1, 4):
            deadline = time.monotonic() + 30
            while len(done) < kill * 10 and not failures and time.monotonic() < deadline:
                time.sleep(0.01)  # the poll interval of a condition with a deadline
            server.kill()
            server.restart()
        writer.join(60)
        assert not writer.is_alive() and failures == []
        stored = bucket.get("counter")
        assert stored is not None and orjson.loads(stored.data) == 39 and done == list(range(40))
        bucket.close()


def test_an_unreachable_server_is_a_source_error_naming_the_bucket() -> None:
    from journaltools.sources.embedded import free_port

    url = f"nats://127.0.0.1:{free_port()}/TASKS"
    with pytest.raises(SourceError, match=f"{url}: cannot connect"):
        CasBucket.open(parse_bucket_url(url, "D"), options=JetStreamOptions(connect_timeout=0.3))
