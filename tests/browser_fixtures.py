"""What the browser tests share: one Chromium for the whole session (tests/e2e/conftest.py offers it) and how
they measure the contrast of text as the browser painted it.

One Chromium, shared by every browser test file.

Playwright's sync API runs its own event loop in the calling thread: a second ``sync_playwright()`` started while
another file's is still open finds that loop running and refuses ("Sync API inside the asyncio loop"). So the
browser is started once here, not per file."""

from __future__ import annotations

import re
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


#: WCAG AA for body text.
MIN_CONTRAST = 4.5

# -- colours, as the browser computed them ---------------------------------------------------------------

_RGB = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)")
_SRGB = re.compile(r"color\(srgb\s+([\d.e-]+)\s+([\d.e-]+)\s+([\d.e-]+)(?:\s*/\s*([\d.]+%?))?\s*\)")


def parse_colour(text: str) -> tuple[float, float, float, float]:
    """A computed CSS colour (``rgb()``, ``rgba()`` or ``color(srgb ...)``) as 0-255 channels and alpha."""
    if text in ("transparent", ""):
        return (0.0, 0.0, 0.0, 0.0)

    def alpha(value: str | None) -> float:
        if value is None:
            return 1.0
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)

    if match := _RGB.fullmatch(text.strip()):
        r, g, b, a = match.groups()
        return (float(r), float(g), float(b), alpha(a))
    if match := _SRGB.fullmatch(text.strip()):
        r, g, b, a = match.groups()
        return (float(r) * 255, float(g) * 255, float(b) * 255, alpha(a))
    raise AssertionError(f"cannot read the colour {text!r}")


def over(top: tuple[float, float, float, float], below: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b, a = top
    return (r * a + below[0] * (1 - a), g * a + below[1] * (1 - a), b * a + below[2] * (1 - a))


def luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


#: The element's text colour and the background colours from it up to the root, as the browser computed them.
_COLOURS_JS = """el => {
  const chain = [];
  for (let node = el; node; node = node.parentElement) chain.push(getComputedStyle(node).backgroundColor);
  return {color: getComputedStyle(el).color, backgrounds: chain};
}"""


def rendered_contrast(locator: Any) -> float:
    """The contrast ratio of the element's text against what is really behind it (alpha layers composited)."""
    found = locator.evaluate(_COLOURS_JS)
    behind: tuple[float, float, float] = (255.0, 255.0, 255.0)  # a page with no background paints white
    for layer in reversed(found["backgrounds"]):
        behind = over(parse_colour(layer), behind)
    text = over(parse_colour(found["color"]), behind)
    return contrast(text, behind)
