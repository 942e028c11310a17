"""The task-store contract, written once: every task store must pass ``TaskStoreContract``.

Subclass it (with a name starting ``Test``) and provide two fixtures: ``store``, an empty store, and ``another``,
a callable that opens a second, independent handle on the same store (another process's or host's view).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import InvalidRunId, TaskAlreadyCompleted, TaskError, TaskNotFound
from journaltools.tasks import Task, TaskStore, task_states
from tests.concurrency import run_in_threads

Outcome = tuple[str, Any]  # ("result", value) or ("error", message)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
outcomes = st.one_of(
    st.tuples(st.just("result"), json_values.filter(lambda v: v is not None)),
    st.tuples(st.just("error"), st.text(min_size=1, max_size=30)),
)


def new_id() -> str:
    return f"task-{uuid.uuid4().hex[:12]}"


def complete(store: TaskStore, task_id: str, outcome: Outcome) -> Task:
    kind, value = outcome
    return store.complete(task_id, result=value) if kind == "result" else store.complete(task_id, error=value)


class TaskStoreContract:
    """What every task store guarantees (PROTOCOL.md section 8)."""

    def test_a_task_round_trips(self, store: TaskStore) -> None:
        request = {"prompt": "sum the invoices", "files": ["a.pdf", "b.pdf"], "urgent": True, "n": 3, "note": "café"}
        created = store.create("task-1", request, ts="2026-11-29T10:00:00.000000Z")
        assert created == Task("task-1", "pending", request, created="2026-11-29T10:00:00.000000Z")
        assert store.get("task-1") == created

    def test_create_is_create_only(self, store: TaskStore) -> None:
        store.create("task-1", "first")
        with pytest.raises(TaskError, match="already exists"):
            store.create("task-1", "second")
        assert store.get("task-1").request == "first"

    def test_success_and_failure(self, store: TaskStore) -> None:
        store.create("ok", "q")
        store.create("bad", "q")
        done = store.complete("ok", result={"total": 12}, ts="2026-11-29T10:01:00.000000Z")
        assert (done.state, done.result, done.error, done.completed) == (
            "succeeded",
            {"total": 12},
            None,
            "2026-11-29T10:01:00.000000Z",
        )
        failed = store.complete("bad", error="worker crashed")
        assert (failed.state, failed.result, failed.error) == ("failed", None, "worker crashed")
        assert store.get("ok") == done and store.get("bad") == failed

    def test_the_first_write_wins_even_if_the_second_is_a_success(self, store: TaskStore) -> None:
        store.create("task-1", "q")
        store.complete("task-1", error="timed out")
        with pytest.raises(TaskAlreadyCompleted, match="first write wins"):
            store.complete("task-1", result="the answer")
        assert store.get("task-1").state == "failed"

    def test_a_failure_never_replaces_a_success(self, store: TaskStore) -> None:
        store.create("task-1", "q")
        store.complete("task-1", result="the answer")
        with pytest.raises(TaskAlreadyCompleted, match="already succeeded"):
            store.complete("task-1", error="a late, failed worker")
        assert (store.get("task-1").state, store.get("task-1").result) == ("succeeded", "the answer")

    def test_an_outcome_is_a_result_or_an_error_not_both(self, store: TaskStore) -> None:
        store.create("task-1", "q")
        with pytest.raises(TaskError, match="not both"):
            store.complete("task-1", result=1, error="and a failure")
        assert store.get("task-1").state == "pending"

    def test_missing_tasks_are_not_found(self, store: TaskStore) -> None:
        with pytest.raises(TaskNotFound, match="nope"):
            store.get("nope")
        with pytest.raises(TaskNotFound):
            store.complete("nope", result=1)

    @pytest.mark.parametrize("task_id", ["", "../etc", "a.b", "a b", "-x", "x" * 129, "a*", "a>"])
    def test_task_ids_are_validated(self, store: TaskStore, task_id: str) -> None:
        for attempt in (
            lambda: store.create(task_id, "q"),
            lambda: store.get(task_id),
            lambda: store.complete(task_id, result=1),
        ):
            with pytest.raises(InvalidRunId):
                attempt()

    def test_another_handle_sees_the_same_store(self, store: TaskStore, another: Callable[[], TaskStore]) -> None:
        store.create("task-1", "q")
        with another() as second:
            assert second.get("task-1").state == "pending"
            second.complete("task-1", result="from the other host")
            with pytest.raises(TaskError):
                second.create("task-1", "again")
        with pytest.raises(TaskAlreadyCompleted):
            store.complete("task-1", result="too late")
        assert store.get("task-1").result == "from the other host"

    def test_racing_completers_have_exactly_one_winner(
        self, store: TaskStore, another: Callable[[], TaskStore]
    ) -> None:
        """Eight completers on four handles, half succeeding and half failing: one wins, its outcome stays."""
        store.create("task-1", "q")
        handles = [store, *(another() for _ in range(3))]
        winners: list[int] = []
        losers: list[int] = []
        barrier = threading.Barrier(8)

        def completer(n: int) -> None:
            handle = handles[n % len(handles)]
            barrier.wait()
            try:
                handle.complete("task-1", result=n) if n % 2 else handle.complete("task-1", error=f"worker {n}")
                winners.append(n)
            except TaskAlreadyCompleted:
                losers.append(n)

        run_in_threads(completer, 8)
        for handle in handles[1:]:
            handle.close()
        assert len(winners) == 1 and sorted(winners + losers) == list(range(8))
        stored = store.get("task-1")
        winner = winners[0]
        expected = ("succeeded", winner, None) if winner % 2 else ("failed", None, f"worker {winner}")
        assert (stored.state, stored.result, stored.error) == expected

    # One body shared by every backend's subclass (so "differing executors"); the store fixture is empty once per
    # test and each example uses a fresh task id, so examples never see each other's tasks.
    @settings(
        max_examples=25,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(request=json_values, attempts=st.lists(outcomes, min_size=1, max_size=5))
    def test_only_the_first_completion_is_ever_stored(
        self, store: TaskStore, request: Any, attempts: list[Outcome]
    ) -> None:
        task_id = new_id()
        store.create(task_id, request)
        first = complete(store, task_id, attempts[0])
        for later in attempts[1:]:
            with pytest.raises(TaskAlreadyCompleted):
                complete(store, task_id, later)
        assert store.get(task_id) == first and first.request == request
        assert first.state == ("succeeded" if attempts[0][0] == "result" else "failed")

    def test_task_states_for_the_runs_table(self, store: TaskStore) -> None:
        store.create("pending-one", "q")
        store.create("done", "q")
        store.create("broke", "q")
        store.complete("done", result=1)
        store.complete("broke", error="no")
        states = task_states(store, ["done", "pending-one", None, "missing", "../bad", "broke", "done"])
        assert states == {"done": "succeeded", "pending-one": "pending", "broke": "failed"}
        assert task_states(store, []) == {}
