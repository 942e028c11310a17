"""One journal per finding code the fold and the file reader produce, triggering exactly that code."""

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.audit import audit_sources
from journaltools.fold import fold
from journaltools.protocol.findings import FINDING_SEVERITY
from journaltools.protocol.records import decode_record, encode_record
from tests.builders import JournalBuilder
from tests.strategies import valid_runs


def lenient_codes(journal: JournalBuilder, run: str | None = None) -> list[str]:
    return [finding.code for finding in fold(journal.raw(), strict=False, run=run).findings]


FOLD_CASES = {
    "empty_journal": JournalBuilder(meta=False),
    "not_meta_first": JournalBuilder(meta=False).user(),
    "version_mismatch": JournalBuilder(meta=False).add(
        "meta", version=0, fingerprint={"model": "m", "system_sha256": "0" * 64}
    ),
    "seq_not_increasing": JournalBuilder().user().add("note", seq=2, text="again"),
    "seq_gap": JournalBuilder().user().add("note", seq=9, text="later"),
    "schema_violation": JournalBuilder().user().add("assistant", content="not a list", stop_reason="x", usage={}),
    "unknown_type": JournalBuilder().user().add("telemetry", value=1),
    "optional_not_allowed": JournalBuilder()
    .user()
    .assistant("t1")
    .add("deferral", call="t1", reason="approval", optional=True),
    "unknown_call": JournalBuilder().user().assistant("t1").result("t2"),
    "duplicate_result": JournalBuilder().user().assistant("t1").result("t1").result("t1"),
    "unanswered_calls": JournalBuilder().user().assistant("t1").assistant(),
    "approval_without_deferral": JournalBuilder()
    .user()
    .assistant("t1")
    .add("approval", call="t1", decision="approve", by="op"),
    "duplicate_call_id": JournalBuilder().user().assistant("t1").result("t1").assistant("t1"),
    "duplicate_deferral": JournalBuilder()
    .user()
    .assistant("t1")
    .add("deferral", call="t1", reason="approval")
    .add("deferral", call="t1", reason="external"),
    "assistant_first": JournalBuilder().assistant(),
}


@pytest.mark.parametrize("code", sorted(FOLD_CASES))
def test_fold_finding_codes(code: str) -> None:
    assert lenient_codes(FOLD_CASES[code]) == [code]
    assert code in FINDING_SEVERITY


def test_run_mismatch_against_the_journal_name() -> None:
    assert lenient_codes(JournalBuilder("other").user(), run="expected") == ["run_mismatch"]


def test_run_mismatch_inside_a_journal() -> None:
    journal = JournalBuilder("a").user()
    journal.bodies.append({**journal.bodies[-1], "run": "b", "seq": 3})
    assert lenient_codes(journal) == ["run_mismatch"]


def test_unknown_optional_record_is_skipped_and_counted_not_reported() -> None:
    result = fold(JournalBuilder().user().add("telemetry", optional=True).raw())
    assert result.findings == []
    assert result.counters.skipped_optional == 1


def write(tmp_path: Path, run: str, data: bytes) -> str:
    (tmp_path / f"{run}.jsonl").write_bytes(data)
    return str(tmp_path)


def test_torn_tail_finding(tmp_path: Path) -> None:
    source = write(tmp_path, "r", JournalBuilder("r").user().bytes() + b'{"type":"us')
    assert [f.code for f in audit_sources([source]).findings] == ["torn_tail"]


def test_corrupt_line_finding(tmp_path: Path) -> None:
    lines = JournalBuilder("r").user().assistant().bytes().split(b"\n")
    lines.insert(1, b"not json")
    findings = audit_sources([write(tmp_path, "r", b"\n".join(lines))]).findings
    assert [f.code for f in findings] == ["corrupt_line"]
    assert "line 2" in findings[0].message


def test_invalid_run_id_finding(tmp_path: Path) -> None:
    source = write(tmp_path, "has space", JournalBuilder("r").user().bytes())
    assert [f.code for f in audit_sources([source]).findings] == ["invalid_run_id"]


def test_run_mismatch_against_file_name(tmp_path: Path) -> None:
    source = write(tmp_path, "named", JournalBuilder("other").user().bytes())
    assert [f.code for f in audit_sources([source]).findings] == ["run_mismatch"]


# -- a finding is never the echo of an earlier one ------------------------------------------------------------


ECHO_CASES = {
    "a note without text": (JournalBuilder().user().add("note", text=None).assistant(), [(3, "schema_violation")]),
    "an unknown type without the flag": (
        JournalBuilder().user().add("telemetry", value=1).assistant(),
        [(3, "unknown_type")],
    ),
    "a dropped duplicate-id turn and its result": (
        JournalBuilder().user().assistant("t1").result("t1").assistant("t1", "t2").result("t1").result("t2"),
        [(5, "duplicate_call_id")],
    ),
    "a result naming another run": (
        JournalBuilder()
        .user()
        .assistant("t1")
        .add("tool_result", call="t1", content="x", run_override="other")
        .assistant(),
        [(4, "run_mismatch")],
    ),
    "a result whose envelope breaks": (
        JournalBuilder().user().assistant("t1").add("tool_result", call="t1", content="x", ts="noon").assistant(),
        [(4, "schema_violation")],
    ),
    "a record with an unreadable seq": (
        JournalBuilder().user().add("note", text="a", seq_override="3").add("note", text="b"),
        [(None, "schema_violation")],
    ),
}


