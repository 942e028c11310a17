"""Turn-checkpoint analysis: one test per finding kind on a store that triggers it, the real corpus analysed, the
tables and their schemas, the ``turns`` command, the audit with task and turn stores (result and Parquet), and the
TurnCheckpoints widget."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from journaltools.audits.sources import audit_sources
from journaltools.audits.turns import (
    TURN_FINDING_SEVERITY,
    TURN_FINDINGS_SCHEMA,
    TURN_RECORDS_SCHEMA,
    TURN_TOOL_CALLS_SCHEMA,
    TurnAudit,
    audit_turns,
    parse_duration,
)
from journaltools.cli import main
from journaltools.errors import JournalError
from journaltools.samples.builder import text
from journaltools.stores.turns import CASStore, FileStore, MemoryBlobStore, Phase, ToolOutcome
from journaltools.stores.turns.codec import IndexRef, encode_index
from journaltools.widgets.turns import TurnCheckpointsModel
from tests.builders import journal
from tests.task_store_contract import request, result
from tests.turn_builders import Clock, call, in_phase, new_record
from tests.turn_corpus import FILE_STORE, cas_blobs

TESTED: set[str] = set()


def codes(audit: TurnAudit) -> list[str]:
    found = [finding.code for finding in audit.turn_findings]
    TESTED.update(found)
    return found


def test_a_fresh_store_has_only_what_is_waiting(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    store.create(new_record("fine"))
    assert codes(audit_turns(store, now=clock().to_datetime())) == []


def test_calls_requested_and_uncertain(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    pending = store.update(in_phase(store.create(new_record()), Phase.PROVIDER_PENDING), 1)
    store.update(in_phase(pending, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED)), 2)
    assert codes(audit_turns(store, now=clock().to_datetime())) == ["turn_call_requested"]
    other = CASStore(MemoryBlobStore(), now=clock)
    record = other.create(new_record())
    record = other.update(in_phase(record, Phase.PROVIDER_PENDING), 1)
    record = other.update(in_phase(record, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED)), 2)
    other.update(in_phase(record, Phase.INTERRUPTING, call("c1", ToolOutcome.UNCERTAIN)), 3)
    # At the outbox boundary the outcome is durable: the uncertain call no longer needs an operator.
    assert codes(audit_turns(other, now=clock().to_datetime())) == ["turn_outbox_pending"]


def test_stuck_and_unacknowledged_after_the_threshold(clock: Clock) -> None:
    store = FileStore(Path("/nonexistent"), now=clock)
    del store
    memory = CASStore(MemoryBlobStore(), now=clock)
    memory.create(new_record("stuck"))
    waiting = memory.update(in_phase(memory.create(new_record("outbox")), Phase.PROVIDER_PENDING), 1)
    memory.update(in_phase(waiting, Phase.COMPLETING), 2)
    later = clock().to_datetime() + timedelta(hours=2)
    assert sorted(codes(audit_turns(memory, now=later))) == ["turn_stuck", "turn_unacknowledged"]
    assert codes(audit_turns(memory, now=later, stuck_after=timedelta(hours=3))) == ["turn_outbox_pending"]


def test_index_findings(clock: Clock) -> None:
    blobs = MemoryBlobStore()
    store = CASStore(blobs, now=clock)
    store.create(new_record("indexed"))
    index = blobs.read(store.index_key)
    assert index is not None
    refs = [IndexRef("ws", "ghost", "host-a"), IndexRef("ws", "indexed", "host-a")]
    blobs.compare_and_swap(store.index_key, index, encode_index(refs))
    now = clock().to_datetime()
    assert codes(audit_turns(store, now=now)) == ["turn_index_orphan"]
    stored = blobs.read(store.key("ws", "indexed"))
    assert stored is not None
    blobs.create(store.key("ws", "unindexed"), stored.replace(b'"indexed"', b'"unindexed"'))
    assert sorted(codes(audit_turns(store, now=now))) == ["turn_index_missing", "turn_index_orphan"]
    blobs.compare_and_swap(store.index_key, encode_index(refs), encode_index([IndexRef("ws", "indexed", "host-b")]))
    assert "turn_index_invalid" in codes(audit_turns(store))
    blobs.compare_and_swap(store.index_key, encode_index([IndexRef("ws", "indexed", "host-b")]), b"null")
    (invalid,) = [f for f in audit_turns(store, now=now).turn_findings if f.code == "turn_index_invalid"]
    assert "schema is unsupported" in invalid.message


def test_an_unreadable_record_is_a_finding_naming_it(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.create(new_record())
    store.path("ws", "t1").write_bytes(b'{"schema_revision": 3, "surprise": 1}')
    audit = audit_turns(store)
    assert codes(audit) == ["turn_record_invalid"]
    assert (
        "unknown field 'surprise'" in audit.turn_findings[0].message
        and "d3M/tasks/dDE.json" in audit.turn_findings[0].message
    )
    assert audit.records.column("valid").to_pylist() == [False]


def test_every_turn_code_is_tested_and_has_a_severity() -> None:
    expected = {"turn_call_requested", "turn_outbox_pending", "turn_stuck", "turn_unacknowledged", "turn_index_orphan"}
    expected |= {"turn_index_missing", "turn_index_invalid", "turn_record_invalid"}
    assert set(TURN_FINDING_SEVERITY) == expected | {"turn_call_uncertain"}
    assert TURN_FINDING_SEVERITY["turn_index_orphan"] == "info"


def test_the_real_state_directory_and_cas_dump_are_analysed_alike() -> None:
    now = max(s.record.updated_at.to_datetime() for s in FileStore(FILE_STORE).scan().records if s.record)
    by_file = audit_turns(FileStore(FILE_STORE), now=now, stuck_after=timedelta(days=1))
    by_cas = audit_turns(CASStore(MemoryBlobStore(blobs=cas_blobs())), now=now, stuck_after=timedelta(days=1))
    assert by_file.records.num_rows == by_cas.records.num_rows == 19
    assert all(by_file.records.column("valid").to_pylist())
    assert sorted(codes(by_file)) == sorted(codes(by_cas))
    assert codes(by_file).count("turn_call_requested") == 2  # a-tool-pending: one call confirmed, two requested
    assert by_file.records.column("indexed").null_count == 19 and all(by_cas.records.column("indexed").to_pylist())
    created = {row["task_id"]: row["created_at"] for row in by_file.records.to_pylist()}
    assert (
        pa.scalar(created["a-tool-pending"], TURN_RECORDS_SCHEMA.field("created_at").type).value == 1773500644123456780
    )


def test_tables_have_their_schemas(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    record = store.update(in_phase(store.create(new_record()), Phase.PROVIDER_PENDING), 1)
    store.update(
        in_phase(record, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED), call("c2", ToolOutcome.REQUESTED)), 2
    )
    audit = audit_turns(store)
    assert audit.records.schema == TURN_RECORDS_SCHEMA and audit.tool_calls.schema == TURN_TOOL_CALLS_SCHEMA
    assert audit.findings_table().schema == TURN_FINDINGS_SCHEMA
    assert audit.tool_calls.column("decision").to_pylist() == ["ask_operator", "ask_operator"]
    assert set(audit.to_pandas()) == {"records", "tool_calls", "findings"}


def test_durations() -> None:
    assert parse_duration("90") == timedelta(seconds=90)
    assert parse_duration("1.5h") == timedelta(hours=1.5)
    for bad in ["", "m", "5 weeks", "-1h"]:
        with pytest.raises(JournalError, match="duration"):
            parse_duration(bad)


# -- the command line and the audit -------------------------------------------------------------------


def stuck_file_store(root: Path) -> FileStore:
    """A state directory whose records are far in the past: one stuck, one with a requested call, one done."""
    store = FileStore(root, now=Clock())
    store.create(new_record("stuck"))
    pending = store.update(in_phase(store.create(new_record("task-1")), Phase.PROVIDER_PENDING), 1)
    store.update(in_phase(pending, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED)), 2)
    store.update(in_phase(store.create(new_record("done")), Phase.FAILED), 1)
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
    assert main(["turns", str(tmp_path / "turns"), "--fail-on", "warning"]) == 1
    assert main(["turns", str(tmp_path / "turns"), "--fail-on", "error"]) == 0
    capsys.readouterr()
    assert main(["turns", str(FILE_STORE), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 19
    assert main(["turns", str(tmp_path / "nowhere")]) == 1
    assert "does not exist" in capsys.readouterr().err
    for bad_usage in ["nats://user:secret@localhost:99999/TURNS", "s3://b/t", ""]:
        assert main(["turns", bad_usage]) == 2, bad_usage
        assert "secret" not in capsys.readouterr().err


def test_audit_with_a_task_store_and_a_turn_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    # A served run's task record carries the run's own id (the runtime keys both by the request's id).
    for run in ("run-a", "run-b", "run-c", "run-d"):
        built = journal(run)
        built.assistant(text("hello"))
        (journals / f"{run}.json").write_bytes(built.journal_bytes())
    with open_store(tmp_path / "tasks") as tasks:
        tasks.submit(request("run-a"))
        tasks.submit(request("run-b"))
        tasks.complete("run-b", result("run-b"))
    (tmp_path / "tasks" / "run-d.json").write_bytes(b"{not a record")  # a finding and a null state, not a crash
    stuck_file_store(tmp_path / "turns")
    outcome = audit_sources(
        [str(journals)], parquet=tmp_path / "out", task_store=tmp_path / "tasks", turn_store=tmp_path / "turns"
    )
    # The corrupt task record is a finding of the audit (and a null task_state), never the audit's end.
    codes = ["task_record_invalid", "turn_call_requested", "turn_stuck", "turn_stuck"]
    # (The journals built here date no record: each run also says what analysis that leaves out.)
    assert sorted(f.code for f in outcome.findings if f.code != "degraded_analysis") == codes
    assert [f.code for f in outcome.findings].count("degraded_analysis") == 4
    runs = pq.read_table(tmp_path / "out" / "runs.parquet").to_pylist()
    assert {row["run"]: row["task_state"] for row in runs} == {
        "run-a": "submitted",
        "run-b": "completed",
        "run-c": None,
        "run-d": None,
    }
    stores = ["--turn-store", str(tmp_path / "turns"), "--task-store", str(tmp_path / "tasks")]
    code = main(["audit", str(journals), *stores, "--json", "--quiet", "--fail-on", "warning"])
    printed = [row for row in json.loads(capsys.readouterr().out) if row["code"] != "degraded_analysis"]
    assert code == 1 and len(printed) == 4


def open_store(path: Path):  # type: ignore[no-untyped-def]
    from journaltools.stores import open_task_store

    return open_task_store(path, create=True)


# -- the widget -----------------------------------------------------------------------------------------


def test_the_widget_lists_records_needing_attention_first_next_to_their_runs(clock: Clock) -> None:
    store = CASStore(MemoryBlobStore(), now=clock)
    store.create(new_record("fine"))
    hostile = store.create(new_record("<script>alert(1)</script>", owner="<b>owner</b>"))
    hostile = store.update(in_phase(hostile, Phase.PROVIDER_PENDING), 1)
    store.update(in_phase(hostile, Phase.TOOL_PENDING, call("c1", ToolOutcome.REQUESTED, name="<img src=x>")), 2)
    runs = [
        {"run": "run-1", "status": "open", "task": "<script>alert(1)</script>"},
        {"run": "run-2", "status": "completed", "task": "fine"},
    ]
    model = TurnCheckpointsModel.from_audit(audit_turns(store, now=clock().to_datetime()), runs)
    rows = model.visible()
    assert [row.task_id for row in rows] == ["<script>alert(1)</script>", "fine"]
    assert [run.run for run in rows[0].runs] == ["run-1"]
    assert [f.code for f in rows[0].findings] == ["turn_call_requested"]
    html = model.to_html()
    assert "<script>" not in html and "<img" not in html and "<b>owner" not in html


def test_the_widget_shows_unreadable_records_each_on_its_own_row(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    for task in ("a", "b"):
        store.create(new_record(task))
        store.path("ws", task).write_bytes(b"{}")
    model = TurnCheckpointsModel.from_audit(audit_turns(store))
    assert [len(row.findings) for row in model.rows] == [1, 1] and model.loose == []
    assert all(row.findings[0].code == "turn_record_invalid" for row in model.rows)


@pytest.fixture
def clock() -> Clock:
    return Clock()
