"""Issue 42, a hostile world round four, the values a person types: Go's patterns on RE2 (linear time over
untrusted text), text arguments that are not UTF-8, durations and sizes too large to hold, every option of every
command fed extremes, directional marks escaped on every face, and ``show`` cut where ``report`` cuts.

Each test fails on the code as it was before the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journaltools._goregexp import GoRegexpError, compile_go
from journaltools.cli import main
from journaltools.generate import calls_of, text, tool_use
from tests.builders import journal

#: Nested repeats over text that almost matches: exponential for a backtracking engine, linear for RE2.
PATHOLOGICAL = "(a+)+$"
ALMOST = "a" * 64 + "!"


def _hostile_run(directory: Path) -> Path:
    built = journal("run-1", prompt=ALMOST)
    turn = built.assistant(tool_use("toolu_1", "stream_info", {"q": ALMOST}))
    for call in calls_of(turn):
        built.result(call, ALMOST)
    built.assistant(text("done"))
    built.terminal("completed")
    (directory / "run-1.json").write_bytes(built.journal_bytes())
    return directory


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("command", "flag", "listed"),
    [("query", "--output-match", "calls"), ("query", "--input-match", "calls"), ("search", "--match", "runs")],
)
def test_nested_repeats_over_untrusted_text_run_in_linear_time(
    command: str, flag: str, listed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = [str(_hostile_run(tmp_path)), *(["run-1"] if command == "query" else [])]
    found = []
    for pattern in (PATHOLOGICAL, "(a+)+!"):
        assert main([command, "--json", *source, flag, pattern]) == 0
        found.append(len(json.loads(capsys.readouterr().out)[listed]))
    assert found == [0, 1]


@pytest.mark.timeout(20)
def test_a_pattern_matches_and_misses_as_go_does_in_linear_time() -> None:
    assert not compile_go(PATHOLOGICAL).search(ALMOST * 1000)
    assert compile_go("(a+)+!$").search(ALMOST * 1000)


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [
        (r"\C", r"invalid escape sequence: `\C`"),  # RE2 reads a byte; Go refuses it
        (r"a[\C]", r"invalid escape sequence: `\C`"),
        ("(?P<x>a)(?<x>b)", "duplicate capture group name: `x`"),  # RE2 takes the name twice; Go refuses it
        ("(?#note)", "no comments"),
        ("(a", "missing closing ): `(a`"),
        ("a\udcff", "invalid UTF-8"),  # a byte of argv that is not UTF-8
    ],
)
def test_what_go_refuses_is_refused_in_gos_words(pattern: str, refused: str) -> None:
    with pytest.raises(GoRegexpError, match=r"^error parsing regexp: ") as caught:
        compile_go(pattern)
    assert refused in str(caught.value)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"\Q\C\E", "\\C", True),  # quoted, \C is text
        (r"[(?<x>](?<x>b)", "(b", True),  # a name inside a class is no capture
        (r"^.$", "\udcff", True),  # a byte that is not UTF-8 is one U+FFFD to Go
        (r"\x{fffd}", "\ud800", True),  # and so is a lone surrogate a JSON escape gave
    ],
)
def test_quoted_classes_and_text_that_is_not_utf8_read_as_in_go(pattern: str, text: str, matches: bool) -> None:
    assert compile_go(pattern).search(text) is matches
