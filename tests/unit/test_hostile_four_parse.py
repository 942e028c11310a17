"""Issue 42, a hostile world round four, the values a person types: Go's patterns on RE2 (linear time over
untrusted text), text arguments that are not UTF-8, durations and sizes too large to hold, every option of every
command fed extremes, directional marks escaped on every face, and ``show`` cut where ``report`` cuts.

Each test fails on the code as it was before the fix.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from journaltools._base.readable import SHOWN_CHARS, readable_json
from journaltools._base.text import for_page
from journaltools.audits.turns import parse_duration
from journaltools.cli import main
from journaltools.cli._parser import build_parser
from journaltools.errors import AnswerRefused, JournalError
from journaltools.exports.html import esc
from journaltools.goencoding.regexp import GoRegexpError, compile_go
from journaltools.ops.answer import answer_call
from journaltools.sources.registry import open_source
from journaltools.testing.generate import calls_of, text, tool_use
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


# -- every option a person can type, fed extremes ------------------------------------------------------------------

#: What a person (or a script gone wrong) can type: numbers too large for any type, the non-numbers float() reads,
#: signs, nothing, bytes that are not UTF-8 (as Python hands argv over: surrogate-escaped), a very long word, a
#: port out of range, times at the ends of the calendar.
EXTREMES = (
    "9" * 400,
    "99999999999h",
    "1e400",
    "-1e400",
    "nan",
    "inf",
    "-1",
    "0",
    "",
    b"\xff\xfe".decode("utf-8", "surrogateescape"),
    "x" * 100_000,
    "nats://localhost:99999999999/S",
    "nats://[::1/S",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
)
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
RUN = "completed-with-tools"
#: Each command's positionals and required options in a call that works, over the samples (``{samples}``) and a
#: scratch directory (``{scratch}``). A new command needs a line here; its options are found by themselves.
BASELINES: dict[str, tuple[list[str], list[str]]] = {
    "ls": (["{samples}"], []),
    "show": (["{samples}", RUN], []),
    "stats": (["{samples}", RUN], []),
    "query": (["{samples}", RUN], []),
    "search": (["{samples}"], []),
    "audit": (["{samples}"], []),
    "turns": (["{scratch}"], []),
    "tasks": (["{scratch}"], []),
    "compare": (["{samples}", "{samples}"], []),
    "migrate": (["{samples}", "{scratch}/migrated"], []),
    "gate": (["{samples}", RUN], ["--config", "{scratch}/gate.json"]),
    "answer": (["{samples}", "deferred-waiting", "toolu_01D2change"], ["--result", "ok"]),
    "grep": (["stream", "{samples}"], []),
    "diff": (["{samples}", RUN, f"newest-{RUN}"], []),
    "report": (["{samples}", RUN], ["-o", "{scratch}/report.html"]),
    "export": (["{samples}"], ["--otlp", "{scratch}/traces.jsonl"]),
    "samples": (["{scratch}/samples"], []),
    "schema": ([], []),
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (commands,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return dict(commands.choices)


def _typed_options(command: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options of ``command`` that take a value (flags take none)."""
    return [action for action in command._actions if action.option_strings and action.nargs != 0]


FUZZED = [
    (name, action.option_strings[-1], action.nargs if isinstance(action.nargs, int) else 1)
    for name, command in _subparsers().items()
    for action in _typed_options(command)
] + [(name, position, 0) for name, (positionals, _) in BASELINES.items() for position in range(len(positionals))]


