"""journaltools' turn stores against what the real agent-harness-go code wrote and returned
(tests/corpus/turnjournal/): every stored byte, every ListActive result, the whole history replayed step by step,
every refusal and probe, and the phase matrix."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import pytest

from journaltools.errors import CorruptTurnStore, InvalidTurnRecord, JournalError, SourceError, TurnNotFound
from journaltools.goencoding.json_values import compact, html_escape, html_unescape
from journaltools.stores.turns.cas import CASStore, MemoryBlobStore
from journaltools.stores.turns.codec import (
    IndexRef,
    decode_record,
    encode_index,
    encode_record,
    encode_record_indented,
    parse_index,
)
from journaltools.stores.turns.contract import TurnStore, path_segment
from journaltools.stores.turns.file import FileStore
from journaltools.stores.turns.records import (
    ExternalChildRef,
    HistoryMessageRef,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    TurnRecord,
    phase_move_allowed,
    validate,
)
from tests.turn_corpus import (
    FILE_STORE,
    Entry,
    FixedClock,
    Outcome,
    attempt,
    cas_blobs,
    copy_file_store,
    entries,
    file_tree,
    record_matches,
    stored_bytes,
)

HISTORY = entries("history.jsonl")
REFUSALS = entries("refusals.jsonl")
PROBES = entries("probes.jsonl")


# -- what the real stores left behind --------------------------------------------------------------------------


def test_every_file_of_the_state_directory_reads_back_and_re_encodes_to_its_bytes() -> None:
    files = sorted(FILE_STORE.rglob("*.json"))
    assert len(files) == 19
    for path in files:
        data = path.read_bytes()
        record = decode_record(data)
        assert encode_record_indented(record) == data, path
        store = FileStore(FILE_STORE)
        assert store.path(record.workspace_id, record.task_id) == path
        assert store.get(record.workspace_id, record.task_id) == record


def test_every_cas_blob_reads_back_and_re_encodes_to_its_bytes() -> None:
    for store_name, expected_records in (("main", 19), ("custom-prefix", 1)):
        blobs = cas_blobs(store_name)
        records = {key: value for key, value in blobs.items() if not key.endswith("/index")}
        assert len(records) == expected_records
        for key, value in records.items():
            record = decode_record(value)
            assert encode_record(record) == value, key
        (index_key,) = [key for key in blobs if key.endswith("/index")]
        version, refs = parse_index(blobs[index_key])
        assert version == 1 and encode_index(refs) == blobs[index_key]


def test_the_file_and_cas_bytes_of_one_record_differ_only_in_layout() -> None:
    blobs = cas_blobs()
    for path in FILE_STORE.rglob("*.json"):
        record = decode_record(path.read_bytes())
        store = CASStore(MemoryBlobStore(blobs=blobs))
        assert blobs[store.key(*record.key())] == encode_record(record)


def test_path_segments_are_the_real_ones() -> None:
    assert path_segment("") == "empty"
    assert path_segment("ws-alpha") == "d3MtYWxwaGE"
    assert path_segment("task/??>") == "dGFzay8_Pz4"
    assert path_segment("🚀 launch") == "8J-agCBsYXVuY2g"
    assert len(path_segment("x" * 120)) == 160
    assert path_segment("x" * 121).startswith("sha256-") and len(path_segment("x" * 121)) == 71
    for step in HISTORY:
        store = CASStore(MemoryBlobStore())
        assert FileStore(Path("/s")).path(step["workspace_id"], step["task_id"]) == Path("/s", step["file_path"])
        assert store.key(step["workspace_id"], step["task_id"]) == step["cas_key"]


# -- ListActive -----------------------------------------------------------------------------------------------


def _refs(records: list[TurnRecord]) -> list[list[str]]:
    return [[record.workspace_id, record.task_id] for record in records]


@pytest.mark.parametrize("entry", entries("list-active.jsonl"), ids=lambda e: e["owner"])
def test_list_active_equals_the_real_one_on_both_stores(entry: Entry) -> None:
    stores: dict[str, TurnStore] = {"file": FileStore(FILE_STORE), "cas": CASStore(MemoryBlobStore(blobs=cas_blobs()))}
    for side, store in stores.items():
        expected = entry[side]
        records = store.list_active(entry["owner"])
        assert _refs(records) == expected["refs"], side
        for position, record in enumerate(records):
            assert record_matches(record, entry, side, "records", position), (side, position)


# -- the history, replayed --------------------------------------------------------------------------------------


def _replay_step(step: Entry, store: TurnStore) -> Outcome:
    if step["op"] == "Create":
        return attempt(lambda: store.create(step.record("input")))
    if step["op"] == "Update":
        return attempt(lambda: store.update(step.record("input"), step["expected_revision"]))
    return attempt(lambda: store.get(step["workspace_id"], step["task_id"]))


def test_replaying_the_history_gives_the_same_results_bytes_and_index(tmp_path: Path) -> None:
    clock = FixedClock()
    file_store = FileStore(tmp_path / "state", now=clock)
    blobs = MemoryBlobStore()
    cas_store = CASStore(blobs, now=clock)
    for step in HISTORY:
        clock.set(step.get("now"))
        for side, store in (("file", file_store), ("cas", cas_store)):
            expected = step[side]
            outcome = _replay_step(step, store)
            assert outcome.ok == expected["ok"], (step["step"], side, outcome.error)
            if not outcome.ok:
                assert outcome.sentinels == expected["is"], (step["step"], side)
                continue
            assert record_matches(outcome.value, step, side, "record"), (step["step"], side)
            stored = stored_bytes(expected)
            if stored is not None and side == "file":
                assert (tmp_path / "state" / step["file_path"]).read_bytes() == stored, step["step"]
            if stored is not None and side == "cas":
                assert blobs.read(step["cas_key"]) == stored, step["step"]
            index = stored_bytes(expected, "index")
            if index is not None:
                assert blobs.read(cas_store.index_key) == index, step["step"]
    assert file_tree(tmp_path / "state") == file_tree(FILE_STORE)
    assert blobs.snapshot() == cas_blobs()


# -- refusals (and their accepted controls) -----------------------------------------------------------------------

#: Entries the Python API cannot express, and why.
UNREPRESENTABLE = {
    "context": "Go's context cancellation: journaltools' calls take no context",
    "constructor/cas-store-no-blobs": "a CASStore needs its blob store as an argument",
    "time/updated-local": "a Go time in time.Local on a machine whose zone is UTC is written as 'Z': no stored "
    "text holds it",
    "time/created-fixedzone-utc-name": "a Go time in time.FixedZone(\"UTC\", 0) is written as 'Z', like time.UTC: "
    "no stored text holds it, so only a Go caller can pass one",
}
#: Faults injected into the blob store by the real run; replayed by ``FaultyBlobs`` below.
FAULT_ENTRIES = {entry["id"] for entry in REFUSALS if entry["id"].startswith("cas/")}


def _ref(message_id: str) -> HistoryMessageRef:
    digest = hashlib.sha256(f"msg\0ws-refusals\0sess-r\0{message_id}".encode()).hexdigest()
    return HistoryMessageRef("ws-refusals", "sess-r", message_id, digest)


def _elided_input(entry: Entry) -> TurnRecord:
    """The inputs the corpus describes in words (too big to repeat, or not marshalable by Go)."""
    base = TurnRecord(
        workspace_id="ws-refusals",
        session_id="sess-r",
        task_id="r-elided",
        owner_identity="owner-r",
        input=_ref("msg-in-r-elided"),
    )
    digest = hashlib.sha256(b"args").hexdigest()
    if entry["id"].startswith("batch/"):
        count = 1025 if entry["id"] == "batch/1025-calls" else 1024
        calls = tuple(ToolCheckpoint(f"c-{n:04d}", "tool", digest, "requested") for n in range(1, count + 1))
        return base.with_changes(phase="tool_pending", tool_batch=ToolBatchCheckpoint(_ref("msg-asst-many"), calls))
    if "descriptor_b64" in (entry.get("args") or {}):
        descriptor = base64.b64decode(entry["args"]["descriptor_b64"])
        descriptor_sha = entry["input_elided"].split("descriptor_digest ")[1].split("}")[0]
    else:
        length = 262143 if entry["id"] == "external/descriptor-over-256KiB" else 262142
        descriptor = b'"' + b"a" * length + b'"'
        descriptor_sha = hashlib.sha256(descriptor).hexdigest()
    external = ExternalChildRef("t", "e", "cs", descriptor, descriptor_sha)
    call = ToolCheckpoint("c1", "spawn", digest, "admitted", external)
    return base.with_changes(phase="waiting_external_child", tool_batch=ToolBatchCheckpoint(_ref("a"), (call,)))


def _input(entry: Entry) -> TurnRecord:
    if "input_elided" in entry.body:
        return _elided_input(entry)
    record = entry.record("input")
    descriptor = (entry.get("args") or {}).get("descriptor_b64")
    if descriptor is not None and record.tool_batch is not None and record.tool_batch.calls:
        first = record.tool_batch.calls[0]
        assert first.external is not None
        external = ExternalChildRef(
            first.external.task_id,
            first.external.execution_id,
            first.external.child_session_id,
            base64.b64decode(descriptor),
            first.external.descriptor_digest,
        )
        calls = (first.__class__(**{**_fields(first), "external": external}), *record.tool_batch.calls[1:])
        record = record.with_changes(tool_batch=record.tool_batch.__class__(record.tool_batch.assistant, calls))
    return record


def _fields(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__slots__}


def _seed(store: TurnStore, current: TurnRecord, tmp: Path) -> None:
    """Put ``current`` in the store exactly as the real store held it before the call."""
    if isinstance(store, FileStore):
        path = store.path(current.workspace_id, current.task_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_record_indented(current))
    else:
        assert isinstance(store, CASStore)
        from journaltools.stores.turns.codec import IndexRef

        store.blobs.create(store.key(*current.key()), encode_record(current))
        store.blobs.create(
            store.index_key, encode_index([IndexRef(current.workspace_id, current.task_id, current.owner_identity)])
        )


def _run_refusal(entry: Entry, side: str, store: TurnStore) -> Outcome:
    api = entry["api"].split(".")[-1]
    args = entry.get("args") or {}
    if api == "Validate":
        return attempt(lambda: validate(_input(entry)))
    if api == "Create":
        return attempt(lambda: store.create(_input(entry)))
    if api == "Update":
        return attempt(lambda: store.update(_input(entry), args["expected_revision"]))
    if api == "Get":
        return attempt(lambda: store.get(args["workspace_id"], args["task_id"]))
    if api == "ListActive":
        return attempt(lambda: store.list_active(args["owner_identity"]))
    if api == "NewExternalChildRef":
        descriptor = (
            base64.b64decode(args["descriptor_b64"]) if "descriptor_b64" in args else args["descriptor"].encode()
        )
        return attempt(
            lambda: ExternalChildRef.new(args["task_id"], args["execution_id"], args["child_session_id"], descriptor)
        )
    if api == "NewFileStore":
        return attempt(lambda: FileStore(""))
    raise AssertionError(f"unknown api {entry['api']}")


GENERIC = [
    entry
    for entry in REFUSALS
    if entry["id"] not in FAULT_ENTRIES
    and entry["id"].split("/")[0] not in UNREPRESENTABLE
    and entry["id"] not in UNREPRESENTABLE
]


@pytest.mark.parametrize("entry", GENERIC, ids=lambda e: e["id"])
def test_every_refusal_is_refused_with_the_same_error_class(entry: Entry, tmp_path: Path) -> None:
    clock = FixedClock()
    clock.set(entry.get("now"))
    sides = [side for side in ("file", "cas", "result") if side in entry.body]
    for side in sides:
        store: TurnStore = (
            FileStore(tmp_path / side, now=clock) if side == "file" else CASStore(MemoryBlobStore(), now=clock)
        )
        if entry.get("current") is not None:
            _seed(store, entry.record("current"), tmp_path)
        outcome = _run_refusal(entry, side, store)
        expected = entry[side]
        assert outcome.ok == expected["ok"], (side, outcome.error)
        if not outcome.ok:
            assert outcome.sentinels == [s for s in expected["is"] if s != "fs.ErrNotExist"], (side, outcome.error)
        elif "record" in expected and isinstance(outcome.value, TurnRecord):
            assert record_matches(outcome.value, entry, side, "record"), side


def test_the_refusal_corpus_is_covered() -> None:
    generic = {entry["id"] for entry in GENERIC}
    skipped = [entry["id"] for entry in REFUSALS if entry["id"] not in generic and entry["id"] not in FAULT_ENTRIES]
    assert all(entry_id.split("/")[0] in UNREPRESENTABLE or entry_id in UNREPRESENTABLE for entry_id in skipped)
    assert len(skipped) == 8, skipped
    assert len(GENERIC) + len(FAULT_ENTRIES) + len(skipped) == 316


def test_the_transition_matrix_is_the_real_one() -> None:
    matrix = entries("transition-matrix.jsonl")
    assert len(matrix) == 121
    for cell in matrix:
        terminal = cell["from"] in ("completed", "failed", "interrupted")
        assert (not terminal and phase_move_allowed(cell["from"], cell["to"])) == cell["file"]["ok"], cell.body
        assert cell["file"]["ok"] == cell["cas"]["ok"]


# -- probes -----------------------------------------------------------------------------------------------------


def _overlay(probe: Entry, tmp: Path) -> Path:
    state = tmp / "state"
    if probe["base"] == "empty":
        state.mkdir()
    else:
        copy_file_store(state)
    for written in probe.get("files") or []:
        path = state / written["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(written["b64"]) if "b64" in written else written["text"].encode())
    for directory in probe.get("dirs") or []:
        (state / directory).mkdir(parents=True, exist_ok=True)
    return state


def _check_call(call: dict[str, Any], entry: Entry, index: int, side: str, store: TurnStore, got: Any) -> None:
    expected = call[side]
    outcome = got if isinstance(got, Outcome) else attempt(got)
    assert outcome.ok == expected["ok"], (call["api"], side, outcome.error)
    if not outcome.ok:
        wanted = [s for s in expected["is"] if s != "fs.ErrNotExist"]
        if wanted:
            assert outcome.sentinels == wanted, (call["api"], side, outcome.error)
        else:  # the runtime failed with an error that is no sentinel (a directory read): ours is a JournalError
            assert isinstance(outcome.error, JournalError)
        return
    if "refs" in expected and isinstance(outcome.value, list):
        assert _refs(outcome.value) == expected["refs"], (call["api"], side)
    if "record" in expected and isinstance(outcome.value, TurnRecord):
        assert record_matches(outcome.value, entry, "calls", index, side, "record"), (call["api"], side)


def _call(call: dict[str, Any], entry: Entry, index: int, store: TurnStore, clock: FixedClock, last: Any) -> Outcome:
    api = call["api"].split(".")[-1]
    args = call.get("args") or {}
    clock.set(args.get("now"))
    if api == "Get":
        return attempt(lambda: store.get(args["workspace_id"], args["task_id"]))
    if api == "ListActive":
        return attempt(lambda: store.list_active(args["owner_identity"]))
    if api == "Create":
        return attempt(lambda: store.create(entry.record("calls", index, "input")))
    if api == "Update":
        record = entry.record("calls", index, "input") if entry.child("calls", index, "input") else last
        return attempt(lambda: store.update(record, args.get("expected_revision", record.revision)))
    if api == "NewExternalChildRef":
        descriptor = base64.b64decode(args["descriptor_b64"])
        return attempt(lambda: ExternalChildRef.new("child-rt", "exec-rt", "child-sess-rt", descriptor))
    raise AssertionError(api)


FILE_PROBES = [probe for probe in PROBES if probe["kind"] == "file-overlay"]
CAS_PROBES = [probe for probe in PROBES if probe["kind"] == "cas-mutation"]


@pytest.mark.parametrize("probe", FILE_PROBES, ids=lambda p: p["name"])
def test_file_probes_answer_as_the_real_store(probe: Entry, tmp_path: Path) -> None:
    state = _overlay(probe, tmp_path)
    clock = FixedClock()
    store = FileStore(state, now=clock)
    last: Any = None
    for index, call in enumerate(probe["calls"]):
        outcome = _call(call, probe, index, store, clock, last)
        _check_call(call, probe, index, "file", store, outcome)
        if outcome.ok and isinstance(outcome.value, TurnRecord):
            last = outcome.value
    for after in probe.get("stored_after") or []:
        assert (state / after["path"]).read_bytes() == (stored_bytes(after, "text") or base64.b64decode(after["b64"]))


@pytest.mark.parametrize("probe", CAS_PROBES, ids=lambda p: p["name"])
def test_cas_probes_answer_as_the_real_store(probe: Entry) -> None:
    blobs = cas_blobs()
    for changed in probe["blobs_changed"]:
        if changed.get("deleted"):
            blobs.pop(changed["key"], None)
        else:
            blobs[changed["key"]] = base64.b64decode(changed["value_b64"])
    clock = FixedClock()
    store = CASStore(MemoryBlobStore(blobs=blobs), now=clock)
    last: Any = None
    for index, call in enumerate(probe["calls"]):
        outcome = _call(call, probe, index, store, clock, last)
        _check_call(call, probe, index, "cas", store, outcome)
        if outcome.ok and isinstance(outcome.value, TurnRecord):
            last = outcome.value


ROUNDTRIPS = {probe["name"]: probe for probe in PROBES if probe["kind"] == "write-roundtrip"}
#: Records the real store writes and can never read back: journaltools refuses to write them.
TRAPS = {"roundtrip-descriptor-html-chars", "roundtrip-descriptor-u2028", "roundtrip-task-id-invalid-utf8"}


def _roundtrip_input(entry: Entry, index: int) -> TurnRecord:
    call = entry["calls"][index]
    if "input_b64" in call:
        return decode_or_parse(base64.b64decode(call["input_b64"]))
    return entry.record("calls", index, "input")


def _with_descriptors(record: TurnRecord, change: Any) -> TurnRecord:
    if record.tool_batch is None or not record.tool_batch.calls:
        return record
    calls = tuple(
        dataclasses.replace(
            call, external=dataclasses.replace(call.external, descriptor=change(call.external.descriptor))
        )
        if call.external is not None
        else call
        for call in record.tool_batch.calls
    )
    return record.with_changes(tool_batch=dataclasses.replace(record.tool_batch, calls=calls))


def decode_or_parse(data: bytes) -> TurnRecord:
    from journaltools.stores.turns.codec import parse_record

    return parse_record(data)


def _expected_record_bytes(entry: Entry, index: int, side: str) -> bytes | None:
    expected = entry["calls"][index][side]
    if "record_b64" in expected:
        return html_escape(compact(base64.b64decode(expected["record_b64"])))
    if "record" in expected:
        return html_escape(compact(entry.raw_of("calls", index, side, "record")))
    return None


def _stores_after(probe: Entry) -> dict[str, bytes]:
    return {
        after["path"]: stored_bytes(after, "text") or base64.b64decode(after["b64"]) for after in probe["stored_after"]
    }


def _stores_written(probe: Entry, state: Path) -> MemoryBlobStore:
    """What the real stores held after ``probe``: the file store's files written under ``state``, and the CAS
    store's blobs in the memory blob store returned."""
    blobs = MemoryBlobStore()
    for path, data in _stores_after(probe).items():
        if path.startswith("file-store/"):
            target = state / path.removeprefix("file-store/")
            target.parent.mkdir(parents=True)
            target.write_bytes(data)
        else:
            blobs.create(path.removeprefix("cas/"), data)
    return blobs


