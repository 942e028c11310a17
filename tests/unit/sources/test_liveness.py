"""Whether a process writes a run now: read from the kernel's lock table while another process holds the lock and
after it lets go, and never by opening the lock file (taking, testing or waiting on it could stall a writer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from journaltools.cli import main
from journaltools.sources.liveness import PROC_LOCKS, HeldLocks, lock_path, silent_for
from tests.lock_holder import HOLDER, needs_proc_locks, never_locking
from tests.paths import SAMPLES


@needs_proc_locks
def test_a_held_lock_reads_held_and_a_released_one_free_without_opening_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = "newest-next-turn-in-flight"
    (tmp_path / f"{run}.json").write_bytes((SAMPLES / f"{run}.json").read_bytes())
    lock = lock_path(tmp_path, run)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        opened = never_locking(monkeypatch, lock)
        assert HeldLocks.now().writer(lock) == "held"
        assert main(["ls", "--json", str(tmp_path)]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert row["writer"] == "held" and row["silent_for"] >= 0
        assert main(["show", str(tmp_path), run]) == 0
        assert "writer: held (a process holds the run's lock now)" in capsys.readouterr().out
        monkeypatch.undo()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        opened = never_locking(monkeypatch, lock)
        assert HeldLocks.now().writer(lock) == "free"
        assert str(lock) not in opened
    finally:
        monkeypatch.undo()
        holder.kill()
        holder.communicate(timeout=30)  # waits, and closes both pipes


def test_no_lock_file_is_free_and_an_unreadable_table_is_unknown(tmp_path: Path) -> None:
    assert HeldLocks(frozenset()).writer(tmp_path / "absent.lock") == "free"
    assert HeldLocks.now(tmp_path / "no-such-table").writer(tmp_path / "absent.lock") == "unknown"
    table = tmp_path / "locks"
    lock = tmp_path / "run.lock"
    lock.touch()
    info = lock.stat()
    where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    # A waiter's line ("->") holds nothing; a holder's does.
    table.write_text(f"1: -> FLOCK  ADVISORY  WRITE 7 {where} 0 EOF\n")
    assert HeldLocks.now(table).writer(lock) == "free"
    table.write_text(f"1: FLOCK  ADVISORY  WRITE 7 {where} 0 EOF\n2: POSIX  ADVISORY  READ 9 garbage 0 EOF\n")
    assert HeldLocks.now(table).writer(lock) == "held"


def test_an_empty_table_says_free_without_looking_the_lock_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = tmp_path / "run.json"
    journal.touch()
    unreachable = journal / "run.lock"  # a path through a file: looking it up fails with NotADirectoryError
    table = tmp_path / "locks"
    table.write_text("1: FLOCK  ADVISORY  WRITE 7 00:01:2 0 EOF\n")
    assert HeldLocks.now(table).writer(unreachable) == "unknown"  # some lock is held: this one cannot be told
    table.write_text("")
    looked_up: list[object] = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: looked_up.append(path) or real_stat(path, *a, **k))
    assert HeldLocks.now(table).writer(unreachable) == "free"  # no lock is held anywhere: nor is this one
    assert looked_up == []


def test_silence_is_counted_from_the_last_time_heard_and_never_negative() -> None:
    now = datetime(2026, 12, 6, tzinfo=UTC)
    assert silent_for(now - timedelta(minutes=3), now) == 180.0
    assert silent_for(now + timedelta(seconds=5), now) == 0.0
    assert silent_for(None, now) is None


def test_a_stream_says_only_what_it_can(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A JetStream run has no lock file: its writer is unknown (covered with a real server in the integration tests);
    # a file source whose journals have no lock file beside them says free.
    (tmp_path / "completed-with-tools.json").write_bytes((SAMPLES / "completed-with-tools.json").read_bytes())
    assert main(["ls", "--json", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    expected = "free" if PROC_LOCKS.exists() else "unknown"
    assert row["writer"] == expected


def test_a_paged_listing_says_the_writer_of_each_run_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "--json", "--limit", "3", str(SAMPLES)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3 and all(row["writer"] in ("free", "unknown") and row["silent_for"] >= 0 for row in rows)
