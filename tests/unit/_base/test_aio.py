"""The blocking face over the background loop: results, errors, timeouts and cancellation."""

from __future__ import annotations

import asyncio
import threading

import pytest

from journaltools._base.aio import background_loop, run_sync
from tests.concurrency import run_in_threads


async def _double(value: int) -> int:
    await asyncio.sleep(0)
    return 2 * value


async def _fail() -> None:
    raise KeyError("inside")


def test_results_and_errors_come_back_to_the_caller() -> None:
    assert [run_sync(_double(n)) for n in range(50)] == [2 * n for n in range(50)]
    with pytest.raises(KeyError, match="inside"):
        run_sync(_fail())


def test_calls_from_many_threads_each_get_their_own_result() -> None:
    results: dict[int, int] = {}

    def call(n: int) -> None:
        results[n] = run_sync(_double(n))

    run_in_threads(call, 16)
    assert results == {n: 2 * n for n in range(16)}


def test_a_timeout_cancels_the_coroutine() -> None:
    cancelled = threading.Event()
    never = threading.Event()

    async def wait_forever() -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(None, never.wait)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError, match=r"0\.05 seconds"):
        run_sync(wait_forever(), timeout=0.05)
    assert cancelled.is_set()  # run_sync waited for the cancellation to land before raising
    never.set()


def test_calling_it_from_the_loop_itself_is_refused() -> None:
    async def inner() -> str:
        coroutine = _double(1)
        try:
            run_sync(coroutine)
        except RuntimeError as exc:
            return str(exc)
        return "not refused"

    assert "await the *_async method" in run_sync(inner())
    assert background_loop().is_running()
