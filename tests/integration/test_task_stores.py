"""The one task-store suite (tests/task_store_contract.py) over the runtime's file store and JetStream key-value,
the URL registry, hostile files, the tasks table and command, and completers in separate processes."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from journaltools.audits.tasks import audit_tasks
from journaltools.cli import main
from journaltools.errors import InvalidTask, SourceError
from journaltools.sources.embedded import EmbeddedServer
from journaltools.stores import open_task_store
from journaltools.stores.natskv import CasBucket, parse_bucket_url
from journaltools.stores.tasks import FileTaskStore, TaskStore, task_states
from journaltools.stores.tasks.kv import NatsTaskStore
from tests import store_workers
from tests.task_store_contract import FixedClock, TaskStoreContract, request, result


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


class TestFileTaskStore(TaskStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path, clock: FixedClock) -> TaskStore:
        return FileTaskStore(tmp_path / "tasks", now=clock)

    @pytest.fixture
    def another(self, tmp_path: Path) -> Callable[[], TaskStore]:
        return lambda: open_task_store(tmp_path / "tasks")

    @pytest.fixture
    def stored_bytes(self, tmp_path: Path) -> Callable[[str], bytes]:
        return lambda task_id: (tmp_path / "tasks" / f"{task_id}.json").read_bytes()


class TestNatsTaskStore(TaskStoreContract):
    @pytest.fixture
    def store(self, bucket_url: str, clock: FixedClock) -> Iterator[TaskStore]:
        with NatsTaskStore.open(bucket_url, create=True, now=clock) as store:
            yield store

    @pytest.fixture
    def another(self, bucket_url: str) -> Callable[[], TaskStore]:
        return lambda: open_task_store(bucket_url)

    @pytest.fixture
    def stored_bytes(self, bucket_url: str) -> Iterator[Callable[[str], bytes]]:
        bucket = CasBucket.open(parse_bucket_url(bucket_url, "TASKS"))

        def read(task_id: str) -> bytes:
            stored = bucket.get(task_id)
            assert stored is not None
            return stored.data

        yield read
        bucket.close()


def test_the_file_store_is_the_runtimes_layout(tmp_path: Path) -> None:
    store = FileTaskStore(tmp_path / "tasks")
    store.submit(request("t-1"))
    store.complete("t-1", result("t-1"))
    assert (tmp_path / "tasks").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "tasks" / "t-1.json").stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path / "tasks")) == [".t-1.lock", "t-1.json"]  # no staging file left


def test_the_registry_refuses_what_is_not_a_task_store(tmp_path: Path, nats_server: EmbeddedServer) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        open_task_store(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SourceError, match="directory"):
        open_task_store(tmp_path / "file", create=True)
    for not_a_store in ["http://example.com/tasks", "embedded", "memory"]:
        with pytest.raises(SourceError, match="not a task store URL"):
            open_task_store(not_a_store, create=True)
    with pytest.raises(SourceError, match="bucket 'NOPE' does not exist"):
        open_task_store(f"{nats_server.url}/NOPE")


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory", "corrupt"])
def test_a_record_that_is_not_one_is_refused_without_blocking_and_reported(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    store = FileTaskStore(root)
    store.submit(request("fine"))
    other = FileTaskStore(tmp_path / "other")
    other.submit(request("t-1"))
    path = root / "t-1.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        os.symlink(tmp_path / "other" / "t-1.json", path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b'{"id":"t-1","state":"submitted","submitted":"yesterday"}')
    with pytest.raises(InvalidTask):
        store.get("t-1")
    with pytest.raises(InvalidTask):
        store.complete("t-1", result("t-1"))
    assert task_states(store, ["t-1", "fine"]) == {"fine": "submitted"}  # a null task_state, the rest goes on
    audit = audit_tasks(store)
    (finding,) = audit.findings
    assert finding.code == "task_record_invalid" and "t-1.json" in finding.message
    assert [row["valid"] for row in audit.tasks.to_pylist()] == [True, False]
    assert (tmp_path / "other" / "t-1.json").read_bytes().endswith(b'Z"}')  # the linked file is untouched


def test_the_tasks_table_and_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FileTaskStore(tmp_path / "tasks")
    for task_id in ("answered", "failed", "waiting", "empty"):
        store.submit(request(task_id, kind="resume" if task_id == "waiting" else "prompt"))
    store.complete("answered", result("answered"))
    store.complete("failed", b'{"protocol":"io.choria.fisk-ai.v1.error","error":"budget"}')
    empty = tmp_path / "tasks" / "empty.json"
    empty.write_bytes(empty.read_bytes().replace(b'"submitted",', b'"completed",', 1))
    assert main(["tasks", "--json", str(tmp_path / "tasks")]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = {row["id"]: row for row in document["tasks"]}
    assert {task: row["outcome"] for task, row in rows.items()} == {
        "answered": "answered",
        "empty": "waiting",
        "failed": "error",
        "waiting": "waiting",
    }
    assert rows["failed"]["error"] == "budget" and rows["waiting"]["request_kind"] == "resume"
    assert [f["code"] for f in document["findings"]] == ["task_completed_without_result"]
    assert main(["tasks", "--fail-on", "error", str(tmp_path / "tasks")]) == 1
    out = capsys.readouterr().out
    assert "answered" in out.splitlines()[1] or "answered" in out


@pytest.mark.parametrize("kind", ["file", "nats"])
def test_a_hundred_races_of_two_processes_have_one_winner_each(kind: str, tmp_path: Path, bucket_url: str) -> None:
    """Two processes complete the same 100 tasks in lockstep: each task has exactly one winner, its answer is the
    one stored, and the loser was told when the winner's answer landed."""
    processes, rounds = 2, 100
    url = str(tmp_path / "tasks") if kind == "file" else bucket_url
    with open_task_store(url, create=True) as store:
        for index in range(rounds):
            store.submit(request(f"task-{index}"))
        barrier = multiprocessing.get_context("spawn").Barrier(processes)
        outcomes = store_workers.run_in_processes(
            store_workers.complete_tasks, [(url, worker, rounds, barrier) for worker in range(processes)]
        )
        for index in range(rounds):
            wins = [worker for worker, won in enumerate(outcomes) if won[index]]
            assert len(wins) == 1, f"task-{index}: winners {wins}"
            assert f"worker {wins[0]}".encode() in (store.get(f"task-{index}").result or b"")
