"""Both generations through one seam: a journal is read, folded and written by the rules of the build its
``meta.version`` names, and the two builds' rules differ exactly where their code does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.cli import main
from journaltools.errors import FoldError, UndecodableLine, VersionMismatch
from journaltools.folding import fold
from journaltools.protocol import native
from journaltools.protocol.decode import decode_line
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import AUGUST, NEWEST, rules_for_version, unsupported_version
from journaltools.protocol.journal import journal_generation, read_file_journal
from journaltools.protocol.kinds import ZERO_TIME, kind_token, parse_kind
from journaltools.samples.builder import JournalBuilder, text, tool_use
from journaltools.testing.generate import fingerprint_for
from tests.paths import SAMPLES
from tests.strategies import valid_runs

CREATED = "2026-12-01T09:00:00.5+01:00"
T1, T2, T3 = "2026-12-01T08:00:01.25Z", "2026-12-01T08:00:02Z", "2026-12-01T08:00:03.000000001Z"


def newest_builder(run: str = "new-run") -> JournalBuilder:
    return JournalBuilder(
        run, prompt="check", created=CREATED, fingerprint=fingerprint_for("m"), generation=NEWEST, agent="ops", time=T1
    )


def lines_of(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


# -- which rules read a journal --------------------------------------------------------------------------------------


def test_the_meta_version_names_the_generation_and_other_versions_read_by_the_newest_rules() -> None:
    assert rules_for_version(3) is AUGUST and rules_for_version(1) is NEWEST
    assert rules_for_version(2) is NEWEST and rules_for_version(None) is NEWEST
    assert unsupported_version(7).endswith("snapshot version 7, supported 1 (the newest line) and 3 (the August build)")


def test_a_first_line_the_newest_decoder_refuses_is_judged_by_the_august_rules() -> None:
    """A malformed time on an August meta record: the August decoder skips the key, so the journal is August's."""
    august = JournalBuilder("old", prompt="p", created=CREATED, fingerprint=fingerprint_for("m"))
    line = lines_of(august.journal_bytes())[0]
    spoiled = line.replace(
        b'"protocol":"io.choria.fisk-ai.v1.session.meta",',
        b'"protocol":"io.choria.fisk-ai.v1.session.meta","time":"soon",',
    )
    with pytest.raises(UndecodableLine, match='parsing time "soon"'):
        decode_line(spoiled, NEWEST)
    assert journal_generation(spoiled) is AUGUST
    decoded = decode_line(spoiled, AUGUST)
    assert (
        decoded.record.time == "" and decoded.noncanonical is not None and "unknown key 'time'" in decoded.noncanonical
    )


def test_an_august_line_holding_a_newest_field_is_read_without_it_and_said_noncanonical() -> None:
    built = newest_builder()
    built.assistant(text("hi"))
    for line in lines_of(built.journal_bytes()):
        as_august = decode_line(line, AUGUST)
        assert as_august.record.time == "" and as_august.noncanonical is not None
        as_newest = decode_line(line, NEWEST)
        assert as_newest.record.time and as_newest.noncanonical is None


def test_newest_times_must_be_in_the_form_go_writes() -> None:
    built = newest_builder()
    line = lines_of(built.journal_bytes())[0]
    for written, reads_as, canonical in [
        (T1, T1, True),
        ("2026-12-01T09:00:01.25+01:00", "2026-12-01T09:00:01.25+01:00", True),  # a zone is kept as given
        ("2026-12-01T08:00:01.25+00:00", T1, False),  # Go writes a zero offset as Z
        ("2026-12-01T08:00:01.250Z", T1, False),  # no trailing fraction zeros
        (ZERO_TIME, "", False),  # the zero time is omitted, never written
    ]:
        respelled = line.replace(T1.encode(), written.encode())
        decoded = decode_line(respelled, NEWEST)
        assert decoded.record.time == reads_as, written
        assert (decoded.noncanonical is None) == canonical, written
    with pytest.raises(UndecodableLine, match=r"cannot unmarshal number into Go struct field Record.time"):
        decode_line(line.replace(f'"{T1}"'.encode(), b"17"), NEWEST)
    assert decode_line(line.replace(f'"{T1}"'.encode(), b"null"), NEWEST).record.time == ""


def test_a_summary_keyed_by_token_is_refused_and_respelled_keys_are_read_as_go_reads_them() -> None:
    built = newest_builder()
    call = tool_use("c1", "stream_ls", {})
    built.assistant(call)
    built.result("c1", "ok", kind="mcp")
    built.terminal("completed")
    line = lines_of(built.journal_bytes())[-1]
    assert b'"tool_calls_by_kind":{"5":1}' in line
    with pytest.raises(UndecodableLine, match=r"toolkit\.Kind"):
        decode_line(line.replace(b'{"5":1}', b'{"mcp":1}'), NEWEST)
    respelled = decode_line(line.replace(b'{"5":1}', b'{"+05":1}'), NEWEST)
    assert respelled.noncanonical is not None
    assert respelled.record.terminal is not None and respelled.record.terminal.summary is not None
    assert respelled.record.terminal.summary.counters.tool_calls_by_kind == {"5": 1}


