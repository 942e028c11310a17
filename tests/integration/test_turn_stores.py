"""The one turn-store suite (tests/turn_store_contract.py) over the file store, the CAS store on memory, on a
directory and on JetStream key-value; the URL registry; hostile files; what recovery may resume; writers in
separate processes contending for one NATS bucket; and a writer killed mid-update."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from journaltools.audits.turns import audit_turns
from journaltools.errors import CorruptTurnStore, InvalidTurnRecord, SourceError
from journaltools.sources.embedded import EmbeddedServer
from journaltools.stores import open_turn_store
from journaltools.stores.turns import (
    CASStore,
    DirectoryBlobStore,
    FileStore,
    MemoryBlobStore,
    Phase,
    ToolOutcome,
    TurnStore,
    decode_record,
)
from journaltools.stores.turns.kv import open_nats_turn_store
from journaltools.stores.turns.records import validate
from journaltools.stores.turns.recovery import CallDecision, TurnNotResumable, plan_resume, require_resumable
from tests import store_workers
from tests.paths import ROOT
from tests.turn_builders import Clock, call, in_phase, new_record
from tests.turn_store_contract import TurnStoreContract, index_is_consistent


@pytest.fixture
def clock() -> Clock:
    return Clock()


class TestFileStore(TurnStoreContract):
    indexed = False

    @pytest.fixture
    def store(self, tmp_path: Path, clock: Clock) -> Iterator[TurnStore]:
        with FileStore(tmp_path / "state", now=clock) as store:
            yield store

    @pytest.fixture
    def another(self, tmp_path: Path, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: FileStore(tmp_path / "state", now=clock)


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


class TestDirectoryCASStore(TurnStoreContract):
    indexed = True

    @pytest.fixture
    def store(self, tmp_path: Path, clock: Clock) -> TurnStore:
        return CASStore(DirectoryBlobStore(tmp_path / "blobs"), now=clock)

    @pytest.fixture
    def another(self, tmp_path: Path, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: CASStore(DirectoryBlobStore(tmp_path / "blobs"), now=clock)


class TestNatsCASStore(TurnStoreContract):
    indexed = True

    @pytest.fixture
    def store(self, bucket_url: str, clock: Clock) -> Iterator[TurnStore]:
        with open_nats_turn_store(bucket_url, create=True, now=clock) as store:
            yield store

    @pytest.fixture
    def another(self, bucket_url: str, clock: Clock) -> Callable[[], TurnStore]:
        return lambda: open_nats_turn_store(bucket_url, now=clock)


def test_the_registry_opens_every_kind(tmp_path: Path, bucket_url: str) -> None:
    record = new_record()
    for url in (str(tmp_path / "state"), f"blobs:{tmp_path / 'blobs'}?prefix=my/turns", "memory:shared", bucket_url):
        with open_turn_store(url, create=True) as store:
            store.create(record)
        with open_turn_store(url) as store:
            assert store.get("ws", "t1").revision == 1, url
    assert (tmp_path / "blobs" / "my" / "turns" / "index").is_file()
    assert FileStore(tmp_path / "state").path("ws", "t1").is_file()


def test_the_registry_refuses_what_is_not_a_turn_store(tmp_path: Path, nats_server: EmbeddedServer) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        open_turn_store(tmp_path / "missing")
    with pytest.raises(SourceError, match="not a turn store URL"):
        open_turn_store("http://example.com/x")
    with pytest.raises(SourceError, match="no turn store of that name"):
        open_turn_store("memory:never-made")
    with pytest.raises(SourceError, match="unknown parameter"):
        open_turn_store(f"blobs:{tmp_path}?prefx=a", create=True)
    with pytest.raises(SourceError, match="cannot be part of a key-value key"):
        open_turn_store(f"{nats_server.url}/TURNS?prefix=has space", create=True)


def test_a_nats_store_uses_the_runtimes_keys(bucket_url: str) -> None:
    with open_nats_turn_store(bucket_url, create=True) as store:
        store.create(
            new_record("task/??>", workspace="ws-alpha").with_changes(input=new_record(workspace="ws-alpha").input)
        )
        keys = store.blobs.keys("")
    assert keys == [
        "agent-harness/turn-executions/v2/index",
        "agent-harness/turn-executions/v2/workspaces/d3MtYWxwaGE/tasks/dGFzay8_Pz4",
    ]


# -- files that are not records --------------------------------------------------------------------------------


def _plant(store: FileStore, kind: str, elsewhere: Path) -> Path:
    path = store.path("ws", "t1")
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        os.symlink(elsewhere, path)
    else:
        path.mkdir()
    return path


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_a_fifo_link_or_directory_at_a_record_path_is_refused_without_blocking(kind: str, tmp_path: Path) -> None:
    """Never followed, never read, never blocking: get, update, list_active and turns refuse or report it."""
    other = FileStore(tmp_path / "other")
    outside = other.create(new_record())
    target = other.path("ws", "t1")
    store = FileStore(tmp_path / "state")
    _plant(store, kind, target)
    with pytest.raises(CorruptTurnStore if kind != "directory" else (CorruptTurnStore, SourceError)):
        store.get("ws", "t1")
    with pytest.raises(Exception) as refused:
        store.update(outside, 1)
    assert "Traceback" not in str(refused.value)
    assert target.read_bytes() == other.path("ws", "t1").read_bytes()  # the file it points at is untouched
    if kind != "directory":
        with pytest.raises(CorruptTurnStore, match="not a regular file"):
            store.list_active("host-a")
        (finding,) = [f for f in audit_turns(store).turn_findings if f.code == "turn_record_invalid"]
        assert "not a regular file" in finding.message


def test_a_planted_link_at_a_guessable_staging_name_is_never_written_through(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "state")
    created = store.create(new_record())
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    path = store.path("ws", "t1")
    for guess in (f".{path.name}.{os.getpid()}.tmp", f"{path.name}.tmp", f"{path.name}.1.tmp"):
        os.symlink(victim, path.parent / guess)
    store.update(created.with_changes(iteration=1), 1)
    assert victim.read_bytes() == b"precious"
    assert decode_record(path.read_bytes()).iteration == 1


def test_records_are_written_0600_in_the_real_layout(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "state")
    store.create(new_record())
    path = store.path("ws", "t1")
    assert path == tmp_path / "state/turn-executions/workspaces/d3M/tasks/dDE.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_bytes().endswith(b"\n}\n") or path.read_bytes().endswith(b"}\n")
    assert [p.name for p in path.parent.iterdir()] == ["dDE.json"]  # no staging file left


def test_journaltools_never_writes_a_descriptor_the_runtime_cannot_read_back(tmp_path: Path) -> None:
    from journaltools.stores.turns import ExternalChildRef

    store = FileStore(tmp_path / "state")
    created = store.create(new_record())
    pending = store.update(in_phase(created, Phase.PROVIDER_PENDING), 1)
    tool = store.update(in_phase(pending, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED)), 2)
    child = ExternalChildRef.new("t", "e", "cs", b'{"q": "a<b"}')
    admitted = call("c1", ToolOutcome.ADMITTED).__class__("c1", "tool", tool.calls()[0].args_digest, "admitted", child)
    with pytest.raises(InvalidTurnRecord, match="never read it back"):
        store.update(
            tool.with_changes(
                phase="waiting_external_child",
                tool_batch=tool.tool_batch.__class__(tool.tool_batch.assistant, (admitted,)),
            ),
            3,
        )  # type: ignore[union-attr]
    assert store.get("ws", "t1") == tool


# -- recovery ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", sorted(Phase))
def test_only_the_phases_the_runtime_names_may_resume(phase: Phase) -> None:
    calls = {
        Phase.WAITING_EXTERNAL_CHILD: [call("c1", ToolOutcome.ADMITTED, external=True)],
        Phase.CHILD_RESOLVED: [call("c1", ToolOutcome.CONFIRMED, external=True)],
        Phase.TOOL_PENDING: [call("c1", ToolOutcome.REQUESTED)],
    }.get(phase, [])
    record = in_phase(new_record(), phase, *calls).with_changes(
        schema="agent-harness.turn.execution", schema_revision=3, revision=1
    )
    plan = plan_resume(record)
    may_resume = phase in (Phase.WAITING_EXTERNAL_CHILD, Phase.CHILD_RESOLVED)
    assert plan.resumable is may_resume and plan.automatic is may_resume
    if may_resume:
        assert require_resumable(record) == plan
    else:
        with pytest.raises(TurnNotResumable, match=str(phase)):
            require_resumable(record)
    if record.pending_terminal():
        assert "acknowledgement" in plan.why and str(record.acknowledged_phase()) in plan.why


def test_requested_and_uncertain_calls_are_never_replayed_automatically() -> None:
    record = in_phase(
        new_record(),
        Phase.INTERRUPTING,
        call("done", ToolOutcome.CONFIRMED),
        call("unknown", ToolOutcome.UNCERTAIN),
    )
    assert [c.decision for c in plan_resume(record).calls] == [CallDecision.SKIP, CallDecision.SKIP]
    waiting = in_phase(new_record(), Phase.TOOL_PENDING, call("maybe", ToolOutcome.REQUESTED))
    assert [c.decision for c in plan_resume(waiting).calls] == [CallDecision.ASK_OPERATOR]
    child = in_phase(new_record(), Phase.WAITING_EXTERNAL_CHILD, call("child", ToolOutcome.ADMITTED, external=True))
    assert [c.decision for c in plan_resume(child).calls] == [CallDecision.REPLAY]


# -- writers in separate processes, and a writer killed mid-update ----------------------------------------------------


def test_writers_in_separate_processes_keep_one_winner_per_revision_and_the_index_whole(bucket_url: str) -> None:
    """Four processes, four rounds: each reads the shared record, waits for the others and updates it from the
    revision it read, creates records under a shared owner and races the others for one common task. After every
    round exactly one writer advanced the shared record and created the common task, and the index is whole."""
    processes, rounds = 4, 4
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
                assert store.get("ws", "shared").revision == round_number + 2
                index_is_consistent(store)
                assert len(store.list_active("host-b")) == (round_number + 1) * (processes * 2 + 1)
        finally:
            results = workers.results()
    for round_number in range(rounds):
        updated = [w for w, result in enumerate(results) if result["updated"][round_number]]
        created = [w for w, result in enumerate(results) if result["created_common"][round_number]]
        assert len(updated) == 1 and len(created) == 1, f"round {round_number}: {updated} {created}"


@pytest.mark.parametrize("kind", ["file", "blobs"])
def test_a_writer_killed_mid_update_loses_no_acknowledged_update(kind: str, tmp_path: Path) -> None:
    """A writer updates four records in turn and acknowledges each update on its stdout; it is SIGKILLed after
    300 acknowledgements, at whatever instruction it is in. Every record still reads back, at least at the revision
    last acknowledged, and nothing but records (and the CAS index) is left in the store."""
    url = str(tmp_path / "state") if kind == "file" else f"blobs:{tmp_path / 'blobs'}"
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.store_workers", "update-forever", url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    acknowledged: dict[str, int] = {}
    try:
        assert writer.stdout is not None
        for _ in range(300):
            task, revision = writer.stdout.readline().split()
            acknowledged[task] = int(revision)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()
    store = open_turn_store(url)
    for task, revision in acknowledged.items():
        assert store.get("ws", task).revision >= revision
    index_is_consistent(store)
    for record in (stored.record for stored in store.scan().records):
        assert record is not None
        validate(record)
