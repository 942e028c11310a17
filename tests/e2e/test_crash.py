"""A writer killed while it holds the flock: the kernel drops the lock, and what it made durable stays."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from journaltools.errors import JournalLocked
from journaltools.sources.file import FileBackend
from tests.paths import ROOT

WRITER = textwrap.dedent(
    """
    import sys
    from journaltools.sources.file import FileBackend
    from tests.backend_records import meta, user
    writer = FileBackend(sys.argv[1], create=True).create_journal("r1", meta("r1"))
    writer.append(user(2))
    print("ready", flush=True)
    sys.stdin.read()  # hold the lock until killed
    """
)


def test_a_killed_writer_leaves_no_lock_and_loses_nothing_durable(tmp_path: Path) -> None:
    root = ROOT
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"  # the handshake, not a sleep
        with pytest.raises(JournalLocked):
            FileBackend(tmp_path).open_writer("r1")
    finally:
        child.kill()
        child.communicate(timeout=30)  # reaps it and closes both pipes
    with FileBackend(tmp_path).open_writer("r1") as writer:
        assert writer.last_seq == 2
