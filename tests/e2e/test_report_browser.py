"""The report file opened from disk in a real headless Chromium with the network cut off, as whoever it was sent to
opens it: nothing is fetched, nothing logs an error, both themes render (the reader's preference and the switch),
pages open and close, a link into a closed page opens it, journal markup never runs, and without scripts every page
still opens. Screenshots at 1280 px, light and dark, land in ``test-artifacts/`` (gitignored); ``docs/report-*.png``
are copies of them.

Set-up: Debian's ``chromium`` (``scripts/setup-browser-tests.sh`` installs it when missing); never a Playwright
browser download.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import journaltools as jt
from journaltools.exports.report import RunReport, report_of_read, write_report
from journaltools.samples.builder import journal_bytes
from journaltools.sources.registry import open_source
from tests.browser_fixtures import ARTIFACTS
from tests.paths import SAMPLES
from tests.report_pages import AUGUST_FILES, scenarios, write_journal
from tests.widget_journals import hostile_records

WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The report files: a long August run (seven pages), a stuck newest run, and a hostile journal."""
    folder = tmp_path_factory.mktemp("reports")
    hostile = write_journal(folder / "journals", "hostile", journal_bytes(hostile_records()))
    made = {
        "long": jt.report(str(AUGUST_FILES), scenarios(AUGUST_FILES)["long-run"], folder / "long.html"),
        # Named by its path in the repository, as the screenshots in docs/ show it (not this machine's path).
        "stuck": write_report(stuck_report(), folder / "stuck.html"),
        "hostile": jt.report(str(hostile), "hostile", folder / "hostile.html"),
        "packed": write_report(packed_report(), folder / "packed.html"),
    }
    return {name: report.path for name, report in made.items() if report.path is not None}


def packed_report() -> RunReport:
    """The long run's report with its middle pages stored compressed, as a run too long for the bound has them."""
    with open_source(str(AUGUST_FILES)) as source:
        read = source.read_run(scenarios(AUGUST_FILES)["long-run"])
    return report_of_read(read, source=str(AUGUST_FILES), compress=True)


def stuck_report() -> RunReport:
    with open_source(str(SAMPLES)) as source:
        read = source.read_run("newest-deferred-waiting")
    return report_of_read(read, source="data/samples")


@dataclass
class Opened:
    """A report open in a page, with every request it made and every error it logged."""

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_report(browser: Any, path: Path, scheme: str = "light", *, scripts: bool = True) -> Opened:
    """``path`` in a fresh offline context: any request but the file itself is recorded and refused."""
    context = browser.new_context(
        viewport={"width": WIDTH, "height": HEIGHT},
        color_scheme=scheme,
        offline=True,
        java_script_enabled=scripts,
    )
    page = context.new_page()
    opened = Opened(page)
    own = path.as_uri()

    def guard(route: Any) -> None:
        if route.request.url == own:
            route.continue_()
        else:
            route.abort()

    page.route("**/*", guard)
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("console", lambda message: opened.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: opened.errors.append(str(error)))
    page.goto(own)
    page.wait_for_selector("#conversation")
    return opened


def background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def text_colour(page: Any, selector: str) -> str:
    return str(page.locator(selector).first.evaluate("el => getComputedStyle(el).color"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_offline_with_no_request_and_no_error_in_either_theme(
    chromium: Any, reports: dict[str, Path], scheme: str
) -> None:
    opened = open_report(chromium, reports["stuck"], scheme)
    page = opened.page
    try:
        assert opened.requests == [reports["stuck"].as_uri()] and opened.errors == []
        dark = scheme == "dark"
        assert background(page) == ("rgb(17, 17, 17)" if dark else "rgb(255, 255, 255)")
        assert text_colour(page, ".jt-banner-title") == ("rgba(255, 255, 255, 0.87)" if dark else "rgba(0, 0, 0, 0.87)")
        assert page.locator(".jt-banner").first.inner_text().startswith("Suspended")
        assert page.locator("#waiting .jt-call[data-state='deferred']").is_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"report-{scheme}.png"))
    finally:
        page.context.close()


def test_the_theme_switch_overrides_the_readers_preference(chromium: Any, reports: dict[str, Path]) -> None:
    opened = open_report(chromium, reports["stuck"], "light")
    page = opened.page
    try:
        switch = page.locator("#jt-theme")
        assert switch.is_visible() and switch.inner_text() == "theme: auto"
        switch.click()
        assert switch.inner_text() == "theme: light" and background(page) == "rgb(255, 255, 255)"
        switch.click()
        assert switch.inner_text() == "theme: dark" and background(page) == "rgb(17, 17, 17)"
        switch.click()
        assert switch.inner_text() == "theme: auto" and background(page) == "rgb(255, 255, 255)"
        assert opened.errors == []
    finally:
        page.context.close()


