"""Hostile journal directories and journal bytes: nothing follows a link out of the source, waits on a FIFO,
crashes on a directory, a huge or deeply nested line, invalid UTF-8, or a journal replaced while it is read.
One bad journal is a finding of its own run; the other runs of the source still read, list and load."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import journaltools.sources.scan as scan
from journaltools.errors import NotAJournalFile, RunExists
from journaltools.sources.base import RunRead, meta_record
from journaltools.sources.file import FileBackend
from journaltools.sources.jetstream import JetStreamBackend
from journaltools.tables import load
from tests.backend_records import line, meta, terminal, user
from tests.blocking import outcome_of
from tests.nats_fixtures import NatsAdmin

#: A user record the Go decoder accepts with an unknown field nested ``depth`` arrays deep (it skips the field,
#: but still counts its depth against encoding/json's limit of 10,000 levels, the record's own object included).
_USER_HEAD = b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[]}}'


def nested(depth: int, seq: int = 2) -> bytes:
    return _USER_HEAD.replace(b'"seq":2', b'"seq":%d' % seq) + b',"x":' + b"[" * depth + b"]" * depth + b"}"


def write_journal(root: Path, run: str, *lines: bytes) -> Path:
    path = root / f"{run}.json"
    path.write_bytes(line(meta_record(meta(run))) + b"".join(lines))
    return path


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A directory with one good journal, ``good``, beside whatever a test adds."""
    root = tmp_path / "runs"
    root.mkdir()
    write_journal(root, "good", line(terminal(2)))
    return root


def assert_the_good_run_survives(root: Path, bad: str) -> None:
    backend = FileBackend(root)
    rows = {row.run: row.status for row in backend.listing()}
    assert rows == {"good": "completed", bad: "invalid"}
    tables = load(root, strict=False, workers=0)
    assert bad in tables.findings.column("run").to_pylist()
    assert sorted(tables.runs.column("run").to_pylist()) == sorted(rows)


