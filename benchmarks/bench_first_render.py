"""First render of the run browser, through a real browser: from running the notebook cell to the first row on
screen, in JupyterLab with a fresh kernel, for directories of 1,000 and 10,000 generated runs (100,000 with
``--full``: its corpus takes minutes to write and about 600 MB).

The baseline is the same path with the least a widget can be: a cell showing one ``ipywidgets.Label``, in a fresh
kernel of the same server, in the same rounds (interleaved). Each figure is the ratio to it (median of the
per-round ratios, and of the best times), with the seconds beside it because the goal is a time a person waits:
the first rows within 1 s of the cell for 1,000 runs and within 3 s for 100,000.

Needs Debian's Chromium (``scripts/setup-browser-tests.sh``, as ``make test`` runs it), Playwright and JupyterLab
(the test and notebook extras); without them it says so and measures nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.measure import load_average, note

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
BASELINE = "import ipywidgets\nipywidgets.Label('ready')"
#: The README's way (the newest runs first, the rest on a thread), and a whole load before the first row.
BROWSER = "from journaltools.widgets import RunBrowser\nRunBrowser.from_source({source!r})"
WHOLE = (
    "from journaltools.widgets import RunBrowser, load_source\n"
    "model, loader = load_source({source!r}, progress=False)\nRunBrowser(model, loader)"
)
GENERATED = ("--records", "15", "--generation", "newest")
#: What each cell shows once it has rendered.
SHOWN = {"baseline": ".widget-label", "browser": ".jt-browser .jt-tr .jt-col-run"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _corpus(root: Path, runs: int) -> Path:
    """``runs`` generated newest-line runs of about 15 records (kept between benchmark runs under ``root``)."""
    where = root / f"runs-{runs}"
    if not (where / ".complete").exists():
        shutil.rmtree(where, ignore_errors=True)
        note(f"first render: writing {runs:,} runs into {where}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "journaltools.testing.generate",
                str(where),
                "--runs",
                str(runs),
                "--records",
                "15",
                "--generation",
                "newest",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (where / ".complete").touch()
    return where


def _notebook(directory: Path, name: str, source: str) -> str:
    cells = [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}]
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (directory / f"{name}.ipynb").write_text(json.dumps(document), encoding="utf-8")
    return f"{name}.ipynb"


@contextmanager
def _lab(root: Path) -> Iterator[str]:
    """``jupyter lab`` of this interpreter on ``root`` (its own settings and runtime directories); yields the URL
    prefix of a notebook, token included."""
    port, token = _free_port(), secrets.token_hex(16)
    home = Path(tempfile.mkdtemp(prefix="journaltools-lab-home-"))
    env = {**os.environ, "HOME": str(home), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    env["JUPYTERLAB_SETTINGS_DIR"] = str(home / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(home / "workspaces")
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--expose-app-in-browser"]
    command += [f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}"]
    command += [f"--ServerApp.root_dir={root}", "--LabApp.news_url=None"]
    command += ["--allow-root"] if os.geteuid() == 0 else []
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise RuntimeError("jupyter lab exited while starting")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("jupyter lab did not start in 90 s") from None
                time.sleep(0.2)  # the server has no readiness signal but its port
        # ``reset``: each page opens its one notebook, not the workspace the page before left open.
        yield f"http://127.0.0.1:{port}/lab/tree/{{name}}?reset&token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(home, ignore_errors=True)


def _first_render(browser: Any, url: str, shown: str) -> float | None:
    """Seconds from running the notebook's one cell (its kernel fresh, started and idle) to ``shown`` on screen;
    None when the page never showed it (said on stderr, with what the cell's output held instead)."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url)
        page.wait_for_function(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
            " return !!(document.querySelector('.jp-Notebook') && w.context && w.context.isReady && k"
            " && k.connectionStatus === 'connected' && k.status === 'idle'); }",
            timeout=180_000,
        )
        started = time.perf_counter()
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            page.wait_for_selector(shown, state="visible", timeout=60_000)
        except Exception:
            output = page.locator(".jp-OutputArea").first.inner_text()[:300].replace("\n", " ")
            note(f"first render: {shown} never showed; the cell's output: {output}")
            return None
        took = time.perf_counter() - started
        page.evaluate("window.jupyterapp.commands.execute('kernelmenu:shutdown')")
        return took
    finally:
        page.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_first_render", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 runs, two rounds: a smoke test")
    parser.add_argument("--full", action="store_true", help="also 100,000 runs (minutes to write, about 600 MB)")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        note("first render: skipped, Playwright is not installed (the test extra: make setup)")
        return 0
    if not CHROMIUM.exists() or (shutil.which("jupyter-lab") is None and not _has_jupyterlab()):
        note("first render: skipped, it needs /usr/bin/chromium (scripts/setup-browser-tests.sh) and JupyterLab")
        return 0
    sizes = [200] if options.quick else [1_000, 10_000, *([100_000] if options.full else [])]
    rounds = 2 if options.quick else options.rounds
    cache = Path(os.environ.get("JOURNALTOOLS_BENCH_DIR", Path(tempfile.gettempdir()) / "journaltools-bench"))
    sources = {size: _corpus(cache / "first-render", size) for size in sizes}
    note(f"first render: {load_average()}")
    root = Path(tempfile.mkdtemp(prefix="journaltools-first-render-"))
    try:
        names = {"baseline": (_notebook(root, "baseline", BASELINE), SHOWN["baseline"])}
        for size, source in sources.items():
            names[f"{size:,} runs"] = (
                _notebook(root, f"runs-{size}", BROWSER.format(source=str(source))),
                SHOWN["browser"],
            )
            names[f"{size:,} runs, loaded whole"] = (
                _notebook(root, f"whole-{size}", WHOLE.format(source=str(source))),
                SHOWN["browser"],
            )
        times: dict[str, list[float]] = {name: [] for name in names}
        # A render that never came (JupyterLab sometimes draws "model not found" in place of a widget of hundreds of
        # models, whole load or not): counted and said, its round left out of the ratios.
        failed: dict[str, int] = {}
        with _lab(root) as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            try:
                order = list(names)
                for number in range(rounds):
                    for name in order[number % len(order) :] + order[: number % len(order)]:
                        notebook, shown = names[name]
                        # A copy of its own each time: a notebook opened again while its last kernel is still
                        # shutting down can be joined to that session, and show "model not found".
                        fresh = f"{notebook.removesuffix('.ipynb')}-{number}.ipynb"
                        shutil.copyfile(root / notebook, root / fresh)
                        took = _first_render(browser, url.format(name=fresh), shown)
                        if took is None:
                            failed[name] = failed.get(name, 0) + 1
                        times[name].append(took if took is not None else float("nan"))
            finally:
                browser.close()
        label = [took for took in times["baseline"] if not math.isnan(took)]
        for name in names:
            if name == "baseline":
                continue
            pairs = [(a, b) for a, b in zip(times[name], times["baseline"], strict=True) if not math.isnan(a + b)]
            if not pairs or not label:
                print(f"first render, run browser of {name}: no render came in {rounds} rounds")
                continue
            ours = [a for a, _ in pairs]
            missed = f"; {failed[name]} of {rounds} renders never came" if failed.get(name) else ""
            print(
                f"first render, run browser of {name} vs one Label: "
                f"{statistics.median(a / b for a, b in pairs):.2f}x median, {min(ours) / min(label):.2f}x best; "
                f"{statistics.median(ours):.2f} s median, {min(ours):.2f} s best (the Label: {min(label):.2f} s best)"
                f"{missed}"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _has_jupyterlab() -> bool:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
