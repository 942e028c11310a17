"""Safe HTML pieces for the widgets. Journal content is untrusted: every value goes through ``esc``.

Nothing here builds markup from unescaped journal text. Long values are cut on screen and the whole value
stays reachable in a ``<details>`` element (escaped too), so nothing is hidden and nothing is executed.
"""

from __future__ import annotations

import html
import json
from typing import Any

#: Characters of a value shown before it is cut (the whole value stays one click away).
DEFAULT_LIMIT = 400

#: Status → (background colour, text colour). The status word is always printed too: never colour alone.
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "completed": ("#d1f2d9", "#14532d"),
    "open": ("#dbeafe", "#1e3a8a"),
    "suspended": ("#fef3c7", "#78350f"),
    "cancelled": ("#e5e7eb", "#374151"),
    "failed": ("#fee2e2", "#7f1d1d"),
    "invalid": ("#fecaca", "#7f1d1d"),
}

SEVERITY_COLOURS: dict[str, str] = {"error": "#b91c1c", "warning": "#b45309", "info": "#1d4ed8"}


def esc(value: object) -> str:
    """``value`` as HTML text: ``<script>`` becomes ``&lt;script&gt;``, quotes are escaped for attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def as_text(value: Any) -> str:
    """A readable text for any journal value: strings as they are, everything else as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def truncate(text: str, limit: int = DEFAULT_LIMIT) -> tuple[str, bool]:
    """The first ``limit`` characters of ``text`` and whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def long_text(text: str, limit: int = DEFAULT_LIMIT, css_class: str = "jt-pre") -> str:
    """Escaped ``text`` in a ``<pre>``; when longer than ``limit``, cut with a "show all" ``<details>``."""
    shown, cut = truncate(text, limit)
    if not cut:
        return f'<pre class="{css_class}">{esc(text)}</pre>'
    return (
        f'<pre class="{css_class} jt-cut">{esc(shown)}…</pre>'
        f'<details class="jt-more"><summary>show all ({len(text):,} characters)</summary>'
        f'<pre class="{css_class}">{esc(text)}</pre></details>'
    )


def status_badge(status: str) -> str:
    """A status as colour AND word (readable without colour)."""
    background, foreground = STATUS_COLOURS.get(status, ("#f3f4f6", "#111827"))
    return (
        f'<span class="jt-status jt-status-{esc(status)}" '
        f'style="background:{background};color:{foreground};padding:1px 6px;border-radius:8px;'
        f'font-weight:600">{esc(status)}</span>'
    )


def severity_badge(severity: str) -> str:
    colour = SEVERITY_COLOURS.get(severity, "#111827")
    return (
        f'<span class="jt-severity jt-severity-{esc(severity)}" style="color:{colour};font-weight:600">'
        f"{esc(severity)}</span>"
    )


#: Shared styles, included once per widget's HTML (widgets may be displayed alone).
STYLE = """<style>
.jt-table { border-collapse: collapse; font-size: 12px; font-family: sans-serif; }
.jt-table th, .jt-table td { border-bottom: 1px solid #e5e7eb; padding: 3px 8px; text-align: left;
    vertical-align: top; }
.jt-table th { background: #f9fafb; }
.jt-table td code { white-space: nowrap; }
.jt-pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0; font-size: 12px; max-width: 60em; }
.jt-msg { border-left: 4px solid #9ca3af; margin: 6px 0; padding: 2px 8px; font-family: sans-serif; font-size: 13px; }
.jt-msg-user { border-color: #2563eb; background: #f8fafc; }
.jt-msg-assistant { border-color: #16a34a; }
.jt-role { font-weight: 700; font-size: 11px; text-transform: uppercase; color: #4b5563; }
.jt-call { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; border: 1px solid #d1d5db; border-radius: 4px;
           padding: 4px; margin: 4px 0; }
.jt-call-error { border-color: #dc2626; }
.jt-call-pending { border-color: #d97706; border-style: dashed; }
.jt-call h4 { margin: 0; font-size: 11px; color: #4b5563; }
.jt-timeline { position: relative; height: 18px; background: #f3f4f6; border-radius: 4px; margin: 4px 0; }
.jt-marker { position: absolute; top: 0; width: 3px; height: 18px; background: #7c3aed; }
.jt-verdict-agree td { color: #374151; }
.jt-verdict-documented td { background: #fffbeb; }
.jt-verdict-discrepancy td, .jt-verdict-missing_a td, .jt-verdict-missing_b td {
    background: #fee2e2; font-weight: 700; }
.jt-verdict-discrepancy td:first-child, .jt-verdict-missing_a td:first-child, .jt-verdict-missing_b td:first-child {
    border-left: 6px solid #b91c1c; }
.jt-verdict-documented td:first-child { border-left: 4px solid #f59e0b; }
.jt-flag { font-weight: 700; padding: 1px 6px; border-radius: 8px; white-space: nowrap; }
.jt-flag-agree { color: #166534; }
.jt-flag-documented { background: #fef3c7; color: #92400e; }
.jt-flag-discrepancy, .jt-flag-missing_a, .jt-flag-missing_b { background: #b91c1c; color: #ffffff; }
</style>"""
