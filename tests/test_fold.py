from typing import Any

import pytest
from hypothesis import given, settings

from journaltools.errors import FoldError, VersionMismatch
from journaltools.fold import fold
from tests.builders import JournalBuilder
from tests.strategies import valid_runs


def assert_messages_api_valid(messages: list[dict[str, Any]]) -> None:
    """Alternating roles starting with user; every tool_use answered, in call order, by the next user message."""
    assert messages, "a folded run has at least its first user message"
    for index, message in enumerate(messages):
        assert message["role"] == ("user" if index % 2 == 0 else "assistant")
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        calls = [block["id"] for block in message["content"] if block["type"] == "tool_use"]
        if not calls:
            continue
        if index + 1 == len(messages):
            pytest.fail("a committed assistant message with tool calls must be followed by their results")
        following = messages[index + 1]["content"]
        results = [block["tool_use_id"] for block in following if block["type"] == "tool_result"]
        assert results == calls
        kinds = [block["type"] for block in following]
        assert kinds == sorted(kinds, key=lambda kind: kind != "tool_result"), "tool results come first"


@settings(max_examples=150, deadline=None)
@given(valid_runs())
def test_every_valid_run_and_every_prefix_folds(journal: JournalBuilder) -> None:
    records = journal.raw()
    for end in range(1, len(records) + 1):
        result = fold(records[:end], run=journal.run)
        assert [f for f in result.findings if f.severity != "info"] == []
        assert result.resume.last_seq == records[end - 1].seq
        if result.messages:
            assert_messages_api_valid(result.messages)


@settings(max_examples=100, deadline=None)
@given(valid_runs())
def test_fold_is_deterministic_and_counts_what_it_sees(journal: JournalBuilder) -> None:
    records = journal.raw()
    first, second = fold(records), fold(journal.raw())
    assert first.to_json() == second.to_json()
    bodies = journal.bodies
    tool_uses = sum(
        1 for b in bodies if b["type"] == "assistant" for block in b["content"] if block["type"] == "tool_use"
    )
    assert first.counters.tool_calls == tool_uses
    assert first.counters.turns == sum(1 for b in bodies if b["type"] == "assistant")
    assert first.counters.claims == sum(1 for b in bodies if b["type"] == "claim")
    assert first.counters.skipped_optional == sum(1 for b in bodies if b["type"] == "future_thing")
    assert first.counters.tool_errors == sum(1 for b in bodies if b["type"] == "tool_result" and b.get("is_error"))
    last_decisive = [b for b in bodies if b["type"] not in ("claim", "note", "future_thing")][-1]
    if last_decisive["type"] == "error" and last_decisive["fatal"]:
        assert first.status == "failed"
    elif last_decisive["type"] == "cancel":
        assert first.status == "cancelled"
    elif first.pending:
        assert first.status in ("open", "suspended")
        assert first.resume.waiting_for == ("answer" if first.status == "suspended" else "tools")
    pending_ids = [call.id for call in first.pending]
    answered = {b["call"] for b in bodies if b["type"] == "tool_result"}
    assert not set(pending_ids) & answered


def test_claim_between_turn_and_results_is_inert() -> None:
    journal = JournalBuilder().user().assistant("t1", "t2").result("t1").add("claim", worker="w").result("t2")
    journal.assistant(text="done")
    with_claim = fold(journal.raw())
    assert with_claim.status == "completed"
    assert with_claim.counters.claims == 1
    without = JournalBuilder().user().assistant("t1", "t2").result("t1").result("t2").assistant(text="done")
    assert with_claim.messages == fold(without.raw()).messages


def test_claim_after_turn_in_flight_keeps_the_pending_batch() -> None:
    journal = JournalBuilder().user().assistant("t1", "t2").result("t2").add("claim", worker="w")
    result = fold(journal.raw())
    assert [call.id for call in result.pending] == ["t1"]
    assert result.status == "open"
    assert result.resume.waiting_for == "tools"
    assert result.resume.last_seq == 5


def test_results_are_committed_in_call_order_whatever_order_they_arrive() -> None:
    journal = JournalBuilder().user().assistant("a", "b", "c").result("c").result("a").result("b").assistant()
    messages = fold(journal.raw()).messages
    assert [block["tool_use_id"] for block in messages[2]["content"]] == ["a", "b", "c"]


def test_consecutive_user_messages_merge_results_first() -> None:
    journal = JournalBuilder().user("one").user([{"type": "text", "text": "two"}]).assistant("t1").result("t1")
    journal.user("three").assistant()
    messages = fold(journal.raw()).messages
    assert messages[0]["content"] == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert [block["type"] for block in messages[2]["content"]] == ["tool_result", "text"]
    assert_messages_api_valid(messages)


def test_statuses() -> None:
    base = JournalBuilder().user().assistant("t1")
    assert fold(base.raw()).status == "open"
    deferred = JournalBuilder().user().assistant("t1").add("deferral", call="t1", reason="approval")
    suspended = fold(deferred.raw())
    assert (suspended.status, suspended.resume.waiting_for) == ("suspended", "answer")
    assert suspended.pending[0].deferred == "approval"
    approved = fold(deferred.add("approval", call="t1", decision="approve", by="op").raw())
    assert (approved.status, approved.pending[0].approval) == ("open", "approve")
    assert fold(JournalBuilder().user().raw()).resume.waiting_for == "model"
    assert fold(JournalBuilder().user().assistant().raw()).status == "completed"
    failed = JournalBuilder().user().assistant().add("error", where="runner", message="x", fatal=True)
    assert fold(failed.add("note", text="n").raw()).status == "failed"
    nonfatal = JournalBuilder().user().assistant().add("error", where="tool", message="x", fatal=False)
    assert fold(nonfatal.raw()).status == "completed"
    assert fold(JournalBuilder().user().add("cancel", by="a", reason="b").raw()).status == "cancelled"
    assert fold(JournalBuilder().raw()).status == "open"


