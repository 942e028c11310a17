"""Every ``--json`` document the command line prints on the real corpora is held to its published schema
(``journaltools schema --output NAME``) and to its pydantic model: the samples, the runtime's own journals, the
random corpus and the broken one (folded leniently).

The schemas are closed here (tests/schemas.py): a key the command line prints that the model does not describe
fails.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from journaltools.cli import main
from journaltools.models import OUTPUT_NAMES, output_schema
from journaltools.models.documents import OUTPUT_DOCUMENTS
from tests.paths import ROOT
from tests.runstate_corpus import random_ones_slow
from tests.schemas import hold_to_schema, journals, printed, validator

SAMPLES = ROOT / "data" / "samples"
RUNSTATE = ROOT / "tests" / "corpus" / "runstate"
SOURCES = {
    "samples": SAMPLES,
    "file": RUNSTATE / "file",
    "random": RUNSTATE / "random",
    "broken": RUNSTATE / "broken",
    "newest-file": RUNSTATE / "newest" / "file",
    "newest-broken": RUNSTATE / "newest" / "broken",
}

# -- the documents on the corpora --------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", random_ones_slow(sorted(SOURCES)))
def test_show_documents_fit_their_schema(capsys: pytest.CaptureFixture[str], corpus: str) -> None:
    shown = 0
    for journal in journals(SOURCES[corpus]):
        code = main(["show", "--json", "--lenient", str(journal)])
        out = capsys.readouterr().out
        if code != 0:  # a journal not even a lenient read takes prints nothing on stdout
            assert out == ""
            continue
        hold_to_schema("show", out)
        shown += 1
    assert shown >= 10


def test_show_documents_of_every_kind_of_run_fit_their_schema(capsys: pytest.CaptureFixture[str]) -> None:
    # Strict folds, the Anthropic rendering, and the pieces that only some runs have.
    seen: set[str] = set()
    for journal in journals(SAMPLES):
        for extra in ([], ["--anthropic"]):
            code = main(["show", "--json", *extra, str(journal)])
            out = capsys.readouterr().out
            if code != 0:
                continue
            document = hold_to_schema("show", out)
            seen |= {key for key, value in document.items() if value not in (None, [], {}, False)}
    assert {"pending", "pending_calls", "open_deferrals", "call_approvals", "memory_revisions", "terminal"} <= seen


@pytest.mark.parametrize("corpus", random_ones_slow(sorted(SOURCES)))
def test_ls_and_audit_documents_fit_their_schemas(capsys: pytest.CaptureFixture[str], corpus: str) -> None:
    rows = hold_to_schema("ls", printed(capsys, "ls", "--json", str(SOURCES[corpus])))
    findings = hold_to_schema("audit", printed(capsys, "audit", "--json", "--quiet", str(SOURCES[corpus])))
    assert rows and (findings or corpus != "broken")


def test_a_listing_of_several_sources_fits_its_schema(capsys: pytest.CaptureFixture[str]) -> None:
    rows = hold_to_schema("ls", printed(capsys, "ls", "--json", str(SAMPLES), str(SOURCES["file"])))
    assert all(row["source"] for row in rows)


def test_compare_and_migrate_documents_fit_their_schemas(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    copy_dir = tmp_path / "copy"
    report = hold_to_schema("migrate", printed(capsys, "migrate", "--json", str(SAMPLES), str(copy_dir), status=1))
    assert report["refused"]  # the samples hold journals the runtime refuses: those rows are described too
    again = hold_to_schema("migrate", printed(capsys, "migrate", "--json", str(SAMPLES), str(copy_dir), status=1))
    assert again["copied"] == 0
    rows = hold_to_schema("compare", printed(capsys, "compare", "--json", str(SAMPLES), str(copy_dir)))
    assert {"agree", "missing_b"} <= {row["verdict"] for row in rows}
    rows = hold_to_schema("compare", printed(capsys, "compare", "--json", str(SAMPLES), str(SOURCES["file"])))
    assert {"missing_a", "missing_b"} <= {row["verdict"] for row in rows}


def _candidates(tmp_path: Path, fingerprint: dict[str, Any]) -> Iterator[tuple[Path, list[str]]]:
    """Configurations that make every verdict: the same, a forced change, a budget and a tools change, another
    provider, and a flipped interactive flag."""
    changes: list[tuple[dict[str, Any], list[str]]] = [
        ({}, []),
        ({"model": "another-model", "tools_hash": "0" * 64, "max_tokens": 1, "reasoning_effort": "high"}, ["--force"]),
        ({"model": "another-model", "system": ["a new prompt"]}, ["--follow-up"]),
        ({"provider": "elsewhere", "interactive": True}, []),
    ]
    for index, (change, flags) in enumerate(changes):
        path = tmp_path / f"candidate-{index}.json"
        config = {**fingerprint, **change}
        if "system" in change:
            del config["system_hash"]  # the blocks stand in for the hash
        path.write_text(json.dumps(config))
        yield path, flags


@pytest.mark.slow  # runs the gate over every corpus journal: `make test` runs it
def test_gate_documents_fit_their_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    verdicts: set[str] = set()
    for source in (SAMPLES, SOURCES["file"]):
        for journal in journals(source):
            code = main(["show", "--json", str(journal)])
            shown = capsys.readouterr().out
            if code != 0:
                continue
            fingerprint = json.loads(shown)["fingerprint"]
            for config, flags in _candidates(tmp_path, fingerprint):
                code = main(
                    ["gate", "--json", str(source), journal.name.split(".")[0], "--config", str(config), *flags]
                )
                document = hold_to_schema("gate", capsys.readouterr().out)
                assert code == (0 if document["resumable"] else 1)
                verdicts |= {row["verdict"] for row in document["fields"]}
    assert verdicts == {"same", "refused", "forced", "allowed", "reported"}


def test_an_answer_document_fits_its_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("deferred-waiting.json", "deferred-waiting.lock"):
        shutil.copy(SAMPLES / name, runs / name)
    argv = ["answer", "--json", str(runs), "deferred-waiting", "toolu_01D2change", "--result", "approved"]
    answered = hold_to_schema("answer", printed(capsys, *argv))
    assert answered["call"] == "toolu_01D2change"


# -- the schemas themselves --------------------------------------------------------------------------------------


def test_every_output_has_a_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(OUTPUT_NAMES) == set(OUTPUT_DOCUMENTS)
    for name in OUTPUT_NAMES:
        printed_schema = json.loads(printed(capsys, "schema", "--output", name))
        assert printed_schema == output_schema(name)
        assert printed_schema["title"] == f"journaltools {name} --json"
    assert json.loads(printed(capsys, "schema"))["$defs"]["Record"]  # the record schemas stay the default


def test_a_document_that_strays_from_its_schema_fails(capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(printed(capsys, "show", "--json", str(SAMPLES / "deferred-waiting.json")))
    assert validator("show").is_valid(document)
    for stray in (
        {**document, "conversation_token": "x"},  # a key no model describes
        {key: value for key, value in document.items() if key != "counters"},  # a key left out
        {**document, "counters": {**document["counters"], "llm_calls": "1"}},  # a string where a count goes
        {**document, "resume": {**document["resume"], "waiting_for": "lunch"}},  # not one of the values
    ):
        assert not validator("show").is_valid(stray)
    published = jsonschema.Draft202012Validator(output_schema("show"))
    assert published.is_valid({**document, "a_key_added_later": 1})  # what consumers get stays open to additions


def test_the_documents_name_what_the_newest_fold_adds() -> None:
    """Every show and ls document carries the generation and what the newest fold adds (null or empty where an
    August journal has none), so a consumer never has to guess whether a key is there."""
    show = output_schema("show")
    added = {"generation", "agent", "times", "result_times", "ended", "turns", "context_tokens", "reopened", "ending"}
    assert added <= set(show["required"])
    counters = show["$defs"]["Counters"]
    assert {"mcp_tool_calls", "tool_calls_by_kind"} <= set(counters["required"])
    assert "time" in show["$defs"]["PendingTurn"]["required"]
    row = output_schema("ls")["$defs"]["ListingRow"]
    assert {"agent", "caller", "ended", "generation", "run_id"} <= set(row["required"])


def test_stats_query_and_search_documents_fit_their_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    # Every document the newest runtime printed for the corpus, and what journaltools prints for August journals.
    analysis = RUNSTATE / "newest" / "analysis"
    for line in (analysis / "file.jsonl").read_text().splitlines():
        case = json.loads(line)
        hold_to_schema("stats" if case["command"].startswith("session stats") else "query", case["stdout"])
    for line in (analysis / "search-file.jsonl").read_text().splitlines():
        hold_to_schema("search", json.loads(line)["stdout"])
    august = RUNSTATE / "newest" / "version3"
    for journal in journals(august):
        run = journal.name.split(".")[0]
        hold_to_schema("stats", printed(capsys, "stats", "--json", str(august), run))
        hold_to_schema("query", printed(capsys, "query", "--json", str(august), run))
    hold_to_schema("search", printed(capsys, "search", "--json", str(august)))