def _roundtrip_call(store: TurnStore, probe: Entry, index: int) -> Outcome:
    call = probe["calls"][index]
    args = call.get("args") or {}
    if call["api"] == "Create":
        return attempt(lambda: store.create(_roundtrip_input(probe, index)))
    if call["api"] == "Update":
        return attempt(lambda: store.update(_roundtrip_input(probe, index), args["expected_revision"]))
    if call["api"] == "Get":
        return attempt(lambda: store.get(args["workspace_id"], args["task_id"]))
    return attempt(lambda: store.list_active(args["owner_identity"]))


@pytest.mark.parametrize("name", sorted(set(ROUNDTRIPS) - TRAPS))
def test_write_roundtrips_give_the_real_bytes(name: str, tmp_path: Path) -> None:
    probe = ROUNDTRIPS[name]
    clock = FixedClock()
    blobs = MemoryBlobStore()
    stores: dict[str, TurnStore] = {"file": FileStore(tmp_path, now=clock), "cas": CASStore(blobs, now=clock)}
    for index, call in enumerate(probe["calls"]):
        args = call.get("args") or {}
        clock.set(args.get("now"))
        if call["api"] == "NewExternalChildRef":
            descriptor = base64.b64decode(args["descriptor_b64"])
            made = ExternalChildRef.new("child-rt", "exec-rt", "child-sess-rt", descriptor)
            expected_ref = _expected_record_bytes(probe, index, "file")
            assert (
                expected_ref is not None and b'"descriptor_digest":"' + made.descriptor_digest.encode() in expected_ref
            )
            continue
        for side, store in stores.items():
            outcome = _roundtrip_call(store, probe, index)
            assert outcome.ok == call[side]["ok"], (index, side, outcome.error)
            expected = _expected_record_bytes(probe, index, side)
            if expected is not None and isinstance(outcome.value, TurnRecord):
                assert encode_record(outcome.value) == expected, (index, side)
    after = _stores_after(probe)
    for path, data in after.items():
        if path.startswith("file-store/"):
            assert (tmp_path / path.removeprefix("file-store/")).read_bytes() == data
        else:
            assert blobs.read(path.removeprefix("cas/")) == data


