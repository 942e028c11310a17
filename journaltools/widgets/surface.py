"""Surface: one anywidget that shows HTML drawn by Python and sends the reader's actions back to Python.

The widgets' pages are drawn by pure Python (``runs_page.table_html``, ``ConversationModel.header_html`` and
``window_html``); a view only has to put that HTML on the page and say what was clicked. In the Jupyter hosts the
ipywidgets views do it with ipywidgets around the HTML. A ``Surface`` does it with one widget model and one front-end
module (anywidget's protocol), which every host of anywidget renders: marimo (``mo.ui.anywidget``, or a surface
left as a cell's last expression), JupyterLab, Notebook 7, VS Code and Colab. One model per widget also keeps the
kernel's message count low, whatever the page holds.

The contract with the HTML: an element with ``data-jt-act`` (a button; an ``input`` or ``select`` on each change)
sends ``{"act": <its data-jt-act>, "arg": <its data-jt-arg, or the field's value>}``, which the surface hands to
its ``act(action, argument)``. ``data-jt-key`` names an element the keyboard can be given back after a redraw (the
focused element keeps the focus, and a field its text and caret, across a redraw), and a ``data-jt-focus`` anywhere
in the HTML sends the keyboard to the element of that key once drawn. Escape on the surface sends ``close`` when a
``.jt-detail .jt-close`` is shown; ArrowUp and ArrowDown move between the rows of a ``.jt-rows`` table; a finding's
seq link (``a.jt-seq-link``) scrolls to its message, or sends ``jump`` with its seq when the window does not hold it.
Enter in a field with ``data-jt-enter`` sends that action with ``1`` (Shift+Enter: ``-1``); a key pressed outside
a field, within an element whose ``data-jt-keys`` lists it (space-separated), sends ``key`` with the key. A click on
the surface's text gives it the keyboard (it is focusable), so such keys work after a click anywhere in it.

The theme is the host's: the surface reads the text colour its host gives it, and a light text on a dark page
switches its colours to the dark set (``DARK_STYLE``), again whenever the page's theme changes. JupyterLab's own
theme variables, where they exist, still win (every colour is ``var(--jp-..., fallback)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

#: What a surface does with an action: ``act(action, argument)``.
Act = Callable[[str, str], None]

#: The dark set of the shared colours (``exports.html.STYLE`` holds the light one), for hosts with no JupyterLab
#: theme variables (marimo): each is still the JupyterLab variable first. The surface paints its own background, so
#: its text is measured, and read, against a colour of its own theme.
DARK_STYLE = """<style>
.jt-surface { background: var(--jt-surface); color: var(--jt-fg); padding: 4px; }
.jt-surface.jt-dark, .jt-surface.jt-dark .jt {
  color-scheme: dark;
  --jt-fg: var(--jp-ui-font-color1, rgba(255, 255, 255, 0.87));
  --jt-fg-muted: var(--jp-ui-font-color2, rgba(255, 255, 255, 0.62));
  --jt-content-fg: var(--jp-content-font-color1, rgba(255, 255, 255, 0.87));
  --jt-surface: var(--jp-layout-color1, #1f1f1f);
  --jt-surface-2: var(--jp-layout-color2, #2c2c2c);
  --jt-border: var(--jp-border-color2, #3d3d3d);
  --jt-border-strong: var(--jp-border-color1, #616161);
  --jt-link: var(--jp-content-link-color, #64b5f6);
  --jt-brand: var(--jp-brand-color1, #42a5f5);
  --jt-muted: var(--jp-border-color1, #757575);
}
.jt-surface .jt-toolbar, .jt-surface .jt-pager, .jt-surface .jt-detail-bar { display: flex; }
.jt-surface .jt-button { height: 24px; line-height: 22px; font-size: 12px; padding: 0 10px; margin: 0 2px;
    color: var(--jt-fg); background: var(--jt-surface-2); border: 1px solid var(--jt-border-strong);
    border-radius: 3px; cursor: pointer; font-family: var(--jt-ui-font); }
.jt-surface .jt-button:disabled { opacity: 0.5; cursor: default; }
.jt-surface .jt-button.jt-chip { border-radius: 12px; background: transparent; }
.jt-surface .jt-button.jt-chip[aria-pressed="true"] { background: var(--jt-surface-2); border-color: var(--jt-brand);
    box-shadow: inset 0 0 0 1px var(--jt-brand); }
.jt-surface .jt-button:focus-visible, .jt-surface .jt-field:focus-visible { outline: 2px solid var(--jt-brand);
    outline-offset: 1px; }
.jt-surface .jt-field { height: 24px; font-size: 12px; color: var(--jt-fg); background: var(--jt-surface);
    border: 1px solid var(--jt-border-strong); border-radius: 3px; padding: 0 6px; font-family: var(--jt-ui-font); }
.jt-surface input.jt-field { width: 24em; }
.jt-surface .jt-page-label { font-size: 12px; }
</style>"""

#: The front-end module (anywidget's ``render``). Fixed text: no journal content is ever in it, and the HTML it
#: is given was escaped by the Python that drew it.
ESM = r"""
function lightText(el) {
  // rgb(0-255 ...), or color(srgb 0-1 ...) as a host using color-mix() may give it.
  const colour = getComputedStyle(el).color;
  const scale = colour.startsWith("color(") ? 255 : 1;
  const channels = (colour.replace(/^color\(srgb/, "").match(/[\d.]+/g) || []).map((c) => Number(c) * scale);
  if (channels.length < 3) return false;
  return (channels[0] * 299 + channels[1] * 587 + channels[2] * 114) / 1000 > 128;
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "jt jt-surface";
  root.tabIndex = -1;
  el.appendChild(root);
  const send = (act, arg) => model.send({ act: act, arg: arg == null ? "" : String(arg) });
  const keyed = (key) =>
    [].find.call(root.querySelectorAll("[data-jt-key]"), (e) => e.getAttribute("data-jt-key") === key);
  const theme = () => { root.classList.toggle("jt-dark", lightText(el)); };

  const draw = () => {
    // What had the keyboard keeps it across the redraw (a field its text and caret too: its value on the
    // Python side may lag what is being typed).
    const active = root.getRootNode().activeElement;
    const kept = active && root.contains(active) && active.getAttribute("data-jt-key") ? {
      key: active.getAttribute("data-jt-key"), field: active.tagName === "INPUT", value: active.value,
      start: active.selectionStart, end: active.selectionEnd } : null;
    root.innerHTML = model.get("style") + model.get("html");
    theme();
    const asked = root.querySelector("[data-jt-focus]");
    const key = asked ? asked.getAttribute("data-jt-focus") : kept ? kept.key : "";
    const target = key ? keyed(key) : null;
    if (!target) return;
    if (kept && kept.field && kept.key === key && target.tagName === "INPUT") {
      target.value = kept.value;
      target.setSelectionRange(kept.start, kept.end);
    }
    target.focus({ preventScroll: !asked });
    if (asked) target.scrollIntoView({ block: "nearest" });
  };

  root.addEventListener("click", (event) => {
    // A finding's seq link: its message when the window shows it (a host may draw the surface in a shadow root,
    // where the page's own #anchor navigation cannot reach it), else the window that holds it.
    const link = event.target.closest ? event.target.closest("a.jt-seq-link[data-seq]") : null;
    if (link && root.contains(link)) {
      event.preventDefault();
      const id = decodeURIComponent((link.getAttribute("href") || "#").slice(1));
      const there = id ? root.querySelector('[id="' + CSS.escape(id) + '"]') : null;
      if (there) there.scrollIntoView({ block: "start" });
      else send("jump", link.getAttribute("data-seq"));
      return;
    }
    const acting = event.target.closest ? event.target.closest("[data-jt-act]") : null;
    if (!acting || !root.contains(acting) || acting.tagName === "INPUT" || acting.tagName === "SELECT") return;
    event.preventDefault();
    send(acting.getAttribute("data-jt-act"), acting.getAttribute("data-jt-arg"));
  });
  // A search box sends as it is typed in, a chooser when a choice is made.
  const sendField = (tag) => (event) => {
    const field = event.target;
    if (field.tagName === tag && field.hasAttribute("data-jt-act")) send(field.dataset.jtAct, field.value);
  };
  root.addEventListener("input", sendField("INPUT"));
  root.addEventListener("change", sendField("SELECT"));
  root.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing || !event.target.closest) return;
    const field = event.target.closest("input, textarea, select, [contenteditable]");
    if (field && event.key === "Enter" && field.hasAttribute("data-jt-enter")) {
      event.preventDefault();
      event.stopPropagation();
      send(field.getAttribute("data-jt-enter"), event.shiftKey ? "-1" : "1");
      return;
    }
    // Outside a field (where a key is a letter typed); a host's own single-key shortcuts never see it.
    const keyed = field ? null : event.target.closest("[data-jt-keys]") ||
      (event.target === root ? root.querySelector("[data-jt-keys]") : null);
    if (keyed && root.contains(keyed) && keyed.getAttribute("data-jt-keys").split(" ").indexOf(event.key) >= 0) {
      event.preventDefault();
      event.stopPropagation();
      send("key", event.key);
      return;
    }
    if (event.shiftKey) return;
    if (event.key === "Escape") {
      if (root.querySelector(".jt-detail .jt-close")) {
        event.preventDefault();
        event.stopPropagation();
        send("close", "");
      }
      return;
    }
    const step = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    const line = step && event.target.closest ? event.target.closest(".jt-rows > .jt-tr") : null;
    if (!line) return;
    const lines = [].slice.call(line.parentElement.querySelectorAll(":scope > .jt-tr"));
    const next = lines[lines.indexOf(line) + step];
    event.preventDefault();
    event.stopPropagation();
    if (next) next.querySelector(".jt-col-run").focus();
  });

  // The host's theme may change under the surface (a menu, the system's setting): follow it.
  const watcher = new MutationObserver(theme);
  for (const node of [document.documentElement, document.body]) {
    watcher.observe(node, { attributes: true, attributeFilter: ["class", "style", "data-theme", "data-mode"] });
  }
  const scheme = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  if (scheme) scheme.addEventListener("change", theme);
  model.on("change:html", draw);
  model.on("change:style", draw);
  draw();
  return () => {
    watcher.disconnect();
    if (scheme) scheme.removeEventListener("change", theme);
    model.off("change:html", draw);
    model.off("change:style", draw);
  };
}

export default { render };
"""


class Surface(anywidget.AnyWidget):
    """HTML drawn by Python on the page, and what the reader does with it handed to ``act``.

    ``style`` is sent once (the stylesheet), ``html`` each time the view changes."""

    _esm = ESM
    html = traitlets.Unicode("").tag(sync=True)
    style = traitlets.Unicode("").tag(sync=True)

    def __init__(self, act: Act, style: str, html: str = "", **kwargs: Any) -> None:
        super().__init__(style=style + DARK_STYLE, html=html, **kwargs)
        self._act = act
        self.on_msg(self._on_message)

    def _on_message(self, _widget: object, content: object, _buffers: object) -> None:
        """An action from the page; anything not shaped as the front end sends it is let go."""
        if not isinstance(content, dict):
            return
        action, argument = content.get("act"), content.get("arg")
        if isinstance(action, str) and isinstance(argument, str):
            self._act(action, argument)


def button(
    label: str,
    action: str,
    argument: str = "",
    *,
    key: str = "",
    title: str = "",
    disabled: bool = False,
    classes: str = "",
    pressed: bool | None = None,
) -> str:
    """A surface button: ``label`` (escaped) that sends ``action`` with ``argument``."""
    from journaltools.exports.html import esc

    extra = f" {classes}" if classes else ""
    attributes = [f'type="button" class="jt-button{extra}" data-jt-act="{esc(action)}" data-jt-arg="{esc(argument)}"']
    if key:
        attributes.append(f'data-jt-key="{esc(key)}"')
    if title:
        attributes.append(f'title="{esc(title)}"')
    if pressed is not None:
        attributes.append(f'aria-pressed="{str(pressed).lower()}"')
    if disabled:
        attributes.append("disabled")
    return f"<button {' '.join(attributes)}>{esc(label)}</button>"
