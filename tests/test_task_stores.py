"""The one task-store suite (tests/task_store_contract.py) over the file store and JetStream key-value, the URL
registry, and completers in separate processes against a real server."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from journaltools.embedded import EmbeddedServer
from journaltools.errors import SourceError, TaskError
from journaltools.stores import open_task_store
from journaltools.tasks import FileTaskStore, TaskStore
from journaltools.tasks.kv import NatsTaskStore
from tests import store_workers
from tests.nats_fixtures import NatsAdmin
from tests.task_store_contract import TaskStoreContract


class TestFileTaskStore(TaskStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[TaskStore]:
        with open_task_store(tmp_path / "tasks", create=True) as store:
            assert isinstance(store, FileTaskStore)
            yield store

    @pytest.fixture
    def another(self, tmp_path: Path) -> Callable[[], TaskStore]:
        return lambda: open_task_store(tmp_path / "tasks")


class TestNatsTaskStore(TaskStoreContract):
    @pytest.fixture
    def store(self, bucket_url: str) -> Iterator[TaskStore]:
        with open_task_store(bucket_url, create=True) as store:
            assert isinstance(store, NatsTaskStore)
            yield store

    @pytest.fixture
    def another(self, bucket_url: str) -> Callable[[], TaskStore]:
        return lambda: open_task_store(bucket_url)


def test_the_registry_refuses_what_is_not_a_task_store(tmp_path: Path, nats_server: EmbeddedServer) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        open_task_store(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SourceError, match="directory"):
        open_task_store(tmp_path / "file", create=True)
    for not_a_store in ["http://example.com/tasks", "embedded", "embedded:TASKS"]:
        with pytest.raises(SourceError, match="not a task store URL"):
            open_task_store(not_a_store, create=True)
    with pytest.raises(SourceError, match="bucket 'NOPE' does not exist"):
        open_task_store(f"{nats_server.url}/NOPE")
    with pytest.raises(SourceError, match="bucket name"):
        open_task_store(f"{nats_server.url}/no.dots", create=True)
    with pytest.raises(SourceError, match="unknown parameter 'prefix'"):
        open_task_store(f"{nats_server.url}/TASKS?prefix=x", create=True)


def test_a_file_url_opens_the_file_store(tmp_path: Path) -> None:
    with open_task_store(f"file://{tmp_path}", create=True) as store:
        store.create("t", "q")
    assert (tmp_path / "t.task.json").is_file()


def test_a_stored_task_that_is_not_one_is_a_task_error(tmp_path: Path) -> None:
    (tmp_path / "t.task.json").write_text('{"id": "t"}')
    with open_task_store(tmp_path) as store, pytest.raises(TaskError, match="not a task record"):
        store.get("t")


def test_a_bucket_whose_values_expire_is_refused(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> None:
    nats_admin.create_stream(
        {"name": "KV_EXPIRING", "subjects": ["$KV.EXPIRING.>"], "max_msgs_per_subject": 1, "max_age": 3_600_000_000_000}
    )
    try:
        with pytest.raises(SourceError, match="max_age is 3600s"):
            open_task_store(f"{nats_server.url}/EXPIRING")
    finally:
        nats_admin.delete_stream("KV_EXPIRING")


def test_completers_in_separate_processes_have_one_winner_per_task(bucket_url: str) -> None:
    """Four processes complete the same 30 tasks in lockstep, half with a success and half with a failure:
    each task has exactly one winner, its outcome is the one stored, and nothing ever replaced it."""
    processes, rounds = 4, 30
    with open_task_store(bucket_url, create=True) as store:
        for index in range(rounds):
            store.create(f"task-{index}", {"round": index})
        barrier = multiprocessing.get_context("spawn").Barrier(processes)
        outcomes = store_workers.run_in_processes(
            store_workers.complete_tasks, [(bucket_url, worker, rounds, barrier) for worker in range(processes)]
        )
        for index in range(rounds):
            wins = [worker for worker, won in enumerate(outcomes) if won[index]]
            assert len(wins) == 1, f"task-{index}: winners {wins}"
            stored = store.get(f"task-{index}")
            winner = wins[0]
            expected = ("succeeded", f"worker {winner}", None) if winner % 2 else ("failed", None, f"worker {winner}")
            assert (stored.state, stored.result, stored.error) == expected