def test_strict_fold_names_run_seq_and_rule() -> None:
    journal = JournalBuilder("r-9").user().assistant("t1").user("too early")
    with pytest.raises(FoldError) as caught:
        fold(journal.raw())
    error = caught.value
    assert (error.run, error.seq, error.code) == ("r-9", 4, "unanswered_calls")
    assert "r-9" in str(error) and "seq 4" in str(error)


def test_version_mismatch_is_its_own_error_type() -> None:
    journal = JournalBuilder(meta=False).add("meta", version=2, fingerprint={"model": "m", "system_sha256": "0" * 64})
    with pytest.raises(VersionMismatch):
        fold(journal.raw())


def test_lenient_fold_keeps_messages_valid_when_calls_were_never_answered() -> None:
    journal = JournalBuilder().user().assistant("t1").user("again").assistant()
    result = fold(journal.raw(), strict=False)
    assert [f.code for f in result.findings] == ["unanswered_calls"]
    assert_messages_api_valid(result.messages)
    assert result.messages[2]["content"][0]["is_error"] is True


def test_assistant_continuations_merge_into_one_message() -> None:
    result = fold(JournalBuilder().user().assistant(text="a").assistant(text="b").raw())
    assert_messages_api_valid(result.messages)
    assert [block["text"] for block in result.messages[1]["content"]] == ["a", "b"]
    assert result.counters.turns == 2


def test_unknown_fields_never_reach_the_messages() -> None:
    journal = JournalBuilder().user([{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}])
    journal.add(
        "assistant",
        content=[{"type": "tool_use", "id": "t1", "name": "x", "input": {}, "caller": "?"}],
        stop_reason="tool_use",
        usage={"input_tokens": 1, "output_tokens": 1},
        added_later=True,
    )
    journal.add("tool_result", call="t1", content=[{"type": "text", "text": "r", "citations": []}])
    messages = fold(journal.raw()).messages
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}]}],
        },
    ]


def test_an_approval_before_its_deferral_decides_nothing() -> None:
    journal = JournalBuilder().user().assistant("a").add("approval", call="a", decision="approve", by="op")
    result = fold(journal.add("deferral", call="a", reason="approval").raw(), strict=False)
    assert [f.code for f in result.findings] == ["approval_without_deferral"]
    assert (result.status, result.pending[0].approval) == ("suspended", None)


def test_a_refused_record_does_not_make_the_next_one_look_like_a_gap() -> None:
    journal = JournalBuilder().user().assistant("a").result("zz").result("a")
    result = fold(journal.raw(), strict=False)
    assert [(f.seq, f.code) for f in result.findings] == [(4, "unknown_call")]
    assert result.resume.last_seq == 5
    backwards = JournalBuilder().user().add("note", seq=9, text="x", optional=False).add("note", seq=5, text="y")
    codes = [f.code for f in fold(backwards.raw(), strict=False).findings]
    assert "seq_not_increasing" in codes


@pytest.mark.parametrize(
    ("body", "dropped"),
    [
        ({"type": "user", "content": ""}, "the user content is empty: no message was added"),
        ({"type": "user", "content": []}, "the user content is an empty list: no message was added"),
        ({"type": "user", "content": [{"type": "text", "text": ""}]}, "an empty text block of the user content"),
        (
            {
                "type": "assistant",
                "content": [],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
            "the assistant content is an empty list: the turn has no message",
        ),
        (
            {
                "type": "assistant",
                "content": [{"type": "text", "text": ""}, {"type": "text", "text": "kept"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
            "an empty text block of the assistant content dropped; 1 kept",
        ),
    ],
)
def test_content_the_messages_api_refuses_is_dropped_with_a_warning(body: dict[str, Any], dropped: str) -> None:
    journal = JournalBuilder().user("first").assistant()
    journal.add(body.pop("type"), **body)
    result = fold(journal.raw(), strict=False)
    assert [(f.code, f.severity) for f in result.findings] == [("empty_content", "warning")]
    assert result.findings[0].message.startswith(dropped)
    for message in result.messages:  # still valid Messages API input
        content = message["content"]
        assert content and (not isinstance(content, list) or all(b.get("text", "x") for b in content))
    assert fold(journal.raw(), strict=True).status  # a warning never refuses the journal


@pytest.mark.parametrize(
    "body",
    [
        {"type": "note", "text": "x", "ts": "2026-13-01T00:00:00Z"},
        {"type": "note", "text": "x", "ts": "2026-11-29T24:00:00Z"},
    ],
)
def test_timestamps_rfc_3339_refuses_are_schema_violations(body: dict[str, Any]) -> None:
    journal = JournalBuilder().user()
    journal.add(body.pop("type"), **body)
    result = fold(journal.raw(), strict=False)
    assert [f.code for f in result.findings] == ["schema_violation"]
