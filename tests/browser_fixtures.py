"""One Chromium for the whole session, shared by every browser test file (tests/e2e/conftest.py offers it).

Playwright's sync API runs its own event loop in the calling thread: a second ``sync_playwright()`` started while
another file's is still open finds that loop running and refuses ("Sync API inside the asyncio loop"). So the
browser is started once here, not per file."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
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


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (never a browser Playwright downloads), installed by the set-up
    script when missing."""
    if not CHROMIUM.exists():
        subprocess.run(["sh", str(ROOT / "scripts" / "setup-browser-tests.sh")], check=True, timeout=900)
    assert CHROMIUM.exists(), "Debian's chromium is required at /usr/bin/chromium"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
