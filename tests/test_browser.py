"""The widgets rendered in a real headless Chromium, as a reader would see them.

Set-up (``scripts/setup-browser-tests.sh``, run here when something is missing): Debian's ``chromium`` and the
standalone renderer ``@jupyter-widgets/html-manager`` from the npm registry in ``build/browser`` (never
committed, never a Playwright browser download). The page and the renderer are served from 127.0.0.1; every
other request is blocked, so the page works offline and nothing leaks.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ipywidgets.embed import embed_minimal_html

from journaltools.backends.registry import open_source
from journaltools.fold import fold
from journaltools.widgets import (
    ConversationModel,
    ConversationView,
    ListingComparison,
    ListingComparisonModel,
    RunBrowser,
    TimeTravel,
    load_source,
)
from tests.builders import JournalBuilder, two_record_listing

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
CHROMIUM = Path("/usr/bin/chromium")
DIST = ROOT / "build" / "browser" / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INJECTED = "<script>window.__journal_pwned = true</script>"
INJECTED_IMG = '<img src="nope.png" onerror="window.__journal_pwned_img = true">'


@pytest.fixture(scope="session")
def browser_assets() -> Path:
    """Chromium and embed.js, installed by the set-up script when missing."""
    if not CHROMIUM.exists() or not (DIST / "embed.js").exists():
        subprocess.run(["sh", str(ROOT / "scripts" / "setup-browser-tests.sh")], check=True, timeout=900)
    assert CHROMIUM.exists(), "Debian's chromium is required at /usr/bin/chromium"
    assert (DIST / "embed.js").exists(), "npm install of @jupyter-widgets/html-manager failed"
    return DIST


def _comparison_model() -> ListingComparisonModel:
    """File listing vs the two-record (JetStream) rule over the samples: real documented and discrepancy rows."""
    with open_source(str(SAMPLES)) as backend:
        file_rows = backend.listing()
    return ListingComparisonModel.from_listings(file_rows, two_record_listing(str(SAMPLES)), "file", "jetstream")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_url(browser_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    site = tmp_path_factory.mktemp("site")
    for item in browser_assets.iterdir():
        shutil.copy(item, site / item.name)

    comparison = ListingComparison(_comparison_model())
    with open_source(str(SAMPLES)) as backend:
        xss_sample = fold(backend.read_run("optional-unknown-record").records)
    hostile = JournalBuilder("hostile").user(INJECTED_IMG).assistant("c1").result("c1", INJECTED).assistant().raw()
    model, loader = load_source(str(SAMPLES))
    browser = RunBrowser(model, loader)
    browser.select("suspended-approval")
    views = [
        comparison.widget,
        browser.widget,
        TimeTravel.from_source(str(SAMPLES), "failed-provider").widget,
        ConversationView(ConversationModel.from_fold(xss_sample)).widget,
        ConversationView(ConversationModel.from_fold(fold(hostile))).widget,
    ]
    embed_minimal_html(
        site / "index.html", views=views, title="journaltools widgets", requirejs=False, embed_url="embed.js"
    )

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def rendered(page_url: str) -> Iterator[tuple[Any, list[str]]]:
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})

            def guard(route: Any) -> None:
                if route.request.url.startswith(page_url):
                    route.continue_()
                else:
                    blocked.append(route.request.url)
                    route.abort()

            page.route("**/*", guard)
            page.goto(page_url + "index.html")
            page.wait_for_selector("tr.jt-verdict-documented", timeout=30_000)
            page.wait_for_selector("[data-call='c1']", timeout=30_000)
            page.wait_for_selector(".jt-snapshot", timeout=30_000)
            yield page, blocked
        finally:
            browser.close()


def test_documented_row_is_flagged_and_explained(rendered: tuple[Any, list[str]]) -> None:
    page, _ = rendered
    row = page.locator("tr.jt-verdict-documented", has_text="turn-in-flight")
    assert row.count() == 1
    assert row.locator(".jt-flag").inner_text() == "⚑ documented"
    explanation = row.locator(".jt-explanation").inner_text()
    assert "turn-in-flight" in explanation and "not an error" in explanation
    assert "says open" in explanation and "says completed" in explanation
    assert row.is_visible()


def test_discrepancy_row_looks_different_and_louder(rendered: tuple[Any, list[str]]) -> None:
    page, _ = rendered
    discrepancy = page.locator("tr.jt-verdict-discrepancy").first
    documented = page.locator("tr.jt-verdict-documented").first
    agree = page.locator("tr.jt-verdict-agree").first
    assert discrepancy.locator(".jt-flag").inner_text() == "✖ DISCREPANCY"

    def style(row: Any, prop: str) -> str:
        return str(row.locator("td").nth(1).evaluate(f"cell => getComputedStyle(cell)['{prop}']"))

    assert style(discrepancy, "backgroundColor") != style(documented, "backgroundColor")
    assert style(discrepancy, "backgroundColor") != style(agree, "backgroundColor")
    assert int(style(discrepancy, "fontWeight")) > int(style(documented, "fontWeight"))
    flag_bg = discrepancy.locator(".jt-flag").evaluate("el => getComputedStyle(el).backgroundColor")
    assert flag_bg == "rgb(185, 28, 28)"  # the loud red badge, not the amber one of a documented row


def test_script_in_journal_content_is_shown_as_text_never_run(rendered: tuple[Any, list[str]]) -> None:
    page, _ = rendered
    assert page.evaluate("typeof window.__journal_pwned") == "undefined"
    assert page.evaluate("typeof window.__journal_pwned_img") == "undefined"
    assert page.get_by_text("What does <script>alert('xss')</script> do in a tool result?").is_visible()
    assert page.get_by_text(INJECTED, exact=True).first.is_visible()
    assert page.get_by_text(INJECTED_IMG, exact=True).first.is_visible()
    # no element was created from journal content
    assert page.locator("img[src='nope.png']").count() == 0


def test_only_local_requests_and_a_screenshot(rendered: tuple[Any, list[str]]) -> None:
    page, blocked = rendered
    assert blocked == []  # the page needs nothing from outside (the guard would have blocked it)
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / "listing-comparison.png"
    page.locator(".jt-comparison").first.screenshot(path=str(target))
    assert target.stat().st_size > 10_000


def test_run_browser_and_time_travel_render(rendered: tuple[Any, list[str]]) -> None:
    page, _ = rendered
    selected = page.locator("table.jt-runs tr.jt-selected")
    assert selected.get_attribute("data-run") == "suspended-approval"
    assert selected.locator(".jt-status").inner_text() == "suspended"  # the word, not only the colour
    assert page.locator(".jt-pending", has_text="pending batch (1 unanswered)").first.is_visible()
    snapshot = page.locator(".jt-snapshot").first
    assert "after seq 5" in snapshot.inner_text() and snapshot.locator(".jt-status").inner_text() == "failed"