@pytest.mark.parametrize("name", ["roundtrip-descriptor-html-chars", "roundtrip-descriptor-u2028"])
def test_the_runtimes_descriptor_trap_is_refused_on_write_and_explained_on_read(name: str, tmp_path: Path) -> None:
    """The real store writes a descriptor holding <, >, & or U+2028/9 escaped, with its digest over the unescaped
    form, and can never read it back. journaltools refuses to write one, and reads a store holding one: Get and
    ListActive fail as the runtime's do (for every owner), naming the record and the cause, and scan reports it."""
    probe = ROUNDTRIPS[name]
    clock = FixedClock()
    store = FileStore(tmp_path / "ours", now=clock)
    refused = None
    for index, call in enumerate(probe["calls"]):
        clock.set((call.get("args") or {}).get("now"))
        if call["api"] == "Create":
            store.create(_roundtrip_input(probe, index))
        elif call["api"] == "Update":
            # The corpus prints the caller's record as Go's Marshal writes it, descriptor escaped: the caller held
            # the raw characters, which is what the digest is over.
            record = _with_descriptors(_roundtrip_input(probe, index), html_unescape)
            expected_revision = call["args"]["expected_revision"]
            refused = attempt(lambda: store.update(record, expected_revision))  # noqa: B023 (called at once)
            if not refused.ok:
                break
    assert refused is not None and not refused.ok and "never read it back" in str(refused.error)

    state = tmp_path / "theirs"
    blobs = _stores_written(probe, state)
    for theirs in (FileStore(state), CASStore(blobs)):
        if isinstance(theirs, CASStore):
            theirs.blobs.create(theirs.index_key, encode_index([IndexRef("ws-roundtrip", "rt-task", "owner-a")]))
        with pytest.raises(CorruptTurnStore, match="can never read it back"):
            theirs.get("ws-roundtrip", "rt-task")
        with pytest.raises(CorruptTurnStore, match="can never read it back"):
            theirs.list_active("someone-else")
        (stored,) = theirs.scan().records
        assert stored.record is None and stored.problem is not None and "never read it back" in stored.problem


