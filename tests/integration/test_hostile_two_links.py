"""Issue 20 against real servers and real sockets: credentials that must never cross a plain connection,
JetStream subjects whose seq lies, slow links, and a server that stops answering.

No NATS is mocked where the server's behaviour is under test: a real ``nats-server`` (started without TLS)
for the downgrade, and for what a client sends before any server could refuse it, a plain TCP listener on
127.0.0.1 that speaks the first line of the NATS protocol (an INFO without ``tls_required``) and records
every byte it receives.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.cli import main
from journaltools.errors import ConnectFailed, CorruptJournal, StreamFull
from journaltools.protocol.encode import encode_record
from journaltools.sources.embedded import EmbeddedServer, find_nats_server, free_port
from journaltools.sources.jetstream import JetStreamBackend, open_jetstream_source
from journaltools.sources.jetstream_stream import stream_config_for
from journaltools.sources.nats import JetStreamOptions
from tests.builders import completed_run
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream, wait_for_port

QUICK = JetStreamOptions(connect_timeout=2.0, request_timeout=1.0, operation_timeout=2.0)
PASSWORD = "pl41n-t3xt-pw"


class FakeInfoServer:
    """Accepts connections on 127.0.0.1, sends a NATS INFO that does not ask for TLS, and keeps what arrives."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.received = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # the listener was closed
            with conn:
                info = {"server_id": "fake", "version": "2.11.0", "max_payload": 1048576, "auth_required": True}
                conn.sendall(b"INFO " + json.dumps(info).encode() + b"\r\n")
                conn.settimeout(10.0)
                try:
                    # One chunk, then hang up, as a plain nats-server does on bytes it cannot parse (a TLS
                    # ClientHello): a client that sends CONNECT in clear text sends it in that first chunk.
                    chunk = conn.recv(65536)
                except OSError:
                    chunk = b""  # the client hung up first
                with self._lock:
                    self.received += chunk

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not on Linux)
        self.listener.close()
        self._thread.join(timeout=10)

    def seen(self) -> bytes:
        with self._lock:
            return bytes(self.received)


@pytest.fixture
def fake_info_server() -> Iterator[FakeInfoServer]:
    server = FakeInfoServer()
    yield server
    server.close()