def test_kinds_parse_exactly_and_case_sensitively() -> None:
    assert [parse_kind(token) for token in ("application", "builtin", "remote", "custom", "mcp")] == [1, 2, 3, 4, 5]
    assert parse_kind("MCP") == parse_kind("unknown") == parse_kind("quantum") == parse_kind("") == 0
    assert kind_token(5) == "mcp" and kind_token(99) == "unknown"


# -- the fold --------------------------------------------------------------------------------------------------------


def test_the_newest_fold_dates_counts_and_reopens() -> None:
    built = newest_builder()
    calls = [tool_use("c1", "stream_ls", {}), tool_use("c2", "jira", {}), tool_use("c3", "peer", {})]
    built.time = T2
    built.assistant(*calls, in_tokens=10, cache_read_tokens=5, cache_create_tokens=1)
    built.result("c1", "ok", kind="mcp")
    built.result("c2", "refused", kind="mcp", dispatched=False, is_error=True)
    built.time = T3
    built.result("c3", "ok", remote=True)
    built.terminal("completed")
    state = fold(built.records).state
    assert state is not None and state.generation is NEWEST and state.agent == "ops"
    assert state.times == [T1, T2, T3]
    assert state.result_times == {"c1": T2, "c2": T2, "c3": T3}
    assert state.ended == T3 and state.turns == 1 and state.context_tokens == 16
    assert state.counters.mcp_tool_calls == 1 and state.counters.remote_tool_calls == 1
    assert state.counters.tool_calls_by_kind == {5: 2, 3: 1}
    assert not state.reopened and state.ending() is state.terminal
    built.claim("worker", T3)
    reopened = fold(built.records)
    assert reopened.state is not None and reopened.state.reopened and reopened.state.ending() is None
    assert reopened.state.ended == ZERO_TIME and reopened.status == "open"


def test_the_same_records_as_an_august_journal_keep_the_august_status_and_shape() -> None:
    built = JournalBuilder("old", prompt="p", created=CREATED, fingerprint=fingerprint_for("m"))
    built.terminal("completed")
    built.claim("worker", T1)
    result = fold(built.records)
    assert result.state is not None and result.state.generation is AUGUST
    assert result.status == "completed"  # the August listing names the last terminal whatever follows it
    go = result.state.to_go_json()
    assert "Times" not in go and "Reopened" not in go and "LlmCalls" in go["Counters"]


def test_a_version_no_build_writes_is_refused_naming_both() -> None:
    built = JournalBuilder("odd", prompt="p", created=CREATED, fingerprint=fingerprint_for("m"), version=2)
    with pytest.raises(VersionMismatch, match=r"supported 1 \(the newest line\) and 3 \(the August build\)"):
        fold(built.records)
    lenient = fold(built.records, strict=False)
    assert lenient.status == "invalid" and lenient.state is not None and lenient.state.generation is NEWEST


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_runs(generation=NEWEST))
def test_every_generated_newest_run_is_canonical_and_folds_to_its_own_summaries(built: JournalBuilder) -> None:
    data = built.journal_bytes()
    journal = read_file_journal(data)
    assert not journal.corrupt and journal.torn_tail is None
    assert [read.record for read in journal.records] == built.records
    assert all(read.noncanonical is None for read in journal.records)
    assert all(encode_record(record) == line for record, line in zip(built.records, lines_of(data), strict=True))
    result = fold(built.records)
    assert result.state is not None and not [f for f in result.findings if f.severity == "error"]
    assert len(result.state.times) == len(result.state.messages)
    for position, record in enumerate(built.records):
        if record.terminal is not None:
            # The runner's summary is what the fold counts up to that terminal.
            before = fold(built.records[:position], strict=False).state
            assert before is not None and record.terminal.summary is not None
            assert record.terminal.summary.turns == before.turns
            assert record.terminal.summary.counters.tool_calls == before.counters.tool_calls


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_runs(generation=NEWEST, max_records=15))
def test_a_newest_run_reads_the_same_with_and_without_the_scanner(built: JournalBuilder) -> None:
    data = built.journal_bytes()
    with native.disabled():
        python = read_file_journal(data)
    scanned = read_file_journal(data)
    assert list(scanned.records) == list(python.records)


# -- what the August build's code wrote, found since -----------------------------------------------------------------


def test_a_base64_field_written_twice_keeps_the_last_value_only() -> None:
    built = JournalBuilder("sig", prompt="p", created=CREATED, fingerprint=fingerprint_for("m"))
    built.assistant(text("x"))
    line = lines_of(built.journal_bytes())[1]
    twice = line.replace(
        b'{"text":{"text":"x"}}', b'{"thinking":{"text":"t","signature":"bG9uZ2VyIGJ5dGVz","signature":"c2hvcnQ="}}'
    )
    decoded = decode_line(twice, AUGUST)
    assert decoded.record.assistant is not None
    block = decoded.record.assistant.message.content[0]  # type: ignore[index]
    assert block.thinking is not None and block.thinking.signature == b"short"
    assert decoded.noncanonical is not None