def test_an_id_that_was_not_utf8_no_longer_matches_its_path(tmp_path: Path) -> None:
    probe = ROUNDTRIPS["roundtrip-task-id-invalid-utf8"]
    state = tmp_path / "state"
    blobs = _stores_written(probe, state)
    file_store = FileStore(state)
    with pytest.raises(TurnNotFound):
        file_store.get("ws-roundtrip", "bad-\ufffd-id")
    with pytest.raises(CorruptTurnStore, match="does not match"):
        file_store.list_active("owner-a")
    for scanned in (file_store.scan(), CASStore(blobs).scan()):
        (stored,) = scanned.records
        assert stored.record is not None and stored.problem is not None and "not valid UTF-8" in stored.problem
    with pytest.raises(InvalidTurnRecord, match="not valid Unicode"):
        FileStore(tmp_path / "ours").create(
            decode_record((FILE_STORE / HISTORY[0]["file_path"]).read_bytes()).with_changes(
                task_id="bad-\udcff-id", revision=0
            )
        )


# -- the CAS store's blob traffic, faults and races -------------------------------------------------------------


class ScriptedBlobs(MemoryBlobStore):
    """A memory blob store that records every call and replays the real run's faults: an ``err`` in the recorded
    operation makes that call fail (a lost race returns False, a backend failure raises), and another writer's
    bytes (``extra``) land just before the call the real run let them in front of."""

    def __init__(self, recorded: list[dict[str, Any]], extra: dict[str, str]) -> None:
        super().__init__()
        self.recorded = recorded
        self.extra = extra
        self.ops: list[tuple[str, str, bool]] = []

    def _fault(self, op: str, key: str) -> str | None:
        position = len(self.ops)
        if position < len(self.recorded) and self.recorded[position]["op"] == op:
            return self.recorded[position].get("err")
        return None

    def _done(self, op: str, key: str, result: bool) -> bool:
        self.ops.append((op, key, result))
        return result

    def read(self, key: str) -> bytes | None:
        if self._fault("Read", key) is not None:
            self.ops.append(("Read", key, False))
            raise SourceError(f"blob {key}: injected backend failure")
        value = super().read(key)
        self._done("Read", key, value is not None)
        return value

    def create(self, key: str, value: bytes) -> bool:
        if self._fault("Create", key) is not None:
            self.ops.append(("Create", key, False))
            raise SourceError(f"blob {key}: injected backend failure")
        if key.endswith("/index") and "index_written_by_other_writer" in self.extra:
            super().create(key, self.extra.pop("index_written_by_other_writer").encode())
        return self._done("Create", key, super().create(key, value))

    def compare_and_swap(self, key: str, expected: bytes, value: bytes) -> bool:
        if self._fault("CompareAndSwap", key) is not None:
            return self._done("CompareAndSwap", key, False)  # the injected lost race
        if "blob_written_by_other_writer" in self.extra and not key.endswith("/index"):
            current = super().read(key)
            assert current is not None
            super().compare_and_swap(key, current, self.extra.pop("blob_written_by_other_writer").encode())
        return self._done("CompareAndSwap", key, super().compare_and_swap(key, expected, value))


