"""Take the README's RunBrowser screenshots: 1280 px wide, JupyterLab's light and dark themes, headless Chromium.

Four scenes over the test corpus (real runtime journals): a run opened, a stuck run (its turn in flight), a
failed run and a long run (jumped into its middle). A fifth, ListingComparison, compares the bundled samples'
file listing with the listing of the same journals migrated to an embedded JetStream server.
Four more, each one view at 1280 px in both themes, show what real data used to break (issue 26): a run with six
process runs, the turn checkpoints of long task ids, a comparison of 64-hex run ids and the browser with all
columns. Each is the widget embedded with the standalone renderer
(``@jupyter-widgets/html-manager``, installed by ``scripts/setup-browser-tests.sh``) on a page that loads
JupyterLab's own theme stylesheet, so the colours are the notebook's. Nothing is fetched from outside.

    .venv/bin/python scripts/take-screenshots.py [OUT_DIR]     # default: docs/
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ipywidgets.embed import embed_snippet

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "runstate" / "file"
DIST = ROOT / "build" / "browser" / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
THEMES_DIR = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"
WIDTH, HEIGHT = 1280, 800
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>RunBrowser ({theme})</title>
<link rel="stylesheet" href="theme-{theme}.css">
<style>body {{ background: var(--jp-layout-color0); color: var(--jp-ui-font-color1); margin: 16px;
  font-family: var(--jp-ui-font-family); }}</style>
</head><body data-jp-theme-light="{light}" data-jp-theme-name="{name}">
{snippet}
</body></html>"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def scenes() -> dict[str, Callable[[], Any]]:
    """Scene name → a function building the RunBrowser for it (each reads the corpus afresh)."""
    from journaltools.widgets import RunBrowser

    lines = (CORPUS.parent / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    by_name = {entry["scenario"]: entry["run_id"] for entry in map(json.loads, filter(None, lines))}

    def opened(name: str, jump: Callable[[Any], None] | None = None) -> Callable[[], Any]:
        def build() -> Any:
            browser = RunBrowser.from_source(str(CORPUS), progress=False, rows_per_page=8)
            browser.select(by_name[name])
            if jump is not None and browser.conversation is not None:
                jump(browser.conversation)
            return browser

        return build

    def middle(view: Any) -> None:
        view.jump_to_seq(view.model.messages[len(view.model.messages) // 2].seq)

    return {
        "opened": opened("completed-parallel-tools"),
        "stuck": opened("deferred-waiting"),
        "failed": opened("terminal-error"),
        "long": opened("long-run", middle),
    }


def comparison() -> Any:
    """The samples' file listing against the same journals migrated to a throwaway embedded JetStream server."""
    from journaltools.ops.migrate import migrate
    from journaltools.sources.registry import open_source
    from journaltools.widgets import ListingComparison, ListingComparisonModel

    with (
        tempfile.TemporaryDirectory() as store,
        open_source(ROOT / "data" / "samples") as files,
        open_source(f"embedded:{store}", create=True) as stream,
    ):
        migrate(files, stream)
        model = ListingComparisonModel.from_listings(files.listing(), stream.listing(), "file", "jetstream")
    return ListingComparison(model)


