"""The widgets in marimo: the shipped marimo quick start (notebooks/quickstart_marimo.py) served by ``marimo run``
(from this venv, headless, on a free local port, no token) and driven in a real headless Chromium, in marimo's light
and dark themes (marimo follows the page's ``prefers-color-scheme`` here: ``display.theme = "system"``).

marimo renders anywidgets, not ipywidgets: the notebook shows ``RunBrowserSurface`` and ``ConversationSurface``
(one ``widgets.surface.Surface`` each, drawn inside marimo's shadow roots, which Playwright's locators reach). Every
request the page makes that is not to the server is blocked, and the test says so."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from journaltools.samples import SOURCE_VARIABLE
from tests.browser_fixtures import ARTIFACTS, MIN_CONTRAST, luminance, parse_colour, rendered_contrast
from tests.notebook_servers import FOCUSED_JS, free_port, guarded_page, serving
from tests.paths import ROOT, SAMPLES

NOTEBOOK = ROOT / "notebooks" / "quickstart_marimo.py"
THEMES = ("light", "dark")
#: The quick start's browser shows this many rows a page (``rows_per_page``).
ROWS_PER_PAGE = 15


def marimo_environment(home: Path) -> dict[str, str]:
    """A home of marimo's own whose configuration follows the page's colour scheme, checks for no update, and opens
    the samples whatever the machine's own runs."""
    config = home / ".config" / "marimo"
    config.mkdir(parents=True)
    (config / "marimo.toml").write_text('[display]\ntheme = "system"\n')
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "MARIMO_SKIP_UPDATE_CHECK": "1",
        SOURCE_VARIABLE: str(SAMPLES),
    }


