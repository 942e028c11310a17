"""The process policy: worker processes give the tables this process gives, lose nothing when one dies, and
never depend on threads, start methods or a script's ``__main__`` guard."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from journaltools.errors import FoldError
from journaltools.folding import native as native_fold
from journaltools.tables import Tables, iter_tables, load, parallel
from journaltools.tables import workers as worker_processes
from journaltools.tables.parallel import FOLD_POOL_FROM, processes_for, usable_cores
from tests.runstate_corpus import CORPUS
from tests.table_checks import same_tables


def test_worker_processes_give_the_same_tables() -> None:
    here = load(CORPUS / "file", strict=False, workers=1, batch_bytes=8192)
    shared = load(CORPUS / "file", strict=False, workers=2, batch_bytes=8192)
    same_tables(here, shared)
    assert worker_processes.pool_started()


def test_a_worker_killed_mid_load_loses_nothing() -> None:
    source = CORPUS / "random"
    expected = load(source, strict=False, workers=1, batch_bytes=16384)
    worker_processes.close_pool()
    parts = iter_tables(source, strict=False, workers=2, batch_bytes=16384)
    first = [next(parts)]
    worker = worker_processes.pool(1).workers[0]
    assert worker.ready.wait(60)
    while not worker.in_flight:  # the next batches this process takes hand the worker some first
        first.append(next(parts))
    worker.process.kill()
    same_tables(Tables.concat([*first, *parts]), expected)
    assert not worker.alive


def test_a_strict_load_with_workers_raises_the_genuine_error() -> None:
    with pytest.raises(
        FoldError, match=r"3IEwW2WGDU0fLv2O74DzUUqvJ4S|3IFJ0ydR80CR95kPTqm7HTd4xis|3IFb0vb89YiYgd8BjhBiiiBa7A2"
    ):
        load(CORPUS / "file", workers=2, batch_bytes=8192)


def test_the_policy_starts_processes_only_where_they_pay() -> None:
    worker_processes.close_pool()
    assert processes_for(1, 10**12) == 1
    assert processes_for(3, 0) == 3
    small, large = processes_for(None, FOLD_POOL_FROM - 1), processes_for(None, FOLD_POOL_FROM)
    assert small == 1 and (large > 1 or usable_cores() < 2)
    # Local journals folded natively stay here: a worker's tables cost more to send back than its fold saved.
    assert processes_for(None, 10**12, folds_natively=True) == 1
    assert processes_for(2, 10**12, folds_natively=True) == 2


def test_a_default_load_of_local_journals_folded_natively_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "FOLD_POOL_FROM", 1)  # any load is large enough for processes
    worker_processes.close_pool()
    here = load(CORPUS / "random", strict=False, batch_bytes=8192)
    assert not worker_processes.pool_started()
    with native_fold.disabled():
        shared = load(CORPUS / "random", strict=False, batch_bytes=8192)
    assert worker_processes.pool_started() or usable_cores() < 2
    same_tables(here, shared)


def test_no_processes_inside_a_dask_worker() -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert client.submit(processes_for, None, 10**12).result() == 1


SCRIPT = """
import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()   # any thread: opening a NATS source starts one
from journaltools.tables import load
print(load({source!r}, strict=False, workers=2).runs.num_rows)
"""


def test_a_script_without_a_main_guard_runs_its_top_level_once(tmp_path: Path) -> None:
    source = tmp_path / "runs"
    shutil.copytree(CORPUS / "file", source)
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT.format(source=str(source))))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(list(source.glob("*.json"))))]
