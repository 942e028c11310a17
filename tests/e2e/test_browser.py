"""The widgets rendered in a real headless Chromium, as a reader would see them, in JupyterLab's light and
dark themes.

Two set-ups, both offline (every request that is not to 127.0.0.1 is blocked, and the test says so):

- a static page: the widgets embedded with the standalone renderer ``@jupyter-widgets/html-manager`` (from
  the npm registry, in ``build/browser``) and JupyterLab's own theme stylesheets from this venv's JupyterLab;
  it checks contrast, Markdown, the banner, expand-in-place and that journal content never runs;
- a real JupyterLab (``jupyter lab`` from this venv, with a kernel): a click on a row opens its conversation,
  a click on a column header sorts, in both themes.

Set-up (``scripts/setup-browser-tests.sh``, run here when something is missing): Debian's ``chromium`` and
the npm package; never a Playwright browser download. Screenshots land in ``test-artifacts/`` (gitignored),
with the contrast ratios measured in ``test-artifacts/contrast.json``.
"""

from __future__ import annotations

import functools
import http.server
import json
import secrets
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from ipywidgets.embed import embed_snippet

from journaltools.folding import fold
from journaltools.protocol.blocks import Block, Message, TextBlock
from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Meta, Record, Terminal, User, make_record
from journaltools.widgets import (
    AuditSummary,
    AuditSummaryModel,
    ConversationModel,
    ConversationView,
    ListingComparison,
    ListingComparisonModel,
    RunBrowser,
    RunBrowserModel,
    TimeTravel,
)
from tests.browser_fixtures import ARTIFACTS, CHROMIUM, MIN_CONTRAST, luminance, parse_colour, rendered_contrast
from tests.notebook_servers import (
    JUPYTER_OPTIONS,
    JUPYTER_THEMES,
    free_port,
    guarded_page,
    jupyter_home,
    opened_run_shows,
    run_all_cells_once_ready,
    serving,
    set_jupyter_theme,
)
from tests.paths import ROOT
from tests.widget_journals import (
    FINGERPRINT,
    LONG_TASK,
    MANY_CHANGES_RUN,
    STALE_TERMINAL_RUNS,
    all_folds,
    assistant_at,
    browser_folds,
    corpus_fold,
    corpus_records,
    journal_records,
    long_id_turns,
    result_at,
    six_process_runs,
    tool_use,
)

DIST = ROOT / "build" / "browser" / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
THEMES_DIR = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"
THEMES = ("light", "dark")
#: Every page here is drawn with the widgets' page assets (embed.js, JupyterLab's themes).
pytestmark = pytest.mark.usefixtures("browser_assets")
INJECTED = "<script>window.__journal_pwned = true</script>"
INJECTED_IMG = '<img src="nope.png" onerror="window.__journal_pwned_img = true">'
INJECTED_LINK = "[click me](javascript:window.__journal_pwned_link=true)"
MARKDOWN = "Found it: **the rounding** in `total()`.\n\n```python\nround(x, 2)\n```\n\n- first\n- second"
LONG_TEXT = "\n".join(f"log line {i}: step finished" for i in range(60)) + "\nTHE END OF THE LOG"

#: What the contrast tests measure, in both set-ups: (name, selector).
CONTRAST_TARGETS = [
    ("user message text", ".jt-msg-user .jt-md p"),
    ("user message role", ".jt-msg-user .jt-role"),
    ("run browser column header", ".jt-browser .jt-th"),
    ("run browser cell", ".jt-browser .jt-td.jt-col-reason"),
    ("table header", ".jt-comparison .jt-table th"),
    ("conversation header", ".jt-header h3 code"),
    ("banner", ".jt-banner .jt-banner-detail"),
    ("status badge", ".jt-header .jt-status"),
]
MEASURED: dict[str, dict[str, float]] = {}


def record_contrast(setup: str, theme: str, name: str, ratio: float) -> None:
    MEASURED.setdefault(f"{setup} {theme}", {})[name] = round(ratio, 2)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "contrast.json").write_text(json.dumps(MEASURED, indent=2, sort_keys=True) + "\n")


# -- set-up ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_assets() -> Path:
    """Chromium and embed.js, installed by the set-up script when missing."""
    if not CHROMIUM.exists() or not (DIST / "embed.js").exists():
        subprocess.run(["sh", str(ROOT / "scripts" / "setup-browser-tests.sh")], check=True, timeout=900)
    assert CHROMIUM.exists(), "Debian's chromium is required at /usr/bin/chromium"
    assert (DIST / "embed.js").exists(), "npm install of @jupyter-widgets/html-manager failed"
    assert (THEMES_DIR / "theme-dark-extension" / "index.css").exists(), "JupyterLab (the notebook extra) is needed"
    return DIST


#: Rows as ``compare`` gives them (the comparison rule is tested with audits/listings.py; here only how rows look).
COMPARISON_ROWS = [
    {"run": "completed-parallel-tools", "status_a": "completed", "status_b": "completed", "verdict": "agree"},
    {
        "run": "follow-up-in-flight",
        "status_a": "completed",
        "status_b": "open",
        "verdict": "documented",
        "explanation": "follow-up-in-flight: a new turn follows the last terminal; the file listing says completed, "
        "the JetStream listing says open. Documented, not an error.",
    },
    {
        "run": "served-memory-revisions",
        "status_a": "completed",
        "status_b": "open",
        "verdict": "summary_rule",
        "explanation": "only memory_revisions follows the last terminal: the two-record rule reads it as open",
    },
    {"run": "lost-last-record", "status_a": "completed", "status_b": "open", "verdict": "discrepancy",
     "explanation": "last seq 9 vs 8: the two sides hold different records"},
]  # fmt: skip


def _comparison_model() -> ListingComparisonModel:
    return ListingComparisonModel.from_rows(COMPARISON_ROWS, "file", "jetstream")


def hostile_run() -> list[Record]:
    meta = Meta(
        version=3,
        run_id="hostile",
        created="2026-08-21T23:36:20Z",
        fingerprint=FINGERPRINT,
        prompt=INJECTED_IMG + "\n\n" + INJECTED_LINK,
    )
    return [
        make_record(1, meta),
        assistant_at(2, 0, Block(text=TextBlock(text=MARKDOWN)), tool_use("c1", "shell", b'{"cmd":"ls"}')),
        result_at(3, "c1", INJECTED),
        assistant_at(4, 1, Block(text=TextBlock(text=LONG_TEXT)), stop="end_turn"),
        make_record(5, User(message=Message(role="user", content=[Block(text=TextBlock(text="thanks"))]))),
        assistant_at(6, 2, Block(text=TextBlock(text="done")), stop="end_turn"),
        make_record(7, Terminal(reason="completed")),
    ]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>journaltools widgets ({theme})</title>
<link rel="stylesheet" href="theme-{theme}.css">
<style>body {{ background: var(--jp-layout-color0); color: var(--jp-ui-font-color1); margin: 16px;
  font-family: var(--jp-ui-font-family); }}</style>
