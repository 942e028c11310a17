"""Sources across commands and servers: ``embedded:DIR`` keeps what one command wrote for the next, one audit
reads several sources at once, and a JetStream source rides out a nats-server restart between two reads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.audits.sources import audit_sources
from journaltools.errors import SourceError
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.file import FileBackend
from journaltools.sources.jetstream import JetStreamBackend, open_jetstream_source
from journaltools.sources.registry import open_source
from tests.backend_records import meta, terminal, user
from tests.nats_fixtures import TEST_OPTIONS, unique_stream
from tests.paths import ROOT

#: A separate command: it opens ``embedded:DIR``, writes a run, and exits (its server stops with it).
WRITE_COMMAND = textwrap.dedent(
    """
    import sys
    from journaltools.sources.registry import open_source
    from tests.backend_records import meta, terminal, user
    with open_source("embedded:" + sys.argv[1]) as backend:
        with backend.create_journal("kept", meta("kept", "remember me")) as writer:
            writer.append(user(2))
            writer.append(terminal(3))
    """
)

#: A separate command that tries the same store while this process serves it: refused at once.
OPEN_COMMAND = textwrap.dedent(
    """
    import sys
    from journaltools.sources.registry import open_source
    from journaltools.errors import SourceError
    try:
        open_source("embedded:" + sys.argv[1]).close()
    except SourceError as exc:
        print("refused:", exc)
    """
)


def command(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_embedded_dir_keeps_what_one_command_wrote_for_the_next(tmp_path: Path) -> None:
    store = tmp_path / "store"
    command(WRITE_COMMAND, str(store))
    with open_source(f"embedded:{store}") as backend:
        assert backend.list_runs() == ["kept"]
        read = backend.read_run("kept")
        assert read.complete and read.last_seq == 3
        rows = backend.listing()
        assert [(row.run, row.status, row.prompt) for row in rows] == [("kept", "completed", "remember me")]
        # While this process serves the store, another command is refused instead of starting a second
        # server on the same files.
        assert command(OPEN_COMMAND, str(store)).startswith("refused:")
        with backend.open_writer("kept") as writer:
            writer.append(user(4))
    with open_source(f"embedded:{store}") as again:
        assert again.read_run("kept").last_seq == 4


def test_embedded_dir_needs_a_directory() -> None:
    with pytest.raises(SourceError, match="no directory"):
        open_source("embedded:  ")


def test_one_audit_reads_several_sources(tmp_path: Path, jetstream_url: str) -> None:
    """A file directory and a stream in one call: every run of both, and the two listings compared."""
    files = FileBackend(tmp_path / "files", create=True)
    with files.create_journal("both", meta("both")) as writer:
        writer.append(terminal(2))
    with files.create_journal("file-only", meta("file-only")):
        pass
    with (
        open_jetstream_source(jetstream_url, create=True, options=TEST_OPTIONS) as stream,
        stream.create_journal("both", meta("both")) as writer,
    ):
        writer.append(terminal(2))
    result = audit_sources([str(tmp_path / "files"), jetstream_url], workers=0)
    assert result.runs == 3
    assert result.records == 5
    listing = [f for f in result.findings if f.code.startswith("listing_")]
    assert {f.run for f in listing} == {"file-only"}  # the run only one side holds


@pytest.fixture
def restartable() -> Iterator[EmbeddedServer]:
    """A server of this test's own, so restarting it disturbs no other test's connections."""
    with EmbeddedServer() as server:
        yield server


def test_reads_survive_a_server_restart(restartable: EmbeddedServer, tmp_path: Path) -> None:
    stream, prefix = unique_stream()
    url = f"{restartable.source_url(stream, prefix=prefix)}&create=1"
    with open_jetstream_source(url, create=True, options=TEST_OPTIONS) as backend:
        assert isinstance(backend, JetStreamBackend)
        with backend.create_journal("r1", meta("r1")) as writer:
            writer.append(user(2))
        before = backend.read_run("r1")
        restartable.restart()  # SIGKILL and back on the same port and store: only acknowledged records count
        after = backend.read_run("r1")  # the client reconnects; the read retries until the server answers
        assert [(s.record, s.raw, s.position) for s in after.records] == [
            (s.record, s.raw, s.position) for s in before.records
        ]
        with backend.open_writer("r1") as writer:
            writer.append(terminal(3))
        assert backend.read_run("r1").last_seq == 3