def _seed_blobs(entry: Entry, store: CASStore) -> None:
    recorded = entry["cas"].get("blob_ops", [])
    blobs = store.blobs
    assert isinstance(blobs, MemoryBlobStore)
    first_index_read = next((op for op in recorded if op["op"] == "Read" and op["key"].endswith("/index")), None)
    if entry.get("current") is not None:
        current = entry.record("current")
        MemoryBlobStore.create(blobs, store.key(*current.key()), encode_record(current))
    if first_index_read is not None and first_index_read.get("result") and entry.get("current") is None:
        MemoryBlobStore.create(blobs, store.index_key, entry["cas"]["index"].encode())
    elif entry.get("current") is not None and entry["id"] != "cas/exists-not-indexed":
        current = entry.record("current")
        ref = IndexRef(current.workspace_id, current.task_id, current.owner_identity)
        MemoryBlobStore.create(blobs, store.index_key, encode_index([ref]))


@pytest.mark.parametrize("entry", [e for e in REFUSALS if e["id"].startswith("cas/")], ids=lambda e: e["id"])
def test_cas_faults_and_races_take_the_real_path(entry: Entry) -> None:
    """The same blob calls in the same order with the same results as the real store, and the same outcome."""
    expected = entry["cas"]
    recorded = expected.get("blob_ops", [])
    blobs = ScriptedBlobs(recorded, dict((entry.get("extra") or {}).items()))
    retries = {"cas/index-retry-limit-maxretries-3": 3}.get(entry["id"], 0)
    prefix = " /// " if entry["id"] == "cas/control-prefix-only-slashes" else ""
    clock = FixedClock()
    clock.set(entry.get("now") or "2026-05-01T09:30:00Z")
    store = CASStore(blobs, prefix=prefix, max_retries=retries, now=clock)
    _seed_blobs(entry, store)
    api = entry["api"].split(".")[-1]
    if api == "Create":
        outcome = attempt(lambda: store.create(entry.record("input")))
    elif api == "Update":
        outcome = attempt(lambda: store.update(entry.record("input"), entry.record("input").revision))
    elif api == "Get":
        outcome = attempt(lambda: store.get("ws-cas", "task-c1"))
    else:
        outcome = attempt(lambda: store.list_active("owner-c"))
    assert outcome.ok == expected["ok"], outcome.error
    if not outcome.ok:
        wanted = [s for s in expected["is"] if s != "injected"]
        assert outcome.sentinels == wanted, outcome.error
    assert blobs.ops == [(op["op"], op["key"], bool(op.get("result"))) for op in recorded]
    if expected.get("index") and any(op["key"].endswith("/index") for op in recorded) and api != "ListActive":
        assert MemoryBlobStore.read(blobs, store.index_key) == expected["index"].encode()