def _overrides(journal: JournalBuilder) -> JournalBuilder:
    for body in journal.bodies:
        if "run_override" in body:
            body["run"] = body.pop("run_override")
        if "seq_override" in body:
            body["seq"] = body.pop("seq_override")
    return journal


@pytest.mark.parametrize("case", sorted(ECHO_CASES))
def test_one_problem_gives_one_finding(case: str) -> None:
    journal, expected = ECHO_CASES[case]
    result = fold(_overrides(journal).raw(), strict=False)
    assert [(f.seq, f.code) for f in result.findings] == expected


def test_a_broken_payload_folds_as_zero_and_keeps_its_turn() -> None:
    journal = JournalBuilder().user().add("assistant", content=[{"type": "text", "text": "hi"}], stop_reason="end_turn")
    result = fold(journal.raw(), strict=False)
    assert [(f.seq, f.code) for f in result.findings] == [(3, "schema_violation")]
    assert "usage" in result.findings[0].message
    assert [m["role"] for m in result.messages] == ["user", "assistant"]  # the turn is kept, not lost
    assert (result.counters.turns, result.counters.input_tokens, result.status) == (1, 0, "completed")


def _references(body: dict[str, Any]) -> set[str]:
    """The call ids a record introduces (tool_use blocks) or names (its call field)."""
    ids = {body["call"]} if isinstance(body.get("call"), str) else set()
    content = body.get("content")
    if body.get("type") == "assistant" and isinstance(content, list):
        ids |= {b["id"] for b in content if b.get("type") == "tool_use"}
    return ids


def _related_seqs(bodies: list[dict[str, Any]], index: int) -> set[int]:
    """The seqs where a problem with record ``index`` may show: itself, the record after it (a gap, or the
    first record when meta is gone), records naming its calls, the record committing the turn it answers,
    and the first assistant record when it removes the only user record before it."""
    damaged = bodies[index]
    calls = _references(damaged)
    related = {damaged["seq"]}
    if index + 1 < len(bodies):
        related.add(bodies[index + 1]["seq"])
    for body in bodies[index + 1 :]:
        if _references(body) & calls:
            related.add(body["seq"])
    if damaged["type"] == "tool_result":
        later = [b for b in bodies[index + 1 :] if b["type"] in ("assistant", "user")]
        if later:
            related.add(later[0]["seq"])
    users = [i for i, b in enumerate(bodies) if b["type"] == "user"]
    assistants = [i for i, b in enumerate(bodies) if b["type"] == "assistant"]
    if damaged["type"] == "user" and assistants and [u for u in users if u < assistants[0]] == [index]:
        related.add(bodies[assistants[0]]["seq"])
    return related


REQUIRED = {
    "user": ["content"],
    "assistant": ["content", "stop_reason", "usage"],
    "tool_result": ["call", "content"],
    "deferral": ["call", "reason"],
    "approval": ["call", "decision"],
    "claim": ["worker"],
    "error": ["where", "message", "fatal"],
    "cancel": ["by", "reason"],
    "note": ["text"],
}


@settings(max_examples=300)
@given(valid_runs(), st.data())
def test_damaging_one_record_gives_findings_only_at_or_about_it(journal: JournalBuilder, data: st.DataObject) -> None:
    bodies = journal.bodies
    index = data.draw(st.integers(1, len(bodies) - 1))
    damaged = copy.deepcopy(bodies)
    how = data.draw(st.sampled_from(["delete", "break a field", "break the envelope"]))
    fields = REQUIRED.get(damaged[index]["type"], [])
    if how == "delete" or (how == "break a field" and not fields):
        del damaged[index]
    elif how == "break a field":
        damaged[index][data.draw(st.sampled_from(fields))] = data.draw(st.sampled_from([None, 7, [3]]))
    else:
        damaged[index][data.draw(st.sampled_from(["type", "ts", "seq"]))] = 0.5
    records = [decode_record(encode_record(body), n) for n, body in enumerate(damaged, 1)]
    findings = fold(records, strict=False).findings
    if how == "delete" or not fields:
        # The record is gone without a trace: its absence shows where something depended on it.
        related = _related_seqs(bodies, index)
        assert all(f.seq is None or f.seq in related for f in findings), (how, index, findings, related)
    else:
        # The record is there, reported: nothing after it repeats the problem.
        assert findings, "breaking a record always shows"
        assert all(f.seq in (bodies[index]["seq"], None) for f in findings), (how, index, findings)
