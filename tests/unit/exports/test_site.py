"""A whole source as one offline site (``exports.site``): every run listed as ``ls`` lists it, each run's page the
report the single-run command makes, links that resolve, nothing fetched, hostile text escaped, the same site as a
``.zip``."""

from __future__ import annotations

import re
import zipfile
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import journaltools as jt
from journaltools.cli import main
from journaltools.exports.html import esc
from journaltools.exports.report import report_of_read
from journaltools.exports.report_page import script_hash
from journaltools.exports.site import INDEX, SITE_SCRIPT, SITE_SECURITY_POLICY, page_file, report_site
from journaltools.samples.builder import journal_bytes
from journaltools.sources.registry import open_source
from tests.report_pages import AUGUST_FILES, NEWEST_FILES, conversation_token, write_journal
from tests.widget_journals import SCRIPT, hostile_records

MADE = datetime(2026, 12, 6, 7, 0, tzinfo=UTC)


def rows_of(index: str) -> dict[str, str]:
    """run → its row's HTML, from the index."""
    found = re.findall(r'<tr class="jt-site-run".*?</tr>', index, re.S)
    return {unescape(re.search(r"<code>(.*?)</code>", row).group(1)): row for row in found}  # type: ignore[union-attr]


@pytest.mark.parametrize("corpus", [AUGUST_FILES, NEWEST_FILES], ids=["august", "newest"])
def test_every_run_is_listed_as_ls_lists_it_and_its_page_is_its_report(tmp_path: Path, corpus: Path) -> None:
    site = report_site(corpus, tmp_path / "site", made=MADE)
    index = (tmp_path / "site" / INDEX).read_text()
    runs = jt.load(str(corpus), strict=False, records=False, progress=False).runs.to_pylist()
    rows = rows_of(index)
    assert sorted(rows) == sorted(row["run"] for row in runs) == sorted(page.run for page in site.pages)
    for run in runs:
        row = rows[run["run"]]
        # The status and the why are the runs table's (ls's and the browser's), word for word.
        assert f'data-status="{run["status"]}"' in row and f">{run['status']}</span>" in row
        assert unescape(re.search(r'class="jt-site-why">(.*?)</td>', row).group(1)) == (run["why"] or "—")  # type: ignore[union-attr]
        link = re.search(r'<a href="(.*?)">', row).group(1)  # type: ignore[union-attr]
        page = tmp_path / "site" / unescape(link)
        assert link == page_file(run["run"]) and page.is_file()
        html = page.read_text()
        assert '<a href="../index.html" class="jt-report-home">' in html
        with open_source(str(corpus)) as source:
            alone = report_of_read(source.read_run(run["run"], strict=False), source=source.url)
        # The page is the single-run report, but for the link home and the time it was made.
        strip = re.compile(r'<a href="../index.html" class="jt-report-home">← all runs</a>|report made [^·]*·')
        assert strip.sub("", html) == strip.sub("", alone.html)
    assert f"<script>{SITE_SCRIPT}</script>" in index and index.count("<script") == 1
    assert (
        f"script-src '{script_hash(SITE_SCRIPT)}'" in SITE_SECURITY_POLICY
        and "default-src 'none'" in SITE_SECURITY_POLICY
    )
    assert f'http-equiv="Content-Security-Policy" content="{esc(SITE_SECURITY_POLICY)}"' in index
    # Every link is a run's page beside the index; nothing is fetched.
    assert set(re.findall(r'href="(.*?)"', index)) == {page_file(run["run"]) for run in runs}
    assert not re.search(r"\bsrc=|<link|@import|url\(", index)


def test_newest_first_with_a_chip_for_each_status_counted(tmp_path: Path) -> None:
    report_site(NEWEST_FILES, tmp_path / "site", made=MADE)
    index = (tmp_path / "site" / INDEX).read_text()
    runs = jt.load(str(NEWEST_FILES), strict=False, records=False, progress=False).runs.to_pylist()
    assert list(rows_of(index)) == sorted((run["run"] for run in runs), reverse=True)
    for status in {run["status"] for run in runs}:
        count = sum(run["status"] == status for run in runs)
        assert f'data-status="{status}" aria-pressed="false">{status} {count:,}</button>' in index


def test_hostile_journal_text_is_escaped_and_the_token_never_shown(tmp_path: Path) -> None:
    journals = write_journal(tmp_path / "journals", "hostile", journal_bytes(hostile_records()))
    report_site(journals, tmp_path / "site", made=MADE)
    token = conversation_token(journals / "hostile.json")
    for page in (tmp_path / "site").rglob("*.html"):
        html = page.read_text()
        assert SCRIPT not in html and (not token or token not in html)


def test_the_zip_holds_the_same_site_under_one_folder(tmp_path: Path) -> None:
    folder = report_site(NEWEST_FILES, tmp_path / "site", made=MADE)
    zipped = report_site(NEWEST_FILES, tmp_path / "audit.zip", as_zip=True, made=MADE)
    assert zipped.path == tmp_path / "audit.zip" and zipped.pages == folder.pages
    with zipfile.ZipFile(tmp_path / "audit.zip") as archive:
        names = sorted(archive.namelist())
        on_disk = sorted(
            str(Path("audit") / p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*.html")
        )
        assert names == on_disk
        assert archive.read("audit/index.html") == (tmp_path / "site" / INDEX).read_bytes()
    assert not list(tmp_path.glob("*.partial"))


@given(st.lists(st.text(min_size=1, max_size=200), min_size=2, max_size=6, unique=True))
def test_page_files_are_safe_distinct_and_inside_the_runs_folder(runs: list[str]) -> None:
    files = [page_file(run) for run in runs]
    assert len(set(files)) == len(files)
    for file in files:
        assert re.fullmatch(r"runs/[A-Za-z0-9_-][A-Za-z0-9._-]*\.html", file), file
        assert len(file) < 160


def test_a_run_named_like_the_index_or_a_path_stays_in_its_folder() -> None:
    assert page_file("index") == "runs/index.html"
    assert page_file("../../etc/passwd").startswith("runs/") and "/" not in page_file("../../etc/passwd")[5:]
    assert page_file("3MtgeOZqFVIqJF8VPxxiONwi44A") == "runs/3MtgeOZqFVIqJF8VPxxiONwi44A.html"


def test_the_command_writes_the_site_and_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(NEWEST_FILES), "--all", "-o", str(tmp_path / "site")]) == 0
    runs = jt.load(str(NEWEST_FILES), strict=False, records=False, progress=False).runs.num_rows
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'site'}: index.html and {runs} run pages"
    assert main(["report", str(NEWEST_FILES), "--all", "--zip", "-o", str(tmp_path / "a.zip")]) == 0
    assert zipfile.is_zipfile(tmp_path / "a.zip")
    capsys.readouterr()
    for wrong, said in (
        (["--zip", "-o", str(tmp_path / "b.zip")], "--zip writes the site of every run: give --all too"),
        (["some-run", "--all", "-o", str(tmp_path / "c")], "give SOURCE alone, no RUN"),
        (["--all", "-o", "-"], "give -o a path, not -"),
        (["--all", "--strict", "-o", str(tmp_path / "d")], "--strict is for one run"),
    ):
        assert main(["report", str(NEWEST_FILES), *wrong]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "b.zip").exists() and not (tmp_path / "c").exists()