def test_a_symlinked_journal_is_never_followed(source: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_bytes(line(meta_record(meta("link"))))
    (source / "link.json").symlink_to(secret)
    backend = FileBackend(source)
    assert backend.list_runs() == ["good", "link"]
    with pytest.raises(NotAJournalFile, match="symbolic link"):
        backend.read_run("link")
    with pytest.raises(NotAJournalFile):
        backend.open_writer("link")
    with pytest.raises((NotAJournalFile, RunExists)):
        backend.create_journal("link", meta("link"))
    assert backend.local_journals(["good", "link"]) is None  # the loader then reads through the backend
    assert_the_good_run_survives(source, "link")
    assert secret.read_bytes() == line(meta_record(meta("link")))  # nothing was written through the link
    assert not (source / "link.lock").exists()


def test_a_fifo_named_like_a_journal_never_blocks(source: Path) -> None:
    fifo = source / "pipe.json"
    os.mkfifo(fifo)
    backend = FileBackend(source)
    actions: dict[str, Callable[[], object]] = {
        "read": lambda: backend.read_run("pipe"),
        "lenient": lambda: backend.read_run("pipe", strict=False),
        "writer": lambda: backend.open_writer("pipe"),
        "listing": backend.listing,
        "load": lambda: load(source, strict=False, workers=0),
    }
    outcomes = {name: outcome_of(action, fifo) for name, action in actions.items()}
    assert isinstance(outcomes["read"], NotAJournalFile) and "FIFO" in str(outcomes["read"])
    assert isinstance(outcomes["writer"], NotAJournalFile)
    lenient = outcomes["lenient"]
    assert isinstance(lenient, RunRead) and [f.code for f in lenient.findings] == ["unreadable_journal"]
    assert_the_good_run_survives(source, "pipe")


def test_a_directory_named_like_a_journal(source: Path) -> None:
    (source / "dir.json").mkdir()
    backend = FileBackend(source)
    assert backend.list_runs() == ["dir", "good"]  # still a run, reported when read, never silently absent
    with pytest.raises(NotAJournalFile, match="directory"):
        backend.read_run("dir")
    with pytest.raises(NotAJournalFile):
        backend.open_writer("dir")
    with pytest.raises((NotAJournalFile, RunExists)):
        backend.create_journal("dir", meta("dir"))
    assert (source / "dir.json").is_dir()
    assert_the_good_run_survives(source, "dir")


def test_a_huge_line_is_read_whole_and_a_huge_torn_tail_is_cut(source: Path) -> None:
    huge = line(user(2, "x" * (4 << 20)))
    path = write_journal(source, "big", huge, huge[: len(huge) // 2])
    backend = FileBackend(source)
    read = backend.read_run("big")
    assert read.complete and read.last_seq == 2
    assert len(read.records[1].raw) == len(huge) - 1
    torn = [f.message for f in read.findings if f.code == "torn_tail"]
    assert len(torn) == 1 and f"{len(huge) // 2:,} bytes" in torn[0]
    with backend.open_writer("big") as writer:
        writer.append(terminal(3))
    assert path.read_bytes() == line(meta_record(meta("big"))) + huge + line(terminal(3))


def test_deep_nesting_is_read_to_gos_depth_limit_and_refused_past_it(source: Path) -> None:
    write_journal(source, "deep", nested(9_999) + b"\n", line(terminal(3)))
    write_journal(source, "deeper", nested(10_000) + b"\n", line(terminal(3)))
    backend = FileBackend(source)
    read = backend.read_run("deep")
    assert read.complete and [s.record.seq for s in read.records] == [1, 2, 3]
    assert [f.code for f in read.findings] == ["noncanonical_line"]  # the unknown field, skipped as Go skips it
    lenient = backend.read_run("deeper", strict=False)
    assert not lenient.complete
    assert [f.code for f in lenient.findings] == ["corrupt_line"]
    assert "exceeded max depth" in lenient.findings[0].message
    with backend.create_journal("copied", meta("copied")) as writer:  # migration's path takes the same reader
        assert writer.append_raw(nested(9_999)).seq == 2


def test_deep_nesting_in_a_jetstream_body(jetstream: JetStreamBackend, nats_admin: NatsAdmin) -> None:
    with jetstream.create_journal("deep", meta("deep")) as writer:
        writer.append_raw(nested(9_999))
    nats_admin.publish(jetstream.subject("deep", 3), nested(10_000, seq=3))
    read = jetstream.read_run("deep", strict=False)
    assert [s.record.seq for s in read.records] == [1, 2]
    assert [f.code for f in read.findings] == ["noncanonical_line", "corrupt_line"]
    assert not read.complete


def test_invalid_utf8(source: Path) -> None:
    """Inside a string Go replaces it (accepted, not canonical); outside one the line does not decode; and a
    file name that is not UTF-8 is reported, never a crash."""
    in_string = line(user(2, "caf\u00e9")).replace("\u00e9".encode(), b"\xe9")
    write_journal(source, "inside", in_string, line(terminal(3)))
    write_journal(source, "outside", b"\xff" + line(user(2)), line(terminal(3)))
    os.close(os.open(os.fsencode(source) + b"/\xff\xfe.json", os.O_WRONLY | os.O_CREAT, 0o600))
    backend = FileBackend(source)
    assert backend.list_runs() == ["good", "inside", "outside"]
    inside = backend.read_run("inside")
    assert inside.complete and inside.records[1].raw == in_string[:-1]
    assert [f.code for f in inside.findings] == ["noncanonical_line"]
    outside = backend.read_run("outside", strict=False)
    assert not outside.complete and [f.code for f in outside.findings] == ["corrupt_line"]
    assert [f.code for f in backend.source_findings()] == ["not_a_journal"]


@pytest.fixture
def swap_during_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """Once the reader has the journal open, another process atomically replaces it (write a temporary file,
    rename it over the journal), as a migration or an editor does; the bytes to swap in are appended by the test."""
    replacements: list[bytes] = []
    real_open = scan.open_journal_file

    def open_then_swap(path: str | os.PathLike[str]) -> object:
        handle = real_open(path)
        if replacements:
            temporary = Path(os.fsdecode(path) + ".swap.tmp")
            temporary.write_bytes(replacements.pop())
            os.replace(temporary, path)
        return handle

    monkeypatch.setattr(scan, "open_journal_file", open_then_swap)
    yield replacements


def test_a_journal_swapped_while_read_gives_one_whole_version(source: Path, swap_during_read: list[bytes]) -> None:
    """The read holds the descriptor it opened: it sees the old journal whole, never a mix of the two."""
    old = write_journal(source, "swapped", line(user(2))).read_bytes()
    new = line(meta_record(meta("swapped"))) + line(user(2, "new")) + line(terminal(3))
    swap_during_read.append(new)
    read = FileBackend(source).read_run("swapped")
    assert b"".join(stored.raw + b"\n" for stored in read.records) == old
    assert (source / "swapped.json").read_bytes() == new
    assert FileBackend(source).read_run("swapped").last_seq == 3  # the next read sees the new one


def test_a_journal_replaced_by_a_link_or_fifo_after_listing(source: Path, tmp_path: Path) -> None:
    """Between the listing and the read the journal's name comes to point elsewhere: the read refuses it."""
    write_journal(source, "moved", line(user(2)))
    backend = FileBackend(source)
    assert backend.list_runs() == ["good", "moved"]
    (source / "moved.json").unlink()
    (source / "moved.json").symlink_to(source / "good.json")
    with pytest.raises(NotAJournalFile):
        backend.read_run("moved")
    (source / "moved.json").unlink()
    os.mkfifo(source / "moved.json")
    read = outcome_of(lambda: backend.read_run("moved", strict=False), source / "moved.json")
    assert isinstance(read, RunRead) and [f.code for f in read.findings] == ["unreadable_journal"]
