"""Connection failures say what happened, with the URL (never its credentials), and quickly.

Real servers on this machine for each case that can be made locally: a closed port (refused), a listener
that never speaks (timed out), a ``nats-server`` that requires a password (authentication) and one that
requires TLS with a certificate the client does not trust (TLS). Unreachable networks and unknown hosts
cannot be made without traffic leaving the machine, so their mapping is checked on the errors the
operating system gives for them.
"""

from __future__ import annotations

import errno
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.errors import ConnectFailed, InvalidSource
from journaltools.sources.embedded import find_nats_server, free_port
from journaltools.sources.jetstream import open_jetstream_source
from journaltools.sources.nats import JetStreamOptions, connect_error
from journaltools.sources.registry import open_source
from tests.nats_fixtures import wait_for_port

QUICK = JetStreamOptions(connect_timeout=1.0, request_timeout=1.0, operation_timeout=2.0)


def start_server(*arguments: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    process = subprocess.Popen(
        [str(find_nats_server()), "-a", "127.0.0.1", "-p", str(port), *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    return process, port


@pytest.fixture
def password_server() -> Iterator[int]:
    process, port = start_server("--user", "alice", "--pass", "s3cret-pw")
    yield port
    process.terminate()
    process.wait(10)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[int]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed, so no certificate can be made for a TLS server")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    process, port = start_server("--tls", "--tlscert", str(cert), "--tlskey", str(key))
    yield port
    process.terminate()
    process.wait(10)


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """Accepts TCP connections and never says a word (a firewall black hole, a hung server)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def failure_of(url: str, options: JetStreamOptions = QUICK) -> tuple[ConnectFailed, float]:
    started = time.monotonic()
    with pytest.raises(ConnectFailed) as failed:
        open_jetstream_source(url, options=options)
    return failed.value, time.monotonic() - started


def test_a_refused_connection_is_reported_at_once() -> None:
    port = free_port()
    failure, seconds = failure_of(f"nats://127.0.0.1:{port}/S", JetStreamOptions(connect_timeout=5.0))
    assert failure.reason == "connection refused" and seconds < 2.0, seconds
    assert str(failure).startswith(f"nats://127.0.0.1:{port}/S: cannot connect: connection refused")


def test_silence_is_a_timeout_after_the_connect_timeout(silent_listener: int) -> None:
    failure, seconds = failure_of(f"nats://127.0.0.1:{silent_listener}/S")
    assert failure.reason == "timed out" and 0.9 <= seconds < 4.0, seconds
    assert f"127.0.0.1:{silent_listener}" in str(failure)


def test_wrong_credentials_are_an_authentication_failure_without_the_password(password_server: int) -> None:
    failure, seconds = failure_of(f"nats://alice:wrong-pw@127.0.0.1:{password_server}/S")
    assert failure.reason == "authentication failed" and seconds < 2.0
    assert "wrong-pw" not in str(failure) and "alice" not in str(failure)
    assert str(failure).startswith(f"nats://127.0.0.1:{password_server}/S: cannot connect: authentication failed")
    failure, _ = failure_of(f"nats://127.0.0.1:{password_server}/S")
    assert failure.reason == "authentication failed"


def test_an_untrusted_certificate_is_a_tls_failure(tls_server: int) -> None:
    for scheme in ("tls", "nats"):  # nats:// upgrades when the server requires TLS
        failure, seconds = failure_of(f"{scheme}://u:pw@127.0.0.1:{tls_server}/S")
        assert failure.reason == "TLS failed" and seconds < 2.0, (scheme, str(failure))
        assert "certificate" in str(failure).lower() and ":pw@" not in str(failure)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (OSError(errno.EHOSTUNREACH, "No route to host"), "unreachable"),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), "unreachable"),
        (
            OSError(None, "Multiple exceptions: [Errno 111] Connect call failed, [Errno 99] Cannot assign"),
            "connection refused",
        ),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "unknown host"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"), "connection refused"),
        (TimeoutError(), "timed out"),
    ],
)
def test_connect_errors_are_mapped_in_one_place(error: BaseException, reason: str) -> None:
    failure = connect_error(error, "nats://host:4222/S", 5.0)
    assert failure.reason == reason and str(failure).startswith("nats://host:4222/S: cannot connect: " + reason)
    assert "\n" not in str(failure)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("nats://127.0.0.1:99999/S", "port"),
        ("nats://127.0.0.1:0/S", "port"),
        ("nats://u:secret@127.0.0.1:x/S", "port"),
        ("nats://[::1", "not a valid URL"),
        ("nats://[zz]:1/S", "not a valid URL"),
        ("nats://u:secret@[zz]:1/S", "not a valid URL"),
        (
            "nats://127.0.0.1:4222/S?bogus=1",
            "unknown parameter 'bogus' (known: create, prefix, replicas)",
        ),
        ("nats://u:secret@127.0.0.1:4222/S?prefix=p&bogus", "unknown parameter 'bogus'"),
        ("file://elsewhere/var/journals", "file:// URLs name this machine only"),
        ("file://[zz]/var/journals", "not a valid URL"),
        ("embedded:", "no directory after 'embedded:'"),
    ],
)
def test_a_malformed_source_url_is_bad_usage_not_a_connection(url: str, says: str) -> None:
    with pytest.raises(InvalidSource) as bad:
        open_source(url)
    assert says in str(bad.value) and "secret" not in str(bad.value)
    done = subprocess.run([sys.executable, "-m", "journaltools", "ls", url], capture_output=True, timeout=60)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and says in lines[0] and done.stdout == b"", lines
    assert "secret" not in lines[0] and "Traceback" not in lines[0]


def test_file_urls_of_this_machine_are_read(tmp_path: Path) -> None:
    (tmp_path / "r1.json").write_bytes(b"")
    for url in (tmp_path.as_uri(), f"file://localhost{tmp_path}"):
        with open_source(url) as backend:
            assert backend.list_runs() == ["r1"], url


def test_the_cli_reports_a_refused_connection_in_one_line_quickly() -> None:
    port = free_port()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "journaltools", "ls", f"nats://bob:pw@127.0.0.1:{port}/S"], capture_output=True
    )
    assert done.returncode == 1 and time.monotonic() - started < 10
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "connection refused" in lines[0] and f"127.0.0.1:{port}" in lines[0]
    assert ":pw@" not in lines[0] and "Traceback" not in done.stderr.decode()


@pytest.mark.parametrize("url", ["nats://[::1", "nats://u:secret@[zz]:1/TASKS", "file://elsewhere/var/tasks"])
def test_a_malformed_store_url_is_bad_usage(url: str) -> None:
    from journaltools.stores import open_task_store, open_turn_store

    for opener in (open_task_store, open_turn_store):
        with pytest.raises(InvalidSource) as bad:
            opener(url)
        assert "secret" not in str(bad.value)
