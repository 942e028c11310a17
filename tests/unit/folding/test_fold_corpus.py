"""The load path against the real runtime's: every journal of both corpora (the August build's and the newest
line's, each written by that build's code, and byte-level mutations of a few) is read by the file line rule and
folded to exactly what that build's FileStore.Load returned: the same refusals, and for the accepted ones the same
state, field by field. The one difference is deliberate: journaltools reads both generations, where each build
refuses the other's version."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from journaltools.errors import FoldError
from journaltools.folding import fold
from journaltools.protocol.generations import AUGUST, NEWEST, generation_of_version
from journaltools.protocol.journal import read_file_journal
from journaltools.protocol.kinds import Record
from tests.runstate_corpus import expected, journal_bytes

WRITTEN_BY_THE_RUNTIME = [
    entry for newest in (False, True) for name in ("file", "random") for entry in expected(name, newest=newest)
]
EVERY_JOURNAL = WRITTEN_BY_THE_RUNTIME + expected("broken") + expected("broken", newest=True)
#: The August journals the newest line refuses for their version: journaltools folds them by the August rules.
OTHER_GENERATION = expected("version3", newest=True)

_VERSION_REFUSAL = re.compile(r"unsupported snapshot version: snapshot version (-?[0-9]+), supported [0-9]+")


def journal_id(entry: dict[str, Any]) -> str:
    return ("newest/" if "newest" in entry["corpus"] else "") + entry["path"]


def records_of(data: bytes) -> list[Record]:
    journal = read_file_journal(data)
    assert not journal.corrupt
    return [read.record for read in journal.records]


def assert_same_state(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    assert set(got) == set(want), where
    for field in want:
        assert got[field] == want[field], f"{where}: {field} differs"


@pytest.mark.parametrize("entry", EVERY_JOURNAL, ids=journal_id)
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
    version = _VERSION_REFUSAL.fullmatch(entry["error"] or "")
    if version is not None and generation_of_version(int(version.group(1))) is not None:
        # The other build's version: journaltools folds it by that build's rules.
        result = fold(records, run=entry["store_id"])
        assert result.state is not None and result.state.generation is generation_of_version(int(version.group(1)))
        return
    if not entry["ok"]:
        with pytest.raises(FoldError) as refused:
            fold(records, run=entry["store_id"])
        if version is not None:
            # Refused by both builds: the message names the versions journaltools reads instead of one build's.
            assert generation_of_version(int(version.group(1))) is None
            assert refused.value.rule.startswith(version.group(0).rsplit(" ", 1)[0])
            assert "supported 1 (the newest line) and 3 (the August build)" in refused.value.rule
            return
        # Go's error text names the rule and the seq; ours carries the same rule text.
        assert refused.value.rule.split(": ", 1)[-1] in entry["error"]
        return
    result = fold(records, run=entry["store_id"])
    assert result.state is not None
    if "reopened" in entry:
        assert result.state.generation is NEWEST
        assert result.state.reopened == entry["reopened"]
        ending = result.state.ending()
        assert (None if ending is None else ending.reason) == (entry["ending"] or {}).get("reason")
        assert result.status == ((entry["ending"] or {}).get("reason") or "open")
    assert_same_state(result.state.to_go_json(), entry["state"], entry["path"])
    assert result.state.completed() == entry["completed"]
    if "open_deferrals" in entry:
        assert result.state.pending is not None
        got = [d.tool_use_id for d in result.state.pending.open_deferrals()]
        assert got == [d["tool_use_id"] for d in entry["open_deferrals"] or []]
    assert result.last_seq == entry["last_seq"]
    if entry["path"].startswith(("file/", "random/")):
        assert all(read.noncanonical is None for read in journal.records), "the runtime's lines take the fast path"


@pytest.mark.parametrize("entry", OTHER_GENERATION, ids=journal_id)
def test_a_journal_the_newest_line_refuses_for_its_version_folds_as_august(entry: dict[str, Any]) -> None:
    assert entry["error_is"] == ["ErrVersion"]
    records = records_of(journal_bytes(entry))
    assert len(records) == entry["records"]
    result = fold(records, run=entry["store_id"])
    assert result.state is not None and result.state.generation is AUGUST
    same = next(e for e in expected("file") if e["store_id"] == entry["store_id"])
    assert_same_state(result.state.to_go_json(), same["state"], entry["path"])


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=journal_id)
def test_lenient_fold_agrees_with_strict(entry: dict[str, Any]) -> None:
    records = records_of(journal_bytes(entry))
    lenient = fold(records, run=entry["store_id"], strict=False)
    errors = [finding for finding in lenient.findings if finding.severity == "error"]
    if entry["ok"]:
        assert errors == []
        assert lenient.state is not None
        assert lenient.state.to_go_json() == fold(records).state.to_go_json()  # type: ignore[union-attr]
        if "reopened" in entry:  # the newest line: the status follows Ending()
            expected_status = (entry["ending"] or {}).get("reason") or "open"
        else:
            expected_status = entry["state"]["Terminal"]["reason"] if entry["state"]["Terminal"] else "open"
        assert lenient.status == expected_status
    else:
        assert lenient.status == "invalid"
        assert errors, "a refused journal says why"


@pytest.mark.parametrize("entry", expected("file") + expected("file", newest=True), ids=journal_id)
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


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=journal_id)
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


#: The newest corpus records no schema findings: its embedded schemas are the August ones (its MANIFEST).
@pytest.mark.parametrize("entry", [e for e in EVERY_JOURNAL if e["ok"] and "newest" not in e["corpus"]], ids=journal_id)
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
