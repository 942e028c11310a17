"""The run browser says whether a process writes a run now (its lock held, read from the kernel's lock table) and,
for the run opened, how long it has been silent: the words ``show`` says, never by touching the lock."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from journaltools.exports.html import esc
from journaltools.sources.liveness import WRITER_WORDS, lock_path
from journaltools.widgets import RunBrowser
from tests.browser_table import headers, rows
from tests.lock_holder import HOLDER, needs_proc_locks, never_locking
from tests.paths import SAMPLES

RUN = "newest-next-turn-in-flight"


@needs_proc_locks
def test_the_browser_says_which_run_a_process_holds_and_how_long_the_opened_one_is_silent(
    tmp_path: Path, monkeypatch: object
) -> None:
    for name in (RUN, "newest-completed-with-tools"):
        shutil.copy(SAMPLES / f"{name}.json", tmp_path / f"{name}.json")
    lock = lock_path(tmp_path, RUN)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        opened = never_locking(monkeypatch, lock)  # type: ignore[arg-type]
        browser = RunBrowser.from_source(str(tmp_path), follow=False)
        assert browser.wait_loaded(30)
        column = [header.text for header in headers(browser)].index("writer")
        writers = {line[0].argument: line[column] for line in rows(browser)}
        assert writers[RUN].text == "held" and writers[RUN].title == WRITER_WORDS["held"]
        assert writers["newest-completed-with-tools"].text == "free"
        browser.select(RUN)
        assert f"writer: {esc(WRITER_WORDS['held'])}" in browser.detail_title.value
        assert "silent for" in browser.detail_title.value  # the file's time says when it was last written
        assert str(lock) not in opened
        browser.close()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        again = RunBrowser.from_source(str(tmp_path), follow=False)
        assert again.wait_loaded(30)
        again.select(RUN)
        assert f"writer: {esc(WRITER_WORDS['free'])}" in again.detail_title.value
        again.close()
    finally:
        holder.kill()
        holder.communicate()  # closes its pipes


def test_a_browser_of_folds_has_no_writer_column() -> None:
    from journaltools.widgets import RunBrowserModel
    from tests.widget_journals import all_folds

    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get)
    assert "writer" not in [header.text for header in headers(browser)]
    browser.select(next(iter(folds)))
    assert "writer:" not in browser.detail_title.value
