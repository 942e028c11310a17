"""What the tests that drive a notebook host share: a notebook server started on a free local port with a home of
its own (JupyterLab, Notebook 7, marimo), a page that may reach nothing but that server, running a Jupyter
notebook's cells once its kernel is ready, and switching a Jupyter host's theme.

Every server here runs from this venv on 127.0.0.1, writes only under the test's temporary directories, and is
stopped when the test module is done."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.processes import stop

#: The JupyterLab and Notebook 7 theme of each of the two themes the tests draw in.
JUPYTER_THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

#: A Jupyter server's options every test server takes: no browser, this address only, no news or update checks,
#: and root allowed (CI and these machines run as root).
JUPYTER_OPTIONS = [
    "--no-browser",
    "--expose-app-in-browser",
    "--ServerApp.port_retries=0",
    "--ServerApp.ip=127.0.0.1",
    *(["--allow-root"] if os.geteuid() == 0 else []),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def jupyter_home(home: Path) -> dict[str, str]:
    """The environment of a Jupyter server whose configuration, runtime files, settings and workspaces all live in
    ``home``; JupyterLab's "would you like news?" toast is answered no (it would cover the screenshots)."""
    news = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True, exist_ok=True)
    news.write_text('{"fetchNews": "false"}')
    return {
        **os.environ,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
    }


@contextmanager
def serving(
    command: Sequence[str], port: int, env: dict[str, str], cwd: Path, log: Path, name: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started in ``cwd`` (its output in ``log``), once it accepts connections on ``port``; stopped on
    leaving. The assertion that it did not start holds its log."""
    with log.open("wb") as output:
        server = subprocess.Popen(list(command), env=env, stdout=output, stderr=subprocess.STDOUT, cwd=cwd)
        try:
            deadline = time.monotonic() + 90
            while True:
                assert server.poll() is None, log.read_text()
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    assert time.monotonic() < deadline, f"{name} did not start in 90 s:\n{log.read_text()}"
                    time.sleep(0.2)  # polling the port with a deadline: the servers have no readiness signal
            yield server
        finally:
            stop(server)


def guarded_page(
    browser: Any,
    allowed_prefix: str,
    blocked: list[str],
    width: int = 1400,
    height: int = 1000,
    color_scheme: str | None = None,
) -> Any:
    """A page of ``browser`` whose every request not under ``allowed_prefix`` is blocked and noted in ``blocked``;
    ``color_scheme`` ("light", "dark") is what the page's ``prefers-color-scheme`` says."""
    options: dict[str, Any] = {"viewport": {"width": width, "height": height}}
    if color_scheme is not None:
        options["color_scheme"] = color_scheme
    page = browser.new_page(**options)

    def guard(route: Any) -> None:
        if route.request.url.startswith(allowed_prefix):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    return page


def run_all_cells_once_ready(page: Any) -> None:
    """Run every cell of the notebook in front (JupyterLab or Notebook 7) once its document is loaded and its kernel
    connected and idle: a run asked of a notebook whose kernel is still starting can be dropped, and then no cell
    ever runs."""
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return !!(document.querySelector('.jp-Notebook') && w.context && w.context.isReady && k"
        " && k.connectionStatus === 'connected' && k.status === 'idle'); }",
        timeout=120_000,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def set_jupyter_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab or Notebook 7 to its ``theme`` ("light", "dark") and wait until the page says it is."""
    name = JUPYTER_THEMES[theme]
    page.evaluate(f"window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    page.wait_for_function(
        f"document.body.dataset.jpThemeLight === '{str(theme == 'light').lower()}'"
        f" && document.body.dataset.jpThemeName === '{name}'",
        timeout=30_000,
    )


def opened_run_shows(page: Any, run: str) -> None:
    """Wait until the run browser's pane shows ``run`` opened: its bar on screen and its header, both naming it."""
    page.wait_for_function(
        "(run) => { const bar = document.querySelector('.jt-browser .jt-detail-bar');"
        " const h = document.querySelector('.jt-browser .jt-detail .jt-header h3');"
        " return bar && bar.offsetParent && h && bar.innerText.includes(run) && h.innerText.includes(run); }",
        arg=run,
        timeout=30_000,
    )


#: The element that has the keyboard, looked for through open shadow roots (marimo draws its widgets in them).
FOCUSED_JS = (
    "() => { let a = document.activeElement;"
    " while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; }"
)
