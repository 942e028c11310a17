"""docs/filter.md held to the code: its table of column kinds is the runs table's, and its examples run on the
bundled samples with the runs and the exit status it shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from journaltools.cli import main
from journaltools.tables.schema import schema_of
from journaltools.tables.where import _kind_of
from tests.paths import ROOT

PAGE = (ROOT / "docs" / "filter.md").read_text(encoding="utf-8")


def console_blocks() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) of each console block."""
    blocks = []
    for block in re.findall(r"```console\n(.*?)```", PAGE, flags=re.DOTALL):
        first, *shown = block.rstrip("\n").split("\n")
        assert first.startswith("$ journaltools "), first
        blocks.append((first.removeprefix("$ journaltools "), shown))
    return blocks


def test_the_kinds_table_lists_every_column_a_filter_can_name() -> None:
    section = PAGE.split("## Types", 1)[1].split("\n## ", 1)[0]
    documented = {
        kind: set(re.findall(r"`(\w+)`", columns))
        for kind, columns in re.findall(r"^\| ([a-z/]+) \| (.+?) \| [^|]+ \|$", section, flags=re.MULTILINE)
        if kind != "kind"  # the header
    }
    actual: dict[str, set[str]] = {}
    for field in schema_of("runs", priced=True):
        kind = _kind_of(field.type)
        if kind is not None:
            actual.setdefault(kind, set()).add(field.name)
    assert documented == actual


@pytest.mark.parametrize(("command", "shown"), console_blocks(), ids=lambda value: str(value)[:60])
def test_each_example_lists_the_runs_the_page_shows(
    command: str, shown: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(os.environ, "COLUMNS", "120")
    code = main(shlex.split(command))
    out, err = capsys.readouterr()
    if shown and shown[0].startswith("journaltools "):  # a refusal: exit 2 and exactly that line
        assert code == 2 and err.splitlines() == shown and out == ""
        return
    assert code == 0, err
    ids = [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
    assert ids == [line.split()[0] for line in shown[1:]]


def test_the_python_example_prints_what_the_page_says(tmp_path: Path) -> None:
    """Run as a user runs it: the block saved as a script, from the checkout."""
    [code] = re.findall(r"```python\n(.*?)```", PAGE, flags=re.DOTALL)
    comments = [line.split("# ", 1)[1] for line in code.splitlines() if "# " in line]
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, check=True)
    first, second = done.stdout.splitlines()
    assert first == " ".join(part.strip() for part in comments[:2]).replace("[ ", "[")
    assert second == comments[2] == "True"
