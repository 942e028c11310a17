"""The turn-store contract, written once: every turnjournal store must pass ``TurnStoreContract``.

Subclass it (with a name starting ``Test``) and provide ``store`` (an empty store whose clock is the ``clock``
fixture) and ``another`` (a callable opening a second handle on the same store, as another writer would).
``indexed`` says whether the store keeps the CAS index that ``scan`` returns.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import InvalidTransition, InvalidTurnRecord, RevisionConflict, TurnAlreadyExists, TurnNotFound
from journaltools.stores.turns import Phase, ToolOutcome, TurnRecord, TurnStore, decode_record, encode_record
from tests.concurrency import run_in_threads
from tests.turn_builders import Clock, call, in_phase, new_record

_ids = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12
).filter(lambda text: text == text.strip() and text.strip() != "" and not text[0].isspace() and not text[-1].isspace())


def index_is_consistent(store: TurnStore) -> None:
    """Every record reads back, every active record is in the index, and every ref names a record of its owner."""
    scan = store.scan()
    assert all(stored.readable for stored in scan.records), [s.problem for s in scan.records]
    if scan.index is None:
        return
    assert scan.index.problem is None
    refs = {(ref.workspace_id, ref.task_id): ref.owner_identity for ref in scan.index.refs}
    for stored in scan.records:
        record = stored.record
        assert record is not None
        if not record.terminal():
            assert refs.get(record.key()) == record.owner_identity, f"{record.key()} missing from the index"


class TurnStoreContract:
    """What every turn store guarantees (the runtime's ``Store``)."""

    indexed: ClassVar[bool]

    def test_create_stamps_schema_revision_one_and_times(self, store: TurnStore, clock: Clock) -> None:
        now = clock.advance(minutes=5)
        created = store.create(new_record().with_changes(failure_reason="dropped"))
        assert (created.revision, created.phase, created.created_at, created.updated_at) == (1, "prepared", now, now)
        assert (created.schema, created.schema_revision, created.failure_reason) == (
            "agent-harness.turn.execution",
            3,
            "",
        )
        assert store.get("ws", "t1") == created

    def test_create_never_replaces_a_record(self, store: TurnStore) -> None:
        store.create(new_record())
        with pytest.raises(TurnAlreadyExists):
            store.create(new_record().with_changes(iteration=7))
        assert store.get("ws", "t1").iteration == 0

    def test_create_needs_revision_zero(self, store: TurnStore) -> None:
        with pytest.raises(InvalidTurnRecord, match="zero revision"):
            store.create(new_record().with_changes(revision=3))

    def test_the_same_task_in_two_workspaces_is_two_records(self, store: TurnStore) -> None:
        store.create(new_record())
        store.create(new_record(workspace="other"))
        assert store.get("other", "t1").workspace_id == "other"

    def test_update_advances_the_revision_by_one(self, store: TurnStore, clock: Clock) -> None:
        created = store.create(new_record())
        later = clock.advance(seconds=30)
        pending = store.update(in_phase(created, Phase.PROVIDER_PENDING), 1)
        assert (pending.revision, pending.created_at, pending.updated_at) == (2, created.created_at, later)
        assert store.get("ws", "t1") == pending

    def test_a_clock_behind_the_record_never_moves_updated_at_back(self, store: TurnStore, clock: Clock) -> None:
        created = store.create(new_record())
        clock.moment = created.updated_at.__class__(created.updated_at.unix_ns - 3_600_000_000_000)
        assert store.update(created.with_changes(iteration=1), 1).updated_at == created.updated_at

    def test_a_stale_revision_is_a_conflict(self, store: TurnStore) -> None:
        created = store.create(new_record())
        store.update(created.with_changes(iteration=1), 1)
        with pytest.raises(RevisionConflict):
            store.update(created.with_changes(iteration=2), 1)
        with pytest.raises(RevisionConflict):
            store.update(created.with_changes(iteration=2, revision=2), 1)  # the record and the argument disagree
        assert store.get("ws", "t1").iteration == 1

    def test_the_owner_never_changes(self, store: TurnStore) -> None:
        created = store.create(new_record())
        with pytest.raises(InvalidTransition, match="identity"):
            store.update(created.with_changes(owner_identity="host-b"), 1)
        assert store.list_active("host-b") == [] and len(store.list_active("host-a")) == 1

    def test_a_terminal_record_is_immutable(self, store: TurnStore) -> None:
        done = store.update(in_phase(store.create(new_record()), Phase.FAILED), 1)
        assert done.completed_at == done.updated_at
        with pytest.raises(InvalidTransition, match="immutable"):
            store.update(done.with_changes(phase="prepared", completed_at=None, failure_reason=""), 2)
        assert store.get("ws", "t1") == done

    def test_invalid_records_are_refused_and_nothing_is_stored(self, store: TurnStore) -> None:
        with pytest.raises(InvalidTurnRecord, match="tool batch"):
            store.create(new_record().with_changes(phase="tool_pending"))
        with pytest.raises(TurnNotFound):
            store.get("ws", "t1")
        created = store.create(new_record())
        with pytest.raises(InvalidTurnRecord, match="reason"):
            store.update(created.with_changes(phase="failing"), 1)
        assert store.get("ws", "t1") == created

    def test_missing_record_is_not_found(self, store: TurnStore) -> None:
        with pytest.raises(TurnNotFound):
            store.get("ws", "missing")
        with pytest.raises(TurnNotFound):
            store.update(new_record("missing").with_changes(revision=1), 1)

    def test_list_active_is_owner_scoped_sorted_and_keeps_the_outbox(self, store: TurnStore) -> None:
        first = store.create(new_record("t1"))
        store.create(new_record("t0"))
        store.create(new_record("t3", owner="host-b"))
        assert [r.task_id for r in store.list_active("host-a")] == ["t0", "t1"]
        pending = store.update(in_phase(first, Phase.PROVIDER_PENDING), 1)
        completing = store.update(in_phase(pending, Phase.COMPLETING), 2)
        assert completing.pending_terminal() and completing.acknowledged_phase() == "completed"
        assert [r.task_id for r in store.list_active("host-a")] == ["t0", "t1"]  # still to acknowledge
        store.update(in_phase(completing, Phase.COMPLETED), 3)
        assert [r.task_id for r in store.list_active("host-a")] == ["t0"]
        assert [r.task_id for r in store.list_active("host-b")] == ["t3"]
        assert store.list_active("nobody") == []
        with pytest.raises(InvalidTurnRecord):
            store.list_active(" padded ")
        index_is_consistent(store)

    def test_scan_returns_every_record(self, store: TurnStore) -> None:
        for task in ["a", "b", "c"]:
            store.create(new_record(task, owner=f"owner-{task}"))
        store.update(in_phase(store.get("ws", "b"), Phase.FAILED), 1)
        scan = store.scan()
        assert sorted(s.record.task_id for s in scan.records if s.record is not None) == ["a", "b", "c"]
        assert all(s.raw is not None and decode_record(s.raw) == s.record for s in scan.records)
        assert (scan.index is not None) == self.indexed
        if scan.index is not None:  # the index only grows: the failed record keeps its ref
            assert [(r.task_id, r.owner_identity) for r in scan.index.refs] == [
                ("a", "owner-a"),
                ("b", "owner-b"),
                ("c", "owner-c"),
            ]
        index_is_consistent(store)

    def test_another_handle_sees_and_conflicts_with_this_one(
        self, store: TurnStore, another: Callable[[], TurnStore]
    ) -> None:
        created = store.create(new_record())
        with another() as second:
            assert second.get("ws", "t1") == created
            second.update(created.with_changes(iteration=1), 1)
            with pytest.raises(RevisionConflict):
                store.update(created.with_changes(iteration=2), 1)
            assert [r.iteration for r in store.list_active("host-a")] == [1]

    def test_exactly_one_of_concurrent_writers_advances_a_revision(
        self, store: TurnStore, another: Callable[[], TurnStore]
    ) -> None:
        created = store.create(new_record())
        handles = [store, another(), another()]
        wins: list[int] = []
        barrier = threading.Barrier(6)

        def writer(n: int) -> None:
            barrier.wait()
            try:
                handles[n % 3].update(created.with_changes(iteration=n), 1)
                wins.append(n)
            except RevisionConflict:
                pass

        run_in_threads(writer, 6)
        for handle in handles[1:]:
            handle.close()
        final = store.get("ws", "t1")
        assert len(wins) == 1 and (final.iteration, final.revision) == (wins[0], 2)

    def test_concurrent_creates_of_many_tasks_keep_the_index_whole(
        self, store: TurnStore, another: Callable[[], TurnStore]
    ) -> None:
        handles = [store, another(), another(), another()]
        barrier = threading.Barrier(4)

        def creator(n: int) -> None:
            barrier.wait()
            for k in range(5):
                handles[n].create(new_record(f"w{n}-{k}", owner="shared-owner"))

        run_in_threads(creator, 4)
        for handle in handles[1:]:
            handle.close()
        assert len(store.list_active("shared-owner")) == 20
        index_is_consistent(store)

    @settings(
        max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors]
    )
    @given(schedule=st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=8))
    def test_a_schedule_of_fresh_and_stale_writers_matches_the_model(
        self, store: TurnStore, schedule: list[tuple[int, bool]]
    ) -> None:
        """Three writers, each holding the revision it last saw; a stale write always conflicts, a current one
        always wins, and the store's revision counts exactly the writes that won."""
        task = f"t-{uuid.uuid4().hex[:10]}"
        seen: list[TurnRecord] = [store.create(new_record(task))] * 3
        current = 1
        for writer, refresh in schedule:
            if refresh:
                seen[writer] = store.get("ws", task)
            held = seen[writer]
            if held.revision == current:
                seen[writer] = store.update(held.with_changes(iteration=current), held.revision)
                current += 1
                assert seen[writer].revision == current
            else:
                with pytest.raises(RevisionConflict):
                    store.update(held.with_changes(iteration=99), held.revision)
        assert store.get("ws", task).revision == current

    @settings(
        max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors]
    )
    @given(
        workspace=_ids,
        task=_ids,
        owner=_ids,
        reason=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(str.strip),
        nanos=st.integers(0, 999_999_999),
        descriptor=st.sampled_from([b'{"n": 1.50e3, "s": "\\u003c"}', b"[ ]", b'"x"', b"null", b"-0"]),
    )
    def test_records_round_trip_byte_for_byte(
        self,
        store: TurnStore,
        clock: Clock,
        workspace: str,
        task: str,
        owner: str,
        reason: str,
        nanos: int,
        descriptor: bytes,
    ) -> None:
        """Any identifiers, any reason text, any nanosecond, any descriptor spelling: what is stored reads back
        equal, and its bytes decode and re-encode to themselves."""
        task = f"{task}-{uuid.uuid4().hex[:6]}"
        clock.moment = clock.moment.__class__(clock.moment.unix_ns - clock.moment.unix_ns % 1_000_000_000 + nanos)
        created = store.create(
            new_record(task, owner=owner, workspace=workspace).with_changes(
                session_id="s1", input=new_record(workspace=workspace).input
            )
        )
        pending = store.update(created.with_changes(phase="provider_pending"), 1)
        child = call("c1", ToolOutcome.REQUESTED)
        tool = store.update(pending.with_changes(phase="tool_pending", tool_batch=_batch(workspace, child)), 2)
        from journaltools.stores.turns import ExternalChildRef

        admitted = child.__class__(
            "c1", "tool", child.args_digest, "admitted", ExternalChildRef.new("t", "e", "cs", descriptor)
        )
        waiting = store.update(
            tool.with_changes(phase="waiting_external_child", tool_batch=_batch(workspace, admitted)), 3
        )
        failing = store.update(waiting.with_changes(phase="interrupting", failure_reason=reason), 4)
        assert encode_record(store.get(workspace, task)) == encode_record(failing)
        for stored in store.scan().records:
            assert stored.raw is not None and stored.readable, stored.problem


def _batch(workspace: str, *calls: object) -> object:
    from journaltools.stores.turns import HistoryMessageRef, ToolBatchCheckpoint
    from tests.turn_builders import DIGEST

    return ToolBatchCheckpoint(HistoryMessageRef(workspace, "s1", "assistant-1", DIGEST), tuple(calls))  # type: ignore[arg-type]
