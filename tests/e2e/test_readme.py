"""The README's examples run, in the order a reader meets them: Python blocks execute in one namespace (as
in one notebook, so ``jt`` is imported once), console lines exit as documented. They run in a scratch
directory holding a link to the samples, so nothing is written into the repository; the README's NATS URL is
swapped for the test server's."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from journaltools.sources.embedded import EmbeddedServer
from tests.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
README_NATS_URL = "nats://127.0.0.1:4222/JOURNALS"
#: Any other stream or bucket of the README lives on the test server under its README name.
README_NATS_SERVER = "nats://127.0.0.1:4222"


def examples() -> list[tuple[str, str]]:
    """(language, text) of every python and console block, in README order."""
    return re.findall(r"```(python|console)\n(.*?)```", README, flags=re.DOTALL)


def test_readme_examples_run_in_order(
    tmp_path: Path,
    jetstream_url: str,
    nats_server: EmbeddedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "samples").symlink_to(ROOT / "data" / "samples")
    monkeypatch.chdir(tmp_path)
    commands = 0
    namespace: dict[str, object] = {}
    for language, text in examples():
        text = text.replace(README_NATS_URL, jetstream_url).replace(README_NATS_SERVER, nats_server.url)
        if language == "python":
            exec(compile(text, "README.md", "exec"), namespace)
            continue
        for line in text.splitlines():
            if not line.startswith("$ "):
                continue
            argv = shlex.split(line[2:])
            assert argv[0] == "journaltools"
            result = subprocess.run(
                [sys.executable, "-m", "journaltools", *argv[1:]],
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            # The samples hold broken journals on purpose: an audit failing on errors finds them. Migrated, the
            # samples differ between the listings only by cause, so compare --fail-on discrepancy passes.
            expected = 1 if argv[1] == "audit" and "--fail-on" in argv else 0
            assert result.returncode == expected, f"{line}: {result.stderr.decode()}"
            assert b"Traceback" not in result.stderr
            if argv[1] == "compare":  # the samples tell both routine disagreements and no other
                assert b"documented" in result.stdout and b"summary_rule" in result.stdout
                assert b"discrepancy" not in result.stdout
            if argv[1] == "turns":  # the requested call the Python example checkpointed needs an operator
                assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["turn_call_requested"]
            commands += 1
    assert commands >= 8 and README_NATS_URL in README
    out = capsys.readouterr().out
    assert "invalid" in out  # the samples' broken journals are rows, not crashes
    assert "runs audited" in out and "('completed'," in out  # the DuckDB query over the audit the console wrote
    assert (tmp_path / "out" / "audit-py" / "runs.parquet").exists()
    assert "completed answered" in out and "task 'invoice-42' was already completed at " in out
    assert "[('call-1', 'ask_operator')]" in out
    assert "[('kv_get', 2, 5.137" in out  # the slowest tools (ties by name), from the audit's calls with durations
    assert "0:00:31" in out and "['server_ping']" in out  # jt.stats' wall clock, jt.calls' failed call


def test_the_quick_start_is_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", quick, flags=re.DOTALL)
    assert block is not None
    assert [line.split()[:2] for line in block.group(1).splitlines()] == [["make", "demo"], ["make", "test"]]
