"""The run browser's **report** and **compare with…** buttons on the opened run, driven as a click drives them."""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from pathlib import Path

from journaltools.widgets import RunBrowser, RunBrowserModel
from journaltools.widgets.runs import REPORT_LINK_BYTES, report_file_name, report_written_html
from tests.paths import ROOT, SAMPLES
from tests.report_pages import SECTIONS, sections_of
from tests.widget_journals import all_folds


def test_the_report_button_writes_the_opened_runs_report_with_a_download_link(tmp_path: Path) -> None:
    browser = RunBrowser.from_source(str(SAMPLES), progress=False, report_dir=tmp_path)
    try:
        assert browser.write_report() is None  # no run open: nothing written
        browser.select("newest-deferred-waiting")
        browser.report_button.click()
        written = tmp_path / "report-newest-deferred-waiting.html"
        assert written.exists() and browser.last_report is not None and browser.last_report.path == written
        html = written.read_text(encoding="utf-8")
        assert sections_of(html) == list(SECTIONS) and "waiting for <b>answer</b>: 1 pending call" in html
        assert "took" in html  # the records' own times, as the command line's report has them
        note = browser.report_note.value
        assert str(written) in note and "bytes (bound 10,000,000)" in note
        link = re.search(r'download="report-newest-deferred-waiting.html" href="data:text/html;base64,([^"]+)"', note)
        assert link is not None and base64.b64decode(link[1]) == written.read_bytes()
        # Another run clears the note.
        browser.select("deferred-waiting")
        assert browser.report_note.value == ""
    finally:
        browser.close()


def test_a_report_too_big_for_a_link_is_only_written(tmp_path: Path) -> None:
    browser = RunBrowser.from_source(str(ROOT / "tests" / "corpus" / "runstate" / "file"), progress=False)
    browser.report_dir = tmp_path
    try:
        browser.select("3IFA1212V7yzSPBdJfLF2hntC0t")  # the long run
        path = browser.write_report()
        assert path is not None and browser.last_report is not None
        assert browser.last_report.size < REPORT_LINK_BYTES and "download it" in browser.report_note.value
    finally:
        browser.close()
    # The threshold is what decides: a report over it says to open the file instead.
    note = report_written_html(replace(browser.last_report, size=REPORT_LINK_BYTES + 1))
    assert "data:" not in note and "open it from the file browser" in note


def test_a_browser_of_folds_alone_still_reports_but_cannot_compare(tmp_path: Path) -> None:
    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, report_dir=tmp_path)
    browser.select("deferred-waiting")
    assert browser.write_report() == tmp_path / "report-deferred-waiting.html"
    assert "undated: made from a fold alone" in (tmp_path / "report-deferred-waiting.html").read_text(encoding="utf-8")
    assert browser.compare_button.disabled and "open the browser on a source" in browser.compare_button.tooltip
    assert browser.compare_with("terminal-error") is None and browser.comparison is None


def test_an_unwritable_report_dir_is_said_in_one_line(tmp_path: Path) -> None:
    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, report_dir=tmp_path / "missing")
    browser.select("terminal-error")
    assert browser.write_report() is None and browser.last_report is None
    assert "report not written:" in browser.report_note.value and "Traceback" not in browser.report_note.value


def test_compare_with_opens_run_diff_against_a_run_chosen_from_the_list() -> None:
    browser = RunBrowser.from_source(str(SAMPLES), progress=False)
    try:
        browser.select("newest-resumed-mid-batch")
        assert not browser.compare_button.disabled and browser.compare_bar.layout.display == "none"
        browser.compare_button.click()
        assert browser.compare_bar.layout.display == ""
        choices = [value for _label, value in browser.compare_choice.options]
        assert "newest-resumed-mid-batch" not in choices and "resumed-mid-batch" in choices
        assert choices == [row.run for row in browser.model.visible() if row.run != "newest-resumed-mid-batch"]
        browser.compare_choice.value = "resumed-mid-batch"
        browser.compare_go.click()
        comparison = browser.comparison
        assert comparison is not None
        result = comparison.model.comparison
        assert (result.a.run, result.b.run) == ("newest-resumed-mid-batch", "resumed-mid-batch")
        assert result.a.source == result.b.source and result.a.source.startswith("file://")
        assert comparison.widget in browser.comparison_box.children
        assert "jt-diff-calls" in comparison.widget.value
        # Closing the comparison, or opening another run, takes it away.
        browser.compare_close.click()
        assert browser.comparison is None and browser.comparison_box.children == ()
        browser.compare_with("deferred-waiting")
        assert browser.comparison is not None
        browser.select("deferred-waiting")
        assert browser.comparison is None and browser.compare_bar.layout.display == "none"
    finally:
        browser.close()


def test_report_file_names_keep_only_safe_characters() -> None:
    assert report_file_name("3IDQ1OhDHSSoRIEpX5dNk2z1f6f") == "report-3IDQ1OhDHSSoRIEpX5dNk2z1f6f.html"
    assert report_file_name("../../etc/passwd") == "report-.._.._etc_passwd.html"
    assert "/" not in report_file_name("a/b\\c<d>") and report_file_name("x" * 500).endswith("x.html")
