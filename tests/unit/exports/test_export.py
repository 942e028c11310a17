"""``journaltools export``: every OTLP line is a ``TracesData`` the OpenTelemetry protobuf definitions read (strictly),
on both generations, the samples and the real corpora; ids are stable; time is only what the journal holds; content
only when asked; the conversation token never."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

from journaltools.cli import main
from journaltools.exports.atif import atif_trajectory
from journaltools.exports.interchange import export, export_atif, export_otlp
from journaltools.exports.otlp import otlp_trace
from journaltools.exports.runview import OUTCOMES
from journaltools.folding.facts import time_ns
from journaltools.folding.run import fold_run
from journaltools.protocol.journal import typed_records
from journaltools.sources.registry import open_source
from tests.otlp import with_binary_ids
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS, random_ones_slow

SOURCES = {
    "samples": SAMPLES,
    "august-scenarios": CORPUS / "file",
    "august-random": CORPUS / "random",
    "newest-scenarios": NEWEST_CORPUS / "file",
    "newest-random": NEWEST_CORPUS / "random",
}
TOKEN_KEY = "conversation_token"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def spans_of(trace: dict[str, Any]) -> list[dict[str, Any]]:
    (resource,) = trace["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    spans: list[dict[str, Any]] = scope["spans"]
    return spans


def attrs(item: dict[str, Any]) -> dict[str, Any]:
    """OTLP key-values as plain values (intValue as int)."""
    out: dict[str, Any] = {}
    for pair in item["attributes"]:
        ((kind, value),) = pair["value"].items()
        out[pair["key"]] = int(value) if kind == "intValue" else value
    return out


def tokens_in(source: Path) -> set[str]:
    found = set()
    for path in source.glob("*.json"):
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            token = (record.get("meta") or {}).get(TOKEN_KEY) if isinstance(record, dict) else None
            if token:
                found.add(token)
    return found


# -- the real consumer: the OpenTelemetry protobuf definitions -----------------------------------------------------


@pytest.mark.parametrize(
    "name",
    # The random corpora are hundreds of runs and tens of thousands of spans: their parse takes the slow lane.
    random_ones_slow(list(SOURCES)),
)
def test_every_otlp_line_is_a_traces_data_the_protobuf_definitions_read(name: str, tmp_path: Path) -> None:
    source = SOURCES[name]
    out = tmp_path / "traces.jsonl"
    report = export(source, otlp=out, content=True)
    raw_lines = out.read_bytes().splitlines()
    assert len(raw_lines) == len(report.runs) > 0
    generations = set()
    for raw in raw_lines:
        # Strict: an unknown field or a wrong type raises (the ids, turned from hex, are held to their lengths).
        data = json_format.Parse(with_binary_ids(raw), TracesData())
        (resource,) = data.resource_spans
        (scope,) = resource.scope_spans
        spans = list(scope.spans)
        assert {len(span.trace_id) for span in spans} == {16} and {len(span.span_id) for span in spans} == {8}
        assert len({span.trace_id for span in spans}) == 1 and len({span.span_id for span in spans}) == len(spans)
        root, *children = spans
        assert root.parent_span_id == b"" and root.name.startswith("invoke_agent")
        assert all(child.parent_span_id == root.span_id for child in children)
        assert all(span.start_time_unix_nano <= span.end_time_unix_nano for span in spans)
        assert all(root.start_time_unix_nano <= span.start_time_unix_nano for span in children)
        assert all(span.end_time_unix_nano <= root.end_time_unix_nano for span in children)
        names = {span.name.split(" ")[0] for span in children}
        assert names <= {"chat", "execute_tool"}
        generations.add(attrs(json.loads(raw)["resourceSpans"][0]["scopeSpans"][0]["spans"][0])["fisk.generation"])
    # (an August corpus also holds a version-2 journal, which every build reads by the newest rules)
    assert generations >= ({"newest", "august"} if name == "samples" else {name.split("-")[0]})


def test_a_re_export_is_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    export(SAMPLES, otlp=first, atif=tmp_path / "a.atif", content=True)
    export(SAMPLES, otlp=second, atif=tmp_path / "b.atif", content=True)
    assert first.read_bytes() == second.read_bytes()
    assert (tmp_path / "a.atif").read_bytes() == (tmp_path / "b.atif").read_bytes()
    # and the ids are the run's, not the file's: one run alone gets the ids it had among the others
    alone = tmp_path / "one.jsonl"
    export_otlp(SAMPLES, ["newest-completed-with-tools"], path=alone)
    (trace,) = lines(alone)
    together = {attrs(spans_of(t)[0])["gen_ai.conversation.id"]: t for t in lines(tmp_path / "a.jsonl")}
    assert [s["spanId"] for s in spans_of(trace)] == [
        s["spanId"] for s in spans_of(together["newest-completed-with-tools"])
    ]


# -- honest time ---------------------------------------------------------------------------------------------------


def folded(run: str, source: Path = SAMPLES) -> Any:
    with open_source(str(source)) as backend:
        return fold_run(backend.read_run(run, strict=False))


def test_an_undated_journal_sits_at_meta_created_with_no_duration_and_says_so() -> None:
    run = folded("completed-with-tools")
    assert not run.facts().dated
    created = time_ns(typed_records(run.read.records)[0].meta.created)
    trace = otlp_trace(run)
    assert attrs(trace["resourceSpans"][0]["resource"])["fisk.undated"] is True
    spans = spans_of(trace)
    assert attrs(spans[0])["fisk.undated"] is True
    assert len(spans) > 3
    assert {(int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])) for s in spans} == {(created, created)}
    # the journal's order survives as seqs, not as made-up gaps
    chats = [attrs(s)["fisk.seq"] for s in spans if s["name"].startswith("chat")]
    assert chats == sorted(chats) and len(set(chats)) == len(chats)


def test_dated_spans_come_from_the_records_own_times() -> None:
    run = folded("newest-completed-with-tools")
    facts = run.facts()
    assert facts.dated
    spans = spans_of(otlp_trace(run))
    root = spans[0]
    assert attrs(root)["fisk.undated"] is False
    meta = typed_records(run.read.records)[0].meta
    assert int(root["startTimeUnixNano"]) == time_ns(meta.created)
    assert int(root["endTimeUnixNano"]) == time_ns(facts.last_time())
    by_seq = {attrs(s)["fisk.seq"]: s for s in spans if s["name"].startswith("chat")}
    for response in facts.responses:
        span = by_seq[response.seq]
        before = facts.seqs[facts.seqs.index(response.seq) - 1]
        assert int(span["endTimeUnixNano"]) == time_ns(response.time)
        assert int(span["startTimeUnixNano"]) == time_ns(facts.times[before])
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert len(tools) == len(facts.calls)
    for span, call in zip(tools, facts.calls, strict=True):
        assert attrs(span)["gen_ai.tool.call.id"] == call.tool_use_id
        if call.answered_seq is not None and call.deferral is None:
            assert int(span["endTimeUnixNano"]) == time_ns(call.answered_time)
        duration = int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])
        assert duration == (call.duration_ns or 0)


def test_tool_spans_say_kind_outcome_and_dispatch_as_the_journal_does() -> None:
    newest = spans_of(otlp_trace(folded("newest-provider-kinds")))
    tools = [attrs(s) for s in newest if s["name"].startswith("execute_tool")]
    assert {tool["fisk.tool.outcome"] for tool in tools} <= set(OUTCOMES)
    assert {tool["fisk.tool.kind"] for tool in tools} >= {"application", "builtin", "mcp"}
    assert all("fisk.tool.dispatched" in tool for tool in tools if tool["fisk.tool.outcome"] != "unanswered")
    august = spans_of(otlp_trace(folded("completed-with-tools")))
    august_tools = [attrs(s) for s in august if s["name"].startswith("execute_tool")]
    # an August result says nothing of dispatch unless it ran remotely: no dispatch is claimed for it
    assert any(tool["fisk.tool.outcome"] == "answered" and "fisk.tool.dispatched" not in tool for tool in august_tools)
    errors = [s for s in august + newest if attrs(s).get("fisk.tool.outcome") == "error"]
    assert errors and all(s["status"] == {"code": 2} for s in errors)
    waiting = spans_of(otlp_trace(folded("deferred-waiting")))
    assert "deferred" in {attrs(s).get("fisk.tool.outcome") for s in waiting}
    root = attrs(waiting[0])
    assert root["gen_ai.operation.name"] == "invoke_agent" and root["fisk.run.terminal_reason"] == "suspended"
    assert "gen_ai.agent.name" not in root  # an August journal names no agent
    assert (
        attrs(newest[0])["gen_ai.agent.name"]
        and newest[0]["name"] == f"invoke_agent {attrs(newest[0])['gen_ai.agent.name']}"
    )


# -- content -------------------------------------------------------------------------------------------------------

CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


def test_content_only_when_asked_and_the_conversation_token_never(tmp_path: Path) -> None:
    tokens = tokens_in(SAMPLES)
    assert tokens  # the samples hold served runs with a token
    plain, full = tmp_path / "plain", tmp_path / "full"
    plain.mkdir(), full.mkdir()
    export(SAMPLES, otlp=plain / "t.jsonl", atif=plain / "a.jsonl")
    export(SAMPLES, otlp=full / "t.jsonl", atif=full / "a.jsonl", content=True)
    for directory in (plain, full):
        for path in directory.iterdir():
            text = path.read_text(encoding="utf-8")
            assert not any(token in text for token in tokens), path
            assert TOKEN_KEY not in text
    plain_keys = {key for t in lines(plain / "t.jsonl") for s in spans_of(t) for key in attrs(s)}
    full_keys = {key for t in lines(full / "t.jsonl") for s in spans_of(t) for key in attrs(s)}
    assert not plain_keys & CONTENT_KEYS and full_keys >= CONTENT_KEYS
    # the messages are the GenAI conventions' JSON documents
    for trace in lines(full / "t.jsonl"):
        for span in spans_of(trace):
            values = attrs(span)
            if "gen_ai.output.messages" in values:
                (output,) = json.loads(values["gen_ai.output.messages"])
                assert output["role"] == "assistant" and isinstance(output["parts"], list)
                assert all(part["type"] in ("text", "reasoning", "tool_call") for part in output["parts"])
    plain_atif = lines(plain / "a.jsonl")
    assert all(step["message"] == "" for t in plain_atif for step in t["steps"])
    assert all(
        call["arguments"] == {} for t in plain_atif for step in t["steps"] for call in step.get("tool_calls", [])
    )


# -- ATIF ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["samples", "august-scenarios", "newest-scenarios"])
def test_atif_trajectories_follow_the_format(name: str, tmp_path: Path) -> None:
    out = tmp_path / "trajectories.jsonl"
    report = export_atif(SOURCES[name], path=out, content=True)
    trajectories = lines(out)
    assert [t["session_id"] for t in trajectories] == report.runs
    for trajectory in trajectories:
        assert trajectory["schema_version"] == "ATIF-v1.4"
        assert trajectory["agent"]["name"] and trajectory["agent"]["version"]
        steps = trajectory["steps"]
        assert [step["step_id"] for step in steps] == list(range(1, len(steps) + 1))
        assert steps[0]["source"] == "user" and {step["source"] for step in steps} <= {"user", "agent"}
        undated = trajectory["extra"]["undated"]
        if undated:  # a dated journal may still hold an undated record, whose step has no time either
            assert not any("timestamp" in step for step in steps)
        for step in steps:
            ids = {call["tool_call_id"] for call in step.get("tool_calls", [])}
            assert all(isinstance(call["arguments"], dict) for call in step.get("tool_calls", []))
            results = step.get("observation", {}).get("results", [])
            assert {result["source_call_id"] for result in results} <= ids
        agent_steps = [step for step in steps if step["source"] == "agent"]
        assert (
            sum(step["metrics"]["completion_tokens"] for step in agent_steps)
            == trajectory["final_metrics"]["total_completion_tokens"]
            or trajectory["extra"]["status"] == "invalid"
        )


def test_atif_of_one_dated_run_matches_its_records() -> None:
    run = folded("newest-completed-with-tools")
    trajectory = atif_trajectory(run, content=True)
    facts = run.facts()
    agent_steps = [step for step in trajectory["steps"] if step["source"] == "agent"]
    assert [step["timestamp"] for step in agent_steps] == [response.time for response in facts.responses]
    calls = [call["tool_call_id"] for step in agent_steps for call in step.get("tool_calls", [])]
    assert calls == [call.tool_use_id for call in facts.calls]


# -- the command line ----------------------------------------------------------------------------------------------


def test_the_command_writes_both_files_and_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    otlp, atif = tmp_path / "t.jsonl", tmp_path / "a.jsonl"
    assert main(["export", str(SAMPLES), "--otlp", str(otlp), "--atif", str(atif)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"exported {len(lines(otlp))} runs") and len(lines(atif)) == len(lines(otlp))
    assert main(["export", str(SAMPLES), "newest-terminal-error", "deferred-waiting", "--otlp", str(otlp)]) == 0
    capsys.readouterr()
    assert [attrs(spans_of(t)[0])["gen_ai.conversation.id"] for t in lines(otlp)] == [
        "newest-terminal-error",
        "deferred-waiting",
    ]
    assert spans_of(lines(otlp)[0])[0]["status"] == {"code": 2}  # the run ended in error
    before = otlp.read_bytes()
    for argv, status in (
        (["export", str(SAMPLES)], 2),
        (["export", str(SAMPLES), "no-such-run", "--otlp", str(otlp)], 1),
        (["export", str(SAMPLES), "--otlp", str(tmp_path / "missing" / "t.jsonl")], 1),
    ):
        assert main(argv) == status
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    # a failed export leaves the file it would have replaced as it was, and nothing half-written
    assert otlp.read_bytes() == before and not list(tmp_path.glob(".*"))  # no staging file


def test_the_top_level_names_are_the_functions_even_once_the_module_is_imported(tmp_path: Path) -> None:
    import journaltools as jt
    import journaltools.exports.interchange

    # (a package attribute named like a submodule would be replaced by the module when it is imported)
    assert (
        jt.export_otlp is journaltools.exports.interchange.export_otlp
        and jt.export_atif is journaltools.exports.interchange.export_atif
    )
    report = jt.export_atif(SAMPLES, ["deferred-waiting"], path=tmp_path / "one.ndjson")
    assert report.runs == ["deferred-waiting"] and not report.skipped
    with pytest.raises(jt.JournalError, match="nothing to export to"):
        journaltools.exports.interchange.export(SAMPLES)


def test_the_names_others_filter_on_stay_as_they_were_published() -> None:
    # A trace viewer's filters and a logging configuration name these; a module moving must not rename them.
    import logging

    import journaltools._base.aio  # noqa: F401 - creates its logger
    from journaltools.exports.otlp import SCOPE_NAME

    assert SCOPE_NAME == "journaltools.export"
    assert "journaltools.aio" in logging.Logger.manager.loggerDict
