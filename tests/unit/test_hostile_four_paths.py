"""Issue 42, a hostile world round four, the paths: every path the tool opens goes through one opener that refuses
what is not a regular file at once, and every path it writes through one writer that replaces atomically, never
follows a link and never replaces what is not a regular file.

Each test fails on the code as it was before the fix. No test touches a system path: the devices, FIFOs and links
to a process's open file are made in the test's own directory, so a regression breaks nothing but the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools._base.durable import IrregularFile, open_regular, replacing
from journaltools.audits.sources import audit_sources, read_audit
from journaltools.cli import main
from journaltools.errors import StorageError
from journaltools.samples import SAMPLE_STORIES, write_samples
from journaltools.samples.builder import text
from journaltools.testing.generate import generate_corpus
from tests.blocking import outcome_of
from tests.builders import journal

RUN = "hostile"


def _completed(run: str) -> bytes:
    built = journal(run)
    built.assistant(text("hi"))
    built.terminal("completed")
    return built.journal_bytes()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    (root / f"{RUN}.json").write_bytes(_completed(RUN))
    return root


def _device(path: Path) -> Path:
    """A character device like ``/dev/null`` (1, 3), made at ``path`` (root only: skipped elsewhere)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


@contextlib.contextmanager
def _link_to_an_open_file(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A link like ``/dev/stdout`` (into ``/proc/self/fd``), leading to a regular file this process has open."""
    behind = tmp_path / "behind-the-descriptor"
    fd = os.open(behind, os.O_WRONLY | os.O_CREAT, 0o600)
    link = tmp_path / "stdout-like"
    link.symlink_to(f"/proc/self/fd/{fd}")
    try:
        yield link, behind
    finally:
        os.close(fd)


# -- T4: a loop of links named as the single-file source -----------------------------------------------------------


def test_t4_a_symlink_loop_named_as_the_source_is_the_directory_cases_line(
    capsys: pytest.CaptureFixture[str], source: Path
) -> None:
    loop = source.parent
    (loop / "a.json").symlink_to("b.json")
    (loop / "b.json").symlink_to("a.json")
    assert main(["show", str(loop / "a.json")]) == 1
    err = capsys.readouterr().err
    assert "it is a symbolic link, not a regular file" in err
    assert "unexpected" not in err and len(err.strip().splitlines()) == 1
    named = loop / f"{RUN}.json"  # a link the user names that leads to a journal is still followed
    named.symlink_to(source / f"{RUN}.json")
    assert main(["show", str(named)]) == 0
    assert "completed" in capsys.readouterr().out


# -- T6, T7: the price file ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["stats", "audit", "report"])
def test_t6_a_fifo_as_the_price_file_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, command: str
) -> None:
    fifo = tmp_path / "prices.json"
    os.mkfifo(fifo)
    argv = [command, "--prices", str(fifo), str(source)]
    if command == "report":
        argv += [RUN, "-o", str(tmp_path / "report.html")]
    assert outcome_of(lambda: main(argv), fifo) == 2
    err = capsys.readouterr().err
    assert f"cannot read the price file {fifo}: it is a FIFO, not a regular file" in err


def test_t6_a_device_as_the_price_file_is_refused_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path
) -> None:
    device = _device(tmp_path / "prices.json")
    assert main(["stats", "--prices", str(device), str(source)]) == 2
    assert "it is a device, not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "text"), [("deep.json", "[" * 200_000), ("deep.toml", "a = " + "[" * 200_000)])
def test_t7_a_price_file_nested_past_the_parser_is_not_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, name: str, text: str
) -> None:
    prices = tmp_path / name
    prices.write_text(text)
    assert main(["stats", "--prices", str(prices), str(source)]) == 2
    err = capsys.readouterr().err
    kind = "TOML" if name.endswith(".toml") else "JSON"
    assert f"the price file {prices} is not {kind}: it is nested too deeply" in err
    assert "RecursionError" not in err


# -- T9, T10: the files the tool writes ----------------------------------------------------------------------------


def _write_argv(command: str, source: Path, target: Path | str) -> list[str]:
    if command == "report":
        return ["report", "-o", str(target), str(source), RUN]
    return ["export", str(source), f"--{command}", str(target)]


WRITERS = ["report", "otlp", "atif"]


@pytest.mark.parametrize("command", WRITERS)
def test_t9_a_planted_link_at_the_output_is_replaced_never_followed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, command: str
) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"not yours to overwrite\n")
    planted = tmp_path / "out"
    planted.symlink_to(victim)
    assert main(_write_argv(command, source, planted)) == 0
    assert victim.read_bytes() == b"not yours to overwrite\n"
    assert not planted.is_symlink() and planted.stat().st_size > 0
    assert stat.S_IMODE(planted.stat().st_mode) == 0o600  # reports and exports hold conversations
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "runs", "victim"]  # no staging file left


@pytest.mark.parametrize("command", WRITERS)
@pytest.mark.parametrize("kind", ["FIFO", "device", "directory", "link to a process's open file", "link to a FIFO"])
def test_t9_t10_an_output_that_is_not_a_regular_file_is_refused_and_left_as_it_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, command: str, kind: str
) -> None:
    target = tmp_path / "out"
    with contextlib.ExitStack() as stack:
        if kind == "FIFO":
            os.mkfifo(target)
        elif kind == "device":
            _device(target)
        elif kind == "directory":
            target.mkdir()
        elif kind == "link to a FIFO":
            os.mkfifo(tmp_path / "pipe")
            target.symlink_to(tmp_path / "pipe")
        else:
            target, behind = stack.enter_context(_link_to_an_open_file(tmp_path))
        before = os.lstat(target)
        fifo = tmp_path / "pipe" if kind == "link to a FIFO" else target
        assert outcome_of(lambda: main(_write_argv(command, source, target)), fifo) == 1
        after = os.lstat(target)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
        if kind == "link to a process's open file":
            assert behind.read_bytes() == b""
    err = capsys.readouterr().err.strip()
    assert f"{target}: cannot write the " in err and "not a regular file" in err and len(err.splitlines()) == 1
    assert not [path.name for path in tmp_path.iterdir() if path.name.startswith(".")]  # no staging file left


@pytest.mark.parametrize("command", WRITERS)
def test_t10_a_dash_writes_to_standard_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, command: str
) -> None:
    assert main(_write_argv(command, source, "-")) == 0
    written = capsys.readouterr()
    if command == "report":
        assert written.out.startswith("<!DOCTYPE html>") and written.out.rstrip().endswith("</html>")
    else:
        assert [
            json.loads(line)["schema_version" if command == "atif" else "resourceSpans"]
            for line in written.out.splitlines()
        ]
    assert ("bytes (bound" if command == "report" else "exported 1 runs") in written.err  # the summary: not mixed in
    assert not (tmp_path / "-").exists() and not (source / "-").exists() and not Path("-").exists()


def test_t10_both_exports_to_standard_output_is_a_usage_error(capsys: pytest.CaptureFixture[str], source: Path) -> None:
    assert main(["export", str(source), "--otlp", "-", "--atif", "-"]) == 2
    assert "cannot both be -" in capsys.readouterr().err


# -- the class: one opener, one writer -----------------------------------------------------------------------------

OPENED_KINDS = ["FIFO", "device", "directory", "socket", "loop of links"]


def _irregular(tmp_path: Path, kind: str, name: str = "thing") -> Path:
    path = tmp_path / name
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "device":
        _device(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(path))
    else:
        path.symlink_to(f"{name}.other")
        (tmp_path / f"{name}.other").symlink_to(name)
    return path


@pytest.mark.parametrize("follow_links", [False, True])
@pytest.mark.parametrize("kind", OPENED_KINDS)
def test_the_one_opener_refuses_what_is_not_a_regular_file_at_once(
    tmp_path: Path, kind: str, follow_links: bool
) -> None:
    path = _irregular(tmp_path, kind)
    for flags in (os.O_RDONLY, os.O_RDWR | os.O_CREAT):
        outcome = outcome_of(lambda flags=flags: open_regular(path, flags, follow_links=follow_links), path)
        assert isinstance(outcome, IrregularFile), outcome
        assert "symbolic link" in outcome.kind if kind == "loop of links" else outcome.kind == f"a {kind}"


@pytest.mark.parametrize("kind", ["FIFO", "device", "socket"])
def test_the_one_writer_refuses_what_is_not_a_regular_file_and_leaves_it(tmp_path: Path, kind: str) -> None:
    path = _irregular(tmp_path, kind)
    before = os.lstat(path)
    with pytest.raises(IrregularFile, match=kind), replacing(path) as handle:
        handle.write(b"never")
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["thing"]


def test_the_one_writer_refuses_a_path_that_became_a_fifo_while_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "out"
    with pytest.raises(IrregularFile, match="FIFO"), replacing(path) as handle:
        handle.write(b"data")
        os.mkfifo(path)  # swapped in between the first look and the rename
    assert stat.S_ISFIFO(os.lstat(path).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_gate_config_that_is_a_fifo_is_a_usage_error_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path
) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    assert outcome_of(lambda: main(["gate", str(source), RUN, "--config", str(fifo)]), fifo) == 2
    assert "it is a FIFO, not a regular file" in capsys.readouterr().err


def test_audit_parquet_refuses_a_fifo_where_a_table_goes_and_a_fifo_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path
) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    os.mkfifo(out / "runs.parquet")
    assert outcome_of(lambda: main(["audit", str(source), "--parquet", str(out)]), out / "runs.parquet") == 1
    assert "runs.parquet: cannot write the Parquet tables: it is a FIFO" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(out / "runs.parquet").st_mode)
    (out / "runs.parquet").unlink()
    os.mkfifo(out / ".audit.lock")
    assert outcome_of(lambda: main(["audit", str(source), "--parquet", str(out)]), out / ".audit.lock") == 1
    assert ".audit.lock: cannot take the audit's lock: it is a FIFO" in capsys.readouterr().err
    assert not list(out.glob("*.parquet"))  # nothing put in place, no staging left
    assert [path.name for path in out.iterdir()] == [".audit.lock"]


def test_read_audit_refuses_a_fifo_named_like_a_table(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "runs.parquet")
    outcome = outcome_of(lambda: read_audit(tmp_path), tmp_path / "runs.parquet")
    assert isinstance(outcome, StorageError) and "it is a FIFO, not a regular file" in str(outcome)


def test_generate_never_writes_through_a_link_planted_in_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    generate_corpus(root, runs=1, records=5)
    journal_path = next(root.glob("*.json"))
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    journal_path.unlink()
    journal_path.symlink_to(victim)
    generate_corpus(root, runs=1, records=5)
    assert victim.read_bytes() == b"keep" and not journal_path.is_symlink()
    assert stat.S_IMODE(journal_path.stat().st_mode) == 0o600


def test_migrate_refuses_each_journal_it_cannot_write_and_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = ["one", "two", "three"]
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    dest.mkdir()
    for run in runs:
        (src / f"{run}.json").write_bytes(_completed(run))
    (dest / "two.json").mkdir()  # a journal path that is a directory: no one, root neither, writes it
    os.mkfifo(dest / "three.lock")  # a lock that is a FIFO: never opened, never waited on
    for extra in ([], ["--skip-invalid"]):
        assert outcome_of(lambda extra=extra: main(["migrate", *extra, str(src), str(dest)]), dest / "three.lock") == 1
        captured = capsys.readouterr()
        three, two = captured.err.strip().splitlines()  # in the source's run order
        assert "refused three: destination_unwritable:" in three and "it is a FIFO" in three
        assert "refused two: destination_unwritable:" in two and "it is a directory" in two
        assert "migrated 1 runs" in captured.out
        assert (dest / "one.json").read_bytes() == (src / "one.json").read_bytes()


@pytest.mark.parametrize("dask", [False, True])
def test_audit_parquet_never_writes_through_a_link_to_a_directory(tmp_path: Path, source: Path, dask: bool) -> None:
    """Never followed into another directory, and not replaced either: like a link to a FIFO, it leads to something
    the writer does not replace."""
    if dask:
        pytest.importorskip("dask")
    out, elsewhere = tmp_path / "audit", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "keep.parquet").write_bytes(b"keep")
    (out / "runs.parquet").symlink_to(elsewhere)
    with pytest.raises(
        StorageError, match=r"runs\.parquet: cannot write the Parquet tables: it is a symbolic link to a dir"
    ):
        audit_sources(str(source), parquet=out, dask=dask)
    assert [path.name for path in elsewhere.iterdir()] == ["keep.parquet"]
    assert (out / "runs.parquet").is_symlink() and [path.name for path in out.iterdir()] == ["runs.parquet"]


def test_write_samples_leaves_a_fifo_named_like_a_sample_as_it_is(tmp_path: Path) -> None:
    fifo = tmp_path / f"{next(iter(SAMPLE_STORIES))}.lock"
    os.mkfifo(fifo)
    with pytest.raises(StorageError, match="it is a FIFO, not a regular file"):
        write_samples(tmp_path)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [path.name for path in tmp_path.iterdir()] == [fifo.name]