def test_pages_open_close_and_a_link_opens_the_page_it_points_into(chromium: Any, reports: dict[str, Path]) -> None:
    opened = open_report(chromium, reports["long"], "dark")
    page = opened.page
    try:
        pages = page.locator("details.jt-page")
        count = pages.count()
        assert count == 7
        assert [pages.nth(i).evaluate("el => el.open") for i in range(count)] == [True] + [False] * 5 + [True]
        second = page.locator("#page-2")
        first_message = second.locator(".jt-msg").first
        assert not first_message.is_visible()
        second.locator("summary").click()
        assert first_message.is_visible()
        second.locator("summary").click()
        assert not first_message.is_visible()
        # A turn of the timeline on page 4: its link opens that page and brings the message into view.
        seq = int(page.locator("#page-4 .jt-msg").nth(3).get_attribute("data-seq") or 0)
        target = page.locator(f"#jt-r-seq-{seq}")
        assert not target.is_visible()
        turns = page.locator("#timeline .jt-turns-box")
        assert not turns.evaluate("el => el.open")  # 150 turns: the table starts closed
        turns.locator("summary").click()
        page.locator(f"#timeline a[href='#jt-r-seq-{seq}']").click()
        assert target.is_visible() and page.locator("#page-4").evaluate("el => el.open")
        assert target.evaluate(
            "el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }"
        )
        page.locator("#jt-open-all").click()
        assert all(pages.nth(i).evaluate("el => el.open") for i in range(count))
        page.locator("#jt-close-all").click()
        assert not any(pages.nth(i).evaluate("el => el.open") for i in range(count))
        assert opened.errors == [] and len(opened.requests) == 1
        page.locator("#page-1").locator("summary").click()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-long-dark.png"))
    finally:
        page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_find_reads_every_page_and_one_key_jumps_to_the_next_place(
    chromium: Any, reports: dict[str, Path], scheme: str
) -> None:
    """Find looks through every page, closed ones too, says "n of m" and steps with Enter; a key reaches the next
    deferral, and the buttons count each kind."""
    opened = open_report(chromium, reports["long"], scheme)
    page = opened.page
    try:
        hidden = page.locator("#page-4 .jt-msg").nth(2)
        assert not hidden.is_visible()
        words = " ".join((hidden.text_content() or "").split()[-3:])  # as the message ends: rarely found elsewhere
        expected = page.evaluate(
            "words => [...document.querySelectorAll('#conversation .jt-msg')].filter(m => words.toLowerCase()"
            ".split(/\\s+/).every(w => m.textContent.toLowerCase().includes(w))).length",
            words,
        )
        page.locator("#jt-find").fill(words)
        assert page.locator("#jt-find-count").inner_text() == f"0 of {expected}"
        for step in range(1, expected + 1):
            page.locator("#jt-find").press("Enter")
            assert page.locator("#jt-find-count").inner_text() == f"{step} of {expected}"
            current = page.locator(".jt-found-current")
            assert current.count() == 1 and current.is_visible()
        assert page.locator("#page-4").evaluate("el => el.open") and hidden.evaluate(
            "el => el.classList.contains('jt-found')"
        )
        page.locator("#jt-find").fill("no such words anywhere zzqx")
        assert page.locator("#jt-find-count").inner_text() == "no match"
    finally:
        page.context.close()
    opened = open_report(chromium, reports["stuck"], scheme)
    page = opened.page
    try:
        deferral = page.locator("button[data-jump='d']")
        assert deferral.inner_text() == "deferral 1" and page.locator("button[data-jump='e']").is_disabled()
        page.locator("body").press("d")
        jumped = page.locator("#conversation .jt-jumped")
        assert jumped.count() == 1 and jumped.get_attribute("data-state") == "deferred" and jumped.is_visible()
        # "r" counts every process run the heading counts, and reaches the message where the first one starts.
        runs = int(re.search(r"Process runs \((\d+)\)", page.locator("#segments h2").inner_text()).group(1))
        assert page.locator("button[data-jump='r'] .jt-jump-count").inner_text() == str(runs)
        page.locator("body").press("r")
        assert page.locator("#conversation .jt-jumped").first.get_attribute("id") == "jt-r-seq-1"
        assert opened.errors == [] and len(opened.requests) == 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"report-jump-{scheme}.png"))
    finally:
        page.context.close()


