import json
import subprocess
import sys
from pathlib import Path

import pytest

from journaltools.cli import build_parser, main
from journaltools.samples import SAMPLE_SYSTEM_PROMPT, sample_fingerprint, write_samples

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = str(ROOT / "data" / "samples")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ls_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ls", SAMPLES, "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 14
    assert all(set(row) == {"run", "status", "created", "last_seq", "records", "model"} for row in rows)
    in_flight = next(row for row in rows if row["run"] == "turn-in-flight")
    assert in_flight == {
        "run": "turn-in-flight",
        "status": "open",
        "created": "2026-11-29T10:05:01.250000Z",
        "last_seq": 3,
        "records": 3,
        "model": "claude-sonnet-4-5",
    }


def test_show_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "show", SAMPLES, "suspended-approval", "--json")
    document = json.loads(out)
    assert code == 0
    assert set(document) == {"run", "status", "messages", "pending", "counters", "resume", "stop_reason", "end_reason"}
    assert document["stop_reason"] == "tool_use" and document["end_reason"] is None
    assert document["pending"] == [
        {"id": "toolu_21", "name": "deploy", "input": {"env": "production"}, "deferred": "approval", "approval": None}
    ]
    assert document["resume"] == {"last_seq": 4, "waiting_for": "answer"}
    assert set(document["counters"]) == {
        "turns", "tool_calls", "tool_errors", "input_tokens", "output_tokens",
        "claims", "errors", "deferrals", "skipped_optional",
    }  # fmt: skip
    assert [m["role"] for m in document["messages"]] == ["user"]


def test_show_refusal_exits_1_naming_run_seq_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "show", SAMPLES, "schema-violation")
    assert code == 1 and out == ""
    assert "schema-violation" in err and "seq 3" in err and "schema_violation" in err
    code, _, err = run_cli(capsys, "show", SAMPLES, "corrupt-interior")
    assert code == 1 and "line 3" in err
    code, _, err = run_cli(capsys, "show", SAMPLES, "no-such-run")
    assert code == 1 and "no journal" in err


def test_show_lenient_says_the_status_ls_says_and_keeps_the_folds_own(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ls", SAMPLES, "--json")
    listed = {row["run"]: row["status"] for row in json.loads(out)}
    assert code == 0 and len(listed) == 14
    for run, status in listed.items():
        code, out, _ = run_cli(capsys, "show", SAMPLES, run, "--lenient", "--json")
        document = json.loads(out)
        assert code == 0 and document["status"] == status, run
        assert document["fold_status"] in ("open", "completed", "suspended", "failed", "cancelled"), run
    # A refused journal and a newer version: invalid by the listing, though the fold of what was read is not.
    for run, folded in (("corrupt-interior", "completed"), ("version-mismatch", "open")):
        code, out, _ = run_cli(capsys, "show", SAMPLES, run, "--lenient")
        assert code == 0 and out.splitlines()[0] == f"run {run}: invalid (read leniently, the fold says {folded})"
    code, out, _ = run_cli(capsys, "show", SAMPLES, "completed-with-tools", "--lenient")
    assert out.splitlines()[0] == "run completed-with-tools: completed"


def test_a_finding_without_a_seq_says_seq_dash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    code, out, _ = run_cli(capsys, "show", str(tmp_path), "empty", "--lenient")
    assert code == 0 and "error: seq -: empty_journal" in out and "None" not in out
    code, _, err = run_cli(capsys, "show", str(tmp_path), "empty")
    assert code == 1 and "seq -: empty_journal" in err and "None" not in err


def test_audit_findings_and_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "audit", SAMPLES, "--json")
    findings = json.loads(out)
    assert code == 0
    assert {(f["run"], f["code"]) for f in findings} == {
        ("corrupt-interior", "corrupt_line"),
        ("schema-violation", "schema_violation"),
        ("torn-tail", "torn_tail"),
        ("version-mismatch", "version_mismatch"),
    }
    assert all(set(f) == {"run", "seq", "code", "severity", "message"} for f in findings)
    assert run_cli(capsys, "audit", SAMPLES, "--fail-on", "error")[0] == 1


def test_audit_of_a_clean_source_passes_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_samples(tmp_path)
    for broken in ("corrupt-interior", "schema-violation", "torn-tail", "version-mismatch"):
        (tmp_path / f"{broken}.jsonl").unlink()
    assert run_cli(capsys, "audit", str(tmp_path), "--fail-on", "warning", "--json")[:2] == (0, "[]\n")


def test_answer_and_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_samples(tmp_path)
    code, out, _ = run_cli(
        capsys, "answer", str(tmp_path), "suspended-approval", "toolu_21", "--result", "ok", "--json"
    )
    assert code == 0 and json.loads(out) == {"run": "suspended-approval", "call": "toolu_21", "seq": 5}
    code, _, err = run_cli(capsys, "answer", str(tmp_path), "suspended-approval", "toolu_21", "--result", "ok")
    assert code == 1 and "already answered" in err and "seq 5" in err
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model": "claude-opus-4", "system": "other"}))
    code, out, err = run_cli(capsys, "gate", str(tmp_path), "completed-with-tools", "--config", str(config), "--json")
    document = json.loads(out)  # printed although the run is not resumable
    assert code == 1 and document["resumable"] is False
    assert {f["field"]: f["verdict"] for f in document["fields"]}["model"] == "refused"
    assert "'completed-with-tools' is not resumable" in err and "model: a hard field may never change" in err