def test_every_command_has_a_baseline() -> None:
    assert set(_subparsers()) == set(BASELINES)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fresh copies of the samples (``answer`` writes to them) and a working directory for what commands write."""
    shutil.copytree(SAMPLES, tmp_path / "samples-copy")
    (tmp_path / "gate.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path


def _exit_status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:  # argparse's usage error
        return int(exited.code or 0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("command", "option", "arity"), FUZZED, ids=[f"{c}:{o}" for c, o, _ in FUZZED])
def test_every_option_answers_extremes_with_a_usage_error_or_a_clean_line(
    command: str, option: str | int, arity: int, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    positionals, required = BASELINES[command]
    samples = str(scratch / "samples-copy")

    def fill(words: list[str]) -> list[str]:
        return [word.replace("{samples}", samples).replace("{scratch}", str(scratch)) for word in words]

    broken = []
    for value in EXTREMES:
        said = fill(positionals)
        if isinstance(option, int):
            said[option] = value
            argv = [command, *said, *fill(required)]
        else:
            argv = [command, *said, *fill(required), option, *[value] * arity]
        status = _exit_status(argv)
        err = capsys.readouterr().err
        clean = status in (0, 1, 2) and "Traceback" not in err and "unexpected error" not in err
        if not clean:
            broken.append(f"{value[:20]!r}: exit {status}: {err.strip()[-300:]}")
    assert not broken, "\n".join(broken)


# -- T11, T12: the instances the campaign found ------------------------------------------------------------------

NOT_UTF8 = b"\xff\xfe".decode("utf-8", "surrogateescape")


def test_an_answer_that_is_not_utf8_is_bad_usage_naming_the_option_and_leaves_the_journal(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal_file = scratch / "samples-copy" / "deferred-waiting.json"
    before = journal_file.read_bytes()
    argv = ["answer", str(journal_file.parent), "deferred-waiting", "toolu_01D2change", "--result", NOT_UTF8]
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert "--result" in err and "not UTF-8" in err and "Traceback" not in err
    assert journal_file.read_bytes() == before


def test_the_library_refuses_an_answer_that_is_not_utf8_with_its_own_error(scratch: Path) -> None:
    journal_file = scratch / "samples-copy" / "deferred-waiting.json"
    before = journal_file.read_bytes()
    with open_source(str(journal_file.parent)) as backend, pytest.raises(AnswerRefused, match="not UTF-8"):
        answer_call(backend, "deferred-waiting", "toolu_01D2change", NOT_UTF8)
    assert journal_file.read_bytes() == before


@pytest.mark.parametrize(
    "argv",
    [
        ["turns", "{scratch}", "--stuck-after", "99999999999h"],
        ["audit", "{samples}", "--stuck-after", "9" * 400],
        ["ls", "{samples}", "--since", "99999999d"],
        ["report", "{samples}", RUN, "-o", "r.html", "--max-size", "1e400"],
        ["report", "{samples}", RUN, "-o", "r.html", "--max-size", "inf"],
        ["ls", "{samples}", "--limit", "0"],
    ],
    ids=["stuck-after-hours", "stuck-after-digits", "since-before-year-1", "max-size-1e400", "max-size-inf", "limit"],
)
def test_a_duration_size_or_count_out_of_range_is_bad_usage_naming_the_option(
    argv: list[str], scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filled = [
        word.replace("{samples}", str(scratch / "samples-copy")).replace("{scratch}", str(scratch)) for word in argv
    ]
    assert _exit_status(filled) == 2
    err = capsys.readouterr().err
    assert f"argument {argv[-2]}" in err and "Traceback" not in err


def test_a_duration_too_long_is_a_journaltools_error_in_the_library() -> None:
    with pytest.raises(JournalError, match="longer than"):
        parse_duration("99999999999h")


# -- what every face shows: directional marks escaped, a huge value cut ------------------------------------------

#: The marks that reorder the neutral characters around them: right-to-left, left-to-right, Arabic letter mark.
MARKS = "\u200f\u200e\u061c"


def _run_saying(directory: Path, said: str) -> Path:
    built = journal("run-1", prompt=said)
    turn = built.assistant(text(said), tool_use("toolu_1", "stream_info", {"q": said}))
    for call in calls_of(turn):
        built.result(call, said)
    built.assistant(text("done"))
    built.terminal("completed")
    path = directory / "run-1.json"
    path.write_bytes(built.journal_bytes())
    return path


def test_directional_marks_are_escaped_in_show_the_report_and_the_widgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = f"paid {MARKS}100 USD"
    path = _run_saying(tmp_path, said)
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    for face in (shown, page, esc(said), for_page(said)):
        assert not any(mark in face for mark in MARKS)
        assert all(f"\\u{ord(mark):04x}" in face for mark in MARKS)
    assert readable_json('"\\u200f\\u061c"') == '"\\u200f\\u061c"'  # a JSON escape of one stays an escape


def test_show_cuts_a_huge_value_as_the_report_does_and_says_how_much(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = "x" * 3_000_000
    assert main(["show", str(_run_saying(tmp_path, huge))]) == 0
    shown = capsys.readouterr().out
    assert len(shown) < 10 * SHOWN_CHARS
    assert f"{len(huge) - SHOWN_CHARS:,} more characters of {len(huge):,} not shown" in shown
    assert main(["show", "--json", str(tmp_path / "run-1.json")]) == 0
    assert huge in capsys.readouterr().out  # --json holds the whole run
