"""JetStream-specific guarantees, against a real nats-server: lost acks, concurrent creators, another writer,
server crashes, stream checks, corruption, and listing past the server's page limit."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import nats.errors
import nats.js.errors
import orjson
import pytest

import journaltools.backends.jetstream as jetstream_module
from journaltools.aio import run_sync
from journaltools.backends.base import AppendResult, AppendVerdictTaken
from journaltools.backends.file import FileBackend
from journaltools.backends.jetstream import (
    SERVER_SUBJECTS_PAGE,
    JetStreamBackend,
    check_stream_config,
    open_jetstream_source,
    stream_config_for,
)
from journaltools.backends.nats_connection import Failure, JetStreamOptions, classify_nats_error, parse_nats_url
from journaltools.backends.registry import open_source
from journaltools.embedded import EmbeddedServer
from journaltools.errors import (
    AnotherWriter,
    ConcurrentCreate,
    CorruptJournal,
    SourceError,
    StreamConfigRefused,
    WriterConflict,
)
from tests.builders import JournalBuilder
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream


def slot_msg_id(admin: NatsAdmin, backend: JetStreamBackend, run: str, seq: int) -> str | None:
    reply = admin.request(
        f"$JS.API.DIRECT.GET.{backend.stream}", orjson.dumps({"last_by_subj": backend.subject(run, seq)})
    )
    return (reply.headers or {}).get("Nats-Msg-Id")


# -- lost acks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lost_seq", [1, 3])
def test_lost_ack_is_adopted_and_the_record_appears_once(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, lost_seq: int
) -> None:
    """The record reached the server but the ack did not reach the writer: its retry is rejected and adopted."""
    journal = JournalBuilder("lost-ack").user().assistant().user()
    writer = jetstream.open_writer("lost-ack")
    for body in journal.bodies[: lost_seq - 1]:
        writer.append(body)
    lost = journal.raw()[lost_seq - 1].raw
    msg_id = writer.msg_id_for(lost)
    assert writer.msg_id_for(lost) == msg_id  # made once, reused on every retry of this write
    ack = nats_admin.publish(jetstream.subject("lost-ack", lost_seq), lost, msg_id=msg_id)  # stored, ack "lost"
    assert "error" not in ack

    result = writer.append(lost)
    assert result == AppendResult(lost_seq, AppendVerdictTaken.ADOPTED)
    assert writer.last_seq == lost_seq
    for body in journal.bodies[lost_seq:]:
        assert writer.append(body).outcome is AppendVerdictTaken.STORED
    writer.close()
    assert [record.raw for record in jetstream.read_run("lost-ack").records] == [r.raw for r in journal.raw()]
    assert nats_admin.stream_state(jetstream.stream)["messages"] == len(journal.bodies)


def test_msg_ids_are_unique_per_write_and_stored(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    journal = JournalBuilder("ids").user()
    with jetstream.open_writer("ids") as writer:
        expected = writer.msg_id_for(journal.bodies[0])
        writer.append(journal.bodies[0])
        second = writer.msg_id_for(journal.bodies[1])
        writer.append(journal.bodies[1])
    assert slot_msg_id(nats_admin, jetstream, "ids", 1) == expected
    assert slot_msg_id(nats_admin, jetstream, "ids", 2) == second != expected


def test_a_slot_taken_by_a_foreign_message_without_our_id_is_not_adopted(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin
) -> None:
    journal = JournalBuilder("foreign").user()
    writer = jetstream.open_writer("foreign")
    writer.append(journal.bodies[0])
    nats_admin.publish(jetstream.subject("foreign", 2), journal.raw()[1].raw, msg_id="somebody-else")
    with pytest.raises(AnotherWriter):
        writer.append(journal.bodies[1])
    writer.close()


# -- more than one writer -----------------------------------------------------------------------------


def test_concurrent_creators_exactly_one_wins(jetstream_url: str) -> None:
    """Two workers (two connections) create the same runs at the same moment."""
    first = open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS)
    second = open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS)
    runs = [f"race-{index}" for index in range(8)]

    async def race(run: str) -> list[AppendResult | BaseException]:
        writers = [await first.open_writer_async(run), await second.open_writer_async(run)]
        metas = [JournalBuilder(run).bodies[0], {**JournalBuilder(run).bodies[0], "labels": {"worker": "two"}}]
        outcomes = await asyncio.gather(
            *(w.append_async(m) for w, m in zip(writers, metas, strict=True)), return_exceptions=True
        )
        for writer in writers:
            await writer.aclose()
        return list(outcomes)

    try:
        for run in runs:
            outcomes = run_sync(race(run))
            stored = [o for o in outcomes if isinstance(o, AppendResult)]
            refused = [o for o in outcomes if isinstance(o, BaseException)]
            assert len(stored) == 1 and stored[0].outcome is AppendVerdictTaken.STORED
            assert len(refused) == 1 and isinstance(refused[0], ConcurrentCreate), refused
            assert refused[0].seq == 1
            assert len(first.read_run(run).records) == 1
    finally:
        first.close()
        second.close()


def test_another_writer_behind_the_first_refuses_the_first(jetstream_url: str) -> None:
    """A resumed worker claims the run; the worker that still believes it holds the run is refused."""
    original = open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS)
    resumer = open_jetstream_source(jetstream_url, options=TEST_OPTIONS)
    journal = JournalBuilder("claimed").user().assistant("call-1")
    try:
        stale = original.open_writer("claimed")
        for body in journal.bodies:
            stale.append(body)
        with resumer.open_writer("claimed") as fresh:
            claim = {"type": "claim", "run": "claimed", "seq": fresh.last_seq + 1, "ts": journal.bodies[0]["ts"]}
            fresh.append({**claim, "worker": "resumer"})
        result = JournalBuilder("claimed").result("call-1").bodies[-1]
        with pytest.raises(AnotherWriter) as refused:
            stale.append({**result, "seq": 4})
        assert isinstance(refused.value, WriterConflict) and refused.value.seq == 4
        assert stale.last_seq == 3
        stale.close()
        assert [record.type for record in original.read_run("claimed").records][-1] == "claim"
    finally:
        original.close()
        resumer.close()


# -- the server crashes -------------------------------------------------------------------------------


def test_server_killed_and_restarted_during_appends_loses_no_acknowledged_record() -> None:
    """SIGKILL and restart the server several times while a writer appends; bounded in time, no sleeps."""
    total, kills = 60, 4
    journal = JournalBuilder("crashy")
    for index in range(total - 1):
        journal.user(f"message {index}") if index % 2 == 0 else journal.assistant(text=f"answer {index}")
    options = JetStreamOptions(request_timeout=0.5, operation_timeout=30.0, reconnect_wait=0.05)
    with EmbeddedServer() as server:
        backend = open_jetstream_source(server.source_url(), create=True, options=options)
        writer = backend.open_writer("crashy")
        acknowledged: list[AppendResult] = []
        failures: list[BaseException] = []
        progress = threading.Condition()

        def append_all() -> None:
            try:
                for body in journal.bodies:
                    result = writer.append(body)
                    with progress:
                        acknowledged.append(result)
                        progress.notify_all()
            except BaseException as exc:
                with progress:
                    failures.append(exc)
                    progress.notify_all()

        appender = threading.Thread(target=append_all, name="appender")
        appender.start()
        try:
            for kill in range(1, kills + 1):
                with progress:
                    assert progress.wait_for(
                        lambda k=kill: len(acknowledged) >= k * total // (kills + 1) or failures, 30
                    )
                server.kill()  # mid-stream: the writer may be between publish and ack
                server.restart()
        finally:
            appender.join(60)
        assert not appender.is_alive()
        assert failures == []
        assert [result.seq for result in acknowledged] == list(range(1, total + 1))
        assert {result.outcome for result in acknowledged} <= {AppendVerdictTaken.STORED, AppendVerdictTaken.ADOPTED}
        assert [record.raw for record in backend.read_run("crashy").records] == [r.raw for r in journal.raw()]
        more = JournalBuilder("crashy").add("note", seq=total + 1, text="after the crashes").bodies[-1]
        assert writer.append(more).outcome is AppendVerdictTaken.STORED
        writer.close()
        backend.close()


def test_unreachable_server_is_a_source_error() -> None:
    from journaltools.embedded import free_port

    with pytest.raises(SourceError, match="cannot connect"):
        open_jetstream_source(f"nats://127.0.0.1:{free_port()}/JOURNALS", options=JetStreamOptions(connect_timeout=0.3))


# -- the stream ---------------------------------------------------------------------------------------


def test_stream_with_max_age_is_refused(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    stream, prefix = unique_stream()
    nats_admin.create_stream({**stream_config_for(stream, prefix), "max_age": 3600 * 10**9})
    try:
        with pytest.raises(StreamConfigRefused) as refused:
            open_source(nats_server.source_url(stream, prefix=prefix))
        assert refused.value.setting == "max_age"
        assert "expire" in str(refused.value)
    finally:
        nats_admin.delete_stream(stream)


def test_stream_without_discard_new_per_subject_is_refused(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    stream, prefix = unique_stream()
    nats_admin.create_stream({**stream_config_for(stream, prefix), "discard_new_per_subject": False})
    try:
        with pytest.raises(StreamConfigRefused) as refused:
            open_source(nats_server.source_url(stream, prefix=prefix), create=True)
        assert refused.value.setting == "discard_new_per_subject"
        assert "replace" in str(refused.value)
    finally:
        nats_admin.delete_stream(stream)


@pytest.mark.parametrize(
    ("change", "setting"),
    [
        ({"max_age": 60 * 10**9}, "max_age"),
        ({"max_msgs_per_subject": 5}, "max_msgs_per_subject"),
        ({"max_msgs_per_subject": -1}, "max_msgs_per_subject"),
        ({"discard": "old"}, "discard"),
        ({"discard_new_per_subject": False}, "discard_new_per_subject"),
        ({"storage": "memory"}, "storage"),
        ({"retention": "workqueue"}, "retention"),
        ({"retention": "interest"}, "retention"),
        ({"allow_rollup_hdrs": True}, "allow_rollup_hdrs"),
        ({"allow_msg_ttl": True}, "allow_msg_ttl"),
        ({"subject_transform": {"src": "journal.>", "dest": "j.>"}}, "subject_transform"),
        ({"subjects": ["other.>"]}, "subjects"),
    ],
)
def test_unsafe_stream_settings_are_refused_by_name(change: dict[str, Any], setting: str) -> None:
    check_stream_config("JOURNALS", stream_config_for("JOURNALS", "journal"))  # the default is accepted
    with pytest.raises(StreamConfigRefused) as refused:
        check_stream_config("JOURNALS", {**stream_config_for("JOURNALS", "journal"), **change})
    assert refused.value.setting == setting
    assert setting in str(refused.value)


def test_a_stream_without_direct_get_is_read_more_slowly_and_says_so(
    nats_server: EmbeddedServer, nats_admin: NatsAdmin, samples_dir: Path
) -> None:
    """Direct get is a speed, not a safety: such a stream is read through consumers and message gets."""
    from journaltools.errors import SlowReads
    from journaltools.ops.migrate import migrate
    from journaltools.tables import load

    stream, prefix = unique_stream()
    nats_admin.create_stream({**stream_config_for(stream, prefix), "allow_direct": False})
    url = nats_server.source_url(stream, prefix=prefix)
    try:
        with pytest.warns(SlowReads, match="does not allow direct get") as warned:
            backend = open_jetstream_source(url, options=TEST_OPTIONS)
        assert len(warned) == 1 and backend.direct is False
        with backend:
            migrate(FileBackend(samples_dir), backend)  # appends, with the slot read back by message get
            direct_stream, direct_prefix = unique_stream()
            with open_jetstream_source(
                nats_server.source_url(direct_stream, prefix=direct_prefix), create=True, options=TEST_OPTIONS
            ) as direct:
                migrate(FileBackend(samples_dir), direct)
                assert backend.list_runs() == direct.list_runs()
                assert backend.listing() == direct.listing()
                for run in direct.list_runs():
                    assert [r.raw for r in backend.read_run(run).records] == [
                        r.raw for r in direct.read_run(run).records
                    ]
                slow, fast = load(backend, strict=False), load(direct, strict=False)
                assert slow.runs.drop_columns(["source"]).equals(fast.runs.drop_columns(["source"]))
                assert slow.messages.equals(fast.messages) and slow.tool_calls.equals(fast.tool_calls)
            nats_admin.delete_stream(direct_stream)
    finally:
        nats_admin.delete_stream(stream)


@pytest.mark.parametrize("census", ["counted run by run", "every subject listed"])
def test_a_run_whose_first_record_is_missing_is_still_listed(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, monkeypatch: pytest.MonkeyPatch, census: str
) -> None:
    if census == "counted run by run":
        monkeypatch.setattr(jetstream_module, "LIST_EVERY_SUBJECT_UP_TO", 0)
    journal = JournalBuilder("whole").user().assistant()
    with jetstream.open_writer("whole") as writer:
        for body in journal.bodies:
            writer.append(body)
    orphan = JournalBuilder("orphan").user()
    nats_admin.publish(jetstream.subject("orphan", 2), orphan.raw()[1].raw)  # seq 2 without its meta
    assert jetstream.list_runs() == ["orphan", "whole"]
    assert {row.run: row.status for row in jetstream.listing()} == {"orphan": "invalid", "whole": "completed"}


def _subject_filters_asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The subject filters the backend asks the server to list, in order, from now on."""
    asked: list[str] = []
    original = JetStreamBackend._subject_counts

    async def spy(self: JetStreamBackend, subject_filter: str) -> dict[str, int]:
        asked.append(subject_filter)
        return await original(self, subject_filter)

    monkeypatch.setattr(JetStreamBackend, "_subject_counts", spy)
    return asked


