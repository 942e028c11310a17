"""The command line over the real corpus: shapes of INTERFACES, exit status 0/1/2, one line on stderr for a
refusal, no traceback, no conversation token anywhere, journal content escaped on the terminal."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from journaltools.cli import _show as cli_show
from journaltools.cli import main
from journaltools.cli._parser import build_parser
from journaltools.folding.phrases import shown_time
from tests.paths import ROOT

CORPUS = ROOT / "tests" / "corpus" / "runstate"
FILES = CORPUS / "file"
EXPECTED = {
    row["store_id"]: row
    for row in (json.loads(line) for line in (CORPUS / "expected" / "file.jsonl").read_text().splitlines())
}

DEFERRED_WAITING = "3IDi1LEy6uQIbFWHJESmsjTENLn"
SUPPLIED_NOT_RESUMED = "3IDdWOESEKqijGnQfKh5NwIRHpZ"
CHAT = "3IDUWNdYa4N8nFjmJZ3zzK1H1J7"
SERVED = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"
TURN_IN_FLIGHT = "3IEj14CtE7bmwlCCwwtiSgDi881"
VERSION_2 = "3IFJ0ydR80CR95kPTqm7HTd4xis"
RESULT_FIRST = "3IFb0vb89YiYgd8BjhBiiiBa7A2"
UNICODE = "3IFNVsmwrdEhvAbxNtV55hgvOmj"

SHOW_KEYS = {
    "run", "status", "messages", "pending", "pending_calls", "open_deferrals", "counters", "resume", "approvals",
    "call_approvals", "memory_revisions", "terminal", "segments", "findings",
}  # fmt: skip


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def show_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "show", "--json", *argv)
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def tokens() -> list[str]:
    found = [row["state"]["ConversationToken"] for row in EXPECTED.values() if row["ok"]]
    return [token for token in found if token]


# -- the parser ------------------------------------------------------------------------------------------------


def test_every_command_and_option_has_help() -> None:
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    names = set(commands.choices)  # type: ignore[arg-type]
    assert {"ls", "show", "audit", "compare", "migrate", "gate", "answer", "samples", "schema", "turns"} <= names
    for sub in commands.choices.values():  # type: ignore[union-attr]
        assert sub.description
        for action in sub._actions:
            if action.option_strings:  # positionals are named in the usage line and the epilog
                assert action.help, f"{sub.prog}: {action.dest} has no help"


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["show", "--no-such-option"])
    assert exited.value.code == 2
    capsys.readouterr()
    code, out, err = run_cli(capsys, "show", str(FILES), DEFERRED_WAITING, "extra")
    assert code == 2 and out == "" and err.count("\n") == 1
    code, _, err = run_cli(capsys, "show", str(FILES))  # a directory of many runs: the run must be named
    assert code == 2 and "name the one" in err
    code, _, err = run_cli(capsys, "ls", "nats://host:99999/S")
    assert code == 2 and "Traceback" not in err


# -- show ------------------------------------------------------------------------------------------------------


def test_show_json_holds_the_folded_state_in_snake_case(capsys: pytest.CaptureFixture[str]) -> None:
    document = show_json(capsys, str(FILES), DEFERRED_WAITING)
    assert set(document) >= SHOW_KEYS
    assert document["status"] == "suspended" and document["terminal"] == {"reason": "suspended"}
    assert document["resume"] == {
        "last_seq": 7,
        "next_iteration": 1,
        "last_stop_reason": "tool_use",
        "waiting_for": "answer",
    }
    assert set(document["counters"]) == {
        "llm_calls", "tool_calls", "remote_tool_calls", "mcp_tool_calls", "in_tokens", "out_tokens",
        "cache_read_tokens", "cache_create_tokens", "thinking_tokens", "tool_calls_by_kind",
    }  # fmt: skip
    deferred = {
        "tool_use_id": "toolu_01UlI0pUN5s0LM3WnLle3UP7",
        "tool_name": "change_request_open",
        "note": "waiting on security approval",
        "handle": "SEC-2291",
    }
    assert document["open_deferrals"] == [deferred]
    [call] = document["pending_calls"]
    assert call["id"] == deferred["tool_use_id"] and call["input"] == {"summary": "Rotate billing credentials"}
    assert call["deferred"] == {"note": deferred["note"], "handle": deferred["handle"]}
    pending = document["pending"]
    assert set(pending) >= {"assistant", "iteration", "stop_reason", "results", "answered", "deferred"}
    assert pending["deferred"] == {deferred["tool_use_id"]: deferred} and len(pending["answered"]) == 2
    assert [result["tool_use_id"] for result in pending["results"]] == pending["answered"] or len(
        pending["results"]
    ) == 2
    assert [segment["ending"] for segment in document["segments"]] == ["suspended"]


@pytest.mark.parametrize("run", sorted(run for run, row in EXPECTED.items() if row["ok"]))
def test_show_json_equals_the_runtimes_fold(capsys: pytest.CaptureFixture[str], run: str) -> None:
    """Every accepted journal of the corpus, field by field against what the runtime's own Fold returned."""
    expected = EXPECTED[run]
    state = expected["state"]
    document = show_json(capsys, str(FILES), run)
    assert document["messages"] == state["Messages"]
    assert document["approvals"] == state["Approvals"]
    assert document["call_approvals"] == state["CallApprovals"]
    assert document["memory_revisions"] == state["MemoryRevisions"]
    assert document["terminal"] == state["Terminal"]
    assert document["resume"]["next_iteration"] == state["NextIteration"]
    assert document["resume"]["last_stop_reason"] == state["LastStopReason"]
    assert document["resume"]["last_seq"] == expected["last_seq"]
    go_counters = state["Counters"]
    assert document["counters"]["llm_calls"] == go_counters["LlmCalls"]
    assert document["counters"]["thinking_tokens"] == go_counters["ThinkingTokens"]
    pending = state["Pending"]
    if pending is None:
        assert document["pending"] is None and document["open_deferrals"] == []
    else:
        assert document["pending"]["assistant"] == pending["Assistant"]
        assert document["pending"]["results"] == (pending["Results"] or [])
        assert document["pending"]["answered"] == sorted(pending["Answered"] or {})
        assert document["pending"]["deferred"] == (pending["Deferred"] or {})
        assert document["open_deferrals"] == (expected["open_deferrals"] or [])


