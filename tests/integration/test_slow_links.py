"""Issue 20 case 13: slow links, a server that stops answering, and stderr that holds only journaltools' lines.

The link is a throttling TCP proxy on 127.0.0.1 (``tests.throttle``) between the client and a real
``nats-server``; nothing of NATS is mocked. Timeouts are scaled down (half a second of silence instead of five)
so that a run a few hundred kilobytes long is to the test what a 4 MB run is to the defaults, and each test stays
within seconds.
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.cli._output import format_journal_warning, install_warning_format
from journaltools.errors import ServerNotAnswering, SlowReads
from journaltools.ops.migrate import migrate
from journaltools.protocol.encode import encode_record
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.jetstream import open_jetstream_source
from journaltools.sources.jetstream_stream import stream_config_for
from journaltools.sources.nats import JetStreamOptions
from journaltools.sources.registry import open_source
from tests.builders import completed_run, journal
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream
from tests.throttle import ThrottledProxy

#: Half a second of silence is a timeout; half a second of retries ends an operation.
SCALED = JetStreamOptions(request_timeout=0.5, operation_timeout=0.5, connect_timeout=2.0, reconnect_wait=0.05)


@pytest.fixture
def stream(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[str]:
    name, prefix = unique_stream()
    nats_admin.create_stream(stream_config_for(name, prefix))
    yield name
    nats_admin.delete_stream(name)


def _write_big_run(url: str, run: str, size: int) -> list[bytes]:
    built = journal(run)
    while len(built.journal_bytes()) < size:
        built.user("x" * 1000)
    raws = [encode_record(record) for record in built.records]
    with open_jetstream_source(url, options=TEST_OPTIONS) as source:
        writer = source.create_journal(run, raws[0])
        for raw in raws[1:]:
            writer.append_raw(raw)
    return raws


def test_case13_a_run_longer_to_transfer_than_a_timeout_reads_on_a_slow_link(
    nats_server: EmbeddedServer, stream: str
) -> None:
    """300 KB at 1 Mbit/s with 20 ms per chunk is about 3 s of transfer, six times the scaled timeout. Before, the
    one batch of 4,096 messages had to arrive whole within the timeout, and every retry asked for it again."""
    raws = _write_big_run(nats_server.source_url(stream), "big", 300_000)
    proxy = ThrottledProxy(nats_server.port, rate=125_000, delay=0.02)
    try:
        options = JetStreamOptions(
            request_timeout=0.5, operation_timeout=0.5, connect_timeout=2.0, read_batch_bytes=64 * 1024
        )
        started = time.monotonic()
        with open_jetstream_source(f"{proxy.url}/{stream}", options=options) as source:
            read = source.read_run("big")
        elapsed = time.monotonic() - started
    finally:
        proxy.close()
    assert [stored.raw for stored in read.records] == raws
    assert elapsed < 30, elapsed


def test_case13_a_partition_mid_migrate_is_reported_once_and_soon(
    nats_server: EmbeddedServer, stream: str, tmp_path: Path
) -> None:
    with open_jetstream_source(nats_server.source_url(stream), options=TEST_OPTIONS) as source:
        for n in range(12):
            built = completed_run(f"run-{n}", calls=3)
            writer = source.create_journal(f"run-{n}", encode_record(built.records[0]))
            for record in built.records[1:]:
                writer.append(record)
    proxy = ThrottledProxy(nats_server.port, rate=10_000_000)
    source = open_jetstream_source(f"{proxy.url}/{stream}", options=SCALED)
    try:
        # The link goes away a little way into the copy: after the listing, during the runs' reads.
        proxy.partition_after = proxy.forwarded + 6_000
        started = time.monotonic()
        with pytest.raises(ServerNotAnswering) as stopped:
            migrate(source, open_source(tmp_path / "copy", create=True))
        elapsed = time.monotonic() - started
    finally:
        proxy.close()  # the link gone for good: closing the source need not wait for a drain through it
        source.close()
    message = str(stopped.value)
    assert "the server stopped answering" in message and "\n" not in message, message
    # Before: every run was refused on its own ("source_unreadable"), each after the whole operation timeout.
    assert elapsed < 10 * SCALED.request_timeout + 5, elapsed


_NOISE = """
import asyncio, gc, logging
from journaltools._base.aio import background_loop, run_sync
import journaltools.sources.nats  # what every NATS source imports

async def dropped() -> None:
    raise ConnectionResetError("the link dropped")

async def leave_one_behind() -> None:
    task = asyncio.get_running_loop().create_task(dropped())  # as nats-py's background tasks are: never awaited
    await asyncio.wait([task])  # it has failed; asyncio.wait does not retrieve its exception
    del task

run_sync(leave_one_behind())
run_sync(asyncio.sleep(0))
gc.collect()
# What nats-py's read loop does with an exception it cannot handle.
logging.getLogger("nats.aio.client").error("nats: encountered error", exc_info=ConnectionResetError("reset"))
print("done")
"""


def test_case13_stderr_holds_no_traceback_from_the_loop_or_nats_py() -> None:
    """Before: "Task exception was never retrieved" and "nats: encountered error", each with a traceback, on the
    stderr of a command that had already given its answer and went on to exit 0."""
    done = subprocess.run([sys.executable, "-c", _NOISE], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "done"
    assert done.stderr == "", done.stderr


def test_case13_the_slow_reads_warning_is_one_line(
    nats_server: EmbeddedServer, nats_admin: NatsAdmin, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, prefix = unique_stream()
    nats_admin.create_stream({**stream_config_for(name, prefix), "allow_direct": False})
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            open_jetstream_source(nats_server.source_url(name), options=TEST_OPTIONS).close()
    finally:
        nats_admin.delete_stream(name)
    (warning,) = [item for item in caught if issubclass(item.category, SlowReads)]
    line = format_journal_warning(warning.message, warning.category, warning.filename, warning.lineno)
    assert line.startswith("journaltools: warning: ") and line.count("\n") == 1 and ".py" not in line, line
    # Installed, as the command line's main does: Python's own two lines become that one, other warnings stay.
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    install_warning_format("journaltools ls")
    # What Python's showwarning writes is what formatwarning gives (pytest replaces showwarning itself).
    shown = warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno)
    assert shown == line.replace("journaltools:", "journaltools ls:", 1)
    assert "f.py:1" in warnings.formatwarning(UserWarning("x"), UserWarning, "f.py", 1)
