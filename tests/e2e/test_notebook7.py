"""The widgets in Jupyter Notebook 7 (``jupyter notebook`` from this venv, with a kernel), driven in a real headless
Chromium in its light and dark themes: the shipped notebook 01 run top to bottom, a click and the keyboard on its run
browser (the ipywidgets view), and the anywidget view of the same browser (``RunBrowserSurface``, the one marimo
shows) in the same host. Every request the page makes that is not to the server is blocked, and the test says so."""

from __future__ import annotations

import secrets
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from journaltools.samples import SOURCE_VARIABLE
from tests.browser_fixtures import ARTIFACTS, MIN_CONTRAST, rendered_contrast
from tests.notebook_servers import (
    JUPYTER_OPTIONS,
    free_port,
    guarded_page,
    jupyter_home,
    opened_run_shows,
    run_all_cells_once_ready,
    serving,
    set_jupyter_theme,
)
from tests.paths import ROOT, SAMPLES

THEMES = ("light", "dark")
#: A notebook of one cell: the anywidget view of the run browser over the samples.
SURFACE_CELL = (
    "from journaltools.widgets import RunBrowserSurface\n"
    f"RunBrowserSurface.from_source({str(SAMPLES)!r}, rows_per_page=12)"
)


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``jupyter notebook`` on a scratch root holding the shipped notebook 01 (as is) and the surface's notebook;
    its kernels open the samples. The base URL, its query holding the token."""
    root = tmp_path_factory.mktemp("notebook7")
    shutil.copy(ROOT / "notebooks" / "01-explore.ipynb", root / "01-explore.ipynb")
    surface = nbformat.v4.new_notebook()
    surface.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    surface.cells = [nbformat.v4.new_code_cell(SURFACE_CELL)]
    nbformat.write(surface, root / "surface.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path_factory.mktemp("notebook7-home")
    command = [
        sys.executable,
        "-m",
        "notebook",
        *JUPYTER_OPTIONS,
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    environment = {**jupyter_home(home), SOURCE_VARIABLE: str(SAMPLES)}
    with serving(command, port, environment, root, home / "notebook.log", "jupyter notebook"):
        yield f"http://127.0.0.1:{port}/?token={token}"


def opened(base: str, name: str) -> str:
    address, query = base.split("?")
    return f"{address}notebooks/{name}?{query}"


@pytest.fixture(scope="module")
def explore(chromium: Any, notebook_server: str) -> Iterator[tuple[Any, list[str]]]:
    """Notebook 01 open in Notebook 7, every cell run: its browser drawn, the last cell's conversation too."""
    blocked: list[str] = []
    page = guarded_page(chromium, notebook_server.split("?")[0], blocked, width=1280, height=800)
    try:
        page.goto(opened(notebook_server, "01-explore.ipynb"))
        page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=120_000)
        run_all_cells_once_ready(page)
        page.wait_for_selector(".jt-browser .jt-tr", timeout=120_000)
        page.wait_for_function(  # every cell ran: no prompt still says [*], and the last cells' views are drawn
            "() => [...document.querySelectorAll('.jp-Cell .jp-InputPrompt')].every(p => !p.innerText.includes('*'))"
            " && document.querySelectorAll('.jt-conversation').length >= 2",
            timeout=120_000,
        )
        yield page, blocked
    finally:
        page.close()


@pytest.mark.parametrize("theme", THEMES)
def test_in_notebook_7_notebook_01_runs_and_a_clicked_row_opens_its_run(
    explore: tuple[Any, list[str]], theme: str
) -> None:
    page, blocked = explore
    set_jupyter_theme(page, theme)
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count() == 0
    row = page.locator(".jt-browser .jt-tr:visible").nth(2 if theme == "light" else 5)
    run = row.locator(".jt-col-run").get_attribute("title")
    row.locator(".jt-col-status").click()
    opened_run_shows(page, run)
    assert page.locator(".jt-browser .jt-tr.jt-selected .jt-col-run").get_attribute("title") == run
    for selector in (".jt-browser .jt-td.jt-col-reason", ".jt-browser .jt-th", ".jt-browser .jt-detail .jt-header h3"):
        ratio = rendered_contrast(page.locator(selector).first)
        assert ratio >= MIN_CONTRAST, f"{selector} has contrast {ratio:.2f}:1 in Notebook 7's {theme} theme"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"notebook7-browser-{theme}.png"))
    assert blocked == [], blocked


@pytest.mark.parametrize("theme", THEMES)
def test_in_notebook_7_enter_opens_a_row_and_escape_closes_it(explore: tuple[Any, list[str]], theme: str) -> None:
    page, _ = explore
    set_jupyter_theme(page, theme)
    cell = page.locator(".jt-browser .jt-tr:visible .jt-col-run").nth(1 if theme == "light" else 3)
    run = cell.get_attribute("title")
    cell.scroll_into_view_if_needed()
    cell.focus()
    page.keyboard.press("Enter")
    opened_run_shows(page, run)
    page.keyboard.press("Escape")
    page.wait_for_function(
        "() => { const pane = document.querySelector('.jt-browser .jt-detail'); return pane && !pane.offsetParent; }",
        timeout=30_000,
    )
    page.wait_for_function(
        "(run) => document.activeElement && document.activeElement.title === run", arg=run, timeout=30_000
    )
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"


def test_in_notebook_7_the_anywidget_browser_opens_a_clicked_row(chromium: Any, notebook_server: str) -> None:
    """The run browser marimo shows, in a Jupyter host through the same anywidget protocol: drawn, a click opens
    the run, Escape closes it."""
    blocked: list[str] = []
    page = guarded_page(chromium, notebook_server.split("?")[0], blocked, width=1280, height=800)
    try:
        page.goto(opened(notebook_server, "surface.ipynb"))
        page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=120_000)
        set_jupyter_theme(page, "dark")
        run_all_cells_once_ready(page)
        rows = page.locator(".jt-surface .jt-browser .jt-tr")
        rows.first.wait_for(timeout=120_000)
        assert rows.count() == 12
        run = rows.nth(3).locator(".jt-col-run").get_attribute("data-jt-arg")
        rows.nth(3).locator(".jt-col-status").click()
        page.locator(".jt-surface .jt-detail .jt-header h3 code", has_text=run).wait_for(timeout=30_000)
        ratio = rendered_contrast(page.locator(".jt-surface .jt-td.jt-col-reason").first)
        assert ratio >= MIN_CONTRAST, f"the anywidget browser's cells have contrast {ratio:.2f}:1 in the dark theme"
        page.keyboard.press("Escape")
        page.locator(".jt-surface .jt-detail").wait_for(state="detached", timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook7-anywidget-browser-dark.png"))
        assert blocked == [], blocked
    finally:
        page.close()
