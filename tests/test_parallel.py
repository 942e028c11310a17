"""The process policy: worker processes give the tables this process gives, lose nothing when one dies, and
never depend on threads, start methods or a script's ``__main__`` guard."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from journaltools.generate import generate_corpus
from journaltools.tables import iter_tables, load
from journaltools.tables import workers as worker_processes
from journaltools.tables.parallel import FOLD_POOL_FROM, processes_for
from tests.test_tables import corrupt_corpus

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


def same_tables(a: object, b: object) -> None:
    for name in ("records", "runs", "messages", "tool_calls", "findings"):
        assert getattr(a, name).combine_chunks().equals(getattr(b, name).combine_chunks()), name


def test_worker_processes_give_the_same_tables(tmp_path: Path) -> None:
    corrupt_corpus(tmp_path)
    here = load(tmp_path, strict=False, workers=1, batch_bytes=8192)
    shared = load(tmp_path, strict=False, workers=2, batch_bytes=8192)
    same_tables(here, shared)
    assert worker_processes.pool_started()


def test_a_worker_killed_mid_load_loses_nothing(tmp_path: Path) -> None:
    generate_corpus(tmp_path, runs=120, records=40, seed=9, workers=1)
    expected = load(tmp_path, strict=False, workers=1, batch_bytes=4096)
    worker_processes.close_pool()
    parts = iter_tables(tmp_path, strict=False, workers=2, batch_bytes=4096)
    first = [next(parts)]
    worker = worker_processes.pool(1).workers[0]
    assert worker.ready.wait(60)
    while not worker.in_flight:  # the next batches this process takes hand the worker some first
        first.append(next(parts))
    worker.process.kill()
    from journaltools.tables import Tables

    same_tables(Tables.concat([*first, *parts]), expected)
    assert not worker.alive


def test_a_strict_load_with_workers_raises_the_genuine_error(tmp_path: Path) -> None:
    from journaltools.errors import CorruptJournal

    corrupt_corpus(tmp_path)
    with pytest.raises(CorruptJournal, match="run-0000001"):
        load(tmp_path, workers=2, batch_bytes=8192)


def test_the_policy_starts_processes_only_where_they_pay() -> None:
    worker_processes.close_pool()
    assert processes_for(1, 10**12) == 1
    assert processes_for(3, 0) == 3
    small, large = processes_for(None, FOLD_POOL_FROM - 1), processes_for(None, FOLD_POOL_FROM)
    assert small == 1 and (large > 1 or worker_processes.usable_cores() < 2)


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
{nats}
from journaltools.tables import load
print(load({samples!r}, strict=False, workers=2).runs.num_rows)
"""


@pytest.mark.parametrize("with_nats", [False, True])
def test_a_script_without_a_main_guard_runs_its_top_level_once(
    tmp_path: Path, with_nats: bool, jetstream_url: str
) -> None:
    nats = f"from journaltools import open_source\nopen_source({jetstream_url!r}, create=True)" if with_nats else ""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT.format(nats=nats, samples=str(SAMPLES))))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(list(SAMPLES.glob("*.jsonl"))))]
