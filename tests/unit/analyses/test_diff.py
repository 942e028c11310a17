"""``diff`` on real journals: two resumes of one conversation (segments), a run against a mutated copy of itself, an
August run against its newest twin, and the command line's text and JSON."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import journaltools as jt
from journaltools.cli import main
from journaltools.errors import NoSuchSegment
from journaltools.folding.facts import time_ns
from journaltools.sources.registry import open_source
from tests.paths import ROOT
from tests.schemas import hold_to_schema

SAMPLES = ROOT / "data" / "samples"
RUNSTATE = ROOT / "tests" / "corpus" / "runstate"
#: A served conversation of the August build: three process runs, one turn of the conversation each.
SERVED_AUGUST = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"
#: The same story written by the newest line (every record dated).
SERVED_NEWEST = "3MtgeOuhH1hX0sCu2uW3DwBbOBL"


def test_a_run_against_itself_is_identical() -> None:
    result = jt.diff(str(SAMPLES), "newest-completed-with-tools", "newest-completed-with-tools")
    assert result.same_records and result.identical
    assert result.first_divergence is None and not result.only_in_a and not result.only_in_b
    assert result.gate is not None and result.gate.resumable
    assert result.times_compared
    assert all(turn.tokens["in_tokens"].delta == 0 for turn in result.turns)
    assert all(pair.aligned_by == "tool_use_id" and not pair.differs for pair in result.calls)


def test_two_resumes_of_one_conversation_line_up_turn_by_turn() -> None:
    result = jt.diff(str(RUNSTATE / "file"), SERVED_AUGUST, segments=(0, 1))
    assert (result.a.segment, result.b.segment) == (0, 1)
    assert (result.a.first_seq, result.a.last_seq, result.b.first_seq, result.b.last_seq) == (1, 6, 7, 14)
    # Each resume's first turn is turn 0, whatever its iteration in the journal.
    assert [(turn.turn, turn.a.iteration, turn.b.iteration) for turn in result.turns if turn.a and turn.b] == [
        (0, 0, 2),
        (1, 1, 3),
    ]
    first = result.first_divergence
    assert first is not None and first.a is not None and first.b is not None
    assert (first.turn, first.aligned_by, first.differs) == (0, "position", ("input", "result"))
    assert first.a.tool == first.b.tool == "memory_write"
    assert [call.tool_use_id for call in result.only_in_b] == ["toolu_01N1Hacid7qDnhISCJ18LBS8"]
    assert result.totals["in_tokens"].delta == 350 - 600
    assert result.fingerprint_changes == [] and not result.same_records
    assert not result.times_compared and result.times_note is not None and "A and B" in result.times_note
    assert result.totals["elapsed_ns"].delta is None


def test_two_dated_resumes_compare_their_times() -> None:
    source = RUNSTATE / "newest" / "file"
    result = jt.diff(str(source), SERVED_NEWEST, segments=(1, 2))
    assert result.times_compared and result.times_note is None
    with open_source(str(source)) as backend:
        records = backend.read_run(SERVED_NEWEST).typed()
    for side in (result.a, result.b):
        moments = [time_ns(record.time) for record in records if side.first_seq <= record.seq <= side.last_seq]
        elapsed = result.totals["elapsed_ns"].a if side is result.a else result.totals["elapsed_ns"].b
        assert elapsed == max(m for m in moments if m is not None) - min(m for m in moments if m is not None)
    for turn in result.turns:
        assert turn.model_ns.a is not None and turn.model_ns.a > 0
        assert turn.model_ns.delta == turn.model_ns.b - turn.model_ns.a  # type: ignore[operator]
    assert result.totals["model_ns"].a == sum(turn.model_ns.a or 0 for turn in result.turns)


def test_an_august_run_against_its_newest_twin() -> None:
    result = jt.diff(str(SAMPLES), "deferred-waiting", "newest-deferred-waiting")
    assert (result.a.folded.generation.name, result.b.folded.generation.name) == ("august", "newest")  # type: ignore[union-attr]
    assert not result.a.dated and result.b.dated
    assert result.first_divergence is None and result.fingerprint_changes == []
    assert not result.times_compared and result.times_note is not None and result.times_note.startswith("A ")
    # The newest line says which provider served each call and whether it ran; the August build cannot.
    answered = [pair for pair in result.calls if pair.a is not None and pair.a.answer is not None]
    assert answered and all(pair.differs == ("kind", "dispatched") for pair in answered)
    deferred = [pair for pair in result.calls if pair.a is not None and pair.a.deferral is not None]
    assert [pair.a.tool_use_id for pair in deferred if pair.a] == ["toolu_01D2change"]
    assert not result.identical and not result.same_records


def _mutated_copy(tmp_path: Path, run: str, old: bytes, new: bytes) -> Path:
    copy = tmp_path / "copy"
    copy.mkdir()
    data = (SAMPLES / f"{run}.json").read_bytes()
    assert data.count(old) == 1
    (copy / f"{run}.json").write_bytes(data.replace(old, new))
    shutil.copy(SAMPLES / f"{run}.lock", copy / f"{run}.lock")
    return copy


def test_a_run_against_a_copy_whose_result_changed(tmp_path: Path) -> None:
    copy = _mutated_copy(tmp_path, "newest-deferred-waiting", b"3 servers, all current", b"2 servers, one lagging")
    result = jt.diff(str(SAMPLES), "newest-deferred-waiting", source_b=str(copy))
    assert not result.same_records and not result.identical
    first = result.first_divergence
    assert first is not None and first.a is not None and first.b is not None
    assert (first.a.tool_use_id, first.aligned_by, first.differs) == ("toolu_01D3peers", "tool_use_id", ("result",))
    assert first.b.answer is not None and first.b.answer.result.content == "2 servers, one lagging"
    assert result.fingerprint_changes == [] and result.times_compared
    assert all(turn.tokens["out_tokens"].delta == 0 and not turn.text_differs for turn in result.turns)


def test_a_changed_model_is_a_fingerprint_change_the_gate_refuses(tmp_path: Path) -> None:
    copy = _mutated_copy(tmp_path, "deferred-waiting", b'"model":"claude-sonnet-4-6"', b'"model":"claude-opus-4-8"')
    result = jt.diff(str(SAMPLES), "deferred-waiting", source_b=str(copy))
    assert [change.field for change in result.fingerprint_changes] == ["model"]
    assert result.gate is not None and not result.gate.resumable
    assert result.gate.refusal is not None and result.gate.refusal.startswith("model changed")
    assert result.first_divergence is None


def test_a_segment_the_run_does_not_have_is_refused() -> None:
    with pytest.raises(NoSuchSegment, match="has 3 process run"):
        jt.diff(str(RUNSTATE / "file"), SERVED_AUGUST, segments=(0, 3))


def test_the_command_line_prints_text_and_a_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(RUNSTATE / "file"), SERVED_AUGUST, "--segments", "0", "1"]) == 0
    out = capsys.readouterr().out
    assert "first divergence: turn 0: input, result" in out
    assert "only in B: turn 0: toolu_01N1Hacid7qDnhISCJ18LBS8 memory_write" in out
    assert "time: not compared" in out
    copy = _mutated_copy(tmp_path, "newest-deferred-waiting", b"3 servers, all current", b"evil \\u001b[31m text")
    assert main(["diff", str(SAMPLES), "newest-deferred-waiting", str(copy), "newest-deferred-waiting"]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[31m" in out and "\x1b" not in out
    for argv in (
        ["diff", "--json", str(SAMPLES), "deferred-waiting", "newest-deferred-waiting"],
        ["diff", "--json", str(RUNSTATE / "newest" / "file"), SERVED_NEWEST, "--segments", "0", "2"],
        ["diff", "--json", str(SAMPLES), "newest-deferred-waiting", str(copy), "newest-deferred-waiting"],
    ):
        assert main(argv) == 0
        document = hold_to_schema("diff", capsys.readouterr().out)
        assert document["a"]["run"] == argv[3]
    assert main(["diff", str(RUNSTATE / "file"), SERVED_AUGUST, "--segments", "0", "7"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no segment 7" in err
    assert main(["diff", str(SAMPLES), "a", "b", "c", "d", "e"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_conversation_token_never_shows(capsys: pytest.CaptureFixture[str]) -> None:
    source = RUNSTATE / "file"
    token = next(
        record.meta.conversation_token
        for record in open_source(str(source)).read_run(SERVED_AUGUST).typed()
        if record.meta is not None
    )
    assert token
    for json_flag in ([], ["--json"]):
        assert main(["diff", *json_flag, str(source), SERVED_AUGUST, "--segments", "0", "2"]) == 0
        assert token not in capsys.readouterr().out


def test_process_runs_of_a_run_and_its_copy_across_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in (".json", ".lock"):
        shutil.copy(SAMPLES / f"newest-resumed-mid-batch{suffix}", copy / f"newest-resumed-mid-batch{suffix}")
    run = "newest-resumed-mid-batch"
    assert main(["diff", "--json", str(SAMPLES), run, str(copy), run, "--segments", "1", "1"]) == 0
    document = hold_to_schema("diff", capsys.readouterr().out)
    assert document["same_records"] and document["identical"]
    assert document["a"]["segment"] == document["b"]["segment"] == 1
    assert document["a"]["source"] != document["b"]["source"]
    assert main(["diff", str(SAMPLES), run, str(copy), run, "--segments", "0", "1"]) == 0
    assert "records: the same" not in capsys.readouterr().out


def test_two_runs_that_ended_differently_differ_in_their_ending() -> None:
    # A budget run against a max_iterations run: the diff said "nothing compared differs".
    import journaltools as jt
    from tests.runstate_corpus import NEWEST_CORPUS

    result = jt.diff(NEWEST_CORPUS / "file", "3MtgeRMIkUXErFFpkcJexCl6W7H", "3MtgeRNFbeD9vpZi24hXbYqmwFz")
    assert result.ending_differs and not result.identical
    endings = (result.a.ending, result.b.ending)
    assert {ending.split(":")[0] for ending in endings} == {"budget", "max_iterations"}
    document = result.to_json()
    assert document["ending"] == {"a": endings[0], "b": endings[1], "changed": True}
    text = "\n".join(result.text_lines())
    assert "ending: A " in text and "nothing compared differs" not in text
    same = jt.diff(NEWEST_CORPUS / "file", "3MtgeRMIkUXErFFpkcJexCl6W7H", "3MtgeRMIkUXErFFpkcJexCl6W7H")
    assert not same.ending_differs and "ending: the same (budget" in "\n".join(same.text_lines())


def test_the_findings_and_tool_errors_of_each_side_are_among_the_differences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    newest = RUNSTATE / "newest" / "file"
    # A run whose answer another clock dated (times_out_of_order) against one with three failed calls.
    backwards, failing = "3MtgeORUyjqNtTnpuv2wKMRNDfC", "3MtgeTrRxJo6h6ZYHdtiutXyqYm"
    compared = jt.diff(str(newest), backwards, failing, strict=False)
    with open_source(newest) as source:
        folded = {run: jt.diff(str(newest), run, strict=False).a for run in (backwards, failing)}
        errors = {
            run: sum(1 for call in side.calls if call.answer is not None and call.answer.result.is_error)
            for run, side in folded.items()
        }
        assert source.read_run(failing, strict=False).complete
    assert compared.a.problems == {"times_out_of_order": 1} and compared.b.problems == {}
    assert (compared.a.tool_errors, compared.b.tool_errors) == (errors[backwards], errors[failing]) == (0, 3)
    assert not compared.identical and compared.problems_differ and compared.tool_errors_differ
    document = compared.to_json()
    assert document["findings"]["changed"] and document["tool_errors"] == {"a": 0, "b": 3, "changed": True}
    assert main(["diff", "--lenient", str(newest), backwards, failing]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "findings: A times_out_of_order" in out and "          B none" in out and "tool errors: A 0, B 3" in out
    # A run against itself: nothing of either differs.
    same = jt.diff(str(newest), failing, strict=False)
    assert not same.problems_differ and not same.tool_errors_differ