</head><body data-jp-theme-light="{light}" data-jp-theme-name="{name}">
{snippet}
</body></html>"""


def themed_site(browser_assets: Path, site: Path) -> Path:
    """``site`` holding the widgets' page assets and JupyterLab's two theme stylesheets."""
    for item in browser_assets.iterdir():
        shutil.copy(item, site / item.name)
    for theme in THEMES:
        shutil.copy(THEMES_DIR / f"theme-{theme}-extension" / "index.css", site / f"theme-{theme}.css")
    return site


def served_pages(site: Path, views: list[Any]) -> Iterator[str]:
    """``views`` embedded in one page per theme in ``site``, served from 127.0.0.1 until the caller is done."""
    snippet = embed_snippet(views, requirejs=False, embed_url="embed.js")
    for theme in THEMES:
        light = str(theme == "light").lower()
        page = PAGE.format(theme=theme, light=light, name=JUPYTER_THEMES[theme], snippet=snippet)
        (site / f"{theme}.html").write_text(page, encoding="utf-8")

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
def static_site(browser_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The widgets embedded in one page per theme, served from 127.0.0.1."""
    site = themed_site(browser_assets, tmp_path_factory.mktemp("site"))

    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=14)
    browser.select("terminal-error")
    audit_rows = [
        {"run": "torn-tail", "seq": 4, "code": "torn_tail", "severity": "warning", "message": "dropped"},
        {"run": "edge-version-2", "seq": 1, "code": "version_mismatch", "severity": "error", "message": "v2"},
    ]
    views = [
        browser.widget,
        ListingComparison(_comparison_model()).widget,
        TimeTravel.from_records("terminal-error", corpus_records("terminal-error")).widget,
        ConversationView(ConversationModel.from_fold(corpus_fold("unicode-and-escaping"))).widget,
        ConversationView(ConversationModel.from_fold(fold(hostile_run()))).widget,
        AuditSummary(AuditSummaryModel.from_rows(audit_rows)).widget,
    ]
    yield from served_pages(site, views)


@pytest.fixture(scope="module", params=THEMES)
def rendered(request: pytest.FixtureRequest, chromium: Any, static_site: str) -> Iterator[tuple[Any, list[str], str]]:
    theme: str = request.param
    blocked: list[str] = []
    page = guarded_page(chromium, static_site, blocked)
    try:
        page.goto(f"{static_site}{theme}.html")
        page.wait_for_selector("tr.jt-verdict-documented", timeout=30_000)
        page.wait_for_selector("[data-call='c1']", timeout=30_000)
        page.wait_for_selector(".jt-snapshot", timeout=30_000)
        page.wait_for_selector(".jt-browser .jt-banner", timeout=30_000)
        yield page, blocked, theme
    finally:
        page.close()


# -- the static page, both themes ------------------------------------------------------------------------