def test_a_journal_file_alone_is_a_source(capsys: pytest.CaptureFixture[str]) -> None:
    document = show_json(capsys, str(FILES / f"{TURN_IN_FLIGHT}.json"))
    assert document["run"] == TURN_IN_FLIGHT and document["status"] == "open"
    assert document["resume"]["waiting_for"] == "tools"
    assert [call["deferred"] for call in document["pending_calls"]] == [None]


def test_a_refusal_is_one_line_naming_run_seq_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "show", str(FILES), VERSION_2)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert VERSION_2 in err and "seq 1" in err and "version_mismatch" in err and "version 2" in err
    code, out, err = run_cli(capsys, "show", str(FILES), RESULT_FIRST)
    assert code == 1 and "seq 2" in err and "result_outside_turn" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "show", str(FILES), "no-such-run")
    assert code == 1 and "no-such-run" in err


def test_show_lenient_says_invalid_and_lists_why(capsys: pytest.CaptureFixture[str]) -> None:
    document = show_json(capsys, "--lenient", str(FILES), RESULT_FIRST)
    assert document["status"] == "invalid"
    assert [(f["seq"], f["code"], f["severity"]) for f in document["findings"]] == [(2, "result_outside_turn", "error")]
    assert set(document["findings"][0]) == {"run", "seq", "code", "severity", "message", "source"}
    assert show_json(capsys, "--lenient", str(FILES), DEFERRED_WAITING)["status"] == "suspended"


