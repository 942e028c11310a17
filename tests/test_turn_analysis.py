"""Turn-checkpoint analysis: one test per finding kind on a store that triggers exactly it (over every store kind
the finding applies to), the tables and their schemas, the ``turns`` command, the audit with task and turn
stores (result and Parquet), and the TurnCheckpoints widget."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from journaltools.cli import main
from journaltools.errors import JournalError
from journaltools.protocol.findings import FINDING_SEVERITY
from journaltools.turnjournal import CASStore, FileStore, MemoryBlobStore, Phase, ToolOutcome, TurnStore
from journaltools.turnjournal.analysis import (
    TURN_FINDINGS_SCHEMA,
    TURN_RECORDS_SCHEMA,
    TURN_TOOL_CALLS_SCHEMA,
    TurnAudit,
    audit_turns,
    parse_duration,
)
from journaltools.turnjournal.kv import NatsBlobStore, open_nats_turn_store
from journaltools.turnjournal.stores import CasBlobs
from journaltools.widgets.turns import TurnCheckpointsModel
from tests.turn_builders import Clock, call, in_phase, new_record

#: Turn-store codes; ``turn_without_claim`` is the journal fold's (a new turn after a terminal), not the store's.
TURN_CODES = sorted(code for code in FINDING_SEVERITY if code.startswith("turn_") and code != "turn_without_claim")


def codes(audit: TurnAudit) -> list[str]:
    return [finding.code for finding in audit.turn_findings]


@pytest.fixture
def clock() -> Clock:
    return Clock()


StoreMaker = Callable[[CasBlobs | None], TurnStore]


def _maker(kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[StoreMaker]:
    """Makes the store under test; CAS kinds accept a wrapper around their blobs (to simulate crashes)."""
    opened: list[TurnStore] = []

    def make(wrap: Callable[[CasBlobs], CasBlobs] | None = None) -> TurnStore:
        if kind == "file":
            store: TurnStore = FileStore(tmp_path / "turns", now=clock)
        elif kind == "memory":
            blobs: CasBlobs = MemoryBlobStore()
            store = CASStore(wrap(blobs) if wrap else blobs, now=clock)
        else:
            nats = open_nats_turn_store(request.getfixturevalue("bucket_url"), create=True, now=clock)
            assert isinstance(nats.blobs, NatsBlobStore)
            store = CASStore(wrap(nats.blobs) if wrap else nats.blobs, now=clock)
        opened.append(store)
        return store

    yield make  # type: ignore[misc]  # the wrapper parameter is optional
    for store in opened:
        store.close()


@pytest.fixture(params=["file", "memory", "nats"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[StoreMaker]:
    """Every store kind."""
    yield from _maker(request.param, request, tmp_path, clock)


@pytest.fixture(params=["memory", "nats"])
def make_cas_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[StoreMaker]:
    """The stores that keep an owner index (the file store has none, so index findings cannot arise there)."""
    yield from _maker(request.param, request, tmp_path, clock)


class CrashBeforeRecordWrite:
    """Blobs whose record writes fail as if the process died after the index write (a crashed ``create``)."""

    def __init__(self, inner: CasBlobs) -> None:
        self.inner = inner
        self.url = inner.url

    def get(self, key: str) -> tuple[bytes, int] | None:
        return self.inner.get(key)

    def put(self, key: str, data: bytes, expected_version: int) -> int | None:
        if ".records." in key:
            raise OSError("the process died here")
        return self.inner.put(key, data, expected_version)

    def keys(self, prefix: str) -> list[str]:
        return self.inner.keys(prefix)

    def get_many(self, keys: list[str]) -> dict[str, tuple[bytes, int]]:
        return self.inner.get_many(keys)

    def close(self) -> None:
        self.inner.close()


def index_key(store: CASStore) -> str:
    (key,) = store.blobs.keys(f"{store.prefix}.owners.")
    return key


# -- one test per finding kind --------------------------------------------------------------------------


def test_a_healthy_store_has_no_findings(make_store: StoreMaker, clock: Clock) -> None:
    store = make_store()
    store.create(new_record("prepared"))
    waiting = store.create(new_record("waiting"))
    store.update(in_phase(waiting, Phase.WAITING_EXTERNAL_CHILD, call("c1", ToolOutcome.ADMITTED, external=True)), 1)
    done = store.create(new_record("done"))
    store.update(in_phase(done, Phase.COMPLETED, call("c1", ToolOutcome.REQUESTED)), 1)  # over: calls do not matter
    completing = store.create(new_record("completing"))
    store.update(in_phase(completing, Phase.COMPLETING, call("c1", ToolOutcome.UNCERTAIN)), 1)
    clock.advance(minutes=59)
    audit = audit_turns(store, now=clock())
    assert audit.turn_findings == [] and audit.records.num_rows == 4


def test_turn_call_requested(make_store: StoreMaker, clock: Clock) -> None:
    store = make_store()
    created = store.create(new_record())
    store.update(
        in_phase(
            created,
            Phase.TOOL_PENDING,
            call("c1", ToolOutcome.CONFIRMED),
            call("c2", ToolOutcome.REQUESTED, name="deploy"),
        ),
        1,
    )
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_call_requested"]
    (finding,) = audit.turn_findings
    assert (finding.workspace_id, finding.task_id, finding.revision, finding.severity) == ("ws", "t1", 2, "warning")
    assert "'c2' (deploy) is requested" in finding.message and "never replayed automatically" in finding.message


def test_turn_call_uncertain(make_store: StoreMaker, clock: Clock) -> None:
    store = make_store()
    created = store.create(new_record())
    store.update(in_phase(created, Phase.CHILD_RESOLVED, call("c1", ToolOutcome.UNCERTAIN)), 1)
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_call_uncertain"]
    assert "'c1' (tool) is uncertain in phase child_resolved" in audit.turn_findings[0].message


def test_turn_stuck(make_store: StoreMaker, clock: Clock) -> None:
    store = make_store()
    store.create(new_record())
    clock.advance(hours=3)
    audit = audit_turns(store, now=clock(), stuck_after=timedelta(hours=2))
    assert codes(audit) == ["turn_stuck"]
    assert "in phase prepared for 3.0h (threshold 2.0h), owner 'host-a'" in audit.turn_findings[0].message
    assert audit_turns(store, now=clock(), stuck_after=timedelta(hours=4)).turn_findings == []


def test_turn_unacknowledged(make_store: StoreMaker, clock: Clock) -> None:
    store = make_store()
    created = store.create(new_record())
    store.update(in_phase(created, Phase.FAILING), 1)
    clock.advance(minutes=90)
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_unacknowledged"]
    assert "never acknowledged failed" in audit.turn_findings[0].message


def test_turn_index_orphan(make_cas_store: StoreMaker, clock: Clock) -> None:
    crashing = make_cas_store(CrashBeforeRecordWrite)
    with pytest.raises(OSError, match="died"):
        crashing.create(new_record("crashed"))
    audit = audit_turns(crashing, now=clock())
    assert codes(audit) == ["turn_index_orphan"]
    assert "'crashed': indexed for owner 'host-a' but no record" in audit.turn_findings[0].message
    assert crashing.list_active("host-a") == []  # recovery skips it


def test_turn_index_missing(make_cas_store: StoreMaker, clock: Clock) -> None:
    store = make_cas_store()
    assert isinstance(store, CASStore)
    store.create(new_record())
    key = index_key(store)
    stored = store.blobs.get(key)
    assert stored is not None
    assert store.blobs.put(key, json.dumps({"owner": "host-a", "entries": []}).encode(), stored[1]) is not None
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_index_missing"]
    assert audit.turn_findings[0].severity == "error" and store.list_active("host-a") == []
    assert audit.records.column("indexed").to_pylist() == [False]


def test_turn_index_invalid(make_cas_store: StoreMaker, clock: Clock) -> None:
    store = make_cas_store()
    assert isinstance(store, CASStore)
    store.create(new_record())
    key = index_key(store)
    stored = store.blobs.get(key)
    assert stored is not None and store.blobs.put(key, b"not json", stored[1]) is not None
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_index_invalid"]  # not also "missing" for the owner's records: one cause
    with pytest.raises(JournalError, match="does not parse"):
        store.list_active("host-a")


def test_turn_record_invalid(make_store: StoreMaker, clock: Clock, tmp_path: Path) -> None:
    store = make_store()
    created = store.create(new_record())
    if isinstance(store, FileStore):
        (path,) = (tmp_path / "turns").glob("*.json")
        path.write_bytes(b'{"phase": "prepared"}')
    else:
        assert isinstance(store, CASStore)
        (key,) = store.blobs.keys(f"{store.prefix}.records.")
        stored = store.blobs.get(key)
        assert stored is not None
        assert store.blobs.put(key, created.to_bytes().replace(b'"host-a"', b"42"), stored[1]) is not None
    audit = audit_turns(store, now=clock())
    assert codes(audit) == ["turn_record_invalid"]  # and its index entry is not an orphan: one cause
    assert "is not a turn record" in audit.turn_findings[0].message
    assert audit.records.column("valid").to_pylist() == [False]


def test_every_turn_code_has_a_test_and_a_severity() -> None:
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_turn_")}
    assert tested == set(TURN_CODES)
    assert {FINDING_SEVERITY[code] for code in TURN_CODES} <= {"error", "warning"}


# -- the tables -------------------------------------------------------------------------------------------


def test_tables_have_their_schemas_and_one_row_per_record_and_call(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    first = store.create(new_record("a"))
    store.update(
        in_phase(
            first,
            Phase.CHILD_RESOLVED,
            call("done", ToolOutcome.CONFIRMED),
            call("child", ToolOutcome.ADMITTED, external=True),
            call("maybe", ToolOutcome.REQUESTED),
        ),
        1,
    )
    store.create(new_record("b", owner="host-b"))
    clock.advance(seconds=30)
    audit = audit_turns(store, now=clock())
    assert audit.records.schema == TURN_RECORDS_SCHEMA and audit.tool_calls.schema == TURN_TOOL_CALLS_SCHEMA
    assert audit.findings_table().schema == TURN_FINDINGS_SCHEMA
    rows = {row["task_id"]: row for row in audit.records.to_pylist()}
    assert rows["a"]["phase"] == "child_resolved" and rows["a"]["revision"] == 2 and rows["a"]["resumable"]
    assert rows["a"]["needs_operator"] and rows["a"]["calls_requested"] == 1 and rows["a"]["tool_calls"] == 3
    assert rows["b"]["age_s"] == 30.0 and rows["b"]["indexed"] and not rows["b"]["needs_operator"]
    assert rows["a"]["updated_at"] == clock() - timedelta(seconds=30)
    calls = audit.tool_calls.to_pylist()
    assert [(c["position"], c["invocation_id"], c["decision"]) for c in calls] == [
        (0, "done", "skip"),
        (1, "child", "replay"),
        (2, "maybe", "ask_operator"),
    ]
    assert calls[1]["external_execution_id"] == "exec-child" and calls[0]["result_message_id"] == "result-done"
    frames = audit.to_pandas()
    assert str(frames["records"]["revision"].dtype) == "int64[pyarrow]"
    assert audit.findings[0].source == "memory" and audit.findings[0].run is None


def test_durations() -> None:
    assert parse_duration("90") == timedelta(seconds=90)
    assert parse_duration("30m") == timedelta(minutes=30)
    assert parse_duration("1.5h") == timedelta(hours=1.5)
    assert parse_duration("2d") == timedelta(days=2)
    for bad in ["", "m", "5 weeks", "-1h"]:
        with pytest.raises(JournalError, match="duration"):
            parse_duration(bad)


# -- the command line and the audit -------------------------------------------------------------------


def stuck_file_store(root: Path) -> FileStore:
    """A file store whose records are far in the past: one stuck, one with a requested call, one done."""
    store = FileStore(root, now=Clock())
    store.create(new_record("stuck"))
    pending = store.create(new_record("task-1"))
    store.update(in_phase(pending, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED)), 1)
    done = store.create(new_record("done"))
    store.update(in_phase(done, Phase.COMPLETED), 1)
    return store


def test_the_turns_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stuck_file_store(tmp_path / "turns")
    assert main(["turns", str(tmp_path / "turns"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["records"], document["active"], document["tool_calls"]) == (3, 2, 1)
    assert sorted((f["task_id"], f["code"]) for f in document["findings"]) == [
        ("stuck", "turn_stuck"),
        ("task-1", "turn_call_requested"),
        ("task-1", "turn_stuck"),
    ]
    assert set(document["findings"][0]) == {"workspace_id", "task_id", "revision", "code", "severity", "message"}
    assert main(["turns", str(tmp_path / "turns")]) == 0
    captured = capsys.readouterr()
    assert "turn_call_requested" in captured.out and "3 records (2 active), 1 tool calls, 3 findings" in captured.err
    assert main(["turns", str(tmp_path / "turns"), "--fail-on", "warning"]) == 1
    assert main(["turns", str(tmp_path / "turns"), "--fail-on", "error"]) == 0
    capsys.readouterr()
    assert main(["turns", str(tmp_path / "nowhere")]) == 1
    assert "does not exist" in capsys.readouterr().err
    for bad_usage in ["nats://user:secret@localhost:99999/TURNS", "nats://localhost:4222/no.dots", "s3://b/t", ""]:
        assert main(["turns", bad_usage]) == 2, bad_usage
        assert "secret" not in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["turns", str(tmp_path / "turns"), "--stuck-after", "soon"])
    assert usage.value.code == 2


def test_the_widget_lists_records_needing_attention_first_next_to_their_runs(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    store.create(new_record("fine"))
    hostile = store.create(new_record("<script>alert(1)</script>", owner="<b>owner</b>"))
    store.update(in_phase(hostile, Phase.TOOL_PENDING, call("c1", ToolOutcome.UNCERTAIN, name="<img src=x>")), 1)
    runs = [
        {"run": "run-1", "status": "open", "task": "<script>alert(1)</script>"},
        {"run": "run-2", "status": "completed", "task": "fine"},
        {"run": "run-3", "status": "failed", "task": None},
    ]
    model = TurnCheckpointsModel.from_audit(audit_turns(store, now=clock()), runs)
    rows = model.visible()
    assert [row.task_id for row in rows] == ["<script>alert(1)</script>", "fine"]
    assert [run.run for run in rows[0].runs] == ["run-1"] and [run.run for run in rows[1].runs] == ["run-2"]
    assert [f.code for f in rows[0].findings] == ["turn_call_uncertain"]
    assert [row.task_id for row in model.with_filter(attention_only=True).visible()] == ["<script>alert(1)</script>"]
    assert model.with_filter(codes=["turn_stuck"]).visible() == []
    assert model.summary() == {"records": 2, "needs_attention": 1, "error": 0, "warning": 1, "info": 0}
    html = model.to_html()
    assert "<script>" not in html and "<img" not in html and "<b>owner" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "turn_call_uncertain" in html


def test_the_widget_view_builds_and_filters(tmp_path: Path) -> None:
    from journaltools.widgets.turns import TurnCheckpoints

    stuck_file_store(tmp_path / "turns")
    view = TurnCheckpoints.from_store(str(tmp_path / "turns"))
    assert "turn_stuck" in view.table.value and view.model.code_choices == ["turn_call_requested", "turn_stuck"]
    view.code_box.value = ("turn_call_requested",)
    assert "task-1" in view.table.value and ">stuck<" not in view.table.value
    with_loose = TurnCheckpointsModel.from_audit(audit_turns(CrashStore.make()))
    assert [f.code for f in with_loose.loose] == ["turn_index_orphan"] and "turn_index_orphan" in with_loose.to_html()


class CrashStore:
    @staticmethod
    def make() -> CASStore:
        store = CASStore(CrashBeforeRecordWrite(MemoryBlobStore()))
        with pytest.raises(OSError):
            store.create(new_record("crashed"))
        return store