@pytest.fixture(scope="module")
def marimo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``marimo run`` of a copy of the quick start (marimo may write beside a notebook) on a free local port."""
    root = tmp_path_factory.mktemp("marimo")
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    home = tmp_path_factory.mktemp("marimo-home")
    port = free_port()
    command = [
        sys.executable, "-m", "marimo", "run", NOTEBOOK.name,
        "--headless", "--host", "127.0.0.1", "--port", str(port), "--no-token",
    ]  # fmt: skip
    with serving(command, port, marimo_environment(home), root, home / "marimo.log", "marimo run"):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module", params=THEMES)
def quickstart(
    request: pytest.FixtureRequest, chromium: Any, marimo_server: str
) -> Iterator[tuple[Any, list[str], str]]:
    """The quick start open in one theme, every cell run: the browser's rows and the conversation's banner drawn."""
    theme: str = request.param
    blocked: list[str] = []
    page = guarded_page(chromium, marimo_server, blocked, width=1280, height=900, color_scheme=theme)
    try:
        page.goto(marimo_server)
        page.locator(".jt-browser .jt-tr").first.wait_for(timeout=90_000)
        page.locator(".jt-conversation .jt-banner").last.wait_for(timeout=60_000)
        yield page, blocked, theme
    finally:
        page.close()


def opened_run(page: Any) -> str:
    return str(page.locator(".jt-browser .jt-detail .jt-header h3 code").first.inner_text())


def focused(page: Any, attribute: str) -> str:
    return str(page.evaluate(f"() => {{ const a = ({FOCUSED_JS})(); return a ? a.getAttribute('{attribute}') : ''; }}"))


def test_the_quick_start_runs_top_to_bottom_in_marimo(quickstart: tuple[Any, list[str], str]) -> None:
    page, _, _ = quickstart
    assert page.locator(".jt-browser .jt-tr").count() == ROWS_PER_PAGE
    summary = page.locator(".jt-browser .jt-toolbar .jt-muted").inner_text()
    assert summary.endswith("runs, newest first") and int(summary.split()[0]) > ROWS_PER_PAGE
    alone = page.locator(".jt-surface > .jt-conversation")  # the quick start's own view of a run that failed
    assert alone.locator(".jt-header .jt-status").first.inner_text().strip() in ("error", "budget", "max_iterations")
    assert alone.locator(".jt-banner").first.is_visible()
    assert page.get_by_text("Traceback").count() == 0


def test_in_marimo_a_clicked_row_opens_its_conversation_in_the_themes_colours(
    quickstart: tuple[Any, list[str], str],
) -> None:
    page, blocked, theme = quickstart
    surface = page.locator(".jt-surface:has(.jt-browser)")
    background = parse_colour(surface.evaluate("el => getComputedStyle(el).backgroundColor"))
    assert (luminance(background[:3]) > 0.5) == (theme == "light")  # marimo's theme, followed
    row = page.locator(".jt-browser .jt-tr").nth(4)
    run = row.locator(".jt-col-run").get_attribute("data-jt-arg")
    row.locator(".jt-col-status").click()
    page.locator(".jt-browser .jt-detail .jt-header h3 code", has_text=run).wait_for(timeout=30_000)
    assert opened_run(page) == run
    assert page.locator(".jt-browser .jt-tr.jt-selected .jt-col-run").get_attribute("data-jt-arg") == run
    assert page.locator(".jt-browser .jt-detail .jt-msg").count() > 0
    for name, selector in [
        ("cell", ".jt-browser .jt-td.jt-col-reason"),
        ("column header", ".jt-browser .jt-th"),
        ("chip", ".jt-browser .jt-chip"),
        ("conversation header", ".jt-browser .jt-detail .jt-header h3 code"),
    ]:
        ratio = rendered_contrast(page.locator(selector).first)
        assert ratio >= MIN_CONTRAST, f"{name} has contrast {ratio:.2f}:1 in marimo's {theme} theme"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"marimo-browser-{theme}.png"))
    page.locator(".jt-browser .jt-detail .jt-close").click()
    page.locator(".jt-browser .jt-detail").wait_for(state="detached", timeout=30_000)
    assert blocked == [], blocked


def test_in_marimo_enter_opens_a_row_and_escape_closes_it(quickstart: tuple[Any, list[str], str]) -> None:
    """The keyboard: a row's run id takes the focus, Enter opens the run (the pane's close button takes the focus),
    ArrowDown moves to the next row, Escape closes the run and gives the keyboard back to its row."""
    page, _, _ = quickstart
    cell = page.locator(".jt-browser .jt-tr .jt-col-run").nth(1)
    run = cell.get_attribute("data-jt-arg")
    cell.focus()
    page.keyboard.press("Enter")
    page.locator(".jt-browser .jt-detail .jt-header h3 code", has_text=run).wait_for(timeout=30_000)
    page.wait_for_function(f"() => {{ const a = ({FOCUSED_JS})(); return a && a.classList.contains('jt-close'); }}")
    page.keyboard.press("Escape")
    page.locator(".jt-browser .jt-detail").wait_for(state="detached", timeout=30_000)
    page.wait_for_function(
        f"(run) => {{ const a = ({FOCUSED_JS})(); return a && a.getAttribute('data-jt-arg') === run; }}", arg=run
    )
    page.keyboard.press("ArrowDown")
    following = page.locator(".jt-browser .jt-tr .jt-col-run").nth(2).get_attribute("data-jt-arg")
    assert focused(page, "data-jt-arg") == following


def test_in_marimo_the_search_and_a_chip_narrow_the_list_and_the_pager_pages(
    quickstart: tuple[Any, list[str], str],
) -> None:
    page, _, _ = quickstart
    page.locator(".jt-browser .jt-pager .jt-button", has_text="next →").click()
    page.locator(".jt-browser .jt-page-label", has_text="page 2 of").wait_for(timeout=30_000)
    search = page.locator(".jt-browser input.jt-search")
    search.fill("newest-")
    rows = page.locator(".jt-browser .jt-tr .jt-col-run")
    page.locator(".jt-browser .jt-page-label", has_text="page 1 of").wait_for(timeout=30_000)  # a new search: page 1
    assert focused(page, "data-jt-key") == "search" and search.input_value() == "newest-"  # kept across the redraws
    chip = page.locator(".jt-browser .jt-chip", has_text="invalid")
    chip.click()
    page.locator(".jt-browser .jt-chip[aria-pressed='true']", has_text="invalid").wait_for(timeout=30_000)
    runs = rows.evaluate_all("els => els.map(el => el.getAttribute('data-jt-arg'))")
    assert runs and all(run.startswith("newest-") for run in runs)
    assert all(
        status.strip() == "invalid" for status in page.locator(".jt-browser .jt-tr .jt-col-status").all_inner_texts()
    )
    chip.click()
    search.fill("")
    page.locator(".jt-browser .jt-chip[aria-pressed='false']", has_text="invalid").wait_for(timeout=30_000)
    header = page.locator(".jt-browser .jt-th.jt-col-run")
    header.click()
    page.locator(".jt-browser .jt-th.jt-col-run", has_text="▲").wait_for(timeout=30_000)
    shown = rows.evaluate_all("els => els.map(el => el.getAttribute('data-jt-arg'))")
    assert shown == sorted(shown)  # a header click sorts by its column
    page.locator(".jt-browser .jt-th.jt-col-created").click()
    page.locator(".jt-browser .jt-th.jt-col-created", has_text="▼").wait_for(timeout=30_000)  # newest first again


def test_in_marimo_the_conversation_jumps_to_a_place_chosen(quickstart: tuple[Any, list[str], str]) -> None:
    """The quick start's own conversation view: "jump to" marks the message of the place chosen."""
    page, _, _ = quickstart
    alone = page.locator(".jt-surface > .jt-conversation")
    chooser = alone.locator("select[data-jt-key='jump']")
    place = chooser.locator("option").nth(1)
    seq = place.get_attribute("value")
    chooser.select_option(seq)
    alone.locator(".jt-target").first.wait_for(timeout=30_000)
    assert alone.locator(".jt-page-label").inner_text().startswith("messages ")
    # The find bar reads every page: a word of the first message is found ("1 of n" once stepped to with Enter), and
    # the report's keys move through the run from the view ("r": its first process run).
    word = max(re.findall(r"[A-Za-z]{4,}", alone.locator(".jt-msg").first.inner_text()), key=len)
    field = alone.locator(".jt-find-bar input")
    field.fill(word)
    alone.locator(".jt-find-count", has_text=" of ").wait_for(timeout=30_000)
    field.press("Enter")
    alone.locator(".jt-find-count", has_text="1 of ").wait_for(timeout=30_000)
    alone.locator(".jt-msg").first.click()
    page.keyboard.press("r")
    alone.locator(".jt-target").first.wait_for(timeout=30_000)