def test_show_anthropic_renders_messages_for_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    document = show_json(capsys, "--anthropic", str(FILES), CHAT)
    roles = [message["role"] for message in document["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    assert all(message["content"] for message in document["messages"])


def test_the_conversation_token_never_appears(capsys: pytest.CaptureFixture[str]) -> None:
    secrets = tokens()
    assert secrets, "the corpus holds runs with a conversation token"
    outputs = []
    for run in (CHAT, SERVED):
        for argv in (
            ["show", "--json", str(FILES), run],
            ["show", str(FILES), run],
            ["show", "--lenient", str(FILES), run],
        ):
            code, out, err = run_cli(capsys, *argv)
            assert code == 0, err
            outputs.append(out + err)
    for text in outputs:
        assert not any(secret in text for secret in secrets)


def test_journal_content_reaches_the_terminal_escaped(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["show", str(FILES), UNICODE]) == 0
    screen = capsysbinary.readouterr().out
    assert all(byte >= 0x20 or byte == 0x0A for byte in screen), "a raw control byte reached the terminal"
    text = screen.decode()
    assert "\u2028" not in text and "\\u2028" in text and "\\x00" in text
    assert main(["show", "--json", str(FILES), UNICODE]) == 0  # --json stays exact: JSON escapes them itself
    document = json.loads(capsysbinary.readouterr().out)
    assert "\u2028" in json.dumps(document["messages"], ensure_ascii=False)


# -- writing commands ------------------------------------------------------------------------------------------


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    """A scratch copy of two corpus journals in the runtime's layout (journal and lock file)."""
    root = tmp_path / "runs"
    root.mkdir(mode=0o700)
    for run in (DEFERRED_WAITING, SUPPLIED_NOT_RESUMED, CHAT):
        for suffix in (".json", ".lock"):
            if (FILES / f"{run}{suffix}").exists():
                shutil.copy(FILES / f"{run}{suffix}", root / f"{run}{suffix}")
    return root


def test_answer_writes_one_result_and_refuses_a_second(capsys: pytest.CaptureFixture[str], runs_dir: Path) -> None:
    call = "toolu_01UlI0pUN5s0LM3WnLle3UP7"
    code, out, err = run_cli(capsys, "answer", "--json", str(runs_dir), DEFERRED_WAITING, call, "--result", "ok")
    assert code == 0, err
    assert json.loads(out) == {"run": DEFERRED_WAITING, "call": call, "seq": 8}
    code, out, err = run_cli(capsys, "answer", str(runs_dir), DEFERRED_WAITING, call, "--result", "again")
    assert code == 1 and out == "" and call in err and err.count("\n") == 1
    assert show_json(capsys, str(runs_dir), DEFERRED_WAITING)["pending"] is None


def test_answer_and_gate_read_the_default_directory(
    capsys: pytest.CaptureFixture[str], runs_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    (state / "fisk-ai").mkdir(parents=True)
    shutil.move(runs_dir, state / "fisk-ai" / "runs")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.chdir(tmp_path)
    assert show_json(capsys, DEFERRED_WAITING)["status"] == "suspended"
    code, out, _ = run_cli(capsys, "ls", "--json")
    assert code == 0 and {row["run"] for row in json.loads(out)} == {DEFERRED_WAITING, SUPPLIED_NOT_RESUMED, CHAT}


def _config(tmp_path: Path, run: str, **changes: Any) -> str:
    fingerprint = EXPECTED[run]["state"]["Fingerprint"]
    config = {
        key: fingerprint[key]
        for key in ("provider", "model", "system_hash", "tools_hash", "thinking_mode", "max_tokens", "max_iterations")
    }
    path = tmp_path / "candidate.json"
    path.write_text(json.dumps({**config, **changes}))
    return str(path)


def test_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    same = _config(tmp_path, DEFERRED_WAITING)
    code, out, err = run_cli(capsys, "gate", "--json", str(FILES), DEFERRED_WAITING, "--config", same)
    document = json.loads(out)
    assert code == 0 and document["resumable"] is True, err
    assert [row["field"] for row in document["fields"]][:2] == ["provider", "model"]
    assert all(set(row) >= {"field", "class", "stored", "candidate", "verdict"} for row in document["fields"])
    other = _config(tmp_path, DEFERRED_WAITING, provider="elsewhere")
    for force in ([], ["--force"]):  # --force never crosses a provider change
        code, out, err = run_cli(capsys, "gate", str(FILES), DEFERRED_WAITING, "--config", other, *force)
        assert code == 1 and "NOT resumable" in out and err.count("\n") == 1
    code, _, err = run_cli(capsys, "gate", str(FILES), DEFERRED_WAITING, "--config", str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err
    (tmp_path / "bad.json").write_text('{"model": 3}')
    code, _, err = run_cli(capsys, "gate", str(FILES), DEFERRED_WAITING, "--config", str(tmp_path / "bad.json"))
    assert code == 2 and "model" in err


def test_migrate_copies_bytes_unchanged(capsys: pytest.CaptureFixture[str], runs_dir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "copy"
    code, out, err = run_cli(capsys, "migrate", "--json", str(runs_dir), str(dest))
    assert code == 0, err
    report = json.loads(out)
    assert report["runs"] == 3 and report["verified"] is True and report["refused"] == []
    for run in (DEFERRED_WAITING, SUPPLIED_NOT_RESUMED, CHAT):
        assert (dest / f"{run}.json").read_bytes() == (runs_dir / f"{run}.json").read_bytes()
    code, out, _ = run_cli(capsys, "compare", "--json", str(runs_dir), str(dest))
    assert code == 0 and {row["verdict"] for row in json.loads(out)} == {"agree"}


def test_an_unexpected_error_is_one_line_without_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli_show, "fold_run", broken)  # the fold `show` asks for
    code, out, err = run_cli(capsys, "show", str(FILES), DEFERRED_WAITING)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "RuntimeError: boom" in err and "Traceback" not in err


def test_show_labels_messages_by_seq_and_shows_the_turn_in_flight(capsys: pytest.CaptureFixture[str]) -> None:
    document = show_json(capsys, str(FILES), DEFERRED_WAITING)
    assert main(["show", str(FILES), DEFERRED_WAITING]) == 0
    shown = capsys.readouterr().out
    for seq in document["message_seqs"]:
        assert f"[seq {seq}] " in shown
    pending = document["pending"]
    texts = [block["text"]["text"] for block in pending["assistant"]["content"] if "text" in block]
    assert texts and f"[seq {pending['seq']}] assistant, turn in flight (not committed)" in shown
    assert all(text.splitlines()[0] in shown for text in texts)  # the stuck run's last words
    assert pending["assistant"] not in document["messages"]  # shown beside the committed messages, never in them


# -- the newest line ------------------------------------------------------------------------------------------------

NEWEST_FILES = CORPUS / "newest" / "file"
NEWEST_EXPECTED = [
    json.loads(line) for line in (CORPUS / "newest" / "expected" / "file.jsonl").read_text().splitlines()
]
ZERO = "0001-01-01T00:00:00Z"


def _or_null(time: str) -> str | None:
    return None if time == ZERO else time


@pytest.mark.parametrize("entry", [e for e in NEWEST_EXPECTED if e["ok"]], ids=lambda e: e["store_id"])
def test_show_json_names_what_the_newest_fold_adds(capsys: pytest.CaptureFixture[str], entry: dict[str, Any]) -> None:
    document = show_json(capsys, str(NEWEST_FILES), entry["store_id"])
    state = entry["state"]
    assert document["generation"] == "newest" and document["agent"] == state["Agent"]
    assert document["times"] == [_or_null(time) for time in state["Times"]]
    assert len(document["times"]) == len(document["messages"])
    assert document["result_times"] == (state["ResultTimes"] or {})
    assert document["ended"] == _or_null(state["Ended"])
    assert (document["turns"], document["context_tokens"]) == (state["Turns"], state["ContextTokens"])
    assert document["reopened"] == entry["reopened"]
    assert document["ending"] == entry["ending"]
    assert document["status"] == ((entry["ending"] or {}).get("reason") or "open")
    if state["Pending"] is not None:
        assert document["pending"]["time"] == _or_null(state["Pending"]["Time"])
    counters = state["Counters"]
    assert document["counters"]["mcp_tool_calls"] == counters.get("mcp_tool_calls", 0)
    kinds = ["unknown", "application", "builtin", "remote", "custom", "mcp"]
    by_token = {kinds[int(number)]: count for number, count in (counters.get("tool_calls_by_kind") or {}).items()}
    assert document["counters"]["tool_calls_by_kind"] == by_token


def test_ls_json_rows_say_the_generation_agent_caller_and_ending(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ls", "--json", str(NEWEST_FILES), str(FILES))
    assert code == 0
    rows = json.loads(out)
    generations = {row["run"]: row["generation"] for row in rows}
    assert generations["3MtgePl8MTxhIQTqkgVj3k35VXw"] == "newest" and generations[DEFERRED_WAITING] == "august"
    newest = next(row for row in rows if row["run"] == "3MtgeQvr3iQ7GjtKb9TXOK4uBW8")
    assert (newest["agent"], newest["caller"], newest["ended"]) == ("ops", "slack:U123", "2026-12-02T01:36:44.144613Z")
    august = next(row for row in rows if row["run"] == DEFERRED_WAITING)
    assert august["ended"] is None and august["agent"] == ""


# -- issue 26: a command line for triage ------------------------------------------------------------------------

LONG_RUN = "3IFA1212V7yzSPBdJfLF2hntC0t"
TERMINAL_ERROR = "3IEMWCbfLv8i4jdsIEfcIgkTpkP"


def ls_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code, out, err = run_cli(capsys, "ls", "--json", str(FILES), *argv)
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def test_ls_keeps_the_statuses_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    every = ls_json(capsys)
    kept = ls_json(capsys, "--status", "error,invalid", "--status", "suspended")
    assert kept and {row["status"] for row in kept} == {"error", "invalid", "suspended"}
    assert len(kept) == sum(1 for row in every if row["status"] in ("error", "invalid", "suspended"))


def test_ls_sorts_by_what_needs_attention_first(capsys: pytest.CaptureFixture[str]) -> None:
    rows = ls_json(capsys, "--sort", "status")
    order = ["invalid", "error", "open", "suspended", "budget", "max_iterations", "completed"]
    ranks = [order.index(row["status"]) for row in rows]
    assert ranks == sorted(ranks) and rows[0]["status"] == "invalid" and rows[-1]["status"] == "completed"
    by_run = [row["run"] for row in ls_json(capsys, "--sort", "run")]
    assert by_run == sorted(by_run)
    seqs = [row["last_seq"] for row in ls_json(capsys, "--sort", "last_seq")]
    assert seqs == sorted(seqs, reverse=True)


def test_ls_since_and_until_bound_the_runs_by_time(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for run in (CHAT, TERMINAL_ERROR):
        shutil.copy(FILES / f"{run}.json", runs / f"{run}.json")
    old = 1_700_000_000  # 2023-11-14: the chat's file was last written long ago
    os.utime(runs / f"{CHAT}.json", (old, old))

    def listed(*argv: str) -> set[str]:
        code, out, err = run_cli(capsys, "ls", "--json", str(runs), *argv)
        assert code == 0, err
        return {row["run"] for row in json.loads(out)}

    assert listed() == {CHAT, TERMINAL_ERROR}
    assert listed("--since", "2h") == {TERMINAL_ERROR}  # active in the last two hours (its mtime is now)
    assert listed("--since", "2023-11-01") == {CHAT, TERMINAL_ERROR}
    assert listed("--since", "2099-01-01T00:00:00Z") == set()
    created = {row["run"]: row["created"] for row in ls_json(capsys)}
    assert listed("--until", "2000-01-01") == set()  # created after 2000
    assert listed("--until", created[CHAT]) >= {CHAT}
    with pytest.raises(SystemExit) as exited:
        main(["ls", str(runs), "--since", "last tuesday"])
    assert exited.value.code == 2 and "ISO 8601" in capsys.readouterr().err


def test_ls_says_why_each_run_stopped_and_shortens_long_ids_in_the_middle(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ls", str(FILES))
    assert code == 0
    header, *lines = out.splitlines()
    assert "WHY IT STOPPED" in header
    error_line = next(line for line in lines if line.startswith(TERMINAL_ERROR))
    why = next(row["why"] for row in ls_json(capsys) if row["run"] == TERMINAL_ERROR)
    assert "529 Overloaded" in why and why[:30] in error_line
    assert all(len(line) <= 120 for line in out.splitlines())  # off a terminal the table fits 120 columns
    code, wide, _ = run_cli(capsys, "ls", str(FILES), "--wide")
    assert code == 0 and why in wide and SERVED in wide  # --wide: every id and reason whole
    deferred = next(line for line in lines if line.startswith(DEFERRED_WAITING))
    assert "waiting for an answer to 1 deferred call" in deferred
    assert SERVED not in out  # 64 hex characters: both ends on the terminal, the whole id in --json
    assert f"{SERVED[:14]}…{SERVED[-13:]}" in out
    assert SERVED in {row["run"] for row in ls_json(capsys)}


def test_audit_quiet_prints_no_empty_header(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(FILES / f"{CHAT}.json", runs / f"{CHAT}.json")
    code, out, err = run_cli(capsys, "audit", str(runs), "--quiet")
    assert code == 0 and out == "" and "0 findings" in err
    code, out, _ = run_cli(capsys, "audit", str(FILES), "--quiet")
    assert code == 0 and out.startswith("RUN") and len(out.splitlines()) > 1


def test_show_tail_and_from_seq_show_the_end_of_a_long_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, whole, _ = run_cli(capsys, "show", str(FILES), LONG_RUN)
    assert code == 0
    labels = re.findall(r"^\[seq (\d+)\] ", whole, flags=re.MULTILINE)
    assert len(labels) > 100
    code, out, _ = run_cli(capsys, "show", str(FILES), LONG_RUN, "--tail", "3")
    assert code == 0 and re.findall(r"^\[seq (\d+)\] ", out, flags=re.MULTILINE) == labels[-3:]
    assert f"({len(labels) - 3:,} earlier messages not shown" in out
    middle = int(labels[len(labels) // 2])
    code, out, _ = run_cli(capsys, "show", str(FILES), LONG_RUN, "--from-seq", str(middle))
    assert code == 0 and re.findall(r"^\[seq (\d+)\] ", out, flags=re.MULTILINE) == labels[len(labels) // 2 :]
    code, _, err = run_cli(capsys, "show", "--json", str(FILES), LONG_RUN, "--tail", "3")
    assert code == 2 and "--json always holds the whole run" in err
    with pytest.raises(SystemExit):
        main(["show", str(FILES), LONG_RUN, "--tail", "0"])
    capsys.readouterr()


def test_show_dates_the_run_in_its_header(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "show", str(FILES), TERMINAL_ERROR)
    created = next(row["created"] for row in ls_json(capsys) if row["run"] == TERMINAL_ERROR)
    dated = next(line for line in out.splitlines() if line.startswith("created "))
    # One spelling on screen (UTC, to the millisecond), and an August journal's file time is called what it is.
    modified = datetime.fromtimestamp((FILES / f"{TERMINAL_ERROR}.json").stat().st_mtime, UTC)
    assert code == 0 and dated == f"created {shown_time(created)} · file modified {shown_time(modified)}"


def test_show_says_when_record_times_run_backwards(capsys: pytest.CaptureFixture[str]) -> None:
    # An answer journaled by a clock 4.6 s behind the one that dated the deferral before it.
    code, out, _ = run_cli(capsys, "show", str(NEWEST_FILES), "3MtgeORUyjqNtTnpuv2wKMRNDfC")
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("created "))
    answer = next(line for line in lines if line.startswith("[seq 5] "))
    assert code == 0 and header.endswith("wall clock unknown: record times run backwards at seq 5")
    assert answer.endswith("(dated 2.1s before the message above it: the clocks disagree)")
    assert any(
        line.startswith("warning: seq 5: times_out_of_order: seq 5 is dated 4.618 s before seq 4") for line in lines
    )
    assert re.search(r"\d{2}:\d{2}:\d{2}\.\d{4}", out.split("\nwarning:")[0]) is None  # milliseconds on screen


def test_the_generator_is_named_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "python -m journaltools.testing.generate" in shown and "python -m journaltools.testing.demo" in shown
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m journaltools.testing.generate" in readme


def test_compare_names_the_side_a_run_is_missing_from(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    for run in (CHAT, TERMINAL_ERROR):
        shutil.copy(FILES / f"{run}.json", one / f"{run}.json")
    shutil.copy(FILES / f"{CHAT}.json", two / f"{CHAT}.json")
    code, out, _ = run_cli(capsys, "compare", str(one), str(two))
    assert code == 0
    # Two directories are A and B, each URL said once above the table, not in every header and row.
    legend_a, legend_b, _, header, *lines = out.splitlines()
    assert legend_a == f"A: {one.as_uri()}" and legend_b == f"B: {two.as_uri()}"
    assert header.split()[:3] == ["RUN", "A", "B"] and "STATUS_A" not in header
    missing = next(line for line in lines if line.startswith(TERMINAL_ERROR))
    assert "missing in B" in missing and "missing_b" not in out and "file:///" not in "".join(lines)
    code, out, _ = run_cli(capsys, "compare", "--json", str(one), str(two))
    rows = json.loads(out)
    assert {row["verdict"] for row in rows} == {"agree", "missing_b"}
    assert any(two.as_uri() in row["explanation"] for row in rows)  # --json names each side by its URL


def test_compare_fits_the_terminal_and_wraps_its_explanations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = run_cli(capsys, "compare", str(FILES), str(NEWEST_FILES))
    lines = out.splitlines()
    assert code == 0 and len(lines) > 60
    assert max(map(len, lines)) <= 120, max(lines, key=len)
    code, wide, _ = run_cli(capsys, "compare", "--wide", str(FILES), str(NEWEST_FILES))
    assert code == 0 and max(map(len, wide.splitlines())) > 120 and len(wide.splitlines()) < len(lines)


def test_show_says_no_ending_recorded_not_running(capsys: pytest.CaptureFixture[str]) -> None:
    ends_on_claim = "3IEnW1kGC4cTycgR2YRBtywKswr"  # completed, then resumed by a claim and nothing after it
    code, out, _ = run_cli(capsys, "show", str(FILES), ends_on_claim)
    assert code == 0 and "no ending recorded" in out and "running" not in out
    assert [s["ending"] for s in show_json(capsys, str(FILES), ends_on_claim)["segments"]][-1] == "running"


def test_ls_filters_by_agent_and_prefix_as_the_newest_runtime_lists(capsys: pytest.CaptureFixture[str]) -> None:
    """The newest runtime's ListFilter: the rows it kept for {Agent: ops}, {Agent: billing} and {Prefix: "3"} (a
    run naming no agent is kept by any agent filter). journaltools also lists the journals it refuses, invalid."""
    calls = [
        json.loads(line)
        for line in (CORPUS / "newest" / "listing-file.jsonl").read_text().splitlines()
        if json.loads(line).get("call") == "List"
    ]
    assert len(calls) == 3
    for call in calls:
        options = ["--agent", call["filter"]["agent"]] if call["filter"]["agent"] else []
        options += ["--prefix", call["filter"]["prefix"]] if call["filter"]["prefix"] else []
        code, out, _ = run_cli(capsys, "ls", "--json", str(NEWEST_FILES), *options)
        rows = json.loads(out)
        assert code == 0
        assert sorted(row["run"] for row in rows if row["status"] != "invalid") == sorted(call["run_ids"]), call
    code, out, _ = run_cli(capsys, "ls", "--json", "--generation", "august", str(NEWEST_FILES), str(FILES))
    assert code == 0 and {row["generation"] for row in json.loads(out)} == {"august"}


def test_ls_pages_a_listing_as_the_newest_runtime_does(capsys: pytest.CaptureFixture[str]) -> None:
    pages = [
        json.loads(line)
        for line in (CORPUS / "newest" / "listing-file.jsonl").read_text().splitlines()
        if json.loads(line).get("call") == "ListPage" and "page" in json.loads(line)
    ]
    cursor: list[str] = []
    for page in pages:
        code, out, err = run_cli(capsys, "ls", "--json", str(NEWEST_FILES), "--limit", str(page["limit"]), *cursor)
        assert code == 0 and [row["run"] for row in json.loads(out)] == (page["run_ids"] or [])
        said = err.strip().rsplit("--cursor ", 1)
        cursor = ["--cursor", said[1]] if len(said) == 2 else []
        assert (not cursor) == page["cursor_empty"]
    code, _, err = run_cli(capsys, "ls", str(NEWEST_FILES), "--limit", "3", "--cursor", "not-a-cursor!")
    assert code == 1 and 'invalid list cursor: "not-a-cursor!"' in err
    code, _, err = run_cli(capsys, "ls", str(NEWEST_FILES), "--cursor", "x")
    assert code == 2 and "--limit" in err


def test_on_a_terminal_show_fits_its_head_to_the_width_and_off_one_keeps_each_line_whole() -> None:
    """The head's lines wrap at the terminal's width with their continuations indented, and the process-run table
    steps columns aside; the same lines joined again are the unwrapped account."""
    from journaltools.cli._show import account_of, run_lines
    from journaltools.folding.run import fold_run
    from journaltools.sources.registry import open_source

    with open_source(str(NEWEST_FILES)) as backend:
        read = backend.read_run("3MtgeRBxFqFRdJsUaqqP0IVU8fy", strict=False)
    result = fold_run(read).result
    whole = list(run_lines(account_of(result), result))
    fitted = list(run_lines(account_of(result), result, width=100))
    head = fitted[: next(index for index, line in enumerate(fitted) if line.startswith("\n[seq"))]
    assert all(len(part) <= 100 for line in head for part in line.split("\n"))
    assert any(len(line) > 100 for line in whole)
    rejoined = "\n".join(fitted).replace("\n    ", " ").splitlines()
    for start in ("counters: ", "reopened: ", "resume: "):
        assert next(line for line in rejoined if line.startswith(start)) in whole
