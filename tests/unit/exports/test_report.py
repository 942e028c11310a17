"""``journaltools report`` / ``jt.report``: one run as one self-contained HTML file, on the real corpus of both
generations, on hostile and huge journals, and from the command line."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

import journaltools as jt
from journaltools.cli import main
from journaltools.cli._options import REPORT_MAX_SIZE_TEXT, REPORT_MIN_SIZE
from journaltools.exports.html import SENT_CHARS, esc
from journaltools.exports.report import DEFAULT_MAX_BYTES, MIN_MAX_BYTES, RunReport, render_report
from journaltools.exports.report_page import CONTENT_SECURITY_POLICY, REPORT_SCRIPT
from journaltools.protocol.generations import NEWEST
from journaltools.samples.builder import JournalBuilder, calls_of, journal_bytes, text, tool_use
from journaltools.samples.stories import sample_fingerprint
from tests.paths import SAMPLES
from tests.report_pages import (
    AUGUST_FILES,
    NEWEST_FILES,
    SECTIONS,
    assert_self_contained,
    conversation_token,
    scenarios,
    section,
    sections_of,
    write_journal,
)
from tests.widget_journals import SCRIPT, TOKEN, assert_safe, corpus_fold, hostile_records

# -- the real corpus, both generations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "scenario"),
    [(AUGUST_FILES, name) for name in scenarios(AUGUST_FILES)]
    + [(NEWEST_FILES, name) for name in scenarios(NEWEST_FILES)],
    ids=lambda value: value if isinstance(value, str) else value.parent.name,
)
def test_every_corpus_run_has_every_section_and_never_its_token(folder: Path, scenario: str) -> None:
    run = scenarios(folder)[scenario]
    made = jt.report(str(folder), run)
    html = made.html
    assert sections_of(html) == list(SECTIONS), scenario
    assert made.size == len(html.encode()) <= DEFAULT_MAX_BYTES
    assert made.messages_shown == made.messages and made.left_out_from_seq is None
    assert f"<code>{esc(run)}</code>" in html and 'class="jt-banner ' in section(html, "summary")
    token = conversation_token(folder / f"{run}.json")
    assert not token or token not in html
    assert_self_contained(html)


def test_an_august_journal_says_undated_and_shows_no_duration() -> None:
    run = scenarios(AUGUST_FILES)["completed-parallel-tools"]
    html = jt.report(str(AUGUST_FILES), run).html
    timeline = section(html, "timeline")
    assert '<span class="jt-undated">undated</span>: this journal\'s records carry no time' in timeline
    assert "took" not in html and "<th>took</th>" not in timeline and "<th>time</th>" not in timeline
    assert "written by the August build (format version 3)" in html


def test_a_newest_journal_shows_the_durations_of_its_turns_and_calls() -> None:
    run = scenarios(NEWEST_FILES)["completed-parallel-tools"]
    html = jt.report(str(NEWEST_FILES), run).html
    timeline = section(html, "timeline")
    assert "undated" not in timeline and "<th>took</th>" in timeline
    assert re.search(r"took [0-9.]+ (ms|s)", section(html, "conversation")), "a call's duration beside its result"
    assert "written by the newest line (format version 1)" in html


@pytest.mark.parametrize("folder", [AUGUST_FILES, NEWEST_FILES], ids=["august", "newest"])
def test_a_stuck_run_shows_what_it_waits_for(folder: Path) -> None:
    deferred = jt.report(str(folder), scenarios(folder)["deferred-waiting"]).html
    waiting = section(deferred, "waiting")
    assert "waiting for <b>answer</b>: 1 pending call" in waiting
    assert re.search(r"<li>\w+ \(\w+\): deferred", waiting) and 'data-state="deferred"' in waiting
    assert "Suspended" in section(deferred, "summary")

    in_flight = jt.report(str(folder), scenarios(folder)["turn-in-flight"]).html
    waiting = section(in_flight, "waiting")
    assert "waiting for <b>tools</b>" in waiting and ": waiting</li>" in waiting
    assert "turn in flight" in section(in_flight, "conversation")


def test_a_long_run_pages_inside_the_file_with_the_first_and_last_pages_open() -> None:
    made = jt.report(str(AUGUST_FILES), scenarios(AUGUST_FILES)["long-run"])
    pages = re.findall(r'<details class="jt-page" id="page-(\d+)"( open)?>', made.html)
    assert made.pages == len(pages) == -(-made.messages // 50) > 2
    assert [number for number, opened in pages if opened] == ["1", str(made.pages)]
    # Each message once, each labelled with its seq.
    assert len(re.findall(r'<div class="jt-msg jt-msg-\w+" id="jt-r-seq-\d+"', made.html)) == made.messages


def test_the_segments_and_findings_are_listed_with_links_to_their_messages() -> None:
    run = scenarios(AUGUST_FILES)["served-memory-revisions"]
    html = jt.report(str(AUGUST_FILES), run).html
    assert len(re.findall(r'<tr data-segment="\d+">', section(html, "segments"))) == 3
    refused = jt.report(str(SAMPLES), "corrupt-interior")
    findings = section(refused.html, "findings")
    assert "corrupt" in findings and 'class="jt-seq-link"' in findings and "Invalid journal" in refused.html


# -- hostile and huge journals -------------------------------------------------------------------------------------


def test_journal_markup_is_escaped_everywhere_and_the_token_never_appears(tmp_path: Path) -> None:
    source = write_journal(tmp_path, "hostile", journal_bytes(hostile_records()))
    html = jt.report(str(source), "hostile").html
    body = html.split("</head>", 1)[1].replace(f"<script>{REPORT_SCRIPT}</script>", "")
    assert_safe(body)
    for what in ("output", "answer", "note", "handle", "message", "by", "caller"):
        assert f"{what} &lt;script&gt;window.pwned = 1&lt;/script&gt;" in body, what
    assert esc("<img src=x onerror=alert(1)>") in body
    assert TOKEN not in html


def test_the_script_is_the_only_one_the_page_may_run() -> None:
    digest = base64.b64encode(hashlib.sha256(REPORT_SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in CONTENT_SECURITY_POLICY
    assert (
        "default-src 'none'" in CONTENT_SECURITY_POLICY
        and "unsafe-inline" not in CONTENT_SECURITY_POLICY.split("script-src")[1].split(";")[0]
    )
    assert SCRIPT not in REPORT_SCRIPT


def huge_run(run: str, *, results: int, size: int) -> bytes:
    """An August run whose tool results are ``size`` characters each, the last with markup at its very end."""
    built = JournalBuilder(run, prompt="huge", created="2026-08-21T23:36:20Z", fingerprint=sample_fingerprint())
    for number in range(results):
        [call] = calls_of(built.assistant(tool_use(f"toolu_{number}", "dump", {"n": number})))
        built.result(call, "x" * (size - len(SCRIPT)) + SCRIPT)
    built.assistant(text("done"))
    built.terminal("completed")
    return built.journal_bytes()


def test_a_huge_tool_result_is_cut_with_a_note_saying_how_much_more(tmp_path: Path) -> None:
    size = 3_000_000
    source = write_journal(tmp_path, "huge", huge_run("huge", results=1, size=size))
    made = jt.report(str(source), "huge")
    assert made.size < 200_000 and made.messages_shown == made.messages
    assert f"… {size - SENT_CHARS:,} more characters (of {size:,})" in made.html
    assert SCRIPT not in made.html and "&lt;script&gt;window.pwned" not in made.html  # the markup was in the cut


def test_the_file_keeps_under_its_bound_and_says_what_it_left_out(tmp_path: Path) -> None:
    source = write_journal(tmp_path, "big", huge_run("big", results=40, size=30_000))
    # Compressed, these pages fit (test_report_large.py): plain, they show what the bound leaves out.
    packed = jt.report(str(source), "big", max_bytes=MIN_MAX_BYTES)
    assert packed.left_out_from_seq is None and packed.compressed_pages > 0 and packed.size <= MIN_MAX_BYTES
    made = jt.report(str(source), "big", max_bytes=MIN_MAX_BYTES, compress=False)
    assert made.size <= MIN_MAX_BYTES and len(made.html.encode()) == made.size
    assert made.left_out_from_seq is not None and 0 < made.messages_shown < made.messages
    note = re.search(r'data-left-out-from="(\d+)">… (\d+) messages from seq (\d+) on left out', made.html)
    assert note is not None and int(note[1]) == int(note[3]) == made.left_out_from_seq
    assert int(note[2]) == made.messages - made.messages_shown
    assert f"--from-seq {made.left_out_from_seq}" in made.html and "size bound of 200,000 bytes" in made.html
    # Every section is still there; the same run with room enough holds every message.
    assert sections_of(made.html) == list(SECTIONS)
    whole = jt.report(str(source), "big")
    assert whole.left_out_from_seq is None and whole.messages_shown == whole.messages == made.messages


def test_every_bound_is_kept_whatever_the_sections_take(tmp_path: Path) -> None:
    """Bounds from the least upwards against a run of many findings and long results: the sections before the
    conversation fill the room in every proportion, and the file still keeps under each bound."""
    built = JournalBuilder("busy", prompt="p", created="2026-08-21T23:36:20Z", fingerprint=sample_fingerprint())
    for number in range(400):
        [call] = calls_of(built.assistant(tool_use(f"toolu_{number}", "dump", {"n": number})))
        built.result(call, "y" * 1_500)
        built.result(call, "a second answer " * 20)  # a duplicate_result finding each
    built.assistant(text("done"))
    built.terminal("completed")
    source = str(write_journal(tmp_path, "busy", built.journal_bytes()))
    for bound in range(MIN_MAX_BYTES, 2_000_000, 97_003):
        made = jt.report(source, "busy", max_bytes=bound)
        assert made.size <= bound, bound
        assert sections_of(made.html) == list(SECTIONS)
        assert (made.left_out_from_seq is None) == (made.messages_shown == made.messages), bound
        if bound == MIN_MAX_BYTES:  # 400 findings do not fit there: 50 of them do, and the rest is counted
            assert "… 350 more findings left out of this table" in section(made.html, "findings")


def test_a_huge_terminal_message_still_leaves_the_banner_on_top(tmp_path: Path) -> None:
    built = JournalBuilder("loud", prompt="p", created="2026-08-21T23:36:20Z", fingerprint=sample_fingerprint())
    built.assistant(text("hello"))
    built.terminal("error", "boom " * 100_000)  # 500,000 characters, in the banner and in the process runs
    made = jt.report(str(write_journal(tmp_path, "loud", built.journal_bytes())), "loud", max_bytes=MIN_MAX_BYTES)
    assert made.size <= MIN_MAX_BYTES and sections_of(made.html) == list(SECTIONS)
    summary = section(made.html, "summary")
    assert "Ended in error" in summary and "more characters not shown" in summary
    assert "is left out but for the above: it would pass" in summary
    assert made.messages_shown == made.messages == 2


def test_the_summary_counts_the_findings_and_links_to_their_section() -> None:
    refused = jt.report(str(SAMPLES), "corrupt-interior").html
    summary = section(refused, "summary")
    assert re.search(r'\d+ findings? \(\d+ errors?\): see <a href="#findings">Findings</a>', summary)
    assert "jt-findings-box" not in summary  # listed once, in their own section


def test_a_bound_below_the_least_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 200,000 bytes"):
        render_report(corpus_fold("terminal-error"), max_bytes=MIN_MAX_BYTES - 1)
    assert REPORT_MIN_SIZE == MIN_MAX_BYTES and REPORT_MAX_SIZE_TEXT == "10M" and DEFAULT_MAX_BYTES == 10_000_000


def test_a_report_made_from_a_fold_alone_says_it_has_no_times() -> None:
    made = render_report(corpus_fold("deferred-waiting"))
    assert sections_of(made.html) == list(SECTIONS) and "undated: made from a fold alone" in made.html


def test_a_newest_journal_written_without_times_is_undated_too(tmp_path: Path) -> None:
    built = JournalBuilder(
        "untimed", prompt="p", created="2026-08-21T23:36:20Z", fingerprint=sample_fingerprint(), generation=NEWEST
    )
    built.assistant(text("hello"))
    built.terminal("completed")
    html = jt.report(str(write_journal(tmp_path, "untimed", built.journal_bytes())), "untimed").html
    assert '<span class="jt-undated">undated</span>' in html and "took" not in html


# -- the command line and the Python face ----------------------------------------------------------------------------


def test_the_command_writes_the_file_and_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "report.html"
    assert main(["report", str(SAMPLES), "newest-deferred-waiting", "-o", str(target)]) == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"wrote {target}: ") and "bound 10,000,000" in said[0]
    html = target.read_text(encoding="utf-8")
    assert sections_of(html) == list(SECTIONS) and "newest-deferred-waiting" in html
    # One journal file alone needs no RUN.
    assert main(["report", str(SAMPLES / "deferred-waiting.json"), "--output", str(target), "--max-size", "300k"]) == 0
    assert "bound 300,000" in capsys.readouterr().out and "deferred-waiting" in target.read_text(encoding="utf-8")


def test_a_price_file_adds_the_runs_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"claude-sonnet-4-6": {"input": 2.0, "output": 10.0}}, "currency": "USD"}))
    target = tmp_path / "priced.html"
    assert main(["report", str(SAMPLES), "newest-deferred-waiting", "-o", str(target), "--prices", str(prices)]) == 0
    summary = section(target.read_text(encoding="utf-8"), "summary")
    # 1,500 input and 230 output tokens: 0.003 + 0.0023.
    assert "cost <b>0.0053</b>" in summary and "(your price table)" in summary
    assert main(["report", str(SAMPLES), "newest-deferred-waiting", "-o", str(target)]) == 0
    assert "cost <b>" not in section(target.read_text(encoding="utf-8"), "summary")
    capsys.readouterr()
    prices.write_text('{"models": {"claude-sonnet-4-6": {"input": "cheap"}}}')
    assert main(["report", str(SAMPLES), "deferred-waiting", "-o", str(target), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be a valid number" in err


@pytest.mark.parametrize(
    ("arguments", "status", "said"),
    [
        (["no-such-run"], 1, "run 'no-such-run': no journal"),
        (["corrupt-interior", "--strict"], 1, "corrupt journal at line 3"),
        (["deferred-waiting", "--max-size", "10k"], 2, "below the least size"),
        (["deferred-waiting", "--max-size", "ten"], 2, "is not a size"),
    ],
)
def test_refusals_are_one_line_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], status: int, said: str
) -> None:
    run, *options = arguments
    command = ["report", str(SAMPLES), run, "-o", str(tmp_path / "x.html"), *options]
    if status == 2:  # bad usage ends in argparse
        with pytest.raises(SystemExit) as exited:
            main(command)
        assert exited.value.code == 2
    else:
        assert main(command) == status
    err = capsys.readouterr().err
    assert (
        said in err and "Traceback" not in err and err.rstrip("\n").splitlines()[-1].startswith("journaltools report")
    )
    assert not (tmp_path / "x.html").exists()


def test_an_unwritable_path_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(SAMPLES), "deferred-waiting", "-o", str(tmp_path / "missing" / "r.html")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "no such file or directory" in err


def test_jt_report_writes_or_returns_the_html(tmp_path: Path) -> None:
    made = jt.report(str(SAMPLES), "newest-deferred-waiting")
    assert isinstance(made, RunReport) and made.path is None
    written = jt.report(str(SAMPLES), "newest-deferred-waiting", tmp_path / "r.html")
    assert written.path == tmp_path / "r.html" and written.path.read_bytes() == written.html.encode()
    assert written.summary().startswith(f"wrote {tmp_path / 'r.html'}: ")
    with pytest.raises(jt.RunNotFound):
        jt.report(str(SAMPLES), "no-such-run")


def test_the_timeline_draws_every_turn_and_call_and_says_its_marks_in_journal_order() -> None:
    from journaltools.exports.report import report_of_read
    from journaltools.sources.registry import open_source
    from tests.runstate_corpus import NEWEST_CORPUS

    with open_source(NEWEST_CORPUS / "file") as source:
        read = source.read_run("3MtgeRBxFqFRdJsUaqqP0IVU8fy", strict=False)
    html = report_of_read(read).html
    timeline = html[html.index('<div class="jt-timeline"') :]
    timeline = timeline[: timeline.index("</p>")]
    assert timeline.count("jt-marker-turn") == 2 and timeline.count("jt-marker-call") == 1
    assert "2 model turns, 1 tool call; seq 6: claimed by worker-2; seq 8: ended (completed)" in timeline
    assert '<div class="jt-scroll"><table class="jt-table jt-segments-table">' in html
