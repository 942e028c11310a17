"""The README's examples run: its Python blocks execute and its console commands exit as documented."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_NATS_URL = "nats://127.0.0.1:4222/JOURNALS"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


COMMANDS = [line[2:] for block in blocks("console") for line in block.splitlines() if line.startswith("$ ")]


def test_python_examples_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    examples = blocks("python")
    assert examples
    for example in examples:
        exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "resumed-after-crash" in out and "completed 2 None" in out


def test_console_examples_run_in_order(jetstream_url: str) -> None:
    """Every ``$ journaltools`` line, in README order; the README's NATS URL points at the test server."""
    assert any(README_NATS_URL in command for command in COMMANDS)
    for command in COMMANDS:
        argv = shlex.split(command.replace(README_NATS_URL, jetstream_url))
        assert argv[0] == "journaltools"
        result = subprocess.run([sys.executable, "-m", "journaltools", *argv[1:]], cwd=ROOT, capture_output=True)
        expected = 1 if "--fail-on" in argv else 0  # the samples hold broken journals on purpose
        assert result.returncode == expected, f"{command}: {result.stderr.decode()}"
        if argv[1] == "compare":
            assert b"documented" in result.stdout and b"discrepancy" not in result.stdout
