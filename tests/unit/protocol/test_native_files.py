"""The native file readers (``protocol.native.stat_files``, ``read_files_into``) held to the Python rules they stand
in for, on every kind of entry a journal directory can hold and on paths that change directory from one to the
next (the C looks each name up in its directory, held open while the paths stay there)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from journaltools.protocol import native
from journaltools.sources.scan import read_journals_into

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="this build has no scanner")

JOURNAL = b'{"seq":1}\n{"seq":2}\n'


def entries(root: Path) -> list[str]:
    """A regular file, an empty one, a link to a regular file, a FIFO, a directory and a missing name in ``root``;
    a regular file in a second directory between them; each path as the loader names it."""
    root.mkdir()
    other = root.parent / f"{root.name}-other"
    other.mkdir()
    (root / "plain.json").write_bytes(JOURNAL)
    (root / "empty.json").write_bytes(b"")
    (root / "link.json").symlink_to(root / "plain.json")
    os.mkfifo(root / "fifo.json")
    (root / "folder.json").mkdir()
    (other / "elsewhere.json").write_bytes(JOURNAL * 2)
    names = ["plain", "empty", "link", "fifo", "folder", "missing"]
    paths = [str(root / f"{name}.json") for name in names]
    return [*paths[:2], str(other / "elsewhere.json"), *paths[2:], paths[0]]


@pytest.mark.parametrize("readable", [True, False])
def test_stat_files_in_c_is_the_python_answer(tmp_path: Path, readable: bool) -> None:
    paths = entries(tmp_path / "runs")
    in_c = native.stat_files(paths, readable=readable)
    with native.disabled():
        in_python = native.stat_files(paths, readable=readable)
    assert in_c == in_python == [len(JOURNAL), 0, 2 * len(JOURNAL), -1, -1, -1, -1, len(JOURNAL)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may read any file")
def test_stat_files_refuses_a_file_this_process_may_not_read_only_when_asked(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_bytes(JOURNAL)
    secret.chmod(0)
    assert native.stat_files([str(secret)], readable=True) == [-1]
    assert native.stat_files([str(secret)], readable=False) == [len(JOURNAL)]


def test_relative_paths_are_looked_up_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries(tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    paths = ["runs/plain.json", "runs-other/elsewhere.json", "runs/link.json"]
    assert native.stat_files(paths, readable=True) == [len(JOURNAL), 2 * len(JOURNAL), -1]
    monkeypatch.chdir(tmp_path / "runs")
    assert native.stat_files(["plain.json", "fifo.json"], readable=True) == [len(JOURNAL), -1]
    buffer = np.zeros(3 * len(JOURNAL), np.uint8)
    lengths = native.read_files_into(["plain.json", "../runs-other/elsewhere.json"], buffer, 1 << 20, 1000)
    assert lengths == [len(JOURNAL), 2 * len(JOURNAL)]
    assert bytes(buffer) == JOURNAL * 3


def test_read_files_into_across_directories_is_the_python_readers_answer(tmp_path: Path) -> None:
    paths = entries(tmp_path / "runs")
    capacity = 5 * len(JOURNAL)
    times = np.zeros(len(paths), np.int64)
    buffer, in_c = read_journals_into(paths, capacity, times)
    with native.disabled():
        python_buffer, in_python = read_journals_into(paths, capacity)
    assert in_c == in_python == [len(JOURNAL), 0, 2 * len(JOURNAL), None, None, None, None, len(JOURNAL)]
    read = 4 * len(JOURNAL)
    assert bytes(buffer[:read]) == bytes(python_buffer[:read]) == JOURNAL * 4
    assert times[0] == os.stat(paths[0]).st_mtime_ns and times[2] == os.stat(paths[2]).st_mtime_ns


def test_a_path_holding_a_nul_is_refused_never_cut_short(tmp_path: Path) -> None:
    """A NUL ends a path in C: ``a.json\\0x`` would name ``a.json``."""
    from journaltools.protocol import _canonical  # type: ignore[attr-defined]

    (tmp_path / "a.json").write_bytes(JOURNAL)
    cut = os.fsencode(tmp_path / "a.json") + b"\0x"
    with pytest.raises(TypeError, match="without NUL"):
        _canonical.stat_files((cut,), False)
    with pytest.raises(TypeError, match="without NUL"):
        _canonical.read_files_into((cut,), bytearray(64), 1 << 20, 1000)
