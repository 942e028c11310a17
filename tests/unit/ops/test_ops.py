"""Writing operations the runtime's way: answering a deferred call, claiming a run, the resume gate."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from journaltools.errors import AlreadyAnswered, AnswerRefused, InvalidConfig
from journaltools.folding import fold
from journaltools.ops.answer import MAX_RESULT_BYTES, answer_call
from journaltools.ops.gate import Candidate, resume_gate, system_hash
from journaltools.ops.resume import claim_run
from journaltools.protocol.decode import decode_line
from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Record
from journaltools.sources.registry import open_source
from tests.runstate_corpus import CORPUS

SUPPLIED_NOT_RESUMED = "3IDdWOESEKqijGnQfKh5NwIRHpZ"  # suspended on a deferral, then answered
DEFERRED_WAITING = "3IDi1LEy6uQIbFWHJESmsjTENLn"  # pending with one open deferral
COMPLETED = "3IDQ1OhDHSSoRIEpX5dNk2z1f6f"
TURN_IN_FLIGHT = "3IEj14CtE7bmwlCCwwtiSgDi881"  # crashed mid-batch: a call in flight that was never deferred


def corpus_copy(tmp_path: Path, *runs: str) -> Path:
    for run in runs:
        shutil.copy(CORPUS / "file" / f"{run}.json", tmp_path / f"{run}.json")
    return tmp_path


def test_answer_writes_the_record_the_runtime_wrote(tmp_path: Path) -> None:
    original = (CORPUS / "file" / f"{SUPPLIED_NOT_RESUMED}.json").read_bytes()
    lines = original.split(b"\n")[:-1]
    (tmp_path / f"{SUPPLIED_NOT_RESUMED}.json").write_bytes(b"\n".join(lines[:-1]) + b"\n")
    answer = decode_line(lines[-1]).record.tool_result
    assert answer is not None
    with open_source(tmp_path) as backend:
        answered = answer_call(
            backend, SUPPLIED_NOT_RESUMED, answer.tool_use_id, answer.result.content, is_error=answer.result.is_error
        )
    assert answered.seq == len(lines)
    assert (tmp_path / f"{SUPPLIED_NOT_RESUMED}.json").read_bytes() == original


NEWEST_SUPPLIED = "3MtgeORUyjqNtTnpuv2wKMRNDfC"  # newest line: a custom, dispatched deferral answered by supply
NEWEST_COMPLETED = "3MtgePl8MTxhIQTqkgVj3k35VXw"


def _without_time(record: Record) -> Record:
    return msgspec.structs.replace(record, time="")


def test_a_newest_answer_copies_the_deferrals_kind_and_is_dated_in_utc(tmp_path: Path) -> None:
    """The newest line's supply path: the same record the runtime wrote, but for the moment it was dated."""
    original = (CORPUS / "newest" / "file" / f"{NEWEST_SUPPLIED}.json").read_bytes()
    lines = original.split(b"\n")[:-1]
    (tmp_path / f"{NEWEST_SUPPLIED}.json").write_bytes(b"\n".join(lines[:-1]) + b"\n")
    want = decode_line(lines[-1]).record
    assert want.tool_result is not None and want.tool_result.kind == "custom" and want.tool_result.dispatched
    before = datetime.now(UTC)
    with open_source(tmp_path) as backend:
        answer_call(backend, NEWEST_SUPPLIED, want.tool_result.tool_use_id, want.tool_result.result.content)
    written = (tmp_path / f"{NEWEST_SUPPLIED}.json").read_bytes().split(b"\n")[-2]
    got = decode_line(written).record
    assert _without_time(got) == _without_time(want)
    assert got.time.endswith("Z") and before <= datetime.fromisoformat(got.time) <= datetime.now(UTC)
    assert encode_record(got) == written  # canonical: what the newest encoder writes


def test_a_newest_claim_is_dated_and_an_august_one_is_not(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "newest" / "file" / f"{NEWEST_COMPLETED}.json", tmp_path)
    corpus_copy(tmp_path, COMPLETED)
    with open_source(tmp_path) as backend:
        for run in (NEWEST_COMPLETED, COMPLETED):
            claim_run(backend, run, by="ops@test").writer.close()
    newest = decode_line((tmp_path / f"{NEWEST_COMPLETED}.json").read_bytes().split(b"\n")[-2]).record
    august = decode_line((tmp_path / f"{COMPLETED}.json").read_bytes().split(b"\n")[-2]).record
    assert newest.claim is not None and newest.time == newest.claim.claimed
    assert august.claim is not None and august.time == ""
    with open_source(tmp_path) as backend:
        reopened = fold(backend.read_run(NEWEST_COMPLETED).typed())
    assert reopened.state is not None and reopened.state.reopened and reopened.status == "open"


