"""The one turn-store suite (tests/turn_store_contract.py) over the file store, the CAS store in memory and the
CAS store on JetStream key-value; the URL registry; record validation; what recovery may resume; and writers in
separate processes contending for one NATS bucket."""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from journaltools.embedded import EmbeddedServer
from journaltools.errors import JournalError, SourceError
from journaltools.stores import open_turn_store
from journaltools.turnjournal import (
    CASStore,
    ExternalChildRef,
    FileStore,
    MemoryBlobStore,
    Phase,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    ToolOutcome,
    TurnRecord,
    TurnStore,
)
from journaltools.turnjournal.kv import open_nats_turn_store
from journaltools.turnjournal.records import InvalidTurnRecord
from journaltools.turnjournal.recovery import CallDecision, TurnNotResumable, plan_resume, require_resumable
from tests import store_workers
from tests.turn_builders import DIGEST, Clock, call, in_phase, new_record, ref
from tests.turn_store_contract import TurnStoreContract, index_is_consistent


@pytest.fixture
def clock() -> Clock:
    return Clock()


class TestFileStore(TurnStoreContract):
    indexed = False

    @pytest.fixture
    def store(self, tmp_path: Path, clock: Clock) -> Iterator[TurnStore]:
        with FileStore(tmp_path / "turns", now=clock) as store:
            yield store

    @pytest.fixture
    def another(self, tmp_path: Path, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: FileStore(tmp_path / "turns", now=clock)


class TestMemoryCASStore(TurnStoreContract):
    indexed = True

    @pytest.fixture
    def blobs(self) -> MemoryBlobStore:
        return MemoryBlobStore()

    @pytest.fixture
    def store(self, blobs: MemoryBlobStore, clock: Clock) -> TurnStore:
        return CASStore(blobs, now=clock)

    @pytest.fixture
    def another(self, blobs: MemoryBlobStore, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: CASStore(blobs, now=clock)


class TestNatsCASStore(TurnStoreContract):
    indexed = True

    @pytest.fixture
    def store(self, bucket_url: str, clock: Clock) -> Iterator[TurnStore]:
        with open_nats_turn_store(bucket_url, create=True, now=clock) as store:
            yield store

    @pytest.fixture
    def another(self, bucket_url: str, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: open_nats_turn_store(bucket_url, now=clock)


# -- the registry -------------------------------------------------------------------------------------


def test_the_registry_opens_every_kind(tmp_path: Path, bucket_url: str) -> None:
    assert isinstance(open_turn_store(tmp_path / "turns", create=True), FileStore)
    assert isinstance(open_turn_store(f"file://{tmp_path}/turns"), FileStore)
    with open_turn_store(f"{bucket_url}?prefix=agents.prod", create=True) as store:
        assert isinstance(store, CASStore) and store.prefix == "agents.prod"
        store.create(new_record())
    with open_turn_store(f"{bucket_url}?prefix=agents.prod") as again:
        assert again.get("ws", "t1").revision == 1
    fresh = open_turn_store("memory")
    fresh.create(new_record())
    assert open_turn_store("memory").list_active("host-a") == []  # every "memory" is a new store
    named = open_turn_store("memory:shared-by-name", create=True)
    named.create(new_record())
    assert open_turn_store("memory:shared-by-name").get("ws", "t1").revision == 1


def test_the_registry_refuses_what_is_not_a_turn_store(tmp_path: Path, nats_server: EmbeddedServer) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        open_turn_store(tmp_path / "missing")
    with pytest.raises(SourceError, match="no turn store of that name"):
        open_turn_store("memory:never-made")
    with pytest.raises(SourceError, match="not a turn store URL"):
        open_turn_store("s3://bucket/turns")
    with pytest.raises(SourceError, match="bucket 'NOPE' does not exist"):
        open_turn_store(f"{nats_server.url}/NOPE")
    with pytest.raises(JournalError, match="key prefix"):
        open_turn_store(f"{nats_server.url}/TURNS?prefix=a..b", create=True)


def test_an_unreadable_record_is_a_journaltools_error_naming_the_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.create(new_record())
    (path,) = tmp_path.glob("*.json")
    path.write_bytes(b'{"phase": "prepared"}')
    with pytest.raises(InvalidTurnRecord, match=path.name):
        store.get("ws", "t1")
    with pytest.raises(InvalidTurnRecord):
        store.list_active("host-a")
    assert store.scan().records[0].problem is not None


# -- records ------------------------------------------------------------------------------------------


def test_validation_rules() -> None:
    with pytest.raises(InvalidTurnRecord, match="tool batch"):
        new_record().with_changes(phase=Phase.TOOL_PENDING).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="failure_reason"):
        new_record().with_changes(phase=Phase.FAILING).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="completed_at"):
        new_record().with_changes(phase=Phase.COMPLETED).validate_rules()
    uncertain_with_result = ToolCheckpoint(
        invocation_id="c1", name="x", args_digest=DIGEST, outcome=ToolOutcome.UNCERTAIN, result=ref("m")
    )
    with pytest.raises(InvalidTurnRecord, match="confirmed"):
        new_record().with_changes(
            phase=Phase.TOOL_PENDING, tool_batch=ToolBatchCheckpoint(assistant=ref("m2"), calls=[uncertain_with_result])
        ).validate_rules()
    requested_with_child = call("c1", ToolOutcome.ADMITTED, external=True).model_copy(
        update={"outcome": ToolOutcome.REQUESTED}
    )
    with pytest.raises(InvalidTurnRecord, match="never admitted"):
        in_phase(new_record(), Phase.TOOL_PENDING, requested_with_child).validate_rules()
    with pytest.raises(InvalidTurnRecord, match="not JSON"):
        ExternalChildRef.create("t", "e", "s", b"{nope")
    child = ExternalChildRef.create("t", "e", "s", b'{"a":1}')
    assert child.descriptor_digest == hashlib.sha256(b'{"a":1}').hexdigest()
    assert TurnRecord.from_bytes(new_record().to_bytes()) == new_record()


# -- what recovery may resume -------------------------------------------------------------------------


@pytest.mark.parametrize("phase", sorted(Phase))
def test_only_the_phases_the_seed_names_may_resume(phase: Phase) -> None:
    calls = [call("c1", ToolOutcome.ADMITTED, external=True)] if phase is Phase.WAITING_EXTERNAL_CHILD else []
    if phase in (Phase.TOOL_PENDING, Phase.CHILD_RESOLVED):
        calls = [call("c1", ToolOutcome.CONFIRMED)]
    record = in_phase(new_record(), phase, *calls)
    record.validate_rules()
    plan = plan_resume(record)
    may_resume = phase in (Phase.WAITING_EXTERNAL_CHILD, Phase.CHILD_RESOLVED)
    assert plan.resumable is may_resume and plan.automatic is may_resume
    if may_resume:
        assert require_resumable(record) == plan
    else:
        with pytest.raises(TurnNotResumable, match=str(phase)) as refused:
            require_resumable(record)
        assert refused.value.plan == plan
    if record.pending_terminal():
        assert "acknowledgement" in plan.why and str(record.acknowledged_phase()) in plan.why


def test_requested_and_uncertain_calls_are_never_replayed_automatically() -> None:
    record = in_phase(
        new_record(),
        Phase.CHILD_RESOLVED,
        call("done", ToolOutcome.CONFIRMED),
        call("child", ToolOutcome.ADMITTED, external=True),
        call("maybe", ToolOutcome.REQUESTED),
        call("unknown", ToolOutcome.UNCERTAIN),
    )
    plan = plan_resume(record)
    assert [(c.invocation_id, c.decision) for c in plan.calls] == [
        ("done", CallDecision.SKIP),
        ("child", CallDecision.REPLAY),
        ("maybe", CallDecision.ASK_OPERATOR),
        ("unknown", CallDecision.ASK_OPERATOR),
    ]
    assert plan.resumable and not plan.automatic
    with pytest.raises(TurnNotResumable, match="'maybe' \\(requested\\), 'unknown' \\(uncertain\\) need an operator"):
        require_resumable(record)
    in_tool_pending = plan_resume(in_phase(new_record(), Phase.TOOL_PENDING, call("x", ToolOutcome.ADMITTED)))
    assert [c.decision for c in in_tool_pending.calls] == [CallDecision.ASK_OPERATOR]
    completing = plan_resume(in_phase(new_record(), Phase.COMPLETING, call("x", ToolOutcome.UNCERTAIN)))
    assert [c.decision for c in completing.calls] == [CallDecision.SKIP]  # the outcome is durable: no tool runs


# -- writers in separate processes against one bucket -------------------------------------------------


def test_writers_in_separate_processes_keep_one_winner_per_revision_and_the_index_whole(bucket_url: str) -> None:
    """Four processes, six rounds. Each round every process reads the shared record, waits for the others, and
    updates it from the revision it read; each also creates records under two shared owners, races the others to
    create one common task, and completes the records it created the round before. After every round: exactly one
    writer advanced the shared record and created the common task, and the owner index matches the records."""
    processes, rounds = 4, 6
    context = multiprocessing.get_context("spawn")
    start, read, done = (context.Barrier(processes + 1), context.Barrier(processes), context.Barrier(processes + 1))
    with open_nats_turn_store(bucket_url, create=True) as store:
        store.create(new_record("shared", owner="host-shared"))
        workers = store_workers.Workers(
            store_workers.contend_for_turns,
            [(bucket_url, worker, rounds, start, read, done) for worker in range(processes)],
        )
        try:
            for round_number in range(rounds):
                start.wait(store_workers.WORKER_TIMEOUT)
                done.wait(store_workers.WORKER_TIMEOUT)
                shared = store.get("ws", "shared")
                assert shared.revision == round_number + 2, f"round {round_number}: revision {shared.revision}"
                index_is_consistent(store)
                active_a = {r.task_id for r in store.list_active("host-a")}
                assert active_a == {f"r{round_number}-w{w}-{k}" for w in range(processes) for k in range(3)}
                assert len(store.list_active("host-b")) == (round_number + 1) * (processes * 2 + 1)
        finally:
            results = workers.results()
    for round_number in range(rounds):
        updated = [w for w, result in enumerate(results) if result["updated"][round_number]]
        created = [w for w, result in enumerate(results) if result["created_common"][round_number]]
        assert len(updated) == 1 and len(created) == 1, f"round {round_number}: {updated} {created}"
    last_winner = next(w for w, result in enumerate(results) if result["updated"][-1])
    with open_nats_turn_store(bucket_url) as final:
        assert final.get("ws", "shared").iteration == last_winner * 1000 + rounds - 1
