"""The RunDiff widget's model on real journals: journal text escaped, the first divergence marked, the
conversation token never on the page."""

from __future__ import annotations

import shutil
from pathlib import Path

from journaltools.sources.registry import open_source
from journaltools.widgets import RunDiff, RunDiffModel
from tests.paths import ROOT

SAMPLES = ROOT / "data" / "samples"
RUNSTATE = ROOT / "tests" / "corpus" / "runstate"
SERVED = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"


def test_a_changed_result_is_marked_and_escaped(tmp_path: Path) -> None:
    run = "newest-deferred-waiting"
    copy = tmp_path / "copy"
    copy.mkdir()
    data = (SAMPLES / f"{run}.json").read_bytes()
    hostile = b"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e \\u001b[31m"
    (copy / f"{run}.json").write_bytes(data.replace(b"3 servers, all current", hostile))
    shutil.copy(SAMPLES / f"{run}.lock", copy / f"{run}.lock")
    model = RunDiffModel.from_sources(str(SAMPLES), run, source_b=str(copy))
    page = model.to_html()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "\x1b" not in page
    assert page.count("jt-diff-first") == 1 and "✖ first divergence: result" in page
    assert "toolu_01D3peers" in page
    assert any(line.startswith("first divergence: turn 0: result") for line in model.summary_lines())
    view = RunDiff(model)
    assert view.widget.value == page


def test_two_process_runs_side_by_side_never_show_the_token() -> None:
    source = RUNSTATE / "file"
    with open_source(str(source)) as backend:
        token = next(record.meta for record in backend.read_run(SERVED).typed() if record.meta).conversation_token
    page = RunDiff.from_sources(str(source), SERVED, segments=(0, 2)).model.to_html()
    assert token and token not in page
    assert "process run 0" in page and "process run 2" in page
    assert "only in A" in page  # the first resume wrote memory, the third answered from it


def test_the_banner_names_the_endings_and_what_only_the_newest_line_records() -> None:
    from journaltools.widgets.rundiff import RunDiffModel
    from tests.paths import SAMPLES
    from tests.runstate_corpus import NEWEST_CORPUS

    endings = RunDiffModel.from_sources(
        NEWEST_CORPUS / "file", "3MtgeRMIkUXErFFpkcJexCl6W7H", "3MtgeRNFbeD9vpZi24hXbYqmwFz"
    )
    assert "ending: A budget" in endings.to_html() and "max_iterations" in endings.to_html()
    twins = RunDiffModel.from_sources(SAMPLES, "completed-with-tools", "newest-completed-with-tools")
    html = twins.to_html()
    assert "no call diverges (recorded differently: dispatched, kind)" in html  # an August run and its newest twin
