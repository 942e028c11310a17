import hashlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from journaltools.errors import JournalError, TaskAlreadyCompleted, TaskNotFound
from journaltools.tasks import FileTaskStore
from journaltools.turnjournal import (
    CASStore,
    ExternalChildRef,
    FileStore,
    HistoryMessageRef,
    MemoryBlobStore,
    Phase,
    RevisionConflict,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    ToolOutcome,
    TurnRecord,
    TurnStore,
)
from journaltools.turnjournal.records import InvalidTurnRecord

DIGEST = hashlib.sha256(b"m").hexdigest()
T0 = datetime(2026, 11, 29, 10, tzinfo=UTC)


def test_task_completes_once_and_the_first_write_wins(tmp_path: Path) -> None:
    store = FileTaskStore(tmp_path)
    store.create("task-1", {"prompt": "sum the invoices"})
    assert store.get("task-1").state == "pending"
    done = store.complete("task-1", result={"total": 12})
    assert (done.state, done.result) == ("succeeded", {"total": 12})
    with pytest.raises(TaskAlreadyCompleted, match="first write wins"):
        store.complete("task-1", error="worker crashed")
    assert store.get("task-1").result == {"total": 12}
    with pytest.raises(TaskNotFound):
        store.get("task-2")


def test_racing_completions_have_exactly_one_winner(tmp_path: Path) -> None:
    store = FileTaskStore(tmp_path)
    store.create("task-1", "q")
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        barrier.wait()
        try:
            store.complete("task-1", result=n)
            outcomes.append("won")
        except TaskAlreadyCompleted:
            outcomes.append("lost")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost"] * 7 + ["won"]


def ref(message: str) -> HistoryMessageRef:
    return HistoryMessageRef(workspace_id="ws", session_id="s1", message_id=message, digest=DIGEST)


def new_record(task: str = "t1", owner: str = "host-a") -> TurnRecord:
    return TurnRecord(
        workspace_id="ws",
        session_id="s1",
        task_id=task,
        owner_identity=owner,
        phase=Phase.PREPARED,
        input=ref("m1"),
        created_at=T0,
        updated_at=T0,
    )


def batch(outcome: ToolOutcome, external: bool = False) -> ToolBatchCheckpoint:
    child = ExternalChildRef.create("child-task", "exec-1", "child-s", b'{"agent":"reviewer"}') if external else None
    result = ref("m3") if outcome is ToolOutcome.CONFIRMED else None
    call = ToolCheckpoint(
        invocation_id="c1", name="spawn", args_digest=DIGEST, outcome=outcome, external=child, result=result
    )
    return ToolBatchCheckpoint(assistant=ref("m2"), calls=[call])


STORES: dict[str, Callable[[Path], TurnStore]] = {
    "file": lambda path: FileStore(path, now=lambda: T0),
    "cas": lambda path: CASStore(MemoryBlobStore(), now=lambda: T0),
}


@pytest.mark.parametrize("kind", sorted(STORES))
def test_turn_store_contract(kind: str, tmp_path: Path) -> None:
    store = STORES[kind](tmp_path)
    created = store.create(new_record())
    assert created.revision == 1
    with pytest.raises(JournalError):
        store.create(new_record())
    waiting = store.update(
        created.with_changes(phase=Phase.WAITING_EXTERNAL_CHILD, tool_batch=batch(ToolOutcome.ADMITTED, True)), 1
    )
    assert waiting.revision == 2 and store.get("ws", "t1") == waiting
    with pytest.raises(RevisionConflict):
        store.update(waiting.with_changes(phase=Phase.CHILD_RESOLVED), 1)
    store.create(new_record("t2"))
    store.create(new_record("t3", owner="host-b"))
    assert sorted(r.task_id for r in store.list_active("host-a")) == ["t1", "t2"]
    completing = store.update(waiting.with_changes(phase=Phase.COMPLETING, tool_batch=batch(ToolOutcome.CONFIRMED)), 2)
    assert completing.pending_terminal() and completing.acknowledged_phase() is Phase.COMPLETED
    done = store.update(completing.with_changes(phase=Phase.COMPLETED, completed_at=T0), 3)
    assert done.terminal() and [r.task_id for r in store.list_active("host-a")] == ["t2"]
    with pytest.raises(TaskNotFound):
        store.get("ws", "missing")


@pytest.mark.parametrize("kind", sorted(STORES))
def test_exactly_one_concurrent_writer_advances_a_revision(kind: str, tmp_path: Path) -> None:
    store = STORES[kind](tmp_path)
    created = store.create(new_record())
    wins: list[int] = []
    barrier = threading.Barrier(6)

    def writer(iteration: int) -> None:
        barrier.wait()
        try:
            store.update(created.with_changes(iteration=iteration), 1)
            wins.append(iteration)
        except RevisionConflict:
            pass

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1 and store.get("ws", "t1").iteration == wins[0]


def test_validation_rules() -> None:
    with pytest.raises(InvalidTurnRecord, match="tool batch"):
        new_record().with_changes(phase=Phase.TOOL_PENDING).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="failure_reason"):
        new_record().with_changes(phase=Phase.FAILING).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="completed_at"):
        new_record().with_changes(phase=Phase.COMPLETED).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="confirmed"):
        new_record().with_changes(phase=Phase.TOOL_PENDING, tool_batch=batch(ToolOutcome.REQUESTED)).with_changes(
            tool_batch=ToolBatchCheckpoint(
                assistant=ref("m2"),
                calls=[
                    ToolCheckpoint(
                        invocation_id="c1", name="x", args_digest=DIGEST, outcome=ToolOutcome.UNCERTAIN, result=ref("m")
                    )
                ],
            )
        ).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="not JSON"):
        ExternalChildRef.create("t", "e", "s", b"{nope")
    child = ExternalChildRef.create("t", "e", "s", b'{"a":1}')
    assert child.descriptor_digest == hashlib.sha256(b'{"a":1}').hexdigest()
    assert TurnRecord.from_bytes(new_record().to_bytes()) == new_record()