def _gate_config(tmp_path: Path, **changes: object) -> str:
    config: dict[str, object] = {**sample_fingerprint(), "system": SAMPLE_SYSTEM_PROMPT}
    config.pop("system_sha256")
    config.update(changes)
    path = tmp_path / "candidate.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_gate_exit_status_and_the_reminder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reminder = "\n\nYou are resuming this run after a crash: check the last tool results before acting."
    config = _gate_config(tmp_path, reminder=reminder)
    code, out, err = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", config, "--json")
    document = json.loads(out)
    assert (code, err) == (0, "") and document["resumable"] is True
    assert document["system"] == SAMPLE_SYSTEM_PROMPT + reminder  # the prompt for the runner
    verdicts = {f["field"]: f["verdict"] for f in document["fields"]}
    assert verdicts["system_sha256"] == "same" and "reminder" not in verdicts
    code, out, _ = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", config)
    assert code == 0 and "completed-with-tools: resumable" in out
    assert f"system prompt for the runner: {len(SAMPLE_SYSTEM_PROMPT + reminder)} characters" in out

    # The reminder pasted into the prompt is a changed prompt: refused, and said so, in both modes.
    pasted = _gate_config(tmp_path, system=SAMPLE_SYSTEM_PROMPT + reminder)
    code, out, err = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", pasted, "--json")
    assert code == 1 and json.loads(out)["resumable"] is False and "system_sha256" in err
    code, out, err = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", pasted)
    assert code == 1 and "completed-with-tools: NOT resumable" in out and "refused" in out
    assert "system_sha256: a hard field may never change" in err

    not_text = _gate_config(tmp_path, reminder=3)
    code, out, err = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", not_text)
    assert (code, out) == (2, "") and "'reminder' must be text" in err


def test_schema_command_prints_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "schema")
    assert code == 0 and json.loads(out)["discriminator"]["propertyName"] == "type"


def test_bad_usage_exits_2() -> None:
    result = subprocess.run([sys.executable, "-m", "journaltools", "ls"], capture_output=True, cwd=ROOT)
    assert result.returncode == 2 and b"usage" in result.stderr
    result = subprocess.run([sys.executable, "-m", "journaltools", "frobnicate"], capture_output=True, cwd=ROOT)
    assert result.returncode == 2


def test_every_command_has_help_text() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    for name, sub in subparsers.choices.items():  # type: ignore[union-attr]
        assert sub.description, f"{name} has no help text"


def test_audit_writes_parquet_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "audit"
    code, stdout, _ = run_cli(capsys, "audit", SAMPLES, "--parquet", str(out), "--records", "--quiet", "--json")
    assert code == 0 and len(json.loads(stdout)) == 4
    assert sorted(p.name for p in out.iterdir()) == [
        "findings.parquet",
        "messages.parquet",
        "records.parquet",
        "runs.parquet",
        "tool_calls.parquet",
    ]
    assert pq.read_table(out / "runs.parquet").num_rows == 14
    assert pq.read_table(out / "findings.parquet").num_rows == 4


@pytest.mark.parametrize("config", ["[1]", '{"tools": [1]}', '{"system": 3}', '{"budget": 5}', "not json"])
def test_gate_refuses_a_malformed_config_as_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(config)
    code, out, err = run_cli(capsys, "gate", SAMPLES, "completed-with-tools", "--config", str(path))
    assert (code, out) == (2, "") and "--config" in err and "Traceback" not in err


def test_show_says_why_a_run_ended(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "show", SAMPLES, "failed-provider")
    assert code == 0 and "ended by a fatal provider error at seq 5: overloaded: 3 retries exhausted" in out
    _, out, _ = run_cli(capsys, "show", SAMPLES, "cancelled-by-user")
    assert "cancelled by alice@example.com at seq 4: wrong repository" in out
    _, out, _ = run_cli(capsys, "show", SAMPLES, "cancelled-by-user", "--json")
    assert json.loads(out)["end_reason"] == {
        "kind": "cancel", "seq": 4, "by": "alice@example.com", "reason": "wrong repository"
    }  # fmt: skip


@pytest.mark.parametrize("ending", [b"", b"\n"])
def test_strict_show_of_a_journal_of_one_garbage_line_says_the_line_was_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ending: bytes
) -> None:
    (tmp_path / "garb.jsonl").write_bytes(b"x" * 10_000_000 + ending)
    code, out, err = run_cli(capsys, "show", str(tmp_path), "garb")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert "run 'garb' seq -: empty_journal" in err
    assert "final line 1 (10,000,000 bytes)" in err and "does not parse and was dropped" in err
    (tmp_path / "none.jsonl").write_bytes(b"")  # a journal with no line at all: nothing more to say
    code, _, err = run_cli(capsys, "show", str(tmp_path), "none")
    assert code == 1 and err.strip().endswith("empty_journal: the journal has no records")
