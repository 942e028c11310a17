"""Safe HTML pieces for the widgets, styled by JupyterLab's theme. Journal content is untrusted.

Every value goes through ``esc`` (or the Markdown renderer, which escapes too), so nothing from a journal
becomes markup. Long values are clamped in place: the text is in the page once, a "show all" toggle lifts
the clamp (CSS only). The one handler on the page is the copy button of a shortened id (``id_html``): fixed
code that copies its own data attribute, so journal text is only ever data there too.

The page never carries a whole value of any size: at most ``SENT_CHARS`` characters of each value are sent
(a 10 MB tool result would otherwise be 10 MB of HTML in the notebook and in the saved file). A ``Values``
registry keeps what was cut, so a view can show the rest on demand, a chunk at a time. Markdown is rendered
against a ``RenderBudget``: once a page has spent its time, the values left are shown as plain text.

Colours and fonts come from JupyterLab's theme variables (``--jp-ui-font-color1``, ``--jp-layout-color2``,
``--jp-error-color1``, ...), so the widgets follow the light and dark themes; outside JupyterLab, VS Code's
variables or light defaults stand in. A status is always printed as a word, never shown by colour alone.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from journaltools._base.readable import SHOWN_CHARS, shorten_middle
from journaltools._base.text import for_page
from journaltools.exports.markdown import render_markdown

#: About how many characters of a value are shown before it is clamped (the whole value is one click away).
DEFAULT_LIMIT = 400

#: At most this many characters of one value are sent to the page, as every face shows at most; the rest stays in
#: Python until asked for.
SENT_CHARS: Final = SHOWN_CHARS

#: The Markdown time one page may spend (seconds); later values on that page are shown as plain text. One
#: value is at most ``SENT_CHARS`` characters, which markdown-it renders in well under half a second even
#: when built to be slow (20,000 ``![``), so a page stays within about this budget plus one value.
MARKDOWN_SECONDS = 1.0

#: Characters per rendered line, for the estimate of how tall a value will be (prose at the widgets' width).
_CHARS_PER_LINE = 90

#: Severity → its hue (the chart's bars; the text of a severity is always printed too).
SEVERITY_COLOURS: dict[str, str] = {"error": "#d32f2f", "warning": "#f57c00", "info": "#1976d2"}

#: Status (PROTOCOL 5: ``open``, a terminal reason, ``invalid``) and segment ending (``crashed``, ``running``)
#: → the tone of its badge, banner and chip. A reason the runtime does not write falls back to ``muted``.
STATUS_TONES: dict[str, str] = {
    "completed": "ok",
    "open": "info",
    "running": "info",
    "suspended": "warn",
    "budget": "warn",
    "max_iterations": "warn",
    "error": "error",
    "crashed": "error",
    "invalid": "error",
}

Tone = Literal["ok", "info", "warn", "error", "muted"]


def esc(value: object) -> str:
    """``value`` as HTML text: ``<script>`` becomes ``&lt;script&gt;``, quotes are escaped for attributes, and
    control characters are shown escaped as the terminal views show them (``\\x1b``; newlines and tabs stay)."""
    return html.escape(for_page("" if value is None else str(value)), quote=True)


#: The roles a message's ``role`` class may name (the stylesheet's ``jt-msg-*``); any other role is ``unknown``.
MESSAGE_ROLES: frozenset[str] = frozenset({"user", "assistant"})


def status_class(status: str) -> str:
    """``status`` as it may appear in a class name: a status or ending the stylesheet knows (``STATUS_TONES``),
    else ``unknown``. A journal writes its terminal reason itself: as a class, ``error lm-mod-hidden`` would be
    three classes, one of which hides the badge."""
    return status if status in STATUS_TONES else "unknown"


def role_class(role: str) -> str:
    """A message's role as it may appear in a class name (``MESSAGE_ROLES``), else ``unknown``."""
    return role if role in MESSAGE_ROLES else "unknown"


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


