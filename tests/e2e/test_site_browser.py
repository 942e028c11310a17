"""The offline site of a whole source (``journaltools report SOURCE --all``) opened from disk in a real headless
Chromium with the network cut off: nothing but the site's own files is asked for, nothing logs an error, in both
themes; the chips and the search narrow the runs; a run's link opens its page and the page's link comes back; a deep
link into a closed page of a long run opens that page at that message. Screenshots land in ``test-artifacts/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import journaltools as jt
from journaltools.exports.site import INDEX, page_file, report_site
from tests.browser_fixtures import ARTIFACTS
from tests.report_pages import AUGUST_FILES, scenarios

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site") / "audit"
    report_site(AUGUST_FILES, folder)
    return folder


class Opened:
    def __init__(self, page: Any) -> None:
        self.page, self.foreign, self.errors = page, list[str](), list[str]()


@pytest.fixture
def opened(chromium: Any, site: Path, request: pytest.FixtureRequest) -> Iterator[Opened]:
    scheme = getattr(request, "param", "light")
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme, offline=True)
    page = context.new_page()
    seen = Opened(page)
    own = site.as_uri() + "/"

    def guard(route: Any) -> None:
        if route.request.url.split("#")[0].startswith(own):
            route.continue_()
        else:
            seen.foreign.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.on("console", lambda message: seen.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    try:
        yield seen
    finally:
        context.close()


def shown_runs(page: Any) -> list[str]:
    found: list[str] = page.locator("tr.jt-site-run:visible code").all_inner_texts()
    return found


@pytest.mark.parametrize("opened", ["light", "dark"], indirect=True)
def test_chips_search_and_links_both_ways_with_no_request_beyond_the_site(opened: Opened, site: Path) -> None:
    page = opened.page
    page.goto((site / INDEX).as_uri())
    runs = jt.load(str(AUGUST_FILES), strict=False, records=False, progress=False).runs.to_pylist()
    assert sorted(shown_runs(page)) == sorted(run["run"] for run in runs)
    assert page.locator("#jt-shown").inner_text() == f"{len(runs)} of {len(runs)} runs shown"
    scheme = page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == ("rgb(17, 17, 17)" if scheme else "rgb(255, 255, 255)")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"site-index-{'dark' if scheme else 'light'}.png"))

    page.locator("button.jt-chip[data-status='open']").click()
    opens = sorted(run["run"] for run in runs if run["status"] == "open")
    assert opens and sorted(shown_runs(page)) == opens
    page.locator("button.jt-chip[data-status='open']").click()  # off again: every run
    target = next(run for run in runs if run["status"] == "error")
    page.fill("#jt-search", " ".join(str(target["why"]).split()[:3]))
    assert target["run"] in shown_runs(page) and len(shown_runs(page)) < len(runs)

    page.locator("tr.jt-site-run", has_text=target["run"]).locator("a").click()
    page.wait_for_selector("#conversation")
    assert page.url == (site / page_file(target["run"])).as_uri()
    assert page.locator("h1 code").inner_text() == target["run"]
    page.locator("a.jt-report-home").click()
    page.wait_for_selector("tr.jt-site-run")
    assert page.url == (site / INDEX).as_uri()
    assert opened.foreign == [] and opened.errors == []


def test_a_deep_link_opens_a_closed_page_of_a_long_run_at_its_message(opened: Opened, site: Path) -> None:
    run = scenarios(AUGUST_FILES)["long-run"]
    file = site / page_file(run)
    html = file.read_text()
    pages = re.findall(r'<details class="jt-page" id="page-(\d+)"( open)?>(.*?)</details>', html, re.S)
    closed = next(body for number, is_open, body in pages if not is_open)
    seqs = [int(seq) for seq in re.findall(r'id="jt-r-seq-(\d+)"', closed)]
    wanted = seqs[len(seqs) // 2]
    page = opened.page
    page.goto(f"{file.as_uri()}#seq-{wanted}")
    message = page.locator(f"#jt-r-seq-{wanted}")
    message.wait_for(state="visible")
    assert message.evaluate("el => el.closest('details').open")
    box, height = message.bounding_box(), page.viewport_size["height"]
    assert box is not None and 0 <= box["y"] < height
    assert opened.foreign == [] and opened.errors == []