def test_the_theme_is_jupyterlabs(rendered: tuple[Any, list[str], str]) -> None:
    page, _, theme = rendered
    background = parse_colour(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    assert (luminance(background[:3]) > 0.5) == (theme == "light")  # the theme's page colour, not a fixed one
    header = page.locator(".jt-browser .jt-th").first
    text = parse_colour(header.evaluate("el => getComputedStyle(el).color"))
    assert (luminance(text[:3]) < 0.5) == (theme == "light")  # dark text on light, light text on dark


def test_text_contrast_is_at_least_4_5_to_1(rendered: tuple[Any, list[str], str]) -> None:
    page, _, theme = rendered
    for name, selector in CONTRAST_TARGETS:
        target = page.locator(selector).first
        assert target.count() == 1, f"{selector} is not on the page"
        ratio = rendered_contrast(target)
        record_contrast("static page", theme, name, ratio)
        assert ratio >= MIN_CONTRAST, f"{name} ({selector}) has contrast {ratio:.2f}:1 in the {theme} theme"


def test_the_error_run_shows_its_reason_in_a_banner(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    conversation = page.locator(".jt-browser .jt-detail")
    banner = conversation.locator(".jt-banner").first
    assert banner.is_visible()
    assert banner.inner_text().startswith("Ended in error") and "529 Overloaded" in banner.inner_text()
    banner_top = banner.bounding_box()["y"]
    first_message = conversation.locator(".jt-msg").first.bounding_box()["y"]
    assert banner_top < first_message  # at the top, before the conversation
    chip = conversation.locator(".jt-segment[data-segment='0']")
    assert chip.is_visible() and chip.inner_text().endswith("→ error")
    row = page.locator(".jt-browser .jt-tr.jt-selected")
    assert row.count() == 1 and "529 Overloaded" in row.inner_text()


def test_markdown_renders_with_prose_in_a_proportional_font(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    message = page.locator(".jt-msg-assistant", has_text="Found it").first
    assert message.locator("strong").inner_text() == "the rounding"
    assert message.locator("li").all_inner_texts() == ["first", "second"]
    code_font = message.locator("pre code").evaluate("el => getComputedStyle(el).fontFamily").lower()
    prose_font = message.locator("p").first.evaluate("el => getComputedStyle(el).fontFamily").lower()
    assert "mono" in code_font or "menlo" in code_font
    assert "mono" not in prose_font and "menlo" not in prose_font and "courier" not in prose_font
    wrap = message.locator("p").first.evaluate("el => getComputedStyle(el).wordBreak")
    assert wrap == "normal"  # words are never broken mid-line in prose


def test_script_onerror_and_javascript_links_never_run(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    assert page.evaluate("typeof window.__journal_pwned") == "undefined"
    assert page.evaluate("typeof window.__journal_pwned_img") == "undefined"
    assert page.get_by_text(INJECTED, exact=True).first.is_visible()
    assert page.get_by_text(INJECTED_IMG, exact=False).first.is_visible()
    assert page.locator("img[src='nope.png']").count() == 0  # no element was made from journal content
    assert page.locator("a[href^='javascript']").count() == 0
    page.get_by_text("[click me](javascript:", exact=False).first.click()
    assert page.evaluate("typeof window.__journal_pwned_link") == "undefined"


def test_long_text_expands_in_place(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    expander = page.locator(".jt-expand", has_text="log line 0").first
    clamp = expander.locator(".jt-clamp")
    assert page.locator("text=THE END OF THE LOG").count() == 1  # the text is in the page once
    closed = clamp.evaluate("el => [el.clientHeight, el.scrollHeight]")
    assert closed[0] < closed[1] / 3
    expander.locator("summary").click()
    page.wait_for_function("el => el.clientHeight >= el.scrollHeight", arg=clamp.element_handle(), timeout=5_000)
    assert expander.locator("summary").inner_text() == "show less"
    assert page.locator("text=THE END OF THE LOG").count() == 1
    expander.locator("summary").click()  # and back


def test_audit_chart_counts_in_whole_numbers(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    ticks = page.locator(".jt-chart .jt-tick").all_text_contents()
    assert ticks == ["0", "1"]
    bar = page.locator(".jt-chart .jt-bar-error").first
    assert parse_colour(bar.evaluate("el => getComputedStyle(el).fill"))[3] == 1.0


def test_documented_row_is_flagged_and_explained(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    row = page.locator("tr.jt-verdict-documented", has_text="follow-up-in-flight")
    assert row.count() == 1
    assert row.locator(".jt-flag").inner_text() == "⚑ documented"
    explanation = row.locator(".jt-explanation").inner_text()
    assert "not an error" in explanation and "says open" in explanation and "says completed" in explanation
    assert row.is_visible()


def test_discrepancy_row_looks_different_and_louder(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    discrepancy = page.locator("tr.jt-verdict-discrepancy").first
    documented = page.locator("tr.jt-verdict-documented").first
    agree = page.locator("tr.jt-verdict-agree").first
    assert discrepancy.locator(".jt-flag").inner_text() == "✖ DISCREPANCY"

    def style(row: Any, prop: str) -> str:
        return str(row.locator("td").nth(1).evaluate(f"cell => getComputedStyle(cell)['{prop}']"))

    assert style(discrepancy, "backgroundColor") != style(documented, "backgroundColor")
    assert style(discrepancy, "backgroundColor") != style(agree, "backgroundColor")
    assert int(style(discrepancy, "fontWeight")) > int(style(documented, "fontWeight"))
    flag = discrepancy.locator(".jt-flag")
    red = parse_colour(flag.evaluate("el => getComputedStyle(el).backgroundColor"))
    assert red[0] > 150 and red[1] < 80 and red[2] < 80  # the theme's strong red, not the amber of a documented row
    assert rendered_contrast(flag) >= MIN_CONTRAST


def test_summary_rule_rows_look_expected_not_red(rendered: tuple[Any, list[str], str]) -> None:
    page, _, _ = rendered
    # By the row's run, not its text: a long run id is shortened in its cell (the tooltip holds it whole).
    row = page.locator("tr.jt-verdict-summary_rule[data-run='served-memory-revisions']")
    discrepancy = page.locator("tr.jt-verdict-discrepancy").first
    assert row.count() == 1 and row.locator(".jt-flag").inner_text() == "≈ summary rule"
    assert "memory_revisions" in row.locator(".jt-explanation").inner_text()

    def style(locator: Any, prop: str) -> str:
        return str(locator.evaluate(f"el => getComputedStyle(el)['{prop}']"))

    cell, loud_cell = row.locator("td").nth(1), discrepancy.locator("td").nth(1)
    assert style(cell, "backgroundColor") != style(loud_cell, "backgroundColor")
    assert int(style(cell, "fontWeight")) < int(style(loud_cell, "fontWeight"))
    red, flag = parse_colour(style(discrepancy.locator(".jt-flag"), "backgroundColor")), row.locator(".jt-flag")
    assert parse_colour(style(flag, "backgroundColor")) != red and rendered_contrast(flag) >= MIN_CONTRAST


def test_only_local_requests_and_screenshots(rendered: tuple[Any, list[str], str]) -> None:
    page, blocked, theme = rendered
    assert blocked == []  # the page needs nothing from outside (the guard would have blocked it)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"widgets-{theme}.png"), full_page=True)
    page.locator(".jt-comparison").first.screenshot(path=str(ARTIFACTS / f"listing-comparison-{theme}.png"))
    assert (ARTIFACTS / f"widgets-{theme}.png").stat().st_size > 50_000


# -- a real JupyterLab with a kernel ---------------------------------------------------------------------

#: Every corpus run on one page (with two whose status carries a detail and one whose prompt is markup), so a sort
#: is a reversal and any row can be clicked.
LAB_ROWS = len(browser_folds())
LAB_NOTEBOOK = [
    "import sys\nsys.path.insert(0, ROOT)\n"
    "from journaltools.widgets import ConversationView, ConversationModel, RunBrowser, RunBrowserModel\n"
    "from tests.widget_journals import browser_folds\n"
    "folds = browser_folds()\n"
    "browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=LAB_ROWS)\nbrowser",
    "from journaltools.folding import fold\nfrom journaltools.protocol.decode import decode_line\n"
    "hostile = [decode_line(line.encode()).record for line in HOSTILE]\n"
    "ConversationView(ConversationModel.from_fold(fold(hostile)))",
    # A long run with a finding far down its first page: its seq link must bring that message into view.
    "import dataclasses\nfrom journaltools.protocol.findings import Finding\n"
    "long_run = folds['long-run']\nFINDING_SEQ = long_run.message_seqs[45]\n"
    "marked = dataclasses.replace(long_run, findings=[Finding('long-run', FINDING_SEQ, 'duplicate_result', "
    "'warning', 'a finding far down the page')])\n"
    "ConversationView(ConversationModel.from_fold(marked))",
    # The listing comparison with a 64-hex run id and the documented explanation, the widest rows it shows.
    "from journaltools.widgets import ListingComparison, ListingComparisonModel\n"
    "from journaltools.widgets.comparison import DOCUMENTED_EXPLANATION\n"
    "compared = [{'run': 'f' * 64, 'status_a': 'completed', 'status_b': 'open', 'verdict': 'documented',\n"
    "             'explanation': DOCUMENTED_EXPLANATION},\n"
    "            {'run': 'e' * 27, 'status_a': 'completed', 'status_b': None, 'verdict': 'missing_b',\n"
    "             'explanation': 'file lists it (completed) but jetstream has no journal for it.'}]\n"
    "ListingComparison(ListingComparisonModel.from_rows(compared, 'file', 'jetstream'))",
    # An audit whose codes are the longest there are (a task store's) and whose counts run to thousands.
    "from journaltools.protocol.findings import Finding\nfrom journaltools.widgets import AuditSummary, "
    "AuditSummaryModel\n"
    "audited = [Finding(f'run-{n}', n, code, 'warning', 'x') for n in range(1200) for code in ("
    "'listing_summary_rule', 'task_result_before_submission') if n % 2 or code == 'listing_summary_rule']\n"
    "AuditSummary(AuditSummaryModel(audited)).widget",
]


@pytest.fixture(scope="module")
def lab_server(browser_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``jupyter lab`` from this venv on a scratch root holding one notebook; nothing it writes leaves tmp."""
    root = tmp_path_factory.mktemp("lab")
    hostile = [encode_record(record).decode() for record in hostile_run()]
    setup = f"ROOT = {str(ROOT)!r}\nHOSTILE = {hostile!r}\nLAB_ROWS = {LAB_ROWS}"
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (setup, *LAB_NOTEBOOK)]
    nbformat.write(notebook, root / "browse.ipynb")
    shutil.copy(ROOT / "notebooks" / "01-explore.ipynb", root / "01-explore.ipynb")  # the shipped notebook, as is
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path_factory.mktemp("lab-home")
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        *JUPYTER_OPTIONS,
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    with serving(command, port, jupyter_home(home), root, home / "lab.log", "jupyter lab"):
        yield f"http://127.0.0.1:{port}/lab/tree/browse.ipynb?token={token}"


@pytest.fixture(scope="module")
def lab(chromium: Any, lab_server: str) -> Iterator[tuple[Any, list[str]]]:
    """JupyterLab open on the notebook, every cell run, the browser and the hostile conversation rendered."""
    blocked: list[str] = []
    # 1280 x 800: the window the issue was found in (the notebook beside JupyterLab's file browser).
    page = guarded_page(chromium, lab_server.split("lab/tree")[0], blocked, width=1280, height=800)
    try:
        page.goto(lab_server)
        page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=120_000)
        page.wait_for_selector(".jp-Notebook", timeout=120_000)
        run_all_cells_once_ready(page)
        page.wait_for_selector(".jt-browser .jt-tr", timeout=120_000)
        page.wait_for_selector("[data-call='c1']", timeout=60_000)
        page.wait_for_selector(".jt-seq-link", state="attached", timeout=60_000)
        yield page, blocked
    finally:
        page.close()


def browser_runs(page: Any) -> list[str]:
    """The run ids of the rows shown, whole (a long one is shortened in its cell; its tooltip holds it all)."""
    cells = page.locator(".jt-browser .jt-tr:visible .jt-col-run")
    # One read of every cell at once: the rows may re-render between reads of one cell after another.
    found: list[str] = cells.evaluate_all("els => els.map(el => (el.title || el.innerText).trim())")
    return found


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_a_clicked_row_opens_its_conversation(lab: tuple[Any, list[str]], theme: str) -> None:
    page, _ = lab
    set_jupyter_theme(page, theme)
    target = "terminal-error" if theme == "light" else "terminal-budget"
    reason = "529 Overloaded" if theme == "light" else "token budget"
    page.locator(".jt-browser .jt-tr", has_text=target).locator(".jt-col-status").click()
    banner = page.locator(".jt-browser .jt-detail .jt-banner")
    banner.wait_for(timeout=30_000)
    page.wait_for_function(
        "([sel, text]) => document.querySelector(sel) && document.querySelector(sel).innerText.includes(text)",
        arg=[".jt-browser .jt-detail .jt-banner", reason],
        timeout=30_000,
    )
    assert page.locator(".jt-browser .jt-tr.jt-selected").inner_text().startswith(target)
    # The report's keys work in the opened run: "r" marks its first process run, and "a" (the next approval here)
    # never reaches JupyterLab, whose command mode would add a cell.
    cells = page.locator(".jp-Cell").count()
    page.locator(".jt-browser .jt-detail .jt-conversation .jt-msg").first.click()
    assert page.locator(".jt-browser .jt-detail .jt-conversation .jt-target").count() == 0
    page.keyboard.press("r")
    page.locator(".jt-browser .jt-detail .jt-conversation .jt-target").first.wait_for(timeout=30_000)
    page.keyboard.press("a")
    assert page.locator(".jp-Cell").count() == cells
    for name, selector in CONTRAST_TARGETS:
        if name in ("table header",):  # no ListingComparison in this notebook
            continue
        ratio = rendered_contrast(page.locator(selector).first)
        record_contrast("JupyterLab", theme, name, ratio)
        assert ratio >= MIN_CONTRAST, f"{name} has contrast {ratio:.2f}:1 in JupyterLab {theme}"
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".jt-browser").first.screenshot(path=str(ARTIFACTS / f"jupyterlab-{theme}.png"))


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_the_listing_comparison_fits_the_output_area_beside_the_file_browser(
    lab: tuple[Any, list[str]], theme: str
) -> None:
    """The explanation, what the comparison exists for, lies inside the output area at 1280 px with the file
    browser open: it wraps, and the run id column yields (its tooltip holds the whole id)."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector(".jp-FileBrowser", state="visible", timeout=30_000)
    table = page.locator(".jt-comparison-table").first
    table.scroll_into_view_if_needed()
    area = page.locator(".jp-OutputArea-output", has=page.locator(".jt-comparison-table")).first
    edge = right_edge(area)
    explanations = table.locator(".jt-explanation")
    assert explanations.count() == 2
    for index in range(explanations.count()):
        explanation = explanations.nth(index)
        box = explanation.bounding_box()
        assert box is not None and right_edge(explanation) <= edge + 1, (theme, index, box, edge)
    assert right_edge(table) <= edge + 1
    run = table.locator("code.jt-id").first
    assert run.get_attribute("title") == "f" * 64
    shot(page, ".jt-comparison", "jupyterlab-listing-comparison", theme)


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_the_audit_chart_fits_the_output_area_beside_the_file_browser(
    lab: tuple[Any, list[str]], theme: str
) -> None:
    """The findings chart lies inside the output area with the file browser open, at 1280 px and in a narrower
    window, beside its counts table or below it but never over it (it was a fixed 460 px drawing that overlapped
    the table), and no code label is cut at its left edge."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector(".jp-FileBrowser", state="visible", timeout=30_000)
    try:
        for width in (1280, 1000):
            page.set_viewport_size({"width": width, "height": 800})
            chart = page.locator(".jt-audit-summary .jt-chart").first
            chart.scroll_into_view_if_needed()
            area = page.locator(".jp-OutputArea-output", has=page.locator(".jt-audit-summary")).first
            page.wait_for_function(
                "([c, a]) => c.getBoundingClientRect().right <= a.getBoundingClientRect().right + 1",
                arg=[chart.element_handle(), area.element_handle()],
                timeout=10_000,
            )
            frame = chart.bounding_box()
            assert frame is not None and frame["width"] > 200, (theme, width, frame)
            # Beside the counts table or below it, never over it (a fixed drawing beside it overlapped it).
            table = page.locator(".jt-audit-summary .jt-audit table").first.bounding_box()
            assert table is not None
            beside = frame["x"] >= table["x"] + table["width"] - 1
            below = frame["y"] >= table["y"] + table["height"] - 1
            assert beside or below, (theme, width, frame, table)
            inside = area.bounding_box()
            assert inside is not None and table["x"] >= inside["x"] - 1, (theme, width, table, inside)
            for label in chart.locator("text[text-anchor='end']").all():
                box = label.bounding_box()
                assert box is not None and box["x"] >= frame["x"] - 0.5, (theme, width, label.text_content(), box)
            shot(page, ".jt-audit-summary", f"jupyterlab-audit-summary-{width}", theme)
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_a_header_click_sorts(lab: tuple[Any, list[str]], theme: str) -> None:
    page, _ = lab
    set_jupyter_theme(page, theme)
    header = page.locator(".jt-browser .jt-th.jt-col-run")
    # The page is shared by both themes: start from whatever order the last test left, and wait for each
    # click to show before looking at the header again (reading it first raced the click).
    for _ in range(3):
        shown = header.inner_text().strip()
        if shown.endswith("▲"):
            break
        header.click()
        page.wait_for_function(
            "(before) => document.querySelector('.jt-browser .jt-th.jt-col-run').innerText.trim() !== before",
            arg=shown,
            timeout=30_000,
        )
    assert header.inner_text().strip().endswith("▲")
    page.wait_for_function(
        "(count) => { const runs = [...document.querySelectorAll('.jt-browser .jt-tr .jt-col-run')]"
        ".filter(el => el.offsetParent).map(el => el.title || el.innerText.trim());"
        " return runs.length === count && runs.every((r, i) => i === 0 || runs[i - 1] <= r); }",
        arg=LAB_ROWS,
        timeout=30_000,
    )
    ascending = browser_runs(page)
    assert ascending == sorted(ascending) and len(ascending) == LAB_ROWS
    header.click()
    page.wait_for_function(
        "(count) => { const runs = [...document.querySelectorAll('.jt-browser .jt-tr .jt-col-run')]"
        ".filter(el => el.offsetParent).map(el => el.title || el.innerText.trim());"
        " return runs.length === count && runs.every((r, i) => i === 0 || runs[i - 1] >= r); }",
        arg=LAB_ROWS,
        timeout=30_000,
    )
    assert browser_runs(page) == sorted(ascending, reverse=True)


def test_in_jupyterlab_journal_content_never_runs(lab: tuple[Any, list[str]]) -> None:
    page, blocked = lab
    assert page.get_by_text(INJECTED, exact=True).first.is_visible()
    for flag in ("__journal_pwned", "__journal_pwned_img", "__journal_pwned_link"):
        assert page.evaluate(f"typeof window.{flag}") == "undefined"
    assert page.locator(".jp-Notebook img[src='nope.png']").count() == 0
    assert blocked == [], blocked  # JupyterLab itself asked for nothing outside this machine


# -- issue 19: the views open where the reader looks (1280 px, both themes) ---------------------------------


def in_viewport(page: Any, locator: Any) -> bool:
    """Whether the element's top is inside the window (what the reader sees without scrolling)."""
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] < page.viewport_size["height"] and box["height"] > 0


def click_run(page: Any, run: str) -> None:
    row = page.locator(f".jt-browser .jt-tr:has(.jt-col-run[title='{run}'])").first  # the tooltip holds the whole id
    row.scroll_into_view_if_needed()
    row.locator(".jt-col-status").click()
    opened_run_shows(page, run)


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_an_opened_run_shows_its_header_and_its_turn_in_flight(
    lab: tuple[Any, list[str]], theme: str
) -> None:
    """1 and 3: the header of the run just clicked is in the window, whichever row was clicked (the last
    one here, far down the table), and a stuck run's last words are on screen."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    runs = browser_runs(page)
    click_run(page, runs[-1])  # the bottom row: the pane must come to the reader, not open below the table
    header = page.locator(".jt-browser .jt-detail .jt-header").first
    page.wait_for_function(
        "() => { const r = document.querySelector('.jt-browser .jt-detail .jt-header').getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }",
        timeout=30_000,
    )
    assert in_viewport(page, header)
    click_run(page, "deferred-waiting")
    pending = page.locator(".jt-browser .jt-detail .jt-pending .jt-md", has_text="Three things at once")
    pending.wait_for(timeout=30_000)
    page.wait_for_function(
        "() => { const el = document.querySelector('.jt-browser .jt-detail .jt-pending .jt-md');"
        " const r = el && el.getBoundingClientRect(); return r && r.top >= 0 && r.bottom <= window.innerHeight; }",
        timeout=30_000,
    )
    assert in_viewport(page, page.locator(".jt-browser .jt-detail .jt-header").first)
    assert page.locator(".jt-browser .jt-detail [data-state='deferred']").first.is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"jupyterlab-stuck-{theme}.png"))


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_the_run_id_stays_visible_after_sorting_by_the_last_column(
    lab: tuple[Any, list[str]], theme: str
) -> None:
    """2: the table fits (or scrolls with the run id pinned): sort by the last column shown, the ids stay."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    headers = page.locator(".jt-browser .jt-thead .jt-th:visible")
    last = headers.nth(headers.count() - 1)
    last.scroll_into_view_if_needed()
    before = last.inner_text().strip()
    last.click()
    page.wait_for_function(
        "(before) => { const hs = [...document.querySelectorAll('.jt-browser .jt-thead .jt-th')]"
        ".filter(el => el.offsetParent); return hs[hs.length - 1].innerText.trim() !== before; }",
        arg=before,
        timeout=30_000,
    )
    assert last.inner_text().strip().endswith(("▲", "▼"))
    for header in headers.all():  # every label and its sort arrow fit their column
        assert header.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), header.inner_text()
    table = page.locator(".jt-browser .jt-rows").first.bounding_box()
    for cell in page.locator(".jt-browser .jt-tr:visible .jt-col-run").all()[:5]:
        box = cell.bounding_box()
        assert box is not None and box["x"] >= table["x"] - 1 and box["x"] + box["width"] <= table["x"] + table["width"]
        assert cell.is_visible() and cell.inner_text().strip()
    reason = page.locator(".jt-browser .jt-tr:visible .jt-col-reason").first
    assert reason.evaluate("el => getComputedStyle(el).whiteSpace") == "normal"  # wraps, never cut to one line
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".jt-browser .jt-rows").first.screenshot(path=str(ARTIFACTS / f"jupyterlab-table-{theme}.png"))


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_a_findings_seq_link_scrolls_to_its_message(lab: tuple[Any, list[str]], theme: str) -> None:
    """4 and 5: messages are labelled with their record seq, and a finding's seq link brings it into view."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    # The finding the notebook marks far down the long run's first page (other conversations have findings too).
    far = all_folds()["long-run"].message_seqs[45]
    link = page.locator(f".jt-seq-link[data-seq='{far}']").first
    seq = link.get_attribute("data-seq")
    target = page.locator(f".jt-msg[data-seq='{seq}']", has_text=f"seq {seq}").first
    link.scroll_into_view_if_needed()
    page.evaluate(
        "el => el.closest('.jt-conversation').querySelector('.jt-scroll').scrollTop = 0", link.element_handle()
    )
    assert not in_viewport(page, target)  # far down the conversation before the click
    link.click()
    page.wait_for_function(
        "(seq) => { const el = [...document.querySelectorAll(`.jt-msg[data-seq='${seq}']`)].pop();"
        " const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }",
        arg=seq,
        timeout=30_000,
    )
    assert (
        target.inner_text().upper().startswith(f"ASSISTANT · SEQ {seq}") or f"SEQ {seq}" in target.inner_text().upper()
    )


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_the_search_reads_messages_and_the_counts_follow(lab: tuple[Any, list[str]], theme: str) -> None:
    """6: one search box over message text and tool names; the chips count what it leaves."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    box = page.locator(".jt-browser .jt-search input").first
    box.fill("security approval")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jt-browser .jt-tr')].filter(el => el.offsetParent).length >= 1"
        " && [...document.querySelectorAll('.jt-browser .jt-chip')].some(c => c.innerText.trim() === 'completed 0')",
        timeout=30_000,
    )
    assert "deferred-waiting" in browser_runs(page)
    box.fill("")
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('.jt-browser .jt-tr')].filter(el => el.offsetParent).length === n",
        arg=LAB_ROWS,
        timeout=30_000,
    )


# -- issue 26: views that hold on real data (1280 px, both themes) --------------------------------------------------

SERVED_RUN = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"


@pytest.fixture(scope="module")
def issue26_site(browser_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One page per theme holding the views the issue found breaking on real data, served from 127.0.0.1."""
    from journaltools.widgets import TurnCheckpoints

    site = themed_site(browser_assets, tmp_path_factory.mktemp("issue26"))
    folds = all_folds()
    browser = RunBrowser(RunBrowserModel.from_folds(folds), folds.get, rows_per_page=25)
    browser.all_columns.value = True
    browser.select("terminal-error")
    errored = ConversationView(ConversationModel.from_fold(corpus_fold("terminal-error")))
    errored.jump.value = 0  # "jump to the ending"
    errored.widget.add_class("jt-errored")
    six = ConversationView(ConversationModel.from_fold(fold(six_process_runs(), strict=False)))
    six.widget.add_class("jt-six")
    long_run = ConversationView(ConversationModel.from_fold(corpus_fold("long-run"), page_size=40))
    long_run.show_page(1)
    long_run.widget.add_class("jt-long")
    rows = [dict(row, run=SERVED_RUN if row["run"] == "lost-last-record" else row["run"]) for row in COMPARISON_ROWS]
    rows.append({"run": "f" * 64, "status_a": "completed", "status_b": None, "verdict": "missing_b",
                 "explanation": "file lists it (completed) but jetstream has no journal for it."})  # fmt: skip
    audit_rows = [{"run": "r" * 64, "seq": None, "code": "not_a_journal", "severity": "info",
                   "message": "the entry matched no journal name and was not read: " + "unmatched " * 12}]  # fmt: skip
    many = TimeTravel.from_records(Path(MANY_CHANGES_RUN).stem, journal_records(MANY_CHANGES_RUN))
    many.widget.add_class("jt-many-changes")
    views = [
        browser.widget,
        many.widget,
        errored.widget,
        six.widget,
        long_run.widget,
        ListingComparison(ListingComparisonModel.from_rows(rows, "file", "jetstream")).widget,
        TurnCheckpoints(long_id_turns()).widget,
        AuditSummary(AuditSummaryModel.from_rows(audit_rows)).widget,
    ]
    yield from served_pages(site, views)


@pytest.fixture(scope="module", params=THEMES)
def at_1280(request: pytest.FixtureRequest, chromium: Any, issue26_site: str) -> Iterator[tuple[Any, list[str], str]]:
    theme: str = request.param
    blocked: list[str] = []
    page = guarded_page(chromium, issue26_site, blocked, width=1280, height=800)
    try:
        page.goto(f"{issue26_site}{theme}.html")
        page.wait_for_selector(".jt-turns-table", timeout=30_000)
        page.wait_for_selector(".jt-six .jt-segment[data-segment='5']", timeout=30_000)
        page.wait_for_selector(".jt-browser .jt-detail .jt-banner", timeout=30_000)
        page.wait_for_function("document.fonts.status === 'loaded'")
        yield page, blocked, theme
    finally:
        page.close()


def shot(page: Any, selector: str, name: str, theme: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(selector).first.screenshot(path=str(ARTIFACTS / f"{name}-{theme}.png"))


def right_edge(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None
    return float(box["x"] + box["width"])


def test_1280_long_ids_are_shortened_in_every_table_with_the_whole_id_at_hand(
    at_1280: tuple[Any, list[str], str],
) -> None:
    """3: the turn table fits the window; a long task id shows both ends, the whole id in its tooltip and a copy
    button that copies it."""
    page, _, theme = at_1280
    table = page.locator(".jt-turns-table")
    assert right_edge(table) <= 1280, f"the turn table is {table.bounding_box()['width']:.0f} px wide"
    for header in ("phase", "owner", "age", "calls", "findings"):
        assert right_edge(table.locator("th", has_text=header).first) <= 1280, header
    task = table.locator("tr.jt-turn").first.locator("td").nth(1)
    code = task.locator("code.jt-id")
    assert "…" in code.inner_text() and code.get_attribute("title") == f"{LONG_TASK}-0"
    button = task.locator("button.jt-copy")
    assert button.get_attribute("data-copy") == f"{LONG_TASK}-0"
    page.evaluate(
        "() => { window.__copied = null; navigator.clipboard.writeText = async text => { window.__copied = text; }; }"
    )
    button.click()
    page.wait_for_function("window.__copied !== null", timeout=5_000)
    assert page.evaluate("window.__copied") == f"{LONG_TASK}-0"
    cell = page.locator(".jt-audit-summary .jt-every-finding td code.jt-id").first
    assert cell.get_attribute("title") == "r" * 64
    shot(page, ".jt-turns", "turn-checkpoints", theme)


def test_1280_the_comparison_explanation_stays_in_view(at_1280: tuple[Any, list[str], str]) -> None:
    """4 and 9: a 64-hex run id no longer pushes the explanation off screen; a missing run names its source."""
    page, _, theme = at_1280
    row = page.locator(".jt-comparison tr", has_text="f" * 10).first
    explanation = row.locator(".jt-explanation")
    box = explanation.bounding_box()
    assert box is not None and right_edge(explanation) <= 1280 and box["width"] >= 250, box
    assert row.locator(".jt-flag").inner_text() == "✖ MISSING in jetstream"
    served = page.locator(".jt-comparison tr", has_text=SERVED_RUN[:8]).first.locator("code.jt-id")
    assert served.get_attribute("title") == SERVED_RUN and len(served.inner_text()) <= 28
    shot(page, ".jt-comparison", "listing-comparison-long-ids", theme)


def test_1280_the_header_of_a_run_with_six_process_runs_wraps(at_1280: tuple[Any, list[str], str]) -> None:
    """5 and 6: every process-run chip is visible and on screen, banner, config and counters wrap inside the
    header, and the last process run has no ending recorded (not "running")."""
    page, _, theme = at_1280
    header = page.locator(".jt-six .jt-header")
    right = right_edge(header)
    chips = header.locator(".jt-segment")
    assert chips.count() == 6
    for index in range(6):
        chip = chips.nth(index)
        assert chip.is_visible() and right_edge(chip) <= right + 1, index
    assert "no ending recorded" in chips.nth(5).inner_text() and "running" not in header.inner_text()
    for selector in (".jt-banner", ".jt-config", ".jt-counters"):
        for part in header.locator(selector).all():
            assert part.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), selector
            assert right_edge(part) <= right + 1, selector
    shot(page, ".jt-six", "conversation-six-process-runs", theme)


def test_1280_jumping_to_an_errored_runs_ending_shows_its_call(at_1280: tuple[Any, list[str], str]) -> None:
    """6: the ending of an errored run opens on the call and its error result, not a stub about a call above."""
    page, _, theme = at_1280
    body = page.locator(".jt-errored .jt-scroll")
    assert body.locator(".jt-call").count() >= 1 and body.locator(".jt-call").first.is_visible()
    assert "shown beside its call above" not in body.inner_text().split("ASSISTANT")[0]
    shot(page, ".jt-errored", "conversation-errored-ending", theme)


def test_1280_the_conversation_pager_fits_and_inputs_read_plainly(at_1280: tuple[Any, list[str], str]) -> None:
    """7: the page label is whole, "go" sits beside its seq box, the box reads the seq shown, and a tool input
    written by Go shows "->" and "&", not their escapes."""
    page, _, theme = at_1280
    nav = page.locator(".jt-long .jt-conversation-nav")
    label = nav.locator(".jt-page-label")
    assert label.inner_text().endswith("(page 2 of 8)")
    assert label.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    box, go = nav.locator("input").last.bounding_box(), nav.locator("button", has_text="go").bounding_box()
    assert box is not None and go is not None and abs(box["y"] - go["y"]) < 12  # on one line
    seq = int(nav.locator("input").last.input_value())
    assert seq > 0 and page.locator(f".jt-long .jt-msg[data-seq='{seq}']").count() == 1
    call = page.locator(".jt-six [data-call='c1']")
    assert "1 -> 3" in call.inner_text() and "a & b" in call.inner_text() and "\\u003e" not in call.inner_text()
    shot(page, ".jt-long", "conversation-pager", theme)


def test_1280_all_columns_keeps_the_reason_readable_and_headers_aligned(at_1280: tuple[Any, list[str], str]) -> None:
    """2: with every column shown, "why it stopped" keeps a readable width, and after scrolling sideways each
    header still sits over its column."""
    page, _, theme = at_1280
    reason = page.locator(".jt-browser .jt-tr:visible .jt-col-reason").first
    assert reason.bounding_box()["width"] >= 150
    rows = page.locator(".jt-browser .jt-rows").first
    rows.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_function("el => el.scrollLeft > 0", arg=rows.element_handle(), timeout=5_000)
    headers = page.locator(".jt-browser .jt-thead .jt-th:visible")
    cells = page.locator(".jt-browser .jt-tr:visible").first.locator(".jt-td:visible")
    assert headers.count() == cells.count()
    for index in range(headers.count()):
        head, cell = headers.nth(index).bounding_box(), cells.nth(index).bounding_box()
        assert abs(head["x"] - cell["x"]) < 1.5 and abs(head["width"] - cell["width"]) < 1.5, index
    shot(page, ".jt-browser .jt-rows", "run-browser-all-columns", theme)
    rows.evaluate("el => { el.scrollLeft = 0; }")


def test_1280_the_keyboard_reaches_the_pager_and_escape_closes_the_run(at_1280: tuple[Any, list[str], str]) -> None:
    """8: the pager is the Shift+Tab before the search box (the rows the Tab after it), even with a run open; the
    rows are one stop; focus is outlined; Escape inside the browser presses the opened run's close button (the
    kernel then closes it)."""
    page, _, _ = at_1280
    search = page.locator(".jt-browser .jt-search input").first
    search.focus()
    page.keyboard.press("Shift+Tab")
    # "previous" here: this page is the last, so "next" is disabled and skipped.
    assert page.evaluate("document.activeElement.closest('.jt-browser > .jt-pager') !== null")
    search.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.matches('.jt-tr .jt-col-run')")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('.jt-rows') === null")  # the rows are one stop
    search.focus()
    page.evaluate(
        "() => { window.__closed = false; document.querySelector('.jt-browser .jt-detail .jt-close')"
        ".addEventListener('click', () => { window.__closed = true; }); }"
    )
    page.keyboard.press("Escape")
    assert page.evaluate("window.__closed") is True


def test_1280_audit_words_are_never_broken_mid_word(at_1280: tuple[Any, list[str], str]) -> None:
    """9: the audit's finding text wraps at word ends; a finding without a seq shows a dash, not "seq :"."""
    page, _, theme = at_1280
    table = page.locator(".jt-audit-summary .jt-every-finding")
    message = table.locator("td .jt-pre").first
    assert message.evaluate("el => getComputedStyle(el).overflowWrap") == "break-word"
    assert table.locator("td").nth(1).inner_text().strip() == "—"
    assert "seq :" not in page.locator(".jt-audit-summary").first.inner_text()
    shot(page, ".jt-audit-summary", "audit-summary", theme)


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_enter_opens_a_row_and_escape_closes_it(lab: tuple[Any, list[str]], theme: str) -> None:
    """8, with the kernel: a row's run id takes the focus, Enter opens the run, Escape closes it and the focus
    goes back to that row."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    run = "terminal-budget" if theme == "light" else "terminal-error"
    cell = page.locator(f".jt-browser .jt-tr .jt-col-run[title='{run}']").first
    cell.scroll_into_view_if_needed()
    cell.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(run) => { const bar = document.querySelector('.jt-browser .jt-detail-bar');"
        " return bar && bar.offsetParent && bar.innerText.includes(run); }",
        arg=run,
        timeout=30_000,
    )
    page.keyboard.press("Escape")
    page.wait_for_function(
        "() => { const pane = document.querySelector('.jt-browser .jt-detail'); return pane && !pane.offsetParent; }",
        timeout=30_000,
    )
    page.wait_for_function(
        "(run) => document.activeElement && document.activeElement.title === run", arg=run, timeout=30_000
    )
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus is visible where it landed


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_notebook_01_opens_a_clicked_run_in_place(chromium: Any, lab_server: str, theme: str) -> None:
    """1: the shipped notebook 01, run top to bottom: a row click opens the run in the browser's own pane, in
    view, and no second copy of the conversation elsewhere in the notebook pulls the page away."""
    base, query = lab_server.split("lab/tree/")[0], lab_server.split("?")[1]
    blocked: list[str] = []
    page = guarded_page(chromium, base, blocked, width=1280, height=800)
    try:
        # A workspace of its own, so the other tests' notebook stays as it is.
        page.goto(f"{base}lab/workspaces/notebook-01-{theme}/tree/01-explore.ipynb?{query}")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=120_000)
        set_jupyter_theme(page, theme)
        run_all_cells_once_ready(page)
        page.wait_for_selector(".jt-browser .jt-tr", timeout=120_000)
        page.wait_for_function(  # every cell ran: the last one shows the resumed run's view
            "() => [...document.querySelectorAll('.jp-Cell .jp-InputPrompt')].every(p => !p.innerText.includes('*'))"
            " && document.querySelectorAll('.jt-conversation').length >= 2",
            timeout=120_000,
        )
        # Open a run near the bottom of the table: the pane must come into view, and be the only copy of it.
        page.locator(".jt-browser .jt-tr:visible").last.locator(".jt-col-status").click()
        page.wait_for_function(
            "() => { const h = document.querySelector('.jt-browser .jt-detail .jt-header');"
            " if (!h) return false; const r = h.getBoundingClientRect();"
            " return r.top >= 0 && r.top < window.innerHeight; }",
            timeout=30_000,
        )
        run = page.locator(".jt-browser .jt-detail .jt-header h3 code").first.inner_text()
        copies = page.locator(".jt-conversation .jt-header h3 code", has_text=run)
        assert copies.count() == 1, f"{copies.count()} views of {run} in the notebook"
        assert "below the table" not in page.locator(".jp-Notebook").inner_text()
        assert blocked == [], blocked
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"jupyterlab-notebook-01-{theme}.png"))
    finally:
        page.close()


# -- the prompt column, the whole status word and the keys (1280 px, both themes) ------------------------------


def test_1280_time_travel_keeps_the_status_each_change_led_to(at_1280: tuple[Any, list[str], str]) -> None:
    """Thirteen status changes wrap onto more lines instead of each button being cut to "open → comple…"."""
    page, _, theme = at_1280
    buttons = page.locator(".jt-many-changes .jt-status-changes button")
    assert buttons.count() == 13
    box = page.locator(".jt-many-changes .jt-status-changes").first
    for button in buttons.all():
        assert button.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), button.inner_text()
        assert right_edge(button) <= right_edge(box) + 1
    assert buttons.last.inner_text().strip() == "seq 184: completed → max_iterations"
    shot(page, ".jt-many-changes", "time-travel-many-changes", theme)


def row_of(page: Any, run: str) -> Any:
    """The row of ``run`` (its run id cell's tooltip holds the whole id)."""
    return page.locator(f".jt-browser .jt-tr:has(.jt-col-run[title='{run}'])").first


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_the_prompt_column_is_shown_beside_the_file_browser(
    lab: tuple[Any, list[str]], theme: str
) -> None:
    """At 1280 px with the file browser open, each row shows the start of its prompt (runs made in the same minute
    are told apart by it), whole in its tooltip, and the table still fits without scrolling sideways; a prompt
    that is markup shows as text."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector(".jp-FileBrowser", state="visible", timeout=30_000)
    browser = page.locator(".jt-browser").first
    header = browser.locator(".jt-thead .jt-th.jt-col-prompt")
    header.scroll_into_view_if_needed()
    assert header.is_visible() and header.inner_text().startswith("prompt")
    assert right_edge(header) <= right_edge(browser) + 1
    rows = browser.locator(".jt-rows").first
    assert rows.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # the default columns fit
    prompt = browser_folds()["deferred-waiting"].state.prompt  # type: ignore[union-attr]
    cell = row_of(page, "deferred-waiting").locator(".jt-col-prompt")
    box = cell.bounding_box()
    assert box is not None and box["width"] >= 100 and cell.is_visible()
    assert cell.inner_text().strip()[:20] == " ".join(prompt.split())[:20]
    assert cell.get_attribute("title") == prompt
    hostile = row_of(page, "hostile-prompt").locator(".jt-col-prompt")
    assert hostile.inner_text().strip() == "prompt <script>window.pwned = 1</script>"
    assert page.evaluate("typeof window.pwned") == "undefined"
    shot(page, ".jt-browser .jt-rows", "jupyterlab-prompt-column", theme)


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_a_status_with_a_detail_shows_its_whole_word(lab: tuple[Any, list[str]], theme: str) -> None:
    """A run a new turn follows after its ending says its status, then "next turn in flight" below it: neither is
    cut (it was "open (next t…")."""
    page, _ = lab
    set_jupyter_theme(page, theme)
    for path, status in zip(STALE_TERMINAL_RUNS, ("completed", "open"), strict=True):
        cell = row_of(page, Path(path).stem).locator(".jt-col-status")
        cell.scroll_into_view_if_needed()
        assert cell.is_visible()
        assert [line.strip() for line in cell.inner_text().splitlines()] == [status, "next turn in flight"]
        assert cell.evaluate("el => el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1")
        assert rendered_contrast(cell) >= MIN_CONTRAST
    shot(page, ".jt-browser .jt-rows", "jupyterlab-status-detail", theme)


def test_in_jupyterlab_the_first_row_is_one_tab_from_the_search_and_arrows_move_between_rows(
    lab: tuple[Any, list[str]],
) -> None:
    """Tab from the search box lands on the first row; ArrowDown and ArrowUp move between rows (JupyterLab does not
    take them to move between notebook cells); ArrowUp from the first row reaches the headers, ArrowRight the next
    one; Tab leaves the table."""
    page, _ = lab
    page.locator(".jt-browser .jt-search input").first.focus()
    page.keyboard.press("Tab")
    first, second = browser_runs(page)[:2]
    focused = "() => document.activeElement && document.activeElement.matches('.jt-browser .jt-tr .jt-col-run')"
    title = "() => document.activeElement.title"
    assert page.evaluate(focused) and page.evaluate(title) == first
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) and page.evaluate(title) == second
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("ArrowUp")
    assert page.evaluate(title) == first
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.matches('.jt-browser .jt-thead .jt-th.jt-col-run')")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.matches('.jt-browser .jt-thead .jt-th.jt-col-status')")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) and page.evaluate(title) == first
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('.jt-browser .jt-rows') === null")


def _put_notebook(lab_server: str, name: str, cells: list[str]) -> None:
    """A notebook of ``cells`` written into the lab's root through JupyterLab's own contents API."""
    import urllib.request

    base, query = lab_server.split("lab/tree/")[0], lab_server.split("?")[1]
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    body = json.dumps({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(notebook))})
    request = urllib.request.Request(
        f"{base}api/contents/{name}?{query}",
        data=body.encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status in (200, 201)


@pytest.mark.parametrize("theme", THEMES)
def test_in_jupyterlab_a_followed_run_shows_each_appended_message_and_a_live_badge(
    chromium: Any, lab_server: str, tmp_path: Path, theme: str
) -> None:
    """A conversation view of a run still being written (``follow=`` on by default for an open run): a message the
    project's own writer appends appears in the rendered view, under a "live" badge that says why it stopped once
    the run ends."""
    from journaltools.goencoding.time import now_go_time
    from journaltools.samples.builder import JournalBuilder, text
    from journaltools.samples.stories import sample_fingerprint
    from journaltools.sources.file import FileBackend

    built = JournalBuilder(
        "live-run",
        prompt="follow me in the notebook",
        created="2026-11-29T10:00:00.123456789+01:00",
        fingerprint=sample_fingerprint(),
        clock=now_go_time,
    )
    writer = FileBackend(tmp_path, create=True).create_journal("live-run", built.meta)
    name = f"live-{theme}.ipynb"
    _put_notebook(
        lab_server,
        name,
        [
            f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom journaltools.widgets import ConversationView",
            f"view = ConversationView.from_source({str(tmp_path)!r}, 'live-run')\nview.widget",
        ],
    )
    base, query = lab_server.split("lab/tree/")[0], lab_server.split("?")[1]
    blocked: list[str] = []
    page = guarded_page(chromium, base, blocked, width=1280, height=800)
    try:
        page.goto(f"{base}lab/workspaces/live-{theme}/tree/{name}?{query}")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=120_000)
        set_jupyter_theme(page, theme)
        run_all_cells_once_ready(page)
        badge = page.locator(".jt-conversation .jt-live")
        badge.wait_for(timeout=120_000)
        assert badge.inner_text().strip() == "live"
        writer.append(built.assistant(text("appended while you watched")))
        added = page.locator(".jt-conversation .jt-added .jt-msg", has_text="appended while you watched")
        added.wait_for(timeout=30_000)
        assert added.count() == 1
        ratio = rendered_contrast(badge)
        record_contrast("jupyterlab", theme, "live badge", ratio)
        assert ratio >= MIN_CONTRAST, ratio  # the badge's word is drawn in the theme's colours
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator(".jt-conversation").first.screenshot(path=str(ARTIFACTS / f"jupyterlab-live-{theme}.png"))
        writer.append(built.terminal("completed", "all done"))
        page.locator(".jt-conversation .jt-live-stopped", has_text="the run ended (completed)").wait_for(timeout=30_000)
        assert page.locator(".jt-conversation .jt-live").count() == 0
        assert blocked == [], blocked
    finally:
        writer.close()
        page.close()
