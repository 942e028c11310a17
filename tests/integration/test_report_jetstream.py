"""``report`` of a JetStream source (a real ``nats-server -js``): a run and its copy made by ``migrate`` report the
same conversation, calls, process runs and findings, and an August copy stays undated although every stream message
has a time (the time it was copied, not the time the run did the work)."""

from __future__ import annotations

from pathlib import Path

import pytest

import journaltools as jt
from journaltools.cli import main
from journaltools.ops.migrate import migrate
from journaltools.sources.jetstream import JetStreamBackend
from journaltools.sources.registry import open_source
from tests.paths import SAMPLES
from tests.report_pages import SECTIONS, assert_self_contained, section, sections_of

RUNS = ("deferred-waiting", "newest-deferred-waiting", "resumed-mid-batch", "newest-resumed-mid-batch")


@pytest.fixture
def copied(jetstream: JetStreamBackend, jetstream_url: str) -> str:
    """The samples migrated into a fresh stream; its URL."""
    with open_source(str(SAMPLES)) as files:
        migrate(files, jetstream)
    assert set(RUNS) <= set(jetstream.list_runs())
    return jetstream_url


def test_a_run_and_its_stream_copy_report_the_same(copied: str) -> None:
    for run in RUNS:
        in_files, in_stream = jt.report(str(SAMPLES), run).html, jt.report(copied, run).html
        assert sections_of(in_stream) == list(SECTIONS), run
        assert_self_contained(in_stream)
        for name in ("waiting", "segments", "findings", "conversation"):
            assert section(in_stream, name) == section(in_files, name), (run, name)
        assert "nats://" in in_stream.split("</header>", 1)[0]


def test_an_august_copy_in_a_stream_is_still_undated(copied: str) -> None:
    html = jt.report(copied, "resumed-mid-batch").html
    assert '<span class="jt-undated">undated</span>' in section(html, "timeline")
    assert "took" not in html
    newest = jt.report(copied, "newest-resumed-mid-batch").html
    assert "undated" not in section(newest, "timeline") and "<th>took</th>" in section(newest, "timeline")


def test_the_command_reports_a_stream_run(copied: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "stream.html"
    assert main(["report", copied, "newest-deferred-waiting", "-o", str(target)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {target}: ")
    html = target.read_text(encoding="utf-8")
    assert "waiting for <b>answer</b>: 1 pending call" in section(html, "waiting")
    assert main(["report", copied, "no-such-run", "-o", str(target)]) == 1
    assert "no-such-run" in capsys.readouterr().err