def test_journal_markup_never_runs(chromium: Any, reports: dict[str, Path]) -> None:
    opened = open_report(chromium, reports["hostile"], "light")
    page = opened.page
    try:
        page.locator("#jt-open-all").click()
        assert page.evaluate("window.pwned") is None
        assert page.locator("#conversation img, #conversation script").count() == 0
        assert "<script>window.pwned = 1</script>" in page.locator("#conversation").inner_text()
        assert opened.errors == [] and len(opened.requests) == 1
    finally:
        page.context.close()


def test_without_scripts_every_page_still_opens_and_no_dead_button_shows(
    chromium: Any, reports: dict[str, Path]
) -> None:
    opened = open_report(chromium, reports["long"], "light", scripts=False)
    page = opened.page
    try:
        assert not page.locator("#jt-theme").is_visible() and not page.locator("#jt-open-all").is_visible()
        third = page.locator("#page-3")
        third.locator("summary").click()
        assert third.locator(".jt-msg").first.is_visible()
        assert opened.errors == []
    finally:
        page.context.close()


#: Texts a reader must be able to read in either theme: the banner, muted notes, links, table cells, a message's
#: role and facts, a call's input.
READ_FIRST = (
    ".jt-banner-title",
    ".jt-banner-detail",
    ".jt-report-meta",
    ".jt-report-nav a",
    "#timeline .jt-seq-link",
    "#segments td",
    ".jt-role",
    ".jt-turn-facts",
    ".jt-call pre",
    ".jt-page > summary",
)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_contrast_is_at_least_4_5_to_1(chromium: Any, reports: dict[str, Path], scheme: str) -> None:
    from tests.browser_fixtures import MIN_CONTRAST, rendered_contrast

    opened = open_report(chromium, reports["stuck"], scheme)
    try:
        for selector in READ_FIRST:
            ratio = rendered_contrast(opened.page.locator(selector).first)
            assert ratio >= MIN_CONTRAST, f"{scheme} {selector}: {ratio:.2f}"
    finally:
        opened.page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_compressed_pages_inflate_offline_and_find_and_jumps_read_them(
    chromium: Any, reports: dict[str, Path], scheme: str
) -> None:
    """The long run with its five middle pages compressed reads as the plain one: a page opens with its messages, a
    link into a compressed page opens it, find and the jump counts see every page; no request, no error."""
    plain = open_report(chromium, reports["long"], scheme)
    try:
        page_three = plain.page.locator("#page-3 .jt-msg").evaluate_all("els => els.map(el => el.dataset.seq)")
        words = " ".join((plain.page.locator("#page-4 .jt-msg").nth(2).text_content() or "").split()[-3:])
        plain.page.locator("#jt-find").fill(words)
        found = plain.page.locator("#jt-find-count").inner_text()
        counts = plain.page.locator("button[data-jump]").all_inner_texts()
    finally:
        plain.page.context.close()
    opened = open_report(chromium, reports["packed"], scheme)
    page = opened.page
    try:
        assert page.locator("details.jt-packed").count() == 5 and page.locator("#page-3 .jt-msg").count() == 0
        page.wait_for_function(
            "counts => [...document.querySelectorAll('button[data-jump]')].map(b => b.innerText).join() == counts",
            arg=",".join(counts),
        )
        page.locator("#page-3 > summary").click()
        page.wait_for_selector("#page-3 .jt-msg")
        assert page.locator("#page-3 .jt-msg").evaluate_all("els => els.map(el => el.dataset.seq)") == page_three
        assert page.locator("#page-3 .jt-msg").first.is_visible()
        target = page.locator("#page-5 .jt-packed-note")
        assert target.count() == 1 and not target.is_visible()
        first_of_five = page.locator("#page-5").get_attribute("data-first-seq")
        page.evaluate("seq => { location.hash = '#seq-' + seq; }", first_of_five)
        page.wait_for_selector(f"#jt-r-seq-{first_of_five}", state="visible")
        page.locator("#jt-find").fill(words)
        page.wait_for_function("found => document.getElementById('jt-find-count').innerText == found", arg=found)
        assert page.locator(".jt-packed-body[data-jt-gz]").count() == 0  # find inflated every page
        assert opened.errors == [] and opened.requests == [reports["packed"].as_uri()]
    finally:
        page.context.close()
