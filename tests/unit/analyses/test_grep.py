"""``grep`` finds what a plain walk over every record finds, on the real corpora and the samples of both
generations: the fast path over the journals' lines never loses a match, non-English text folds case, and the
command line escapes what it prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import journaltools as jt
from journaltools.analyses.textgrep import WHERE, GrepResult, Pattern, _non_capturing, re2_literal, texts_of
from journaltools.cli import main
from journaltools.errors import InvalidGrep
from journaltools.protocol.blocks import Block, ThinkingBlock
from journaltools.protocol.generations import NEWEST
from journaltools.samples.builder import JournalBuilder, text, tool_use
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.registry import open_source
from tests.builders import CREATED
from tests.paths import ROOT
from tests.runstate_corpus import random_ones_slow
from tests.schemas import hold_to_schema

SAMPLES = ROOT / "data" / "samples"
RUNSTATE = ROOT / "tests" / "corpus" / "runstate"
CORPORA = [SAMPLES, RUNSTATE / "file", RUNSTATE / "newest" / "file", RUNSTATE / "random", RUNSTATE / "broken"]


def walked(source: Path, pattern: str, *, ignore_case: bool = False) -> list[tuple[str, int, str]]:
    """What grep must find, by a plain walk over every record of every journal (read leniently)."""
    found: list[tuple[str, int, str]] = []
    wanted = pattern.lower() if ignore_case else pattern
    with open_source(str(source)) as backend:
        for read in backend.read_runs(strict=False):
            for record in read.typed():
                for where, _, value in texts_of(record):
                    if wanted in (value.lower() if ignore_case else value):
                        found.append((read.run, record.seq, where))
    return found


def rows(result: GrepResult) -> list[tuple[str, int, str]]:
    table = result.table
    return list(zip(table["run"].to_pylist(), table["seq"].to_pylist(), table["where"].to_pylist(), strict=True))


@pytest.mark.parametrize("source", random_ones_slow(CORPORA), ids=lambda path: path.relative_to(ROOT).as_posix())
@pytest.mark.parametrize("pattern", ["ORDERS", "<", '"', "\\", "\n", "é", "stream", "toolu_", '{"stream"', "💥"])
def test_grep_finds_what_a_walk_over_every_record_finds(source: Path, pattern: str) -> None:
    expected = walked(source, pattern)
    found = jt.grep(pattern, str(source))
    assert sorted(rows(found)) == sorted(expected)
    # The regular-expression path decodes every record: the same rows, so the line filter lost nothing.
    assert sorted(rows(jt.grep(re2_literal(pattern), str(source), regex=True))) == sorted(expected)


def test_the_samples_of_both_generations_are_searched_in_every_place() -> None:
    found = jt.grep("ORDERS", str(SAMPLES))
    places = set(found.table["where"].to_pylist())
    assert {"prompt", "tool_input", "tool_result", "assistant"} <= places
    runs = set(found.table["run"].to_pylist())
    assert {"deferred-waiting", "newest-deferred-waiting"} <= runs
    thinking = jt.grep("ORDERS", str(SAMPLES), where=["thinking"])
    assert set(thinking.table["where"].to_pylist()) <= {"thinking"}
    assert found.runs == len(list(SAMPLES.glob("*.json")))
    # The samples' refused journals are searched as far as they read, and named.
    assert {finding.run for finding in found.findings} >= {"corrupt-interior", "newest-corrupt-interior"}


def _unicode_journal(directory: Path) -> None:
    built = JournalBuilder(
        "unicode-run",
        prompt="Prüfe die Größe von KÖLN-Strömen",
        created=CREATED,
        fingerprint=sample_fingerprint(),
        generation=NEWEST,
        time="2026-11-29T09:00:00Z",
    )
    call = tool_use("toolu_1", "stream_info", {"stream": "ストリーム", "note": "naïve <b>"})
    built.assistant(Block(thinking=ThinkingBlock(text="Σκέψη: ΌΛΑ καλά", signature=b"s")), text("Ich prüfe."), call)
    built.result("toolu_1", "ストリームは正常です\x1b[31m\u202e")
    built.assistant(text("Alles gut in Köln."))
    built.terminal("completed")
    (directory / "unicode-run.json").write_bytes(built.journal_bytes())


def test_non_english_text_is_found_and_folds_case(tmp_path: Path) -> None:
    _unicode_journal(tmp_path)
    assert rows(jt.grep("Köln", str(tmp_path))) == [("unicode-run", 4, "assistant")]
    assert sorted(rows(jt.grep("köln", str(tmp_path), ignore_case=True))) == [
        ("unicode-run", 1, "prompt"),
        ("unicode-run", 4, "assistant"),
    ]
    assert rows(jt.grep("όλα", str(tmp_path), ignore_case=True)) == [("unicode-run", 2, "thinking")]
    assert sorted(rows(jt.grep("ストリーム", str(tmp_path)))) == [
        ("unicode-run", 2, "tool_input"),
        ("unicode-run", 3, "tool_result"),
    ]
    # A tool input is searched as its raw JSON; the line holds "<" escaped, the input's raw JSON too.
    assert rows(jt.grep('"note":"naïve', str(tmp_path))) == [("unicode-run", 2, "tool_input")]
    found = jt.grep("正常", str(tmp_path), context=3)
    assert found.table["snippet"].to_pylist() == ["ームは正常です\x1b"]  # three characters each side, not three bytes
    assert found.table["count"].to_pylist() == [1]
    assert found.table["call_id"].to_pylist() == ["toolu_1"]


def test_bad_patterns_are_refused_in_one_line() -> None:
    with pytest.raises(InvalidGrep, match="empty"):
        jt.grep("", str(SAMPLES))
    with pytest.raises(InvalidGrep, match="RE2"):
        jt.grep("(unclosed", str(SAMPLES), regex=True)
    with pytest.raises(InvalidGrep, match="thoughts"):
        jt.grep("x", str(SAMPLES), where=["thoughts"])
    assert Pattern("(unclosed").line_spellings() == ["(unclosed"]  # a literal is never read as syntax
    assert set(WHERE) == {"prompt", "user", "assistant", "thinking", "tool_input", "tool_result"}


def test_the_command_line_prints_escaped_lines_and_a_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _unicode_journal(tmp_path)
    assert main(["grep", "正常", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("unicode-run 3 tool_result toolu_1: ")
    assert "\\x1b[31m\\u202e" in out and "\x1b" not in out and "\u202e" not in out
    assert main(["grep", "--json", "-i", "KÖLN", str(tmp_path), "--where", "prompt,assistant"]) == 0
    document = hold_to_schema("grep", capsys.readouterr().out)
    assert document["runs"] == 1 and document["where"] == ["prompt", "assistant"]
    assert [match["seq"] for match in document["matches"]] == [1, 4]
    assert main(["grep", "-E", "(", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_the_samples_grep_document_fits_its_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grep", "--json", "ORDERS", str(SAMPLES)]) == 0
    captured = capsys.readouterr()
    document = hold_to_schema("grep", captured.out)
    assert len(document["matches"]) == len(jt.grep("ORDERS", str(SAMPLES)))
    assert "could not be read whole" in captured.err
    assert json.loads(captured.out)["pattern"] == "ORDERS"


def test_a_regular_expression_with_groups_gives_snippets(tmp_path: Path) -> None:
    _unicode_journal(tmp_path)
    found = jt.grep(r"(Alles|Ich) (gut|prüfe)", str(tmp_path), regex=True, context=0)
    assert found.table["snippet"].to_pylist() == ["Ich prüfe", "Alles gut"]
    named = jt.grep(r"(?P<word>K.ln)", str(tmp_path), regex=True, context=2, ignore_case=True)
    assert named.table["snippet"].to_pylist() == ["n KÖLN-S", "n Köln."]


@pytest.mark.parametrize(
    ("regex", "groupless"),
    [
        ("a(b|c)", "a(?:b|c)"),
        (r"\(a\)", r"\(a\)"),
        ("[(]x", "[(]x"),
        ("[]()](y)", "[]()](?:y)"),
        ("(?P<w>ab)(?i)(c)", "(?:ab)(?i)(?:c)"),
        (r"\Q(a)\E(b)", r"\Q(a)\E(?:b)"),
    ],
)
def test_groups_are_made_non_capturing_and_nothing_else_changes(regex: str, groupless: str) -> None:
    assert _non_capturing(regex) == groupless