def views() -> dict[str, tuple[Callable[[], Any], str]]:
    """Name → (a function building the widget, a selector that is on the page once it has rendered)."""
    sys.path.insert(0, str(ROOT))  # the test suite's builders: one source for the data the tests check
    from journaltools.folding import fold
    from journaltools.widgets import ConversationModel, ConversationView, RunBrowser, TurnCheckpoints
    from tests.widget_journals import long_id_turns, six_process_runs

    def six() -> Any:
        return ConversationView(ConversationModel.from_fold(fold(six_process_runs(), strict=False)))

    def all_columns() -> Any:
        browser = RunBrowser.from_source(str(CORPUS), progress=False, rows_per_page=8)
        browser.all_columns.value = True
        return browser

    def long_ids() -> Any:
        from journaltools.widgets import ListingComparison, ListingComparisonModel

        served = "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9"
        rows = [
            {"run": served, "status_a": "completed", "status_b": "open", "verdict": "summary_rule",
             "explanation": "only memory_revisions follows the last terminal: the two-record rule reads it as open"},
            {"run": "f" * 64, "status_a": "completed", "status_b": None, "verdict": "missing_b",
             "explanation": "file lists it (completed) but jetstream has no journal for it."},
        ]  # fmt: skip
        return ListingComparison(ListingComparisonModel.from_rows(rows, "file", "jetstream"))

    return {
        "conversation-six-process-runs": (six, ".jt-segment[data-segment='5']"),
        "turn-checkpoints-long-ids": (lambda: TurnCheckpoints(long_id_turns()), ".jt-turns-table"),
        "listing-comparison-long-ids": (long_ids, ".jt-comparison .jt-table"),
        "run-browser-all-columns": (all_columns, ".jt-browser .jt-tr"),
    }


def main(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    taken: list[Path] = []
    with tempfile.TemporaryDirectory() as scratch:
        site = Path(scratch)
        for item in DIST.iterdir():
            shutil.copy(item, site / item.name)
        for theme in THEMES:
            shutil.copy(THEMES_DIR / f"theme-{theme}-extension" / "index.css", site / f"theme-{theme}.css")
        for name, build in scenes().items():
            browser = build()
            snippet = embed_snippet([browser.widget], requirejs=False, embed_url="embed.js")
            browser.close()
            for theme, label in THEMES.items():
                page = PAGE.format(theme=theme, light=str(theme == "light").lower(), name=label, snippet=snippet)
                (site / f"{name}-{theme}.html").write_text(page, encoding="utf-8")
        for name, (build_view, _) in views().items():
            snippet = embed_snippet([build_view().widget], requirejs=False, embed_url="embed.js")
            for theme, label in THEMES.items():
                page = PAGE.format(theme=theme, light=str(theme == "light").lower(), name=label, snippet=snippet)
                (site / f"{name}-{theme}.html").write_text(page, encoding="utf-8")
        compared = embed_snippet([comparison().widget], requirejs=False, embed_url="embed.js")
        page = PAGE.format(theme="light", light="true", name=THEMES["light"], snippet=compared)
        (site / "comparison-light.html").write_text(page, encoding="utf-8")
        handler = functools.partial(_Quiet, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            with sync_playwright() as playwright:
                chromium = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"]
                )
                page = chromium.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                page.route(
                    "**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort()
                )
                for name in scenes():
                    for theme in THEMES:
                        page.goto(f"{base}{name}-{theme}.html")
                        page.wait_for_selector(".jt-browser .jt-detail .jt-banner", timeout=30_000)
                        page.wait_for_function("document.fonts.status === 'loaded'")
                        path = out / f"run-browser-{name}-{theme}.png"
                        # The opened run with the table under it; the others as a 1280 x 800 window shows them.
                        page.screenshot(path=str(path), full_page=name == "opened")
                        taken.append(path)
                for name, (_, ready) in views().items():
                    for theme in THEMES:
                        page.goto(f"{base}{name}-{theme}.html")
                        page.wait_for_selector(ready, timeout=30_000)
                        page.wait_for_function("document.fonts.status === 'loaded'")
                        path = out / f"{name}-{theme}.png"
                        page.locator(".widget-vbox, .jupyter-widgets").first.screenshot(path=str(path))
                        taken.append(path)
                page.goto(f"{base}comparison-light.html")
                page.wait_for_selector(".jt-comparison .jt-table", timeout=30_000)
                page.wait_for_function("document.fonts.status === 'loaded'")
                path = out / "listing-comparison.png"
                page.screenshot(path=str(path), full_page=True)
                taken.append(path)
                chromium.close()
        finally:
            server.shutdown()
            server.server_close()
    return taken


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