@pytest.fixture
def plain_password_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A real nats-server without TLS that wants a password, tracing every protocol line it receives."""
    port = free_port()
    log = tmp_path / "server.log"
    process = subprocess.Popen(
        [
            str(find_nats_server()),
            "-a",
            "127.0.0.1",
            "-p",
            str(port),
            "--user",
            "alice",
            "--pass",
            PASSWORD,
            "-js",
            "-sd",
            str(tmp_path / "store"),
            "-V",
            "-l",
            str(log),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    yield port, log
    process.terminate()
    process.wait(timeout=10)


@pytest.mark.parametrize("scheme", ["tls", "wss"])
def test_case1_tls_source_never_sends_credentials_to_a_server_without_tls(
    scheme: str, fake_info_server: FakeInfoServer
) -> None:
    url = f"{scheme}://alice:{PASSWORD}@127.0.0.1:{fake_info_server.port}/S"
    with pytest.raises(ConnectFailed) as failed:
        open_jetstream_source(url, options=QUICK)
    assert failed.value.reason == "TLS failed", str(failed.value)
    assert PASSWORD not in str(failed.value) and "\n" not in str(failed.value)
    fake_info_server.close()  # joins the thread: everything the client sent has arrived
    seen = fake_info_server.seen()
    assert b"CONNECT" not in seen and PASSWORD.encode() not in seen, seen[:200]


def test_case1_a_real_plain_server_is_refused_and_never_sees_the_password(
    plain_password_server: tuple[int, Path],
) -> None:
    port, log = plain_password_server
    with pytest.raises(ConnectFailed) as failed:
        open_jetstream_source(f"tls://alice:{PASSWORD}@127.0.0.1:{port}/S", options=QUICK)
    assert failed.value.reason == "TLS failed", str(failed.value)
    trace = log.read_text(errors="replace")
    # The server traces each CONNECT it receives (the password redacted): there must be none at all.
    assert "CONNECT" not in trace and PASSWORD not in trace, trace[-2000:]
    # The same server over nats:// does get the CONNECT: the trace is a real witness.
    open_jetstream_source(f"nats://alice:{PASSWORD}@127.0.0.1:{port}/S?create=1", options=QUICK).close()
    assert "CONNECT" in log.read_text(errors="replace")


def test_case18_a_ws_source_works_out_of_the_box(tmp_path: Path) -> None:
    """``ws://`` needs aiohttp, which the package now installs: a real server's WebSocket port is a source."""
    port, ws_port = free_port(), free_port()
    config = tmp_path / "ws.conf"
    config.write_text(f'websocket {{ listen: "127.0.0.1:{ws_port}", no_tls: true }}\n')
    process = subprocess.Popen(
        [
            str(find_nats_server()),
            "-a",
            "127.0.0.1",
            "-p",
            str(port),
            "-js",
            "-sd",
            str(tmp_path / "store"),
            "-c",
            str(config),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(ws_port, process)
        with open_jetstream_source(f"ws://127.0.0.1:{ws_port}/S?create=1", options=QUICK) as source:
            assert source.list_runs() == []
    finally:
        process.terminate()
        process.wait(timeout=10)


# -- subjects that lie -------------------------------------------------------------------------------------------


def _lying_run(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    """Run ``liar``: meta and seq 2 where they belong, then a record whose body says seq 2 on subject ``.7``."""
    built = completed_run("liar", calls=0)
    meta, second = built.records[0], built.records[1]
    nats_admin.publish(jetstream.subject("liar", 1), encode_record(meta))
    nats_admin.publish(jetstream.subject("liar", 2), encode_record(second))
    nats_admin.publish(f"{jetstream.prefix}.liar.7", encode_record(second))


def test_case10_a_subject_whose_seq_differs_from_its_body_is_reported_and_refused(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _lying_run(jetstream, nats_admin)
    (summary,) = jetstream.listing()
    assert [finding.code for finding in summary.findings] == ["subject_seq_mismatch"]
    read = jetstream.read_run("liar", strict=False)
    assert "subject_seq_mismatch" in {finding.code for finding in read.findings}
    url = jetstream.location.display_url
    for argv in (["ls", url], ["audit", url]):
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert "subject_seq_mismatch" in captured.err + captured.out, argv
    assert main(["audit", url, "--json"]) == 0
    assert "subject_seq_mismatch" in {row["code"] for row in json.loads(capsys.readouterr().out)}
    assert main(["migrate", url, str(tmp_path / "copy"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [refusal["code"] for refusal in report["refused"]] == ["subject_seq_mismatch"]
    # Before: the writer took seq 7 from the subject and acknowledged seq 3 as a duplicate, storing nothing.
    with pytest.raises(CorruptJournal, match="body says seq 2"):
        jetstream.open_writer("liar")


def test_case11_a_meta_subject_whose_run_token_is_no_run_id_is_a_finding(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = encode_record(completed_run("good", calls=0).records[0])
    nats_admin.publish(jetstream.subject("good", 1), meta)
    for token in ("bad~id", "x" * 129, "-dash"):
        nats_admin.publish(f"{jetstream.prefix}.{token}._meta", meta)
    codes = [finding.code for finding in jetstream.source_findings()]
    assert codes == ["invalid_run_id"] * 3
    assert jetstream.list_runs() == ["good"]
    assert main(["audit", jetstream.location.display_url, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sum(row["code"] == "invalid_run_id" for row in rows) == 3


# -- a stream full by its operator's limits ----------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["max_msgs", "max_bytes"])
def test_case12_an_append_to_a_full_stream_says_which_limit_and_reading_is_unaffected(
    limit: str, nats_server: EmbeddedServer, nats_admin: NatsAdmin, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    built = completed_run("full", calls=2)
    raws = [encode_record(record) for record in built.records]
    stream, prefix = unique_stream()
    config = stream_config_for(stream, prefix)
    nats_admin.create_stream(config)
    url = nats_server.source_url(stream)
    try:
        with open_jetstream_source(url, options=TEST_OPTIONS) as source:
            writer = source.create_journal("full", raws[0])
            for raw in raws[1:3]:
                writer.append_raw(raw)
            # The operator's limit set to exactly what the stream holds now: the next message does not fit.
            state = nats_admin.stream_state(stream)
            value = state["messages"] if limit == "max_msgs" else state["bytes"]
            assert "error" not in nats_admin.api(f"STREAM.UPDATE.{stream}", {**config, limit: value})
        with open_jetstream_source(url, options=TEST_OPTIONS) as source:
            writer = source.open_writer("full")
            # Before: "append of ….4 failed: maximum messages exceeded (code 503, err_code 10077)", a store
            # failure code for what is the operator's limit.
            with pytest.raises(StreamFull) as full:
                writer.append_raw(raws[3])
            message = str(full.value)
            assert full.value.limit == limit and f"{limit} = {value}" in message, message
            assert "stream is full" in message and "\n" not in message
            assert writer.last_seq == 3  # nothing moved: the append can be made again once there is room
            read = source.read_run("full")
            assert [stored.raw for stored in read.records] == raws[:3]
            (summary,) = source.listing()
            assert summary.run == "full"
        assert main(["ls", url]) == 0
        capsys.readouterr()
        # A migration into the full stream stops there, with the one line, rather than refusing run after run.
        (tmp_path / "src").mkdir()
        for run in ("other-1", "other-2"):
            (tmp_path / "src" / f"{run}.json").write_bytes(completed_run(run).journal_bytes())
        assert main(["migrate", str(tmp_path / "src"), url]) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("stream is full") == 1 and len(err.splitlines()) == 1, err
    finally:
        nats_admin.delete_stream(stream)