def test_the_quick_start_runs_as_a_script() -> None:
    """marimo's notebook is a Python program too: run top to bottom with no server, it ends cleanly."""
    environment = {**os.environ, SOURCE_VARIABLE: str(SAMPLES)}
    done = subprocess.run(
        [sys.executable, str(NOTEBOOK)], capture_output=True, text=True, timeout=120, env=environment, check=False
    )
    assert done.returncode == 0, done.stderr


def test_in_marimo_a_findings_seq_link_shows_its_message(quickstart: tuple[Any, list[str], str]) -> None:
    """A finding's seq link in an opened run's header brings its message into view, inside marimo's shadow root,
    without sending marimo's page to an anchor it does not have."""
    page, _, _ = quickstart
    address = page.url
    page.locator(".jt-browser input.jt-search").fill("corrupt-interior")
    row = page.locator(".jt-browser .jt-tr:has(.jt-col-run[data-jt-arg='corrupt-interior'])")
    row.locator(".jt-col-status").click()
    link = page.locator(".jt-browser .jt-detail .jt-seq-link").first
    link.wait_for(timeout=30_000)
    message = page.locator(f".jt-browser .jt-detail [id='{link.get_attribute('href')[1:]}']")
    page.locator(".jt-browser .jt-tr").last.scroll_into_view_if_needed()
    link.click()
    page.wait_for_function(
        "(el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }",
        arg=message.element_handle(),
        timeout=30_000,
    )
    assert page.url == address
    page.keyboard.press("Escape")
    page.locator(".jt-browser .jt-detail").wait_for(state="detached", timeout=30_000)
    page.locator(".jt-browser input.jt-search").fill("")