def test_runs_are_found_from_their_first_subjects_not_every_subject(
    jetstream: JetStreamBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run in ("a1", "b2"):
        with jetstream.open_writer(run) as writer:
            for body in JournalBuilder(run).user().assistant().user().bodies:
                writer.append(body)
    asked = _subject_filters_asked(monkeypatch)
    # Four records a run: listing every subject costs less than a request per run, and says the same.
    assert jetstream.list_runs() == ["a1", "b2"]
    assert asked == [f"{jetstream.prefix}.*.1", f"{jetstream.prefix}.>"]
    assert jetstream.run_census() == {"a1": 4, "b2": 4}
    # Longer runs are counted one request each: one subject per run is listed, the cost follows runs.
    asked.clear()
    monkeypatch.setattr(jetstream_module, "LIST_EVERY_SUBJECT_UP_TO", 3)
    assert jetstream.list_runs() == ["a1", "b2"]
    assert asked == [f"{jetstream.prefix}.*.1"]
    assert jetstream.run_census() == {"a1": 4, "b2": 4}
    assert {row.run: row.status for row in jetstream.listing()} == {"a1": "open", "b2": "open"}


def test_runs_of_one_record_each_need_no_second_listing(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run in ("c1", "d2", "e3"):
        with jetstream.open_writer(run) as writer:
            writer.append(JournalBuilder(run).bodies[0])
    asked = _subject_filters_asked(monkeypatch)
    # As many messages as first records: each run holds one record, the census of first subjects says it all.
    assert jetstream.run_census() == {"c1": 1, "d2": 1, "e3": 1}
    assert asked == [f"{jetstream.prefix}.*.1"]
    # One message more (a run's second record) and the counts are taken again, correctly.
    nats_admin.publish(jetstream.subject("c1", 2), JournalBuilder("c1").user().raw()[1].raw)
    asked.clear()
    assert jetstream.run_census() == {"c1": 2, "d2": 1, "e3": 1}
    assert asked == [f"{jetstream.prefix}.*.1", f"{jetstream.prefix}.>"]


def test_missing_stream_is_refused_unless_created(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    stream, prefix = unique_stream()
    with pytest.raises(SourceError, match="does not exist"):
        open_source(nats_server.source_url(stream, prefix=prefix))
    with open_source(nats_server.source_url(stream, prefix=prefix), create=True) as backend:
        assert backend.kind == "jetstream" and backend.list_runs() == []
    config = nats_admin.api(f"STREAM.INFO.{stream}")["config"]
    assert config["max_msgs_per_subject"] == 1 and config["discard_new_per_subject"] is True
    assert config["max_age"] == 0 and config["storage"] == "file" and config["allow_direct"] is True
    nats_admin.delete_stream(stream)


def test_a_second_publish_to_a_slot_is_rejected_by_the_server(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin
) -> None:
    """Append-only is the server's rule, not the writer's politeness: even a bare publish cannot replace."""
    journal = JournalBuilder("immutable")
    write = journal.raw()[0].raw
    with jetstream.open_writer("immutable") as writer:
        writer.append(write)
    answer = nats_admin.publish(jetstream.subject("immutable", 1), b'{"replaced": true}')
    assert answer["error"]["err_code"] == 10077
    assert jetstream.read_run("immutable").records[0].raw == write


# -- corruption ---------------------------------------------------------------------------------------


def test_a_message_that_does_not_parse_is_corruption(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    journal = JournalBuilder("damaged").user()
    with jetstream.open_writer("damaged") as writer:
        writer.append(journal.bodies[0])
    nats_admin.publish(jetstream.subject("damaged", 2), b'{"type":"user", "run": "dam')
    with pytest.raises(CorruptJournal) as refused:
        jetstream.read_run("damaged")
    assert refused.value.position == 2
    lenient = jetstream.read_run("damaged", strict=False)
    assert not lenient.complete and [r.seq for r in lenient.records] == [1]  # what parses, flagged incomplete
    assert [finding.code for finding in lenient.findings] == ["corrupt_line"]
    assert {row.run: row.status for row in jetstream.listing()} == {"damaged": "invalid"}


# -- reading and listing ------------------------------------------------------------------------------


def test_a_long_run_is_read_across_batches_in_order(jetstream_url: str) -> None:
    options = JetStreamOptions(request_timeout=5.0, read_batch=7)
    journal = JournalBuilder("long")
    for index in range(40):
        journal.user(f"u{index}")
    other = JournalBuilder("interleaved").user()
    with open_jetstream_source(jetstream_url, create=True, options=options) as backend:
        with backend.open_writer("long") as writer, backend.open_writer("interleaved") as noise:
            for index, body in enumerate(journal.bodies):
                writer.append(body)
                if index < len(other.bodies):
                    noise.append(other.bodies[index])
        assert [record.raw for record in backend.read_run("long").records] == [r.raw for r in journal.raw()]


def test_listing_pages_through_subjects(jetstream_url: str) -> None:
    """With the page lowered to 7 subjects, 23 runs (46 subjects) take seven stream-info requests."""
    options = JetStreamOptions(request_timeout=5.0, subjects_page_limit=7)
    runs = [f"paged-{index:02d}" for index in range(23)]
    with open_jetstream_source(jetstream_url, create=True, options=options) as backend:
        for run in runs:
            with backend.open_writer(run) as writer:
                for body in JournalBuilder(run).user().bodies:
                    writer.append(body)
        assert backend.list_runs() == runs
        listing = backend.listing()
        assert [row.run for row in listing] == runs
        assert {row.status for row in listing} == {"open"} and {row.last_seq for row in listing} == {2}


def test_enumeration_pages_past_the_servers_subject_limit(
    nats_server: EmbeddedServer, nats_admin: NatsAdmin, jetstream_url: str
) -> None:
    """The real limit: 100,010 runs. nats-py's stream_info stops at 100,000 subjects; list_runs does not."""
    count = SERVER_SUBJECTS_PAGE + 10
    with open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS) as backend:
        runs = [f"r{index:06d}" for index in range(count)]
        nats_admin.publish_many([backend.subject(run, 1) for run in runs[:-1]], b"{}")
        # The last one waits for its ack: the server stores one connection's messages in order.
        assert "error" not in nats_admin.publish(backend.subject(runs[-1], 1), b"{}")
        state = nats_admin.stream_state(backend.stream)
        assert state["messages"] == count

        truncated = run_sync(
            nats_admin.client.jsm().stream_info(backend.stream, subjects_filter=f"{backend.prefix}.>")
        ).state.subjects
        assert truncated is not None and len(truncated) == SERVER_SUBJECTS_PAGE  # what we must not rely on

        assert backend.list_runs() == runs


def test_embedded_source_starts_a_server() -> None:
    with open_source("embedded") as backend:
        assert backend.kind == "jetstream" and backend.url.startswith("nats://127.0.0.1:")
        with backend.open_writer("demo") as writer:
            writer.append(JournalBuilder("demo").bodies[0])
        assert "demo" in backend.list_runs()


# -- pure parts ---------------------------------------------------------------------------------------


def test_parse_nats_url() -> None:
    location = parse_nats_url("nats://user:secret@example.com:4333/RUNS?prefix=agents.journal")
    assert (location.servers, location.stream, location.prefix) == (
        "nats://user:secret@example.com:4333",
        "RUNS",
        "agents.journal",
    )
    assert location.display_url == "nats://example.com:4333/RUNS?prefix=agents.journal"  # no credentials
    assert parse_nats_url("nats://localhost:4222").stream == "JOURNALS"
    for bad in ["nats://host:1/A.B", "nats://host:1/S?prefix=a.*", "http://host/S", "nats:///S"]:
        with pytest.raises(SourceError):
            parse_nats_url(bad)


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (
            nats.js.errors.BadRequestError(code=400, err_code=10071, description="wrong last sequence: 1"),
            Failure.SLOT_TAKEN,
        ),
        (
            nats.js.errors.ServiceUnavailableError(
                code=503, err_code=10077, description="maximum messages per subject"
            ),
            Failure.SLOT_TAKEN,
        ),
        (
            nats.js.errors.ServiceUnavailableError(code=503, err_code=10008, description="unavailable"),
            Failure.TRANSIENT,
        ),
        (nats.errors.TimeoutError(), Failure.TRANSIENT),
        (nats.errors.NoRespondersError(), Failure.TRANSIENT),
        (nats.js.errors.NoStreamResponseError(), Failure.TRANSIENT),
        (nats.js.errors.BadRequestError(code=400, err_code=10052, description="invalid"), Failure.FATAL),
        (nats.errors.ConnectionClosedError(), Failure.FATAL),
    ],
)
def test_nats_errors_are_classified_in_one_place(error: BaseException, failure: Failure) -> None:
    assert classify_nats_error(error) is failure


def test_the_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.bench_jetstream import main

    assert main(["--quick"]) == 0
    printed = capsys.readouterr().out
    for name in (
        "read_all_runs_vs_ordered_consumer",
        "append_blocking_vs_raw_publish",
        "listing_many_short_over_few_long",
        "listing_short_vs_every_subject",
        "listing_long_vs_every_subject",
    ):
        assert f"{name} " in printed, name