def test_show_json_keeps_a_lone_surrogate_escape_in_raw_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = newest_builder("3Surrogate")
    built.assistant(text("x"))
    data = built.journal_bytes().replace(b'{"text":{"text":"x"}}', b'{"provider":{"kind":"k","raw":{"a":"\\ud800"}}}')
    path = tmp_path / "3Surrogate.json"
    path.write_bytes(data)
    assert main(["show", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    document: dict[str, Any] = json.loads(out)
    assert '"raw":{"a":"\\ud800"}' in out.replace(" ", "").replace("\n", "")
    assert document["generation"] == "newest"


def test_fold_error_text_is_one_line_naming_run_and_seq() -> None:
    built = newest_builder()
    built.result("nope", "x")
    with pytest.raises(FoldError) as refused:
        fold(built.records, run="new-run")
    assert "\n" not in str(refused.value) and "new-run" in str(refused.value) and "seq 2" in str(refused.value)
    assert msgspec.json.encode(built.records[1])  # the refused record still encodes


def test_a_journal_whose_meta_run_id_is_not_its_name_is_listed_with_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both runtime listings name a run by meta.run_id; journaltools keeps the name it is stored under (the one
    every command opens it by), shows meta.run_id beside it and warns."""
    built = JournalBuilder("3TheMetaSaysThis", prompt="p", created=CREATED, fingerprint=fingerprint_for("m"))
    built.terminal("completed")
    (tmp_path / "3TheFileSaysThis.json").write_bytes(built.journal_bytes())
    assert main(["ls", "--json", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)
    assert (row["run"], row["run_id"]) == ("3TheFileSaysThis", "3TheMetaSaysThis")
    assert "run_id_mismatch" in captured.err
    result = fold(built.records, run="3TheFileSaysThis")
    assert [f.code for f in result.findings] == ["run_id_mismatch"] and result.status == "completed"


def test_show_says_which_build_wrote_the_run_and_dates_each_message(capsys: pytest.CaptureFixture[str]) -> None:
    samples = SAMPLES
    assert main(["show", str(samples), "newest-memory-after-terminal"]) == 0
    newest = capsys.readouterr().out
    assert "written by the newest line (format version 1) · agent ops" in newest
    assert "reopened: completed at seq " in newest and "then reopened by a memory_revisions record" in newest
    assert newest.startswith("run newest-memory-after-")
    assert any(line.startswith("[seq 1] user  2026-11-29T") for line in newest.splitlines())
    assert main(["show", str(samples), "memory-after-terminal"]) == 0
    august = capsys.readouterr().out
    assert "written by the August build (format version 3)" in august and "reopened" not in august
    # An August record carries no time: only the prompt is dated, by meta.created (the newest fold's rule), shown in
    # UTC to the millisecond as every time on screen (meta.created is 09:30:00.512331907+01:00).
    assert "[seq 1] user  2026-11-29T08:30:00.512Z" in august.splitlines()
    assert any(line == "[seq 2] assistant" for line in august.splitlines())


@given(
    st.integers(-(10**18), 4 * 10**18),
    st.sampled_from([0, 60, 3600, -18_000, 19_800, 50_400, -43_200]),
)
def test_the_fast_record_time_reader_agrees_with_the_go_time_parser(unix_ns: int, offset: int) -> None:
    from journaltools.folding.facts import time_ns
    from journaltools.goencoding.time import format_go_time, parse_go_time

    text = format_go_time(unix_ns, offset)
    assert time_ns(text) == parse_go_time(text).unix_ns == unix_ns


def test_the_views_time_a_newest_run_by_its_records_and_say_an_august_file_has_no_times() -> None:
    from journaltools.sources.registry import open_source
    from journaltools.widgets._source import RunFolds

    samples = SAMPLES
    folds = RunFolds(open_source(samples), owned=True)
    try:
        newest = folds.facts("newest-completed-with-tools")
        august = folds.facts("completed-with-tools")
    finally:
        folds.close()
    assert newest is not None and august is not None
    assert "own time" in newest.times_note() and newest.dated_by_records
    first_turn = next(seq for seq in newest.turns)
    assert newest.turn_seconds(first_turn) is not None and newest.turn_seconds(first_turn) > 0  # type: ignore[operator]
    assert "keeps no time per record" in august.times_note() and august.turn_seconds(first_turn) is None


def test_the_run_browser_finds_runs_by_agent_and_generation() -> None:
    from journaltools.widgets import load_source

    samples = SAMPLES
    model, _loader = load_source(samples)
    # The search looks through every text of a row, so a word can match more than the generation: each run of the
    # generation is found, and the runs of the other generation are not all found.
    newest = {row.run for row in model.rows if row.run.startswith("newest-")}
    found = {row.run for row in model.with_filter(text="newest").visible()}
    assert newest <= found and len(found) < len(model.rows)
    august = {row.run for row in model.rows if not row.run.startswith("newest-") and row.status != "invalid"}
    found = {row.run for row in model.with_filter(text="august").visible()}
    assert august - {"version-mismatch"} <= found and not newest <= found
    assert "newest-provider-kinds" in {row.run for row in model.with_filter(text="ops").visible()}