def estimated_lines(text: str, chars_per_line: int = _CHARS_PER_LINE) -> int:
    """About how many lines ``text`` takes when wrapped at ``chars_per_line`` (each source line at least one)."""
    return sum(max(1, -(-len(line) // chars_per_line)) for line in text.split("\n"))


def clamp_lines(limit: int) -> int:
    """The lines shown before a value is clamped, for a limit in characters (at least three)."""
    return max(3, limit // 60)


def expandable(inner_html: str, text: str, limit: int = DEFAULT_LIMIT, lines: int | None = None) -> str:
    """``inner_html`` (already safe) clamped to a few lines when ``text`` is long, with an in-place "show all".

    The content appears once: opening the toggle removes the clamp from the same element. Browsers without
    ``:has()`` show the whole value unclamped (the clamp rules sit behind ``@supports``).
    """
    lines = lines if lines is not None else clamp_lines(limit)
    if estimated_lines(text) <= lines:
        return inner_html
    return (
        f'<div class="jt-expand" style="--jt-lines:{lines}"><div class="jt-clamp">{inner_html}</div>'
        f'<details class="jt-toggle"><summary><span class="jt-when-closed">show all ({len(text):,} characters)'
        '</span><span class="jt-when-open">show less</span></summary></details></div>'
    )


@dataclass(slots=True)
class Values:
    """Values cut to ``SENT_CHARS`` on a page, by key, so a view can send the rest when the reader asks.
    ``labels`` says what each is (``seq 12 · result of tu_1``) for the view's chooser."""

    texts: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def add(self, label: str, text: str) -> str:
        key = f"v{len(self.texts) + 1}"
        self.texts[key] = text
        self.labels[key] = label
        return key

    def chunk(self, key: str, start: int, size: int = 200_000) -> str:
        """``size`` characters of the value from ``start`` (empty past its end or for an unknown key)."""
        return self.texts.get(key, "")[start : start + size]


@dataclass(slots=True)
class RenderBudget:
    """How much Markdown time a page has left (``seconds`` in all); ``spent()`` once it is gone."""

    seconds: float = MARKDOWN_SECONDS
    used: float = 0.0
    skipped: int = 0

    def spent(self) -> bool:
        return self.used >= self.seconds

    def render(self, text: str) -> str | None:
        """``text`` as safe HTML, or None when the page's time is spent (the caller shows plain text)."""
        if self.spent():
            self.skipped += 1
            return None
        started = time.perf_counter()
        try:
            return render_markdown(text)
        finally:
            self.used += time.perf_counter() - started


def sent_part(text: str, values: Values | None = None, label: str = "") -> tuple[str, str]:
    """What of ``text`` goes to the page (at most ``SENT_CHARS`` characters) and, when it was cut, a note
    (safe HTML) saying how much was held back and how to see it."""
    if len(text) <= SENT_CHARS:
        return text, ""
    rest = len(text) - SENT_CHARS
    if values is not None:
        key = values.add(label or "a value", text)
        how = f"choose <b>{esc(values.labels[key])}</b> under <i>the rest of a value</i> to read it"
        marker = f' data-value="{esc(key)}"'
    else:
        how, marker = "it was not sent to the page", ""
    note = (
        f'<div class="jt-cut jt-muted"{marker}>… {rest:,} more characters (of {len(text):,}) not sent to the page; '
        f"{how}</div>"
    )
    return text[:SENT_CHARS], note


def long_text(
    text: str,
    limit: int = DEFAULT_LIMIT,
    css_class: str = "jt-pre",
    values: Values | None = None,
    label: str = "",
) -> str:
    """Escaped ``text`` in a monospace ``<pre>`` (code, JSON, tool output), clamped in place when long; at
    most ``SENT_CHARS`` of it is sent (``values`` keeps the rest for the view)."""
    shown, note = sent_part(text, values, label)
    return expandable(f'<pre class="{esc(css_class)}">{esc(shown)}</pre>', shown, limit) + note


def markdown_text(
    text: str,
    limit: int = DEFAULT_LIMIT,
    values: Values | None = None,
    label: str = "",
    budget: RenderBudget | None = None,
) -> str:
    """``text`` rendered as Markdown in the proportional content font (safely: see ``markdown``), clamped
    in place when long (prose gets twice the lines of a code value). Code blocks and inline code stay
    monospace. At most ``SENT_CHARS`` is rendered; once ``budget`` is spent the text is shown plain."""
    shown, note = sent_part(text, values, label)
    rendered = (budget or RenderBudget()).render(for_page(shown))
    if rendered is None:
        plain = '<div class="jt-muted jt-plain-note">shown as plain text: this page spent its Markdown time</div>'
        return plain + expandable(f'<pre class="jt-pre">{esc(shown)}</pre>', shown, limit) + note
    return expandable(f'<div class="jt-md">{rendered}</div>', shown, limit, 2 * clamp_lines(limit)) + note


#: Ids longer than this are shortened in their middle in tables (the whole id in the tooltip and the copy button).
ID_SHOWN = 28

#: The copy button's one fixed handler: it copies the button's own ``data-copy`` attribute (escaped journal text,
#: read as data, never as code). Where a page runs no handlers, the whole id is still in the tooltip.
_COPY_HANDLER = "navigator.clipboard &amp;&amp; navigator.clipboard.writeText(this.dataset.copy)"


def id_html(value: str | None, limit: int = ID_SHOWN, *, copy: bool = True) -> str:
    """An id as a table shows it: whole when short; else both ends around ``…`` (ids share prefixes and differ
    at the end), the whole id in the tooltip, and a copy button for it. ``—`` for None."""
    if value is None or value == "":
        return "—"
    shown = shorten_middle(value, limit)
    if shown == value:
        return f'<code class="jt-id">{esc(value)}</code>'
    button = (
        f'<button type="button" class="jt-copy" title="copy the whole id" aria-label="copy {esc(value)}" '
        f'data-copy="{esc(value)}" onclick="{_COPY_HANDLER}">copy</button>'
        if copy
        else ""
    )
    return f'<span class="jt-id-cell"><code class="jt-id" title="{esc(value)}">{esc(shown)}</code>{button}</span>'


def status_badge(status: str) -> str:
    """A status as a word in a tinted badge (readable without colour, in either theme)."""
    tone = STATUS_TONES.get(status, "muted")
    return f'<span class="jt-status jt-status-{status_class(status)} jt-tone-{tone}">{esc(status)}</span>'


def severity_badge(severity: str) -> str:
    """A finding's severity as a word, coloured by the theme's error, warning or info colour."""
    return f'<span class="jt-severity jt-severity-{esc(severity)}">{esc(severity)}</span>'


@dataclass(frozen=True, slots=True)
class Banner:
    """A one-line verdict at the top of a view: why a run ended, or what it waits for."""

    tone: Tone
    title: str
    detail: str
    note: str = ""

    @property
    def text(self) -> str:
        return " — ".join(part for part in (self.title, self.detail, self.note) if part)

    def to_html(self) -> str:
        note = f'<div class="jt-banner-note">{esc(self.note)}</div>' if self.note else ""
        return (
            f'<div class="jt-banner jt-tone-{self.tone}" role="status"><span class="jt-banner-title">'
            f'{esc(self.title)}</span> <span class="jt-banner-detail">{esc(self.detail)}</span>{note}</div>'
        )


#: Shared styles, included once per widget's HTML (widgets may be displayed alone). Every colour is a theme
#: variable with a fallback; ``color-mix`` tints follow the theme and have a plain rgba line before them.
STYLE = """<style>
:root, .jt {
  --jt-fg: var(--jp-ui-font-color1, var(--vscode-foreground, rgba(0, 0, 0, 0.87)));
  --jt-fg-muted: var(--jp-ui-font-color2, var(--vscode-descriptionForeground, rgba(0, 0, 0, 0.6)));
  --jt-content-fg: var(--jp-content-font-color1, var(--vscode-editor-foreground, rgba(0, 0, 0, 0.87)));
  --jt-surface: var(--jp-layout-color1, var(--vscode-editor-background, #ffffff));
  --jt-surface-2: var(--jp-layout-color2, var(--vscode-editorWidget-background, #eeeeee));
  --jt-border: var(--jp-border-color2, var(--vscode-panel-border, #e0e0e0));
  --jt-border-strong: var(--jp-border-color1, #bdbdbd);
  --jt-link: var(--jp-content-link-color, var(--vscode-textLink-foreground, #0d47a1));
  --jt-brand: var(--jp-brand-color1, #2196f3);
  --jt-ok: var(--jp-success-color1, #4caf50);
  --jt-info: var(--jp-brand-color1, #2196f3);
  --jt-warn: var(--jp-warn-color1, #ff9800);
  --jt-error: var(--jp-error-color1, #f44336);
  --jt-error-strong: var(--jp-error-color0, #d32f2f);
  --jt-muted: var(--jp-border-color1, #9e9e9e);
  --jt-font: var(--jp-content-font-family, system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif);
  --jt-ui-font: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif);
  --jt-mono: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace);
  --jt-size: var(--jp-content-font-size1, 14px);
  --jt-code-size: var(--jp-code-font-size, 13px);
}
.jt { color: var(--jt-fg); font-family: var(--jt-ui-font); font-size: var(--jp-ui-font-size1, 13px);
      line-height: 1.5; }
.jt code, .jt pre, .jt kbd { font-family: var(--jt-mono); font-size: var(--jt-code-size); }
.jt-muted { color: var(--jt-fg-muted); }
.jt-table { border-collapse: collapse; font-size: 12px; }
.jt-table th, .jt-table td { border-bottom: 1px solid var(--jt-border); padding: 3px 8px; text-align: left;
    vertical-align: top; color: var(--jt-fg); }
.jt-table th { background: var(--jt-surface-2); font-weight: 600; }
.jt-table td code { white-space: nowrap; }
/* In a table, long text wraps at word ends and breaks a word only when it alone is wider than its column
   ("anywhere" would make every column's narrowest width one letter, and the table split words mid-word). */
.jt-table .jt-pre, .jt-table .jt-md, .jt-table td { overflow-wrap: break-word; }
.jt-pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0; max-width: 60em; line-height: 1.5;
          color: var(--jt-content-fg); background: transparent; }
.jt-md { font-family: var(--jt-font); font-size: var(--jt-size); color: var(--jt-content-fg); max-width: 48em;
         overflow-wrap: break-word; line-height: 1.5; }
.jt-md p, .jt-md ul, .jt-md ol, .jt-md blockquote, .jt-md table { margin: 0.35em 0; }
.jt-md h1, .jt-md h2, .jt-md h3, .jt-md h4, .jt-md h5, .jt-md h6 { font-size: 1.05em; margin: 0.5em 0 0.25em; }
.jt-md ul, .jt-md ol { padding-left: 1.6em; }
.jt-md a { color: var(--jt-link); }
.jt-md code { background: var(--jt-surface-2); padding: 0 0.25em; border-radius: 3px; }
.jt-md pre { background: var(--jt-surface-2); padding: 6px 8px; border-radius: 4px; white-space: pre-wrap;
             overflow-wrap: anywhere; }
.jt-md pre code { background: transparent; padding: 0; }
.jt-md blockquote { border-left: 3px solid var(--jt-border-strong); padding-left: 0.8em; color: var(--jt-fg-muted); }
.jt-md table { border-collapse: collapse; }
.jt-md th, .jt-md td { border: 1px solid var(--jt-border); padding: 2px 6px; }
.jt-expand > details > summary { cursor: pointer; color: var(--jt-link); font-size: 12px; list-style: none;
                                 width: max-content; }
.jt-expand > details > summary::-webkit-details-marker { display: none; }
.jt-expand > details[open] .jt-when-closed, .jt-expand > details:not([open]) .jt-when-open { display: none; }
@supports selector(:has(*)) {
  .jt-expand > .jt-clamp { max-height: calc(var(--jt-lines, 6) * 1.5em + 4px); overflow: hidden;
      -webkit-mask-image: linear-gradient(to bottom, #000 55%, transparent);
      mask-image: linear-gradient(to bottom, #000 55%, transparent); }
  .jt-expand:has(> details[open]) > .jt-clamp { max-height: none; -webkit-mask-image: none; mask-image: none; }
}
.jt-status { display: inline-block; padding: 0 7px; border-radius: 9px; font-weight: 600; font-size: 12px;
             line-height: 18px; color: var(--jt-fg); border: 1px solid var(--jt-tone); white-space: nowrap;
             background: var(--jt-tint-fallback);
             background: color-mix(in srgb, var(--jt-tone) 22%, transparent); }
.jt-tone-ok { --jt-tone: var(--jt-ok); --jt-tint-fallback: rgba(76, 175, 80, 0.22); }
.jt-tone-info { --jt-tone: var(--jt-info); --jt-tint-fallback: rgba(33, 150, 243, 0.2); }
.jt-tone-warn { --jt-tone: var(--jt-warn); --jt-tint-fallback: rgba(255, 152, 0, 0.22); }
.jt-tone-error { --jt-tone: var(--jt-error); --jt-tint-fallback: rgba(244, 67, 54, 0.2); }
.jt-tone-muted { --jt-tone: var(--jt-muted); --jt-tint-fallback: rgba(158, 158, 158, 0.22); }
.jt-severity { font-weight: 600; color: var(--jt-fg); border-bottom: 2px solid var(--jt-sev); }
.jt-severity-error { --jt-sev: var(--jt-error); }
.jt-severity-warning { --jt-sev: var(--jt-warn); }
.jt-severity-info { --jt-sev: var(--jt-info); }
.jt-banner { margin: 4px 0 8px; padding: 6px 10px; border-radius: 4px; border-left: 5px solid var(--jt-tone);
             color: var(--jt-fg); background: var(--jt-tint-fallback);
             background: color-mix(in srgb, var(--jt-tone) 14%, transparent); font-size: 13px; }
.jt-banner-title { font-weight: 700; }
.jt-banner-note { color: var(--jt-fg); font-size: 12px; margin-top: 2px; }
.jt-header { color: var(--jt-fg); }
.jt-header h3 { margin: 2px 0; font-size: 15px; color: var(--jt-fg); }
.jt-counters { color: var(--jt-fg); font-size: 12px; white-space: normal; overflow-wrap: anywhere; }
.jt-header { min-width: 0; max-width: 100%; overflow-wrap: anywhere; }
.jt-header h3 code { overflow-wrap: anywhere; }
.jt-banner-detail { overflow-wrap: anywhere; }
.jt-header { white-space: normal; }
.jt-header h3 { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; }
.jt-conversation-nav { flex-wrap: wrap; align-items: center; gap: 6px; overflow: visible; }
.jt-conversation-nav .jupyter-button { width: auto; }
.jt-conversation-nav .jt-page-label, .jt-conversation-nav .widget-label { width: auto; min-width: max-content;
    flex: 0 0 auto; overflow: visible; }
.jt-seq-group { flex: 0 0 auto; flex-wrap: nowrap; align-items: center; overflow: visible; }
.jt-id-cell { display: inline-flex; align-items: center; gap: 4px; white-space: nowrap; }
.jt-copy { font-size: 10px; line-height: 14px; padding: 0 4px; border: 1px solid var(--jt-border-strong);
           border-radius: 3px; background: var(--jt-surface-2); color: var(--jt-fg); cursor: pointer; }
.jt-copy:focus-visible { outline: 2px solid var(--jt-brand); outline-offset: 1px; }
.jt-msg { border-left: 3px solid var(--jt-border-strong); margin: 8px 0; padding: 4px 10px; border-radius: 2px;
          color: var(--jt-content-fg); }
.jt-msg-user { border-color: var(--jt-brand); background: rgba(33, 150, 243, 0.07);
               background: color-mix(in srgb, var(--jt-brand) 8%, transparent); }
.jt-msg-assistant { border-color: var(--jt-ok); }
.jt-role { font-weight: 700; font-size: 11px; letter-spacing: 0.04em; text-transform: uppercase;
           color: var(--jt-fg); margin-right: 8px; }
.jt-call { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 8px;
           border: 1px solid var(--jt-border); border-radius: 4px; padding: 4px 8px; margin: 4px 0; }
.jt-call-error { border-color: var(--jt-error); }
.jt-call-pending { border-color: var(--jt-warn); border-style: dashed; }
.jt-call h4, .jt-pending h4, .jt-msg h4 { margin: 0; font-size: 12px; font-weight: 600; color: var(--jt-fg); }
.jt-flag { font-weight: 700; padding: 0 6px; border-radius: 8px; white-space: nowrap; color: var(--jt-fg); }
.jt-event { border: 1px solid var(--jt-tone); border-left-width: 5px; border-radius: 4px; margin: 8px 0;
            padding: 4px 10px; color: var(--jt-fg); background: var(--jt-tint-fallback);
            background: color-mix(in srgb, var(--jt-tone) 10%, transparent); }
.jt-timeline { position: relative; height: 14px; background: var(--jt-surface-2); border-radius: 4px;
               margin: 4px 0; max-width: 48em; }
.jt-marker { position: absolute; top: 0; width: 3px; height: 14px; background: var(--jt-brand); }
.jt-marker-end { background: var(--jt-error); }
/* Turns and calls are thin ticks under the process runs' and the ending's marks, which are drawn over them. */
.jt-marker-turn { width: 1px; height: 7px; top: 0; background: var(--jt-brand); opacity: 0.7; }
.jt-marker-call { width: 1px; height: 7px; top: 7px; background: var(--jt-fg-muted); opacity: 0.7; }
/* A wide table scrolls inside its own box instead of pushing the page wider than the window. */
.jt-scroll { max-width: 100%; overflow-x: auto; }
.jt-segments { font-size: 12px; margin: 4px 0; color: var(--jt-fg); display: flex; flex-wrap: wrap; gap: 4px;
                align-items: center; padding-bottom: 2px; }
.jt-segments-label { flex: 0 0 auto; margin-right: 2px; }
.jt-segment { flex: 0 0 auto; display: inline-block; padding: 0 8px; border-radius: 9px; line-height: 18px;
              border: 1px solid var(--jt-tone); color: var(--jt-fg); background: var(--jt-tint-fallback);
              background: color-mix(in srgb, var(--jt-tone) 14%, transparent); text-decoration: none;
              max-width: 22em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
a.jt-segment:hover { text-decoration: underline; }
.jt-findings-box > summary { cursor: pointer; font-size: 12px; color: var(--jt-fg); }
.jt-seq-link { color: var(--jt-link); }
.jt-scroll { max-height: 70vh; overflow-y: auto; padding-right: 4px; }
.jt-msg { scroll-margin-top: 8px; }
.jt-target { box-shadow: 0 0 0 2px var(--jt-brand); }
.jt-msg:target { box-shadow: 0 0 0 2px var(--jt-brand); }
.jt-turn-facts { font-size: 11px; margin-left: 6px; }
.jt-pending { border-left-width: 5px; border-left-color: var(--jt-warn); }
.jt-cut { font-size: 12px; font-style: italic; margin: 2px 0 4px; }
.jt-thinking > summary { cursor: pointer; color: var(--jt-fg-muted); font-size: 12px; font-style: italic; }
.jt-provider { border: 1px dotted var(--jt-border-strong); border-radius: 4px; padding: 2px 8px; margin: 4px 0; }
.jt-findings { margin: 2px 0; padding-left: 1.4em; font-size: 12px; }
.jt-row td { color: var(--jt-fg); }
/* The explanation is the point of a comparison: it takes the room left and wraps, never pushed out of the output
   area; the verdict wraps between its words and the run id is shortened further, so both yield first. */
.jt-comparison-table { width: 100%; }
.jt-comparison-table td.jt-explanation { min-width: 14em; width: 100%; white-space: normal; }
.jt-comparison-table td.jt-verdict-cell { white-space: normal; min-width: 7em; }
.jt-comparison-table td:not(.jt-explanation):not(.jt-verdict-cell) { white-space: nowrap; }
.jt-verdict-documented td { background: rgba(255, 152, 0, 0.12);
                            background: color-mix(in srgb, var(--jt-warn) 12%, transparent); }
.jt-verdict-summary_rule td { background: rgba(33, 150, 243, 0.08);
                              background: color-mix(in srgb, var(--jt-info) 8%, transparent); }
.jt-verdict-discrepancy td, .jt-verdict-missing_a td, .jt-verdict-missing_b td {
    background: rgba(244, 67, 54, 0.16); background: color-mix(in srgb, var(--jt-error) 16%, transparent);
    font-weight: 700; }
.jt-verdict-discrepancy td:first-child, .jt-verdict-missing_a td:first-child, .jt-verdict-missing_b td:first-child {
    border-left: 6px solid var(--jt-error-strong); }
.jt-verdict-documented td:first-child { border-left: 4px solid var(--jt-warn); }
.jt-verdict-summary_rule td:first-child { border-left: 4px solid var(--jt-info); }
.jt-flag-agree { color: var(--jt-fg); }
.jt-flag-documented, .jt-flag-summary_rule { border: 1px solid var(--jt-tone); background: var(--jt-tint-fallback);
    background: color-mix(in srgb, var(--jt-tone) 22%, transparent); }
.jt-flag-documented { --jt-tone: var(--jt-warn); --jt-tint-fallback: rgba(255, 152, 0, 0.22); }
.jt-flag-summary_rule { --jt-tone: var(--jt-info); --jt-tint-fallback: rgba(33, 150, 243, 0.2); }
.jt-flag-discrepancy, .jt-flag-missing_a, .jt-flag-missing_b { background: var(--jt-error-strong); color: #ffffff; }
.jt-chart text { fill: var(--jt-fg); font-family: var(--jt-ui-font); font-size: 11px; }
.jt-chart .jt-grid { stroke: var(--jt-border); }
.jt-chart .jt-axis { stroke: var(--jt-border-strong); }
.jt-chart .jt-bar-error { fill: var(--jt-error); }
.jt-chart .jt-bar-warning { fill: var(--jt-warn); }
.jt-chart .jt-bar-info { fill: var(--jt-info); }
</style>"""


def themed(inner_html: str) -> str:
    """``inner_html`` with the shared styles, inside the themed root element every widget's HTML uses."""
    return f'{STYLE}<div class="jt">{inner_html}</div>'
