"""A command names a run as a person has it at hand: its whole id, a unique prefix, or the shortened id ``ls``
prints. An ambiguous name is bad usage listing the candidates; an unknown one is "no journal"."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools._base.readable import shorten_middle
from journaltools.cli import main
from tests.runstate_corpus import NEWEST_CORPUS

FOLDER = str(NEWEST_CORPUS / "file")
RUN = "3MtgeOZqFVIqJF8VPxxiONwi44A"


@pytest.mark.parametrize("name", [RUN, RUN[:7], shorten_middle(RUN, 20)], ids=["whole", "prefix", "shortened"])
@pytest.mark.parametrize("command", [["show"], ["stats"], ["query", "--json"]])
def test_a_run_is_found_by_its_id_a_unique_prefix_or_its_shortened_form(
    command: list[str], name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, FOLDER, name]) == 0
    out = capsys.readouterr().out
    assert RUN in out


def test_an_ambiguous_prefix_is_bad_usage_naming_the_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", FOLDER, "3Mtge"]) == 2
    err = capsys.readouterr().err
    assert "names 29 runs" in err and RUN[:10] in err and "give more of the id" in err and len(err.splitlines()) == 1


def test_an_unknown_name_is_no_journal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", FOLDER, "nosuchrun"]) == 1
    assert "no journal" in capsys.readouterr().err


def test_with_no_source_and_no_runtime_directory_it_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["ls"]) == 1
    err = capsys.readouterr().err
    assert "no SOURCE given, so the runtime's own directory was read" in err and str(tmp_path) in err


def test_ls_says_when_updated_is_a_file_time_and_when_a_directory_looks_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import os
    import shutil

    from tests.runstate_corpus import CORPUS

    copied = tmp_path / "runs"
    shutil.copytree(CORPUS / "file", copied)
    for journal in copied.iterdir():
        os.utime(journal, (1_800_000_000, 1_800_000_000))  # one copy time for every file
    assert main(["ls", str(copied), "--since", "2h"]) == 0
    err = capsys.readouterr().err
    assert "'updated' is the file's modification time" in err
    assert "the directory looks copied" in err and "--since went by those file times" in err
    assert main(["ls", str(copied), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["updated_from"] for row in rows if row["generation"] == "august"} == {"file"}
    assert main(["ls", FOLDER, "--json"]) == 0
    newest = json.loads(capsys.readouterr().out)
    assert "record" in {row["updated_from"] for row in newest}


def test_show_decodes_gos_escapes_for_a_person_and_json_keeps_the_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.paths import SAMPLES

    assert main(["show", str(SAMPLES), "deferred-waiting"]) == 0
    out = capsys.readouterr().out
    assert "Raise ORDERS replicas 1 -> 3" in out and "\\u003e" not in out
    assert main(["show", "--json", str(SAMPLES), "deferred-waiting"]) == 0
    assert "\\u003e" in capsys.readouterr().out  # the document holds the input as the journal does


def test_stats_shows_unknown_dispatch_as_unknown_not_zero(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tests.paths import SAMPLES

    assert main(["stats", str(SAMPLES), "completed-with-tools"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("consumer_ls"))
    assert row.split()[3:5] == ["-", "-"]  # an August result says nothing of dispatch
    assert main(["stats", "--json", str(SAMPLES), "completed-with-tools"]) == 0
    tools = json.loads(capsys.readouterr().out)["tools"]
    assert any(tool.get("tool") == "consumer_ls" for tool in tools)  # --json keeps the runtime's document


def test_grep_takes_its_source_first_as_every_command_does_and_its_old_order_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.paths import SAMPLES

    assert main(["grep", str(SAMPLES), "ORDERS"]) == 0
    source_first = capsys.readouterr().out
    assert main(["grep", "ORDERS", str(SAMPLES)]) == 0
    pattern_first = capsys.readouterr().out
    assert source_first == pattern_first and "completed-with-tools" in source_first
