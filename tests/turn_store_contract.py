"""The turn-store contract, written once: every turnjournal store must pass ``TurnStoreContract``.

Subclass it (with a name starting ``Test``) and provide ``store`` (an empty store whose clock is the ``clock``
fixture) and ``another`` (a callable opening a second handle on the same store, as another writer would).
``indexed`` says whether the store keeps an owner index (the CAS stores) that ``scan`` returns.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import JournalError, TaskNotFound
from journaltools.turnjournal import Phase, RevisionConflict, ToolOutcome, TurnRecord, TurnStore
from journaltools.turnjournal.records import InvalidTurnRecord
from journaltools.turnjournal.stores import TurnRecordExists
from tests.concurrency import run_in_threads
from tests.turn_builders import T0, Clock, call, in_phase, new_record


def index_is_consistent(store: TurnStore) -> None:
    """Every active record is in its owner's index, and every index entry is a record of that owner."""
    scan = store.scan()
    assert all(stored.record is not None for stored in scan.records), [s.problem for s in scan.records]
    records = [stored.record for stored in scan.records if stored.record is not None]
    if scan.indexes is None:
        return
    assert all(index.problem is None for index in scan.indexes)
    indexed = {index.owner_identity: set(index.entries) for index in scan.indexes}
    by_key = {record.key(): record for record in records}
    for record in records:
        if not record.terminal():
            assert record.key() in indexed.get(record.owner_identity, set()), f"{record.key()} missing from the index"
    for owner, entries in indexed.items():
        for entry in entries:
            assert entry in by_key and by_key[entry].owner_identity == owner, f"index entry {entry} has no record"


class TurnStoreContract:
    """What every turn store guarantees (the seed's ``Store``)."""

    indexed: ClassVar[bool]

    def test_create_stamps_revision_one_and_times(self, store: TurnStore, clock: Clock) -> None:
        clock.advance(minutes=5)
        created = store.create(new_record())
        assert (created.revision, created.created_at, created.updated_at) == (1, clock(), clock())
        assert store.get("ws", "t1") == created

    def test_create_never_replaces_a_record(self, store: TurnStore) -> None:
        store.create(new_record())
        with pytest.raises(TurnRecordExists, match="t1"):
            store.create(new_record().with_changes(iteration=7))
        assert store.get("ws", "t1").iteration == 0

    def test_the_same_task_in_two_workspaces_is_two_records(self, store: TurnStore) -> None:
        store.create(new_record())
        store.create(new_record(workspace="other"))
        assert store.get("other", "t1").workspace_id == "other"

    def test_update_advances_the_revision_by_one(self, store: TurnStore, clock: Clock) -> None:
        created = store.create(new_record())
        clock.advance(seconds=30)
        waiting = store.update(
            in_phase(created, Phase.WAITING_EXTERNAL_CHILD, call("c1", ToolOutcome.ADMITTED, external=True)), 1
        )
        assert (waiting.revision, waiting.created_at, waiting.updated_at) == (2, T0, clock())
        assert store.get("ws", "t1") == waiting

    def test_a_stale_revision_is_a_conflict(self, store: TurnStore) -> None:
        created = store.create(new_record())
        store.update(created.with_changes(iteration=1), 1)
        with pytest.raises(RevisionConflict) as conflict:
            store.update(created.with_changes(iteration=2), 1)
        assert (conflict.value.expected, conflict.value.actual) == (1, 2)
        assert store.get("ws", "t1").iteration == 1

    def test_the_owner_never_changes(self, store: TurnStore) -> None:
        created = store.create(new_record())
        with pytest.raises(JournalError, match="never change"):
            store.update(created.with_changes(owner_identity="host-b"), 1)
        assert store.list_active("host-b") == [] and len(store.list_active("host-a")) == 1

    def test_a_terminal_record_is_final(self, store: TurnStore) -> None:
        done = store.update(in_phase(store.create(new_record()), Phase.COMPLETED), 1)
        with pytest.raises(JournalError, match="terminal record is final"):
            store.update(done.with_changes(phase=Phase.PREPARED, completed_at=None), 2)
        assert store.get("ws", "t1") == done

    def test_invalid_records_are_refused_and_nothing_is_stored(self, store: TurnStore) -> None:
        with pytest.raises(InvalidTurnRecord, match="tool batch"):
            store.create(new_record().with_changes(phase=Phase.TOOL_PENDING))
        with pytest.raises(TaskNotFound):
            store.get("ws", "t1")
        created = store.create(new_record())
        with pytest.raises(InvalidTurnRecord, match="failure_reason"):
            store.update(created.with_changes(phase=Phase.FAILING), 1)
        assert store.get("ws", "t1") == created

    def test_missing_record_is_not_found(self, store: TurnStore) -> None:
        with pytest.raises(TaskNotFound, match="missing"):
            store.get("ws", "missing")
        with pytest.raises(TaskNotFound):
            store.update(new_record("missing"), 1)

    def test_list_active_is_owner_scoped_and_skips_terminal_records(self, store: TurnStore) -> None:
        first = store.create(new_record("t1"))
        store.create(new_record("t2"))
        store.create(new_record("t3", owner="host-b"))
        assert sorted(r.task_id for r in store.list_active("host-a")) == ["t1", "t2"]
        completing = store.update(in_phase(first, Phase.COMPLETING, call("c1", ToolOutcome.CONFIRMED)), 1)
        assert completing.pending_terminal() and completing.acknowledged_phase() is Phase.COMPLETED
        assert sorted(r.task_id for r in store.list_active("host-a")) == ["t1", "t2"]  # still to acknowledge
        store.update(in_phase(completing, Phase.COMPLETED), 2)
        assert [r.task_id for r in store.list_active("host-a")] == ["t2"]
        assert [r.task_id for r in store.list_active("host-b")] == ["t3"]
        assert store.list_active("nobody") == []
        index_is_consistent(store)

    def test_scan_returns_every_record(self, store: TurnStore) -> None:
        for task in ["a", "b", "c"]:
            store.create(new_record(task, owner=f"owner-{task}"))
        store.update(in_phase(store.get("ws", "b"), Phase.FAILED), 1)
        scan = store.scan()
        assert sorted(s.record.task_id for s in scan.records if s.record is not None) == ["a", "b", "c"]
        assert all(s.raw == s.record.to_bytes() for s in scan.records if s.record is not None)
        assert (scan.indexes is not None) == self.indexed
        if scan.indexes is not None:
            assert sorted(index.owner_identity or "" for index in scan.indexes) == ["owner-a", "owner-b", "owner-c"]
            assert {e for index in scan.indexes for e in index.entries} == {("ws", "a"), ("ws", "c")}  # b is done
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

    # One body shared by every backend's subclass (so "differing executors"); every example uses fresh task ids.
    @settings(
        max_examples=20,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(schedule=st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=8))
    def test_a_schedule_of_fresh_and_stale_writers_matches_the_model(
        self, store: TurnStore, schedule: list[tuple[int, bool]]
    ) -> None:
        """Three writers, each holding the revision it last saw; a write with a stale revision always conflicts,
        a current one always wins, and the store's revision counts exactly the writes that won."""
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
