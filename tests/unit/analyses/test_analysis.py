"""``stats``, ``query`` and ``search``: byte for byte the newest runtime's ``session stats/query/search --json`` on
every case the corpus holds (``analysis/file.jsonl``, ``analysis/search-file.jsonl``), Go's regular-expression
syntax, the August journals, the readable tables and the Python faces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import journaltools as jt
from journaltools.analyses.query import Call
from journaltools.analyses.search import SearchResult
from journaltools.analyses.stats import Statistics
from journaltools.cli import main
from journaltools.goencoding.regexp import GoRegexpError, compile_go
from tests.paths import TESTS

NEWEST = TESTS / "corpus" / "runstate" / "newest"
FILES = NEWEST / "file"
VERSION3 = NEWEST / "version3"
PARALLEL = "3MtgePl8MTxhIQTqkgVj3k35VXw"
DEFERRED = "3MtgeTlGqa06Yk4fEjHEVET7hmG"
UNICODE = "3MtgePah79N9CbpupFeGhYsIFKM"
AUGUST = "3IDQ1OhDHSSoRIEpX5dNk2z1f6f"


def _cases(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (NEWEST / "analysis" / name).read_text().splitlines()]


FILE_CASES = _cases("file.jsonl")
SEARCH_CASES = _cases("search-file.jsonl")


def _argv(case: dict[str, Any]) -> list[str]:
    if case["command"].startswith("session stats"):
        return ["stats", "--json", str(FILES), case["run_id"]]
    return ["query", "--json", str(FILES), case["run_id"], *case["args"]]


def test_the_corpus_holds_every_case() -> None:
    assert len(FILE_CASES) + len(SEARCH_CASES) == 272


@pytest.mark.parametrize(
    "case", FILE_CASES, ids=[f"{case['run_id']}:{' '.join(case.get('args') or ['stats'])}" for case in FILE_CASES]
)
def test_stats_and_query_print_the_runtimes_bytes(
    case: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(_argv(case)) == 0
    assert capsysbinary.readouterr().out == case["stdout"].encode()


@pytest.mark.parametrize("case", SEARCH_CASES, ids=[" ".join(case["args"]) or "all" for case in SEARCH_CASES])
def test_search_prints_the_runtimes_bytes(case: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["search", "--json", str(FILES), *case["args"]]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == case["stdout"].encode()
    # The run whose journal the runtime's fold refuses is not listed by it, and journaltools says so.
    assert b"3MtgeQAtLnCWNbmnbj7AWWHgJGH" in captured.err


# -- Go's regular expressions ------------------------------------------------------------------------------------

MATCHES = [
    ("(?i)denied|refused", "Access DENIED", True),
    ("a$", "a\n", False),  # Go's $ is the end of the text; Python's would match before the newline
    ("(?m)a$", "a\nb", True),
    (r"\d", "٣", False),  # ASCII in Go
    (r"\w", "é", False),
    (r"\bfoo\b", "a foo b", True),
    (r"\bé", " é", False),  # \b is an ASCII word boundary
    (r"[[:alpha:]]+x", "abcx", True),
    (r"\pL", "é", True),
    (r"\PL", "é", False),
    (r"\p{Lu}", "a", False),
    (r"\x{263a}", "☺", True),
    (r"\101", "A", True),  # octal, where Python reads a backreference
    (r"\Qa.b\E", "axb", False),
    (r"\Qa.b\E", "a.b", True),
    ("(?U)a+b", "aab", True),
    ("(?i:A)b", "aB", False),
    ("[^a]", "\n", True),
    (".", "\n", False),
    ("(?s).", "\n", True),
    ("(?<name>a)b", "ab", True),
    (r"\z", "", True),
    ("x{", "x{", True),
    ("^*a", "a", True),
    ("(?i)[^a]", "A", False),  # Go folds the class, then negates it
    ("(?i)[^a]", "b", True),
    ("[^\\d]", "5", False),
    ("(?i)k", "\u212a", True),  # the Kelvin sign folds to k in Go too
    (r"\p{Greek}", "\u03b1", True),  # Go knows Unicode scripts as well as categories
]


@pytest.mark.parametrize(("pattern", "text", "matches"), MATCHES)
def test_patterns_match_as_go_matches(pattern: str, text: str, matches: bool) -> None:
    assert compile_go(pattern).search(text) is matches


REFUSED = {
    r"(a)\1": "no backreferences",
    "(?=a)": "no lookahead",
    "(?!a)": "no lookahead",
    "(?<=a)b": "no lookbehind",
    "(?>a)": "no atomic groups",
    "a**": "invalid nested repetition operator",
    "a++": "invalid nested repetition operator",
    "*a": "missing argument to repetition operator",
    "a{1001}": "invalid repeat count",
    "(a": "missing closing )",
    "a)": "unexpected )",
    "[a": "missing closing ]",
    r"\Z": "end of the text as \\z",
    r"\C": "invalid escape sequence",
    "[z-a]": "invalid character class range",
    r"\p{Greek": "invalid character class range",
    r"\p{Klingon}": "invalid character class range",
}


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_patterns_go_refuses_are_refused(pattern: str) -> None:
    with pytest.raises(GoRegexpError, match="error parsing regexp") as refused:
        compile_go(pattern)
    assert REFUSED[pattern] in str(refused.value)


def test_a_refused_pattern_is_one_line_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", str(FILES), PARALLEL, "--output-match", r"(\w)\1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "--output-match" in captured.err and "backreferences" in captured.err
    assert "Traceback" not in captured.err


def test_bad_search_times_and_both_projections_are_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(FILES), "--since", "last tuesday"]) == 2
    assert "--since" in capsys.readouterr().err
    assert main(["query", str(FILES), PARALLEL, "--calls-only", "--results-only"]) == 2
    assert "cannot both be set" in capsys.readouterr().err


def test_search_reads_durations_and_dates(capsys: pytest.CaptureFixture[str]) -> None:
    # The corpus was written in the past: nothing was created in the last hour, everything before tomorrow.
    assert main(["search", "--json", str(FILES), "--since", "1h"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert main(["search", "--json", str(FILES), "--until", "2999-01-01"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 28


# -- August journals, the readable tables, the Python faces ------------------------------------------------------


def test_august_journals_are_untimed_with_kinds_from_remote_and_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    stats = jt.stats(VERSION3, AUGUST)
    assert not stats.dated and not stats.kinds_recorded
    assert stats.created and not stats.updated and stats.wall_clock is None
    assert all(tool.timed == 0 and tool.untimed == tool.calls - tool.unanswered for tool in stats.tools)
    assert {kind for tool in stats.tools for kind in tool.kinds} <= {"remote", "unknown"}
    assert any("remote" in tool.kinds for tool in stats.tools)
    assert main(["stats", str(VERSION3), AUGUST]) == 0
    captured = capsys.readouterr()
    assert "August build" in captured.err
    assert "untimed is not instant" in captured.out
    assert main(["search", str(VERSION3)]) == 0
    assert "August build" in capsys.readouterr().err


def test_readable_stats_query_and_search(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(FILES), PARALLEL]) == 0
    out = capsys.readouterr().out
    assert "wall clock: 31.1s" in out and "stream_report" in out and "NOT RUN" in out
    assert main(["query", str(FILES), DEFERRED]) == 0
    out = capsys.readouterr().out
    assert "deferred (waiting on CAB approval) [handle CHG-4411]" in out and "no answer yet" in out
    assert main(["search", str(FILES), "--identity", "ops"]) == 0
    out = capsys.readouterr().out
    assert "2 more runs matched every other filter but name no agent" in out


def test_a_journal_file_alone_names_its_run(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["stats", "--json", str(FILES / f"{PARALLEL}.json")]) == 0
    assert capsysbinary.readouterr().out == FILE_CASES[0]["stdout"].encode()


def test_readable_output_escapes_journal_content(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["query", str(FILES), UNICODE], ["stats", str(FILES), UNICODE], ["search", str(FILES)]):
        assert main(command) == 0
        out = capsys.readouterr().out
        assert not any(char in out for char in "\x00\x1b\u2028\u2029"), command


def test_the_python_faces_return_typed_values() -> None:
    stats = jt.stats(FILES, PARALLEL)
    assert isinstance(stats, Statistics)
    assert stats.to_json() == FILE_CASES[0]["stdout"].encode()
    assert [tool.tool for tool in stats.tools] == sorted(tool.tool for tool in stats.tools)
    assert stats.wall_clock_ns == 31_052_261_000
    calls = jt.calls(FILES, PARALLEL, errors=True)
    assert [(call.tool, call.is_error) for call in calls] == [("stream_report", True)]
    assert all(isinstance(call, Call) for call in calls)
    assert jt.calls(FILES, PARALLEL, input_match='"stream":"ORDERS"', tools=["consumer_rm"])[0].tool_use_id == "tu_4"
    found = jt.search(FILES, agent="billing")
    assert isinstance(found, SearchResult)
    assert [run.run_id for run in found.runs] == ["3MtgeRY35VNzGRbtts1EkdSTvOZ"]
    assert found.no_agent_excluded == 2
    with pytest.raises(jt.JournalError, match="--match"):
        jt.search(FILES, match="(?=x)")


# -- across many runs: the tables carry what stats reports for one ------------------------------------------------


def _go_ns(text: str) -> int:
    from journaltools.goencoding.time import parse_go_time

    return parse_go_time(text).unix_ns


def test_the_tables_carry_what_stats_reports_for_every_named_scenario() -> None:
    tables = jt.load(FILES, strict=False)
    responses = tables.responses.to_pylist()
    calls = tables.tool_calls.to_pylist()
    runs = {row["run"]: row for row in tables.runs.to_pylist()}
    checked = 0
    for case in FILE_CASES:
        if not case["command"].startswith("session stats"):
            continue
        run, document = case["run_id"], json.loads(case["stdout"])
        if runs[run]["status"] == "invalid":
            continue  # the runtime's fold refuses it; the tables keep no responses for it
        rows = [row for row in responses if row["run"] == run]
        assert [row["iteration"] for row in rows] == [response["iteration"] for response in document["responses"]]
        for row, response in zip(rows, document["responses"], strict=True):
            tokens = response["tokens"]
            assert [row[key] for key in tokens] == list(tokens.values())
            if "time" in response:  # the column keeps microseconds of Go's nanoseconds
                assert int(row["time"].timestamp() * 1_000_000) == _go_ns(response["time"]) // 1000
            else:
                assert row["time"] is None
        for tool in document["tools"]:
            mine = [row for row in calls if row["run"] == run and row["name"] == tool["tool"]]
            assert sum(row["timed"] for row in mine) == tool["timed"]
            assert sum(row["duration"].value for row in mine if row["timed"]) == tool["duration_ns"]
        wall = runs[run]["wall_clock"]
        if "created" in document and "updated" in document:
            assert wall.value == _go_ns(document["updated"]) - _go_ns(document["created"])
        else:
            assert wall is None
        checked += 1
    assert checked == 28


def test_segments_are_dated_by_their_first_and_last_record() -> None:
    long_gap = "3MtgeRSh4TIVQGhuBk7OdSUpUJW"  # three days suspended, then resumed
    tables = jt.load(FILES / f"{long_gap}.json")
    segments = tables.segments.to_pylist()
    assert len(segments) == 2
    first, second = segments
    assert first["started_at"] <= first["ended_at"] < second["started_at"] <= second["ended_at"]
    assert (second["started_at"] - first["ended_at"]).days >= 2
    august = jt.load(VERSION3, strict=False)
    assert august.segments.column("started_at").null_count == august.segments.num_rows
    assert august.runs.column("wall_clock").null_count == august.runs.num_rows
    assert august.responses.num_rows > 0 and august.responses.column("time").null_count == august.responses.num_rows


def test_the_parquet_audit_writes_the_responses_and_the_times(tmp_path: Path) -> None:
    import duckdb

    jt.audit_sources([FILES], parquet=tmp_path, progress=False)
    written = jt.read_audit(tmp_path)
    assert written.responses.num_rows == jt.load(FILES, strict=False).responses.num_rows > 0
    slowest = duckdb.sql(
        f"select name, sum(duration) as total from '{tmp_path}/tool_calls.parquet' where timed "
        "group by name order by total desc limit 1"
    ).fetchall()
    assert slowest and slowest[0][0]
    dated = duckdb.sql(f"select count(*) from '{tmp_path}/runs.parquet' where wall_clock is not null").fetchall()
    assert dated == [(29,)]  # every named scenario is dated, the one the runtime's fold refuses too


# -- what a journal cannot tell is said, per run --------------------------------------------------------------------


def _degraded(source: Path) -> dict[str, str]:
    findings = jt.load(source, strict=False).findings.to_pylist()
    assert all(row["severity"] == "info" for row in findings if row["code"] == "degraded_analysis")
    return {row["run"]: row["message"] for row in findings if row["code"] == "degraded_analysis"}


def test_a_journal_without_the_newest_fields_says_what_analysis_it_misses() -> None:
    newest = _degraded(FILES)
    assert PARALLEL not in newest  # dated, with an agent and kinds: nothing is missing
    agent_unset = newest["3MtgeQKhozIEk6GBzziBpUzfKUj"]
    assert "meta.agent" in agent_unset and "time" not in agent_unset and "kind" not in agent_unset
    mixed = newest["3MtgeVfd50pmoYGO3yf5a1u7ykH"]  # August-style records, then resumed by the newest line
    assert "a time on 5 of 12 records" in mixed and "provider kind on 3 of 5 results" in mixed
    assert set(newest) == {"3MtgeQKhozIEk6GBzziBpUzfKUj", "3MtgeVfd50pmoYGO3yf5a1u7ykH"}
    august = _degraded(VERSION3)
    assert len(august) == 3
    for message in august.values():
        assert "August build" in message and "untimed, not instant" in message
        assert "meta.agent" in message and "provider kind" in message


def test_show_dates_each_message_with_the_gap_before_it_and_the_header_with_the_wall_clock(
    capsys: pytest.CaptureFixture[str],
) -> None:
    long_gap = "3MtgeRSh4TIVQGhuBk7OdSUpUJW"
    assert main(["show", str(FILES), long_gap]) == 0
    out = capsys.readouterr().out
    assert "· wall clock 3d00h" in out.splitlines()[2]
    assert "[seq 1] user  2026-12-02T01:36:12.789Z\n" in out  # the first message has nothing before it
    assert "[seq 2] assistant  2026-12-02T01:36:15.734Z  (+2.9s)" in out
    assert "[seq 7] user  2026-12-05T01:53:36.463Z  (+3d00h, a long wait)" in out
    # Each process run spans its first and last record's times: the three days fall between the two.
    assert "2026-12-02T01:36:28.033Z  suspended" in out and "2026-12-05T01:53:47.709Z  completed" in out
    assert main(["show", str(VERSION3), AUGUST]) == 0
    out = capsys.readouterr().out
    assert "wall clock" not in out and "(+" not in out and "STARTED" not in out  # undated: no time is made up


def test_a_stream_holding_the_same_journals_answers_with_the_same_bytes(
    jetstream_url: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # The journals copied byte for byte into JetStream: stats and query read the same records.
    assert main(["migrate", str(FILES), jetstream_url, "--skip-invalid"]) == 0
    capsysbinary.readouterr()
    for case in FILE_CASES:
        if case.get("args") not in (None, [], ["--errors"]):
            continue
        argv = _argv(case)
        argv[2] = jetstream_url
        assert main(argv) == 0
        assert capsysbinary.readouterr().out == case["stdout"].encode(), argv
    edge = "3MtgeQAtLnCWNbmnbj7AWWHgJGH"  # its fold fails, but the JetStream rule reads two records and lists it
    for case in SEARCH_CASES:
        assert main(["search", "--json", jetstream_url, *case["args"]]) == 0
        found = json.loads(capsysbinary.readouterr().out)
        expected = json.loads(case["stdout"])
        assert [run for run in found["runs"] if run["run_id"] != edge] == expected["runs"], case["args"]
        assert found["no_agent_excluded"] == expected["no_agent_excluded"]
        listed = [run for run in found["runs"] if run["run_id"] == edge]
        assert all(run["status"] == "completed" for run in listed)


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("0", 0),
        ("90s", 90 * 10**9),
        ("1h30m", 5400 * 10**9),
        (".5h", 1800 * 10**9),
        ("7d", 7 * 86400 * 10**9),
        ("1.5d", 36 * 3600 * 10**9),
        ("2w", 14 * 86400 * 10**9),
        ("1M", 30 * 86400 * 10**9),
        ("1y", 365 * 86400 * 10**9),
        ("24hours", None),
        ("1.2.3h", None),
        ("", None),
    ],
)
def test_since_and_until_read_durations_as_fisk_does(text: str, nanoseconds: int | None) -> None:
    from journaltools.analyses.search import _go_duration

    assert _go_duration(text) == nanoseconds


def test_readable_stats_call_a_wall_clock_across_backwards_times_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    # The answer at seq 5 was journaled by a clock 4.6 s behind the deferral before it: creation to the last record
    # (2 ms) measures nothing. --json stays the runtime's: the two times as the journal holds them.
    run = "3MtgeORUyjqNtTnpuv2wKMRNDfC"
    assert main(["stats", str(FILES), run]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "wall clock: unknown: record times run backwards at seq 5" in lines
    assert "created 2026-12-02T01:36:12.719Z · last record 2026-12-02T01:36:12.721Z" in lines
    assert main(["stats", str(FILES), run, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["updated"] == "2026-12-02T01:36:12.721416103Z"


def test_stats_and_query_say_what_the_journal_cannot_tell_as_load_reports_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One rule for what an August journal lacks: the note on stderr is load's degraded_analysis finding, word for word.
    import journaltools as jt

    degraded = {
        row["run"]: row["message"]
        for row in jt.load(VERSION3, strict=False).findings.to_pylist()
        if row["code"] == "degraded_analysis"
    }
    run = sorted(degraded)[0]
    for command in ("stats", "query"):
        assert main([command, str(VERSION3), run, "--json"]) == 0
        assert capsys.readouterr().err == f"journaltools {command}: info: {degraded[run]}\n"
