import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from journaltools.backends.base import AppendVerdictTaken
from journaltools.backends.file import FileBackend, scan_journal
from journaltools.errors import CorruptJournal, InvalidRunId, JournalLocked, RecordRefused, SequenceGap, StorageError
from tests.builders import JournalBuilder
from tests.strategies import valid_runs

ROOT = Path(__file__).resolve().parent.parent


def write_journal(backend: FileBackend, journal: JournalBuilder) -> None:
    with backend.open_writer(journal.run) as writer:
        for body in journal.bodies:
            assert writer.append(body).outcome is AppendVerdictTaken.STORED


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(journal=valid_runs())
def test_valid_runs_round_trip_byte_identically(
    tmp_path_factory: pytest.TempPathFactory, journal: JournalBuilder
) -> None:
    backend = FileBackend(tmp_path_factory.mktemp("rt"))
    write_journal(backend, journal)
    assert backend.path_of(journal.run).read_bytes() == journal.bytes()
    read = backend.read_run(journal.run)
    assert [record.raw for record in read.records] == journal.bytes().splitlines()
    assert read.findings == []


def test_writer_skips_duplicates_refuses_gaps_and_bad_records(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    journal = JournalBuilder("r").user().user("again")
    with backend.open_writer("r") as writer:
        for body in journal.bodies[:2]:
            writer.append(body)
        assert writer.append(journal.bodies[1]).outcome is AppendVerdictTaken.DUPLICATE
        with pytest.raises(SequenceGap) as gap:
            writer.append({**journal.bodies[2], "seq": 5})
        assert (gap.value.run, gap.value.seq, writer.last_seq) == ("r", 5, 2)
        with pytest.raises(RecordRefused) as bad:
            writer.append({**journal.bodies[2], "content": 7})
        assert bad.value.code == "schema_violation"
        with pytest.raises(RecordRefused) as other_run:
            writer.append({**journal.bodies[2], "run": "elsewhere"})
        assert other_run.value.code == "run_mismatch"
        assert writer.append(journal.bodies[2]).outcome is AppendVerdictTaken.STORED
    assert backend.path_of("r").read_bytes() == journal.bytes()


def test_writer_refuses_a_journal_that_does_not_start_with_meta_version_1(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    with backend.open_writer("r") as writer:
        with pytest.raises(RecordRefused) as first:
            writer.append(JournalBuilder("r", meta=False).user().bodies[0])
        assert first.value.code == "not_meta_first"
        meta = JournalBuilder("r").bodies[0]
        with pytest.raises(RecordRefused) as version:
            writer.append({**meta, "version": 2})
        assert version.value.code == "version_mismatch"
    assert backend.path_of("r").read_bytes() == b""


def test_run_ids_are_validated_before_they_become_file_names(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    for bad in ("../escape", "", "-dash-first", "a/b", "x" * 129, "dot.name"):
        with pytest.raises(InvalidRunId):
            backend.open_writer(bad)
    assert list(tmp_path.iterdir()) == []


def test_torn_tail_is_dropped_on_read_and_truncated_before_the_next_append(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    journal = JournalBuilder("r").user()
    path = backend.path_of("r")
    path.write_bytes(journal.bytes() + b'{"type":"assist')
    read = backend.read_run("r")
    assert len(read.records) == 2
    assert [f.code for f in read.findings] == ["torn_tail"]
    journal.assistant()
    with backend.open_writer("r") as writer:
        assert writer.last_seq == 2
        writer.append(journal.bodies[-1])
    assert path.read_bytes() == journal.bytes()


def test_final_line_without_newline_is_kept_and_finished(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    journal = JournalBuilder("r").user()
    path = backend.path_of("r")
    path.write_bytes(journal.bytes()[:-1])
    assert len(backend.read_run("r").records) == 2
    journal.assistant()
    with backend.open_writer("r") as writer:
        writer.append(journal.bodies[-1])
    assert path.read_bytes() == journal.bytes()


def test_interior_corruption_refuses_the_journal_with_its_line_number(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path)
    lines = JournalBuilder("r").user().assistant().bytes().split(b"\n")
    lines[1] = lines[1][:-3]
    backend.path_of("r").write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptJournal) as caught:
        backend.read_run("r")
    assert (caught.value.run, caught.value.position) == ("r", 2)
    lenient = backend.read_run("r", strict=False)
    # Leniently the journal is still refused (incomplete), but every line that parses comes back.
    assert (lenient.complete, [r.position for r in lenient.records]) == (False, [1, 3])
    assert [f.code for f in lenient.findings] == ["corrupt_line"]
    with pytest.raises(CorruptJournal):
        backend.open_writer("r")
    assert backend.path_of("r").read_bytes() == b"\n".join(lines), "a refused journal is never modified"


def test_scan_handles_empty_and_blank_interior_lines() -> None:
    assert scan_journal(b"", "r").records == []
    assert scan_journal(b"\n", "r").corrupt is None  # one unparsable final (empty) line: a torn tail
    blank_inside = JournalBuilder("r").bytes() + b"\n" + JournalBuilder("r").user().bytes().split(b"\n")[1] + b"\n"
    assert scan_journal(blank_inside, "r").corrupt is not None


HOLDER = """
import sys
from journaltools.backends.file import FileBackend
writer = FileBackend(sys.argv[1]).open_writer("held")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_second_writer_is_refused_while_the_first_lives_and_not_after_it_is_killed(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        with pytest.raises(JournalLocked) as refused:
            FileBackend(tmp_path).open_writer("held")
        assert "held" in str(refused.value)
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.stdout.close()
    assert (tmp_path / "held.lock").exists(), "the lock file stays; only the kernel's flock went away"
    FileBackend(tmp_path).open_writer("held").close()


def test_directory_is_fsynced_on_a_new_journals_first_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    backend = FileBackend(tmp_path)
    journal = JournalBuilder("r").user()
    with backend.open_writer("r") as writer:
        writer.append(journal.bodies[0])
        assert len(synced) == 2, "the record and then the directory"
        writer.append(journal.bodies[1])
        assert len(synced) == 3, "later records sync only the file"


def test_a_failed_write_or_fsync_leaves_no_partial_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = FileBackend(tmp_path)
    journal = JournalBuilder("r").user().assistant()
    real_write, real_fsync = os.write, os.fsync
    with backend.open_writer("r") as writer:
        writer.append(journal.bodies[0])
        writer.append(journal.bodies[1])

        def partial_then_full(fd: int, data: bytes | memoryview) -> int:
            monkeypatch.setattr(os, "write", real_write)
            real_write(fd, bytes(data[:10]))
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", partial_then_full)
        with pytest.raises(StorageError, match="no space left") as full:
            writer.append(journal.bodies[2])
        assert full.value.errno == 28 and full.value.path == str(backend.path_of("r"))
        assert writer.last_seq == 2
        assert backend.path_of("r").read_bytes() == JournalBuilder("r").user().bytes(), "the partial line is gone"

        def failing_fsync(fd: int) -> None:
            monkeypatch.setattr(os, "fsync", real_fsync)
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(StorageError, match="input/output error"):
            writer.append(journal.bodies[2])
        assert writer.last_seq == 2
        assert writer.append(journal.bodies[2]).outcome is AppendVerdictTaken.STORED
    read = backend.read_run("r")
    assert read.findings == [] and [r.raw for r in read.records] == journal.bytes().splitlines()
