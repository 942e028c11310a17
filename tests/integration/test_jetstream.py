"""The JetStream backend as the runtime binds it, on a real nats-server: subjects, headers, fence, stream checks."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from journaltools.errors import AnotherWriter, ConcurrentCreate, SourceError, StreamConfigRefused
from journaltools.protocol.encode import encode_record
from journaltools.sources.base import AppendOutcome, meta_record
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.jetstream import (
    JetStreamBackend,
    JetStreamJournalWriter,
    derive_prefix,
    open_jetstream_source,
    stream_config_for,
)
from tests.backend_records import meta, user
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream


def message(admin: NatsAdmin, stream: str, subject: str) -> dict[str, Any]:
    reply = admin.api(f"STREAM.MSG.GET.{stream}", {"last_by_subj": subject})
    assert "message" in reply, reply
    found: dict[str, Any] = reply["message"]
    return found


def headers_of(found: dict[str, Any]) -> dict[str, str]:
    import base64

    lines = base64.b64decode(found.get("hdrs") or b"").decode().split("\r\n")[1:]
    return dict(line.split(": ", 1) for line in lines if ": " in line)


def test_subjects_and_headers_are_the_runtimes(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    with jetstream.create_journal("r1", meta("r1")) as writer:
        writer.append(user(2))
    prefix, stream = jetstream.prefix, jetstream.stream
    first = headers_of(message(nats_admin, stream, f"{prefix}.r1._meta"))
    second = headers_of(message(nats_admin, stream, f"{prefix}.r1.2"))
    assert re.fullmatch(r"[0-9a-f]{32}-1", first["Nats-Msg-Id"])
    assert second["Nats-Msg-Id"] == first["Nats-Msg-Id"][:32] + "-2"  # one nonce per opened journal
    assert first["Nats-Expected-Last-Subject-Sequence"] == "0"
    assert second["Nats-Expected-Last-Subject-Sequence"] == str(
        message(nats_admin, stream, f"{prefix}.r1._meta")["seq"]
    )
    assert second["Nats-Expected-Last-Subject-Sequence-Subject"] == f"{prefix}.r1.>"
    with jetstream.open_writer("r1") as resumed:
        assert resumed.last_seq == 2
        assert isinstance(resumed, JetStreamJournalWriter) and resumed.nonce != first["Nats-Msg-Id"][:32]


def test_a_lost_ack_is_adopted(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    writer = jetstream.create_journal("r1", meta("r1"))
    assert isinstance(writer, JetStreamJournalWriter)
    # The publish landed but its ack never came back: the same message id is already stored.
    headers = {
        "Nats-Msg-Id": writer.msg_id(2),
        "Nats-Expected-Last-Subject-Sequence": str(writer.tail),
        "Nats-Expected-Last-Subject-Sequence-Subject": jetstream.run_filter("r1"),
    }
    nats_admin.request(jetstream.subject("r1", 2), encode_record(user(2)), headers)
    assert writer.append(user(2)).outcome is AppendOutcome.ADOPTED
    assert writer.last_seq == 2
    assert len(jetstream.read_run("r1").records) == 2


def test_fence_rejections_name_the_other_writer(jetstream: JetStreamBackend) -> None:
    first = JetStreamJournalWriter(jetstream, "r1", 0, 0)
    second = JetStreamJournalWriter(jetstream, "r1", 0, 0)
    first.append(meta_record(meta("r1")))
    with pytest.raises(ConcurrentCreate):
        second.append(meta_record(meta("r1")))
    other = jetstream.open_writer("r1")
    other.append(user(2))
    with pytest.raises(AnotherWriter):
        first.append(user(2))


@pytest.mark.parametrize(
    ("setting", "value"),
    [("max_age", 3_600_000_000_000), ("max_msgs_per_subject", 2), ("discard", "old"), ("max_msg_size", 1024)],
)
def test_a_risky_stream_is_read_with_a_warning_and_never_written(
    nats_server: EmbeddedServer, nats_admin: NatsAdmin, setting: str, value: object
) -> None:
    stream, prefix = unique_stream()
    config = stream_config_for(stream, prefix) | {setting: value}
    if setting == "discard":
        config["discard_new_per_subject"] = False
    nats_admin.create_stream(config)
    try:
        nats_admin.publish(f"{prefix}.r1._meta", encode_record(meta_record(meta("r1"))))
        with open_jetstream_source(f"{nats_server.url}/{stream}", options=TEST_OPTIONS) as backend:
            assert [f.code for f in backend.source_findings()][:1] == ["stream_config"]
            assert setting in backend.source_findings()[0].message
            assert backend.read_run("r1").last_seq == 1
            with pytest.raises(StreamConfigRefused, match=setting):
                backend.open_writer("r1")
            with pytest.raises(StreamConfigRefused, match=setting):
                backend.create_journal("r2", meta("r2"))
    finally:
        nats_admin.delete_stream(stream)


def test_binding_an_existing_stream_takes_its_prefix(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    stream, prefix = unique_stream()
    nats_admin.create_stream(stream_config_for(stream, f"{prefix}.deep") | {"subjects": [f"{prefix}.deep.>", "lit"]})
    try:
        with open_jetstream_source(f"{nats_server.url}/{stream}", options=TEST_OPTIONS) as backend:
            assert backend.prefix == f"{prefix}.deep"
        with pytest.raises(SourceError, match="not other"):
            open_jetstream_source(f"{nats_server.url}/{stream}?prefix=other", options=TEST_OPTIONS)
    finally:
        nats_admin.delete_stream(stream)


def test_a_missing_stream_is_not_created_unless_asked(nats_server: EmbeddedServer) -> None:
    name = f"M{uuid.uuid4().hex[:10]}"
    with pytest.raises(SourceError, match="nats stream add"):
        open_jetstream_source(f"{nats_server.url}/{name}", options=TEST_OPTIONS)


@pytest.mark.parametrize(
    ("subjects", "why"),
    [([], "0 wildcard"), (["a.>", "b.>"], "2 wildcard"), (["a.*"], "clean"), ([">"], "clean"), (["a.*.>"], "clean")],
)
def test_derive_prefix_refuses_an_ambiguous_keyspace(subjects: list[str], why: str) -> None:
    with pytest.raises(SourceError, match=why):
        derive_prefix("S", subjects)


def test_derive_prefix_ignores_literal_subjects() -> None:
    assert derive_prefix("S", ["fisk.sessions.>", "other.literal"]) == "fisk.sessions"


def test_embedded_creates_the_stream_the_operators_way() -> None:
    with open_jetstream_source("embedded", options=TEST_OPTIONS) as backend:
        assert (backend.stream, backend.prefix) == ("FISK_SESSIONS", "fisk.sessions")
        assert backend.source_findings() == []
        backend.create_journal("r1", meta("r1")).close()
        assert backend.list_runs() == ["r1"]
