"""The load path against the real runtime's: every journal of the corpus (written by the runtime, and byte-level
mutations of two of them) is read by the file line rule and folded to exactly what Go's FileStore.Load returned:
the same refusals, and for the accepted ones the same state, field by field."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from journaltools.errors import FoldError
from journaltools.folding import fold
from journaltools.protocol.journal import read_file_journal
from journaltools.protocol.kinds import Record
from tests.runstate_corpus import expected, journal_bytes

WRITTEN_BY_THE_RUNTIME = [entry for name in ("file", "random") for entry in expected(name)]
EVERY_JOURNAL = WRITTEN_BY_THE_RUNTIME + expected("broken")


def records_of(data: bytes) -> list[Record]:
    journal = read_file_journal(data)
    assert not journal.corrupt
    return [read.record for read in journal.records]


def assert_same_state(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    assert set(got) == set(want), where
    for field in want:
        assert got[field] == want[field], f"{where}: {field} differs"


@pytest.mark.parametrize("entry", EVERY_JOURNAL, ids=lambda entry: entry["path"])
def test_strict_load_equals_the_runtime(entry: dict[str, Any]) -> None:
    journal = read_file_journal(journal_bytes(entry))
    if entry.get("read_error"):
        # The backend's reader refused an interior line: Go names it "line N: reason".
        assert journal.corrupt, entry["path"]
        assert f"line {journal.corrupt[0].line}:" in entry["read_error"]
        return
    assert not journal.corrupt, entry["path"]
    assert (journal.torn_tail is not None) == bool(entry.get("dropped_torn_tail")), entry["path"]
    records = [read.record for read in journal.records]
    if "records" in entry:
        assert len(records) == entry["records"] and journal.last_seq == entry["last_seq"]
    if not entry["ok"]:
        with pytest.raises(FoldError) as refused:
            fold(records, run=entry["store_id"])
        # Go's error text names the rule and the seq; ours carries the same rule text.
        assert refused.value.rule.split(": ", 1)[-1] in entry["error"]
        return
    result = fold(records, run=entry["store_id"])
    assert result.state is not None
    assert_same_state(result.state.to_go_json(), entry["state"], entry["path"])
    assert result.state.completed() == entry["completed"]
    if "open_deferrals" in entry:
        assert result.state.pending is not None
        got = [d.tool_use_id for d in result.state.pending.open_deferrals()]
        assert got == [d["tool_use_id"] for d in entry["open_deferrals"] or []]
    assert result.last_seq == entry["last_seq"]
    if entry["path"].startswith(("file/", "random/")):
        assert all(read.noncanonical is None for read in journal.records), "the runtime's lines take the fast path"


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=lambda entry: entry["path"])
def test_lenient_fold_agrees_with_strict(entry: dict[str, Any]) -> None:
    records = records_of(journal_bytes(entry))
    lenient = fold(records, run=entry["store_id"], strict=False)
    errors = [finding for finding in lenient.findings if finding.severity == "error"]
    if entry["ok"]:
        assert errors == []
        assert lenient.state is not None
        assert lenient.state.to_go_json() == fold(records).state.to_go_json()  # type: ignore[union-attr]
        expected_status = entry["state"]["Terminal"]["reason"] if entry["state"]["Terminal"] else "open"
        assert lenient.status == expected_status
    else:
        assert lenient.status == "invalid"
        assert errors, "a refused journal says why"


@pytest.mark.parametrize("entry", expected("file"), ids=lambda entry: entry["path"])
def test_the_anthropic_rendering_is_valid_api_input(entry: dict[str, Any]) -> None:
    from journaltools.protocol.blocks import to_anthropic

    result = fold(records_of(journal_bytes(entry)), strict=False)
    rendered = to_anthropic(result.messages)
    assert rendered and rendered[0]["role"] == "user"
    for before, after in itertools.pairwise(rendered):
        assert before["role"] != after["role"]
    for message in rendered:
        assert message["content"], "no empty content"
        assert all(block.get("text", "x") for block in message["content"]), "no empty text block"


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=lambda entry: entry["path"])
def test_every_message_names_the_record_it_came_from(entry: dict[str, Any]) -> None:
    records = records_of(journal_bytes(entry))
    result = fold(records, strict=False)
    if result.state is None:
        return
    kinds = {record.seq: record.kind for record in records}
    assert len(result.message_seqs) == len(result.messages)
    assert result.message_seqs == sorted(result.message_seqs), "messages come in journal order"
    for message, seq in zip(result.messages, result.message_seqs, strict=True):
        kind = kinds[seq]
        if message.role == "assistant":
            assert kind == "assistant"
        elif any(block.tool_result is not None for block in message.content or ()):
            assert kind in ("tool_result", "user")
        else:
            assert kind in ("meta", "user")


#: What the published schemas say that the line rule and the fold already report under their own codes.
_OWN_CODES = {"noncanonical_line", "unknown_terminal_reason", "torn_tail", "unknown_protocol"}
_DRIFT = ("thinking_tokens", "reasoning_effort", "jsonschema validation failed")


@pytest.mark.parametrize("entry", [e for e in EVERY_JOURNAL if e["ok"]], ids=lambda entry: entry["path"])
def test_what_the_published_schemas_refuse_is_reported(entry: dict[str, Any]) -> None:
    """Every line of an accepted journal that the runtime's own schema validator refused (beyond the schemas'
    known drift) carries a finding: ``schema_violation``, or the code that already names its cause."""
    journal = read_file_journal(journal_bytes(entry))
    result = fold([read.record for read in journal.records], strict=False)
    seq_of_line = {read.position: read.record.seq for read in journal.records}
    noncanonical_lines = {read.position for read in journal.records if read.noncanonical is not None}
    reported = {(finding.seq, finding.code) for finding in result.findings}
    for refused in entry.get("schema_findings") or []:
        errors = [error for error in refused["errors"] if not any(drift in error for drift in _DRIFT)]
        if not errors:
            continue
        line = refused["line"]
        if journal.torn_tail is not None and line == journal.torn_tail.line:
            continue
        if line in noncanonical_lines:
            continue
        if any("no schema for protocol" in error for error in errors):
            continue  # an unknown protocol: optional ones are skipped, the others refused by the fold
        seq = seq_of_line[line]
        codes = {code for at, code in reported if at == seq}
        assert codes & ({"schema_violation"} | _OWN_CODES), (entry["path"], line, errors)
    for finding in result.findings:
        if finding.code == "schema_violation":  # and nothing the runtime's validator accepted
            line = next(position for position, seq in seq_of_line.items() if seq == finding.seq)
            assert any(refused["line"] == line for refused in entry.get("schema_findings") or []), finding
