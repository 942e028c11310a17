"""The task-store contract, written once: every task store must pass ``TaskStoreContract``.

Subclass it (with a name starting ``Test``) and provide ``store`` (an empty store whose clock is the ``clock``
fixture), ``another`` (a callable opening a second handle on the same store) and ``stored_bytes`` (the bytes the
store holds for a task id).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import InvalidTask, TaskAlreadyCompleted, TaskExists, TaskNotFound
from journaltools.goencoding.time import GoTime
from journaltools.stores.tasks import Task, TaskStore, decode_task, task_states
from tests.concurrency import run_in_threads

SUBMITTED = GoTime(1_795_948_800_123_456_789)  # 2026-11-29T10:40:00.123456789Z


class FixedClock:
    def __init__(self) -> None:
        self.moment = SUBMITTED

    def __call__(self) -> GoTime:
        return self.moment


def request(task_id: str, prompt: str = "sum the invoices <a> & <b>", kind: str = "prompt") -> bytes:
    """An A2A request message as a caller sends it (indented, HTML characters raw)."""
    body = {
        "protocol": f"io.choria.fisk-ai.v1.request.{kind}",
        "id": f"msg-{task_id}",
        "request": task_id,
        "conversation": "conv-1",
        "sequence": 1,
        "time": "2026-11-29T10:39:59+01:00",
        "sender": {"name": "caller"},
        "prompt": prompt,
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2)


def result(task_id: str, text: str = "12 invoices") -> bytes:
    return (
        b'{"protocol":"io.choria.fisk-ai.v1.result","id":"r","request":"%s","stop_reason":"end_turn","text":"%s"}'
        % (
            task_id.encode(),
            text.encode(),
        )
    )


def error(task_id: str, why: str = "the provider refused") -> bytes:
    return b'{"protocol":"io.choria.fisk-ai.v1.error","request":"%s","error":"%s","code":"provider"}' % (
        task_id.encode(),
        why.encode(),
    )


#: REAL-SYSTEM.md H, written by hand: field order, compact Go encoding with <>& escaped, UTC nanoseconds, no newline.
HAND_WRITTEN_SUBMITTED = (
    b'{"id":"t-1","state":"submitted","request":{"protocol":"io.choria.fisk-ai.v1.request.prompt","id":"msg-t-1",'
    b'"request":"t-1","conversation":"conv-1","sequence":1,"time":"2026-11-29T10:39:59+01:00","sender":{"name":'
    b'"caller"},"prompt":"sum the invoices \\u003ca\\u003e \\u0026 \\u003cb\\u003e"},'
    b'"submitted":"2026-11-29T10:40:00.123456789Z"}'
)
HAND_WRITTEN_COMPLETED = (
    HAND_WRITTEN_SUBMITTED[:-1].replace(b'"state":"submitted"', b'"state":"completed"')
    + b',"result":{"protocol":"io.choria.fisk-ai.v1.result","id":"r","request":"t-1","stop_reason":"end_turn",'
    b'"text":"12 invoices"},"completed":"2026-11-29T10:40:02.5Z"}'
)


class TaskStoreContract:
    """What every task store guarantees (PROTOCOL.md section 8)."""

    def test_submit_and_complete_write_the_runtimes_bytes(
        self, store: TaskStore, clock: FixedClock, stored_bytes: Callable[[str], bytes]
    ) -> None:
        submitted = store.submit(request("t-1"))
        assert stored_bytes("t-1") == HAND_WRITTEN_SUBMITTED
        assert (submitted.id, submitted.state, submitted.outcome, submitted.request_kind) == (
            "t-1",
            "submitted",
            "waiting",
            "prompt",
        )
        clock.moment = GoTime(SUBMITTED.unix_ns + 2_376_543_211)
        done = store.complete("t-1", result("t-1"))
        assert stored_bytes("t-1") == HAND_WRITTEN_COMPLETED
        assert store.get("t-1") == decode_task(HAND_WRITTEN_COMPLETED) == decode_task(done.to_bytes())
        assert (done.outcome, done.error_text, done.seconds_to_answer) == ("answered", None, 2.376543211)

    def test_submit_is_create_only(self, store: TaskStore) -> None:
        store.submit(request("t-1", "first"))
        with pytest.raises(TaskExists, match="t-1"):
            store.submit(request("t-1", "second"))
        assert b"first" in store.get("t-1").request

    @pytest.mark.parametrize(
        "body",
        [
            b"not json",
            b'{"protocol":"io.choria.fisk-ai.v1.result","request":"t-1"}',
            b'{"protocol":"io.choria.fisk-ai.v1.request.prompt","request":"../etc"}',
            b'{"protocol":"io.choria.fisk-ai.v1.request.prompt","request":""}',
            b"[]",
        ],
    )
    def test_a_body_that_is_not_a_request_with_an_id_is_refused(self, store: TaskStore, body: bytes) -> None:
        with pytest.raises(InvalidTask, match="invalid request"):
            store.submit(body)

    def test_success_and_failure_are_told_by_the_result_protocol(self, store: TaskStore) -> None:
        store.submit(request("ok"))
        store.submit(request("bad"))
        assert store.complete("ok", result("ok")).outcome == "answered"
        failed = store.complete("bad", error("bad"))
        assert (failed.state, failed.outcome, failed.error_text) == (
            "completed",
            "error",
            "the provider refused (provider)",
        )

    def test_the_first_answer_wins_and_the_loser_is_told_when_it_landed(
        self, store: TaskStore, clock: FixedClock
    ) -> None:
        store.submit(request("t-1"))
        clock.moment = GoTime(SUBMITTED.unix_ns + 1)
        store.complete("t-1", error("t-1"))
        with pytest.raises(TaskAlreadyCompleted, match=r"completed at 2026-11-29T10:40:00\.12345679Z"):
            store.complete("t-1", result("t-1"))
        assert store.get("t-1").outcome == "error"

    def test_missing_and_invalid_ids(self, store: TaskStore) -> None:
        with pytest.raises(TaskNotFound, match="nope"):
            store.get("nope")
        with pytest.raises(TaskNotFound):
            store.complete("nope", result("nope"))
        for bad in ("", "../etc", "a.b", "-x", "x" * 129):
            with pytest.raises(InvalidTask):
                store.get(bad)

    def test_a_result_must_be_json(self, store: TaskStore) -> None:
        store.submit(request("t-1"))
        with pytest.raises(InvalidTask, match="JSON"):
            store.complete("t-1", b"{not json")
        assert store.get("t-1").state == "submitted"

    def test_another_handle_sees_the_same_store(self, store: TaskStore, another: Callable[[], TaskStore]) -> None:
        store.submit(request("t-1"))
        with another() as second:
            assert second.get("t-1").state == "submitted"
            second.complete("t-1", result("t-1", "from the other host"))
        with pytest.raises(TaskAlreadyCompleted):
            store.complete("t-1", result("t-1"))
        assert b"from the other host" in (store.get("t-1").result or b"")

    def test_racing_completers_have_exactly_one_winner(
        self, store: TaskStore, another: Callable[[], TaskStore]
    ) -> None:
        store.submit(request("t-1"))
        handles = [store, *(another() for _ in range(3))]
        winners: list[int] = []
        losers: list[int] = []
        barrier = threading.Barrier(8)

        def completer(n: int) -> None:
            barrier.wait()
            try:
                handles[n % len(handles)].complete("t-1", result("t-1", f"worker {n}"))
                winners.append(n)
            except TaskAlreadyCompleted:
                losers.append(n)

        run_in_threads(completer, 8)
        for handle in handles[1:]:
            handle.close()
        assert len(winners) == 1 and sorted(winners + losers) == list(range(8))
        assert f"worker {winners[0]}".encode() in (store.get("t-1").result or b"")

    @settings(
        max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors]
    )
    @given(prompt=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40), nanos=st.integers(0, 10**9 - 1))
    def test_any_request_round_trips(self, store: TaskStore, clock: FixedClock, prompt: str, nanos: int) -> None:
        task_id = f"t-{uuid.uuid4().hex[:10]}"
        clock.moment = GoTime(SUBMITTED.unix_ns - SUBMITTED.unix_ns % 10**9 + nanos)
        submitted = store.submit(request(task_id, prompt))
        read = store.get(task_id)
        assert read.to_bytes() == submitted.to_bytes() and read.submitted == clock.moment
        assert orjson.loads(read.request)["prompt"] == prompt

    def test_task_states_for_the_runs_table(self, store: TaskStore) -> None:
        store.submit(request("waiting-one"))
        store.submit(request("done"))
        store.complete("done", result("done"))
        states = task_states(store, ["done", "waiting-one", None, "missing", "../bad", "done"])
        assert states == {"done": "completed", "waiting-one": "submitted"}

    def test_scan_lists_every_record(self, store: TaskStore) -> None:
        for task_id in ("b", "a", "c"):
            store.submit(request(task_id))
        assert [(s.key.removesuffix(".json"), s.problem) for s in store.scan()] == [
            ("a", None),
            ("b", None),
            ("c", None),
        ]
        assert all(isinstance(s.task, Task) for s in store.scan())
