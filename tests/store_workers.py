"""Code the concurrency tests run in separate processes (started with ``spawn``: each process has its own
interpreter, event loop and NATS connection, as separate hosts would), and the helper that runs them."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from journaltools.errors import TaskAlreadyCompleted
from journaltools.stores import open_task_store, open_turn_store
from journaltools.turnjournal import Phase, RevisionConflict
from journaltools.turnjournal.stores import TurnRecordExists
from tests.turn_builders import in_phase, new_record

WORKER_TIMEOUT = 120.0


def _run(target: Callable[..., Any], args: tuple[Any, ...], results: Any, index: int) -> None:
    try:
        results.put((index, "ok", target(*args)))
    except BaseException:
        results.put((index, "failed", traceback.format_exc()))


class Workers:
    """``target(*args[i])`` in one process each, started at once; ``results()`` waits for their return values
    (in order) and fails the test with the traceback of a worker that raised."""

    def __init__(self, target: Callable[..., Any], args: Sequence[tuple[Any, ...]]) -> None:
        context = multiprocessing.get_context("spawn")
        self._queue = context.Queue()
        self._processes = [
            context.Process(target=_run, args=(target, worker_args, self._queue, index), name=f"worker-{index}")
            for index, worker_args in enumerate(args)
        ]
        for process in self._processes:
            process.start()

    def results(self) -> list[Any]:
        collected: dict[int, Any] = {}
        try:
            for _ in self._processes:
                index, status, value = self._queue.get(timeout=WORKER_TIMEOUT)
                if status != "ok":
                    raise AssertionError(f"worker {index} failed:\n{value}")
                collected[index] = value
        finally:
            for process in self._processes:
                process.join(10)
                if process.is_alive():
                    process.kill()
                    process.join()
        return [collected[index] for index in range(len(self._processes))]


def run_in_processes(target: Callable[..., Any], args: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Run the workers and wait for their results."""
    return Workers(target, args).results()


def complete_tasks(url: str, worker: int, rounds: int, barrier: Any) -> list[bool]:
    """Complete ``task-0`` .. ``task-<rounds-1>`` in lockstep with the other workers (odd workers succeed, even
    ones fail); whether this worker won each task."""
    won = []
    with open_task_store(url) as store:
        for index in range(rounds):
            barrier.wait(WORKER_TIMEOUT)
            try:
                if worker % 2:
                    store.complete(f"task-{index}", result=f"worker {worker}")
                else:
                    store.complete(f"task-{index}", error=f"worker {worker}")
                won.append(True)
            except TaskAlreadyCompleted:
                won.append(False)
    return won


def contend_for_turns(url: str, worker: int, rounds: int, start: Any, read: Any, done: Any) -> dict[str, list[bool]]:
    """One writer of ``test_writers_in_separate_processes_...``: each round, between the ``start`` and ``done``
    barriers (the test checks the store in between), update the shared record from the revision every worker
    read (the ``read`` barrier makes them all hold the same one), create records under two shared owners, race
    for ``common-<round>``, and complete this worker's ``host-a`` records of the round before."""
    updated: list[bool] = []
    created_common: list[bool] = []
    with open_turn_store(url) as store:
        for round_number in range(rounds):
            start.wait(WORKER_TIMEOUT)
            shared = store.get("ws", "shared")
            read.wait(WORKER_TIMEOUT)
            try:
                store.update(shared.with_changes(iteration=worker * 1000 + round_number), shared.revision)
                updated.append(True)
            except RevisionConflict:
                updated.append(False)
            for k in range(3):
                store.create(new_record(f"r{round_number}-w{worker}-{k}", owner="host-a"))
            for k in range(2):
                store.create(new_record(f"r{round_number}-w{worker}-b{k}", owner="host-b"))
            try:
                store.create(new_record(f"common-{round_number}", owner="host-b"))
                created_common.append(True)
            except TurnRecordExists:
                created_common.append(False)
            if round_number:
                for k in range(3):
                    previous = store.get("ws", f"r{round_number - 1}-w{worker}-{k}")
                    store.update(in_phase(previous, Phase.COMPLETED), previous.revision)
            done.wait(WORKER_TIMEOUT)
    return {"updated": updated, "created_common": created_common}
