"""What the report's tests share: the corpus folders, a report's sections, and the self-contained check."""

from __future__ import annotations

import json
import re
from pathlib import Path

from journaltools.exports.report_page import REPORT_SCRIPT
from tests.paths import ROOT

RUNSTATE = ROOT / "tests" / "corpus" / "runstate"
AUGUST_FILES = RUNSTATE / "file"
NEWEST_FILES = RUNSTATE / "newest" / "file"

#: The sections every report holds, by their ids, in order.
SECTIONS = ("summary", "waiting", "timeline", "segments", "findings", "conversation")


def scenarios(folder: Path) -> dict[str, str]:
    """Scenario name → run id of one corpus' scenarios.jsonl."""
    lines = (folder.parent / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    return {entry["scenario"]: entry["run_id"] for entry in map(json.loads, filter(None, lines))}


def sections_of(html: str) -> list[str]:
    return re.findall(r'<section id="(\w+)">', html)


def section(html: str, name: str) -> str:
    """The HTML of one section."""
    start = html.index(f'<section id="{name}">')
    return html[start : html.index("</section>", start)]


def conversation_token(path: Path) -> str:
    first = json.loads(path.read_bytes().split(b"\n", 1)[0])
    return str(first["meta"].get("conversation_token") or "")


def assert_self_contained(html: str) -> None:
    """Nothing that a browser would fetch: no external script, stylesheet, font, image or frame."""
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert not re.search(r"<(script|img|iframe|embed|object|audio|video|source)\b[^>]*\bsrc=", html)
    assert html.count("<script") == 1 and f"<script>{REPORT_SCRIPT}</script>" in html


def write_journal(folder: Path, run: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run}.json").write_bytes(data)
    return folder
