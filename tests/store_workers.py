"""Code the concurrency tests run in separate processes (started with ``spawn``: each process has its own
interpreter, event loop and NATS connection, as separate hosts would), and the helper that runs them."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from journaltools.errors import RevisionConflict, TaskAlreadyCompleted, TurnAlreadyExists
from journaltools.stores import open_task_store, open_turn_store
from tests.turn_builders import new_record

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
    """Complete ``task-0`` .. ``task-<rounds-1>`` in lockstep with the other workers, each with a result naming
    this worker; whether this worker won each task."""
    won = []
    with open_task_store(url) as store:
        for index in range(rounds):
            barrier.wait(WORKER_TIMEOUT)
            result = b'{"protocol":"io.choria.fisk-ai.v1.result","request":"task-%d","text":"worker %d"}' % (
                index,
                worker,
            )
            try:
                store.complete(f"task-{index}", result)
                won.append(True)
            except TaskAlreadyCompleted as refused:
                won.append(False)
                assert "already completed at " in str(refused)
    return won


def contend_for_turns(url: str, worker: int, rounds: int, start: Any, read: Any, done: Any) -> dict[str, list[bool]]:
    """One writer of the multi-process test: each round, between the ``start`` and ``done`` barriers (the test
    checks the store in between), update the shared record from the revision every worker read (the ``read``
    barrier makes them all hold the same one), create records under a shared owner, race for ``common-<round>``."""
    updated: list[bool] = []
    created_common: list[bool] = []
    with open_turn_store(url) as store:
        for round_number in range(rounds):
            start.wait(WORKER_TIMEOUT)
            shared = store.get("ws", "shared")
            read.wait(WORKER_TIMEOUT)
            try:
                store.update(shared.with_changes(iteration=shared.iteration + worker + 1), shared.revision)
                updated.append(True)
            except RevisionConflict:
                updated.append(False)
            for k in range(2):
                store.create(new_record(f"r{round_number}-w{worker}-b{k}", owner="host-b"))
            try:
                store.create(new_record(f"common-{round_number}", owner="host-b"))
                created_common.append(True)
            except TurnAlreadyExists:
                created_common.append(False)
            done.wait(WORKER_TIMEOUT)
    return {"updated": updated, "created_common": created_common}


def update_forever(url: str) -> None:
    """Create four records, then update them in turn forever, printing ``task revision`` after each update
    returns (the acknowledgement the crash test holds the store to)."""
    with open_turn_store(url, create=True) as store:
        records = [store.create(new_record(f"crash-{n}")) for n in range(4)]
        while True:
            for position, record in enumerate(records):
                updated = store.update(record.with_changes(iteration=record.iteration + 1), record.revision)
                records[position] = updated
                print(updated.task_id, updated.revision, flush=True)


if __name__ == "__main__":
    import sys

    if sys.argv[1] == "update-forever":
        update_forever(sys.argv[2])
