"""The file backend in the runtime's layout: names, permissions, the flock, the line rule, sources."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zstandard

from journaltools.errors import CorruptJournal, JournalLocked, NotAJournalFile, ReadOnlySource, RunExists
from journaltools.sources.file import FileBackend, JournalFilesBackend
from journaltools.sources.registry import default_source, open_source
from tests.backend_records import line, meta, terminal, user
from tests.runstate_corpus import CORPUS


def journal(root: Path, run: str, *records: bytes) -> Path:
    path = root / f"{run}.json"
    path.write_bytes(line_meta(run) + b"".join(records))
    return path


def line_meta(run: str) -> bytes:
    from journaltools.sources.base import meta_record

    return line(meta_record(meta(run)))


def test_layout_and_permissions(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    backend = FileBackend(root, create=True)
    with backend.create_journal("r1", meta("r1")) as writer:
        writer.append(user(2))
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert sorted(p.name for p in root.iterdir()) == ["r1.json", "r1.lock"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in root.iterdir()} == {0o600}
    assert (root / "r1.json").read_bytes() == line_meta("r1") + line(user(2))


def test_the_flock_excludes_a_second_writer_and_a_creator(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path, create=True)
    with backend.create_journal("r1", meta("r1")):
        with pytest.raises(JournalLocked):
            backend.open_writer("r1")
        with pytest.raises(RunExists):  # busy and the journal is there: a live run
            backend.create_journal("r1", meta("r1"))
    backend.open_writer("r1").close()  # released on close


def test_updated_is_the_journals_lstat_mtime(tmp_path: Path) -> None:
    path = journal(tmp_path, "r1")
    os.utime(path, ns=(0, 1_700_000_000_123_456_000))
    read = FileBackend(tmp_path).read_run("r1")
    assert read.updated == datetime(2023, 11, 14, 22, 13, 20, 123456, UTC)
    assert read.records[0].time is None


def test_torn_tail_is_dropped_and_cut_by_journaltools_writer(tmp_path: Path) -> None:
    path = journal(tmp_path, "r1", line(user(2)), line(user(3))[:20])
    backend = FileBackend(tmp_path)
    read = backend.read_run("r1")
    assert read.complete and read.last_seq == 2
    assert [f.code for f in read.findings] == ["torn_tail"]
    with backend.open_writer("r1") as writer:  # unlike the runtime's writer, it cuts the torn bytes first
        assert writer.last_seq == 2
        writer.append(user(3))
    assert path.read_bytes() == line_meta("r1") + line(user(2)) + line(user(3))


def test_missing_final_newline_is_finished_before_appending(tmp_path: Path) -> None:
    path = journal(tmp_path, "r1", line(user(2))[:-1])
    with FileBackend(tmp_path).open_writer("r1") as writer:
        writer.append(terminal(3))
    assert path.read_bytes() == line_meta("r1") + line(user(2)) + line(terminal(3))


def test_interior_corruption_refuses_the_journal(tmp_path: Path) -> None:
    journal(tmp_path, "r1", b"#garbage\n", line(user(3)))
    backend = FileBackend(tmp_path)
    with pytest.raises(CorruptJournal) as refused:
        backend.read_run("r1")
    assert "'r1'" in str(refused.value) and "line 2" in str(refused.value)
    lenient = backend.read_run("r1", strict=False)
    assert not lenient.complete
    assert [f.code for f in lenient.findings] == ["corrupt_line"]
    assert [s.position for s in lenient.records] == [1, 3]
    with pytest.raises(CorruptJournal):
        backend.open_writer("r1")


def test_a_runtime_resume_after_a_torn_tail_is_named(tmp_path: Path) -> None:
    """The runtime appends straight after torn bytes: once another record follows, the glued line is interior,
    and it is reported for what it is."""
    journal(tmp_path, "r1", line(user(2)), line(user(3))[:15] + line(user(3)), line(terminal(4)))
    read = FileBackend(tmp_path).read_run("r1", strict=False)
    assert not read.complete
    assert [(f.code, f.seq) for f in read.findings] == [("resumed_after_torn_tail", 3)]


def test_a_runtime_resume_on_the_line_after_torn_bytes_is_named(tmp_path: Path) -> None:
    """The torn bytes ended in a newline: the resumer's record (the torn one's seq, reused) is on the next line."""
    journal(tmp_path, "r1", line(user(2)), line(user(3))[:15] + b"\n", line(user(3)), line(terminal(4)))
    backend = FileBackend(tmp_path)
    with pytest.raises(CorruptJournal, match="line 3"):
        backend.read_run("r1")
    read = backend.read_run("r1", strict=False)
    assert not read.complete and read.last_seq == 4
    assert [(f.code, f.seq) for f in read.findings] == [("resumed_after_torn_tail", 3)]


def test_a_resume_glued_onto_the_final_torn_line_is_kept_for_a_person(tmp_path: Path) -> None:
    """The runtime drops the glued final line as a torn tail (and the resumer's record with it); journaltools
    says so, and its writer refuses to cut a line that holds a whole record."""
    path = journal(tmp_path, "r1", line(user(2)), line(user(3))[:15] + line(user(3)))
    stored = path.read_bytes()
    backend = FileBackend(tmp_path)
    read = backend.read_run("r1")
    assert read.complete and read.last_seq == 2
    assert [(f.code, f.seq) for f in read.findings] == [("torn_tail", None), ("resumed_after_torn_tail", 3)]
    with pytest.raises(CorruptJournal, match="glued"):
        backend.open_writer("r1")
    assert path.read_bytes() == stored


def test_a_torn_tail_of_a_crlf_journal_is_cut_where_it_starts(tmp_path: Path) -> None:
    crlf = line(user(2)).replace(b"\n", b"\r\n")
    path = journal(tmp_path, "r1", crlf, b'  {"seq":3,\r\n')
    with FileBackend(tmp_path).open_writer("r1") as writer:
        writer.append(terminal(3))
    assert path.read_bytes() == line_meta("r1") + crlf + line(terminal(3))


def test_unicode_white_space_lines_are_blank_as_go_trims_them(tmp_path: Path) -> None:
    """``bytes.TrimSpace`` trims Unicode white space too: a line of U+3000 is skipped, even as the last line."""
    journal(tmp_path, "r1", "\u3000\u00a0\n".encode(), line(user(2)), "\u2028".encode())
    read = FileBackend(tmp_path).read_run("r1")
    assert read.complete and read.findings == []
    assert [s.position for s in read.records] == [1, 3]


def test_blank_lines_count_in_positions(tmp_path: Path) -> None:
    journal(tmp_path, "r1", b"\n  \n", line(user(2)))
    read = FileBackend(tmp_path).read_run("r1")
    assert [s.position for s in read.records] == [1, 4]


def test_compressed_journals_are_read_only_sources(tmp_path: Path) -> None:
    data = line_meta("g") + line(terminal(2))
    (tmp_path / "g.json.gz").write_bytes(gzip.compress(data))
    (tmp_path / "z.json.zst").write_bytes(zstandard.ZstdCompressor().compress(data.replace(b'"g"', b'"z"')))
    backend = FileBackend(tmp_path)
    assert backend.list_runs() == ["g", "z"]
    assert [r.last_seq for r in backend.read_runs()] == [2, 2]
    with pytest.raises(ReadOnlySource):
        backend.open_writer("g")
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    assert not backend.read_run("bad", strict=False).complete


def test_other_files_are_reported_but_locks_and_temporaries_are_not(tmp_path: Path) -> None:
    journal(tmp_path, "r1")
    (tmp_path / "r1.lock").touch()
    (tmp_path / ".r1.json.1234.tmp").touch()
    (tmp_path / "notes.txt").touch()
    (tmp_path / "bad name.json").touch()
    (tmp_path / "sub").mkdir()
    findings = FileBackend(tmp_path).source_findings()
    assert [(f.code, f.severity, f.message.split(":")[0]) for f in findings] == [
        ("not_a_journal", "info", "bad name.json"),
        ("not_a_journal", "info", "notes.txt"),
        ("not_a_journal", "info", "sub"),
    ]


def test_links_and_fifos_are_refused_without_blocking(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(line_meta("x"))
    root = tmp_path / "runs"
    root.mkdir()
    (root / "link.json").symlink_to(outside)
    os.mkfifo(root / "fifo.json")
    backend = FileBackend(root)
    for run in ("link", "fifo"):
        with pytest.raises(NotAJournalFile):
            backend.read_run(run)
        assert [f.code for f in backend.read_run(run, strict=False).findings] == ["unreadable_journal"]
        with pytest.raises(NotAJournalFile):
            backend.open_writer(run)
    assert {row.status for row in backend.listing()} == {"invalid"}


def test_single_file_glob_and_file_url_sources(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "file", tmp_path / "file")
    one = next((tmp_path / "file").glob("*.json"))
    assert isinstance(open_source(str(one)), JournalFilesBackend)
    assert open_source(str(one)).list_runs() == [one.stem]
    pattern = open_source(str(tmp_path / "file" / "3ID*.json"))
    assert len(pattern.list_runs()) == len(list((tmp_path / "file").glob("3ID*.json")))
    assert pattern.source_findings() == []
    assert len(open_source(f"file://{tmp_path / 'file'}").list_runs()) == 34


def test_default_source_is_the_runtimes_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_source() == tmp_path / "state" / "fisk-ai" / "runs"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_source() == tmp_path / ".local" / "state" / "fisk-ai" / "runs"
    default_source().mkdir(parents=True)
    journal(default_source(), "r1")
    assert open_source(None).list_runs() == ["r1"]
