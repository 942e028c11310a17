"""A real ``nats-server -js`` for the tests (never a mock for server behaviour), and an out-of-band client.

``nats_server`` is one server per test session on a free port with its own temporary store. Each test that
asks for ``jetstream`` gets a fresh stream with its own name and subject prefix, deleted afterwards.
``bucket_url`` is the same for a key-value bucket (the NATS task and turn stores).
``nats_admin`` is a plain nats-py connection that plays "somebody else": it publishes out of band, creates
misconfigured streams and reads raw server state.
"""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from journaltools._base.aio import run_sync
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.jetstream import JetStreamBackend, open_jetstream_source
from journaltools.sources.nats import JetStreamOptions

#: Short timeouts: a healthy local server answers in milliseconds.
TEST_OPTIONS = JetStreamOptions(request_timeout=2.0, operation_timeout=15.0, reconnect_wait=0.05)


class NatsAdmin:
    """Raw access to the server, on journaltools' background loop."""

    def __init__(self, url: str) -> None:
        self.client = Client()
        run_sync(self.client.connect(servers=[url], name="journaltools-tests-admin"))

    def request(self, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None) -> Msg:
        return run_sync(self.client.request(subject, payload, timeout=10, headers=headers))

    def api(self, endpoint: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.request(f"$JS.API.{endpoint}", orjson.dumps(body) if body is not None else b"")
        answer: dict[str, Any] = orjson.loads(reply.data)
        return answer

    def publish(self, subject: str, payload: bytes, msg_id: str | None = None) -> dict[str, Any]:
        """A JetStream publish (waits for the ack); returns the ack or the error reply."""
        headers = {"Nats-Msg-Id": msg_id} if msg_id is not None else None
        answer: dict[str, Any] = orjson.loads(self.request(subject, payload, headers).data)
        return answer

    def publish_many(self, subjects: list[str], payload: bytes) -> None:
        """Core publishes into the stream (no ack each), then a flush: fast bulk loading."""

        async def go() -> None:
            for subject in subjects:
                await self.client.publish(subject, payload)
            await self.client.flush(timeout=60)

        run_sync(go())

    def create_stream(self, config: dict[str, Any]) -> None:
        answer = self.api(f"STREAM.CREATE.{config['name']}", config)
        assert "error" not in answer, answer

    def delete_stream(self, name: str) -> None:
        self.api(f"STREAM.DELETE.{name}")

    def stream_state(self, name: str) -> dict[str, Any]:
        state: dict[str, Any] = self.api(f"STREAM.INFO.{name}")["state"]
        return state

    def close(self) -> None:
        run_sync(self.client.drain())


def unique_stream() -> tuple[str, str]:
    """A fresh (stream name, subject prefix): streams on one server must not share subjects."""
    token = uuid.uuid4().hex[:12]
    return f"T{token}", f"t{token}"


@pytest.fixture(scope="session")
def nats_server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as server:
        yield server


@pytest.fixture(scope="session")
def nats_admin(nats_server: EmbeddedServer) -> Iterator[NatsAdmin]:
    admin = NatsAdmin(nats_server.url)
    yield admin
    admin.close()


@pytest.fixture
def jetstream_url(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[str]:
    """The URL of a stream no other test uses (created on first open, deleted afterwards)."""
    stream, prefix = unique_stream()
    yield nats_server.source_url(stream, prefix=prefix) + "&create=1"
    nats_admin.delete_stream(stream)


@pytest.fixture
def bucket_url(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[str]:
    """The URL of a key-value bucket no other test uses (created by the store that opens it, deleted afterwards)."""
    bucket = f"B{uuid.uuid4().hex[:12]}"
    yield f"{nats_server.url}/{bucket}"
    nats_admin.delete_stream(f"KV_{bucket}")


@pytest.fixture
def jetstream(jetstream_url: str) -> Iterator[JetStreamBackend]:
    backend = open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS)
    yield backend
    backend.close()


def wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float = 15.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"nats-server exited with status {process.returncode}")
            time.sleep(0.02)  # polling a port that is not open yet: the server gives no other signal
    pytest.fail(f"nats-server did not listen on {port}")