def test_answer_refuses_what_the_runtime_refuses(tmp_path: Path) -> None:
    corpus_copy(tmp_path, SUPPLIED_NOT_RESUMED, DEFERRED_WAITING, COMPLETED, TURN_IN_FLIGHT)
    with open_source(tmp_path) as backend:
        waiting = fold(backend.read_run(DEFERRED_WAITING).typed()).state
        assert waiting is not None and waiting.pending is not None
        deferred = waiting.pending.open_deferrals()[0].tool_use_id
        in_flight = fold(backend.read_run(TURN_IN_FLIGHT).typed()).state
        assert in_flight is not None and in_flight.pending is not None
        not_deferred = in_flight.pending.unanswered_calls()[0].id
        with pytest.raises(AnswerRefused, match="too large: 262145 bytes, limit 262144"):
            answer_call(backend, DEFERRED_WAITING, deferred, "x" * (MAX_RESULT_BYTES + 1))
        with pytest.raises(AnswerRefused, match="no tool calls in flight"):
            answer_call(backend, COMPLETED, "toolu_x", "late")
        answered_call = decode_line(
            (tmp_path / f"{SUPPLIED_NOT_RESUMED}.json").read_bytes().split(b"\n")[-2]
        ).record.tool_result
        assert answered_call is not None
        with pytest.raises(AlreadyAnswered) as already:
            answer_call(backend, SUPPLIED_NOT_RESUMED, answered_call.tool_use_id, "again")
        assert already.value.result_seq == 5
        with pytest.raises(AnswerRefused, match="not deferred"):
            answer_call(backend, TURN_IN_FLIGHT, not_deferred, "no")
        first = answer_call(backend, DEFERRED_WAITING, deferred, "done")
        with pytest.raises(AlreadyAnswered) as twice:
            answer_call(backend, DEFERRED_WAITING, deferred, "done again")
        assert twice.value.result_seq == first.seq


def test_a_claim_is_the_runtimes_claim_and_folds_as_nothing(tmp_path: Path) -> None:
    corpus_copy(tmp_path, COMPLETED)
    with open_source(tmp_path) as backend:
        before = fold(backend.read_run(COMPLETED).typed())
        resumed = claim_run(backend, COMPLETED, by="ops@host pid 7", claimed="2026-12-01T10:00:00.123456789Z")
        resumed.writer.close()
        after = backend.read_run(COMPLETED)
    last = after.records[-1]
    assert last.raw == (
        b'{"seq":11,"protocol":"io.choria.fisk-ai.v1.session.claim",'
        b'"claim":{"by":"ops@host pid 7","claimed":"2026-12-01T10:00:00.123456789Z"}}'
    )
    assert last.noncanonical is None
    folded = fold(after.typed())
    assert folded.state is not None and before.state is not None
    assert folded.state.to_go_json() == before.state.to_go_json()
    assert [segment.claimed_by for segment in folded.segments] == [None, "ops@host pid 7"]
    assert folded.segments[-1].ending == "running"


def test_system_hash_is_over_the_go_encoding_of_the_block_list() -> None:
    assert system_hash(["a & b"]) == hashlib.sha256(b'["a \\u0026 b"]').hexdigest()
    assert system_hash(["a", "b"]) != system_hash(["a b"])


def _state(run: str):  # type: ignore[no-untyped-def]
    records = [decode_line(line).record for line in (CORPUS / "file" / f"{run}.json").read_bytes().split(b"\n") if line]
    state = fold(records).state
    assert state is not None
    return state


def test_the_gate_decides_in_the_runtimes_order() -> None:
    completed = _state(COMPLETED)
    stored = completed.fingerprint
    assert not resume_gate(completed, Candidate()).resumable  # completed, no follow-up
    assert resume_gate(completed, Candidate(), follow_up=True).resumable
    waiting = _state(DEFERRED_WAITING)
    assert resume_gate(waiting, Candidate(model=waiting.fingerprint.model)).resumable
    provider = resume_gate(waiting, Candidate(provider="openai"), force=True)
    assert not provider.resumable and provider.refusal is not None and "provider" in provider.refusal
    model = resume_gate(waiting, Candidate(model="another-model"))
    assert not model.resumable and model.refusal is not None and model.refusal.startswith("model changed")
    forced = resume_gate(waiting, Candidate(model="another-model"), force=True)
    assert forced.resumable and forced.drops_approvals
    tools = resume_gate(waiting, Candidate(tools_hash="0" * 64))
    assert tools.resumable and tools.drops_approvals and any("approvals are dropped" in w for w in tools.warnings)
    budget = resume_gate(waiting, Candidate(max_tokens=stored.max_tokens + 1, max_iterations=3))
    assert budget.resumable and [v.verdict for v in budget.fields if v.field_class == "budget"] == ["reported"] * 2
    chat = resume_gate(waiting, Candidate(interactive=not waiting.interactive), force=True)
    assert not chat.resumable and chat.refusal is not None and "cannot resume as" in chat.refusal
    # An absent effort and an empty one are the same.
    assert resume_gate(waiting, Candidate(reasoning_effort=waiting.fingerprint.reasoning_effort)).resumable


def test_a_candidate_configuration_is_checked_key_by_key() -> None:
    assert Candidate.from_config({"system": ["a & b"]}).system_hash == system_hash(["a & b"])
    with pytest.raises(InvalidConfig, match="unknown key 'temperature'"):
        Candidate.from_config({"temperature": 0.2})
    with pytest.raises(InvalidConfig, match="'max_tokens' must be an integer"):
        Candidate.from_config({"max_tokens": "many"})
    with pytest.raises(InvalidConfig, match="disagree"):
        Candidate.from_config({"system": ["a"], "system_hash": "0" * 64})
