"""The report page's fixed parts: its style in light and dark (JupyterLab's theme variables, so it reads as the
notebook does), its one small script, and the content security policy that lets nothing else run or load."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Final

from journaltools.exports.conversation_places import FIND_BOX_KEY, FIND_STEPS, JUMPS

#: JupyterLab's theme variables, which every colour of ``exports.html.STYLE`` reads, for each theme.
_LIGHT: Final = {
    "--jp-layout-color0": "#ffffff",
    "--jp-layout-color1": "#ffffff",
    "--jp-layout-color2": "#eeeeee",
    "--jp-ui-font-color1": "rgba(0, 0, 0, 0.87)",
    "--jp-ui-font-color2": "rgba(0, 0, 0, 0.62)",
    "--jp-content-font-color1": "rgba(0, 0, 0, 0.87)",
    "--jp-border-color1": "#9e9e9e",
    "--jp-border-color2": "#e0e0e0",
    "--jp-content-link-color": "#0d47a1",
    "--jp-brand-color1": "#1976d2",
    "--jp-success-color1": "#388e3c",
    "--jp-warn-color1": "#ef6c00",
    "--jp-error-color1": "#d32f2f",
    "--jp-error-color0": "#b71c1c",
}

_DARK: Final = {
    "--jp-layout-color0": "#111111",
    "--jp-layout-color1": "#1b1b1b",
    "--jp-layout-color2": "#2c2c2c",
    "--jp-ui-font-color1": "rgba(255, 255, 255, 0.87)",
    "--jp-ui-font-color2": "rgba(255, 255, 255, 0.66)",
    "--jp-content-font-color1": "rgba(255, 255, 255, 0.9)",
    "--jp-border-color1": "#757575",
    "--jp-border-color2": "#3d3d3d",
    "--jp-content-link-color": "#90caf9",
    "--jp-brand-color1": "#42a5f5",
    "--jp-success-color1": "#66bb6a",
    "--jp-warn-color1": "#ffa726",
    "--jp-error-color1": "#ef5350",
    "--jp-error-color0": "#e57373",
}


def _declarations(values: dict[str, str], scheme: str) -> str:
    return f"color-scheme: {scheme}; " + " ".join(f"{name}: {value};" for name, value in values.items())


#: The report's own styles: the two themes (the reader's preference unless the switch says otherwise), the page's
#: frame, and its sections. Everything else is the widgets' ``STYLE``.
REPORT_STYLE: Final = f"""<style>
:root {{ {_declarations(_LIGHT, "light")} }}
:root[data-theme="dark"] {{ {_declarations(_DARK, "dark")} }}
@media (prefers-color-scheme: dark) {{ :root[data-theme="auto"] {{ {_declarations(_DARK, "dark")} }} }}
html {{ background: var(--jp-layout-color0); }}
body {{ margin: 0; background: var(--jp-layout-color0); }}
.jt-report {{ max-width: 76em; margin: 0 auto; padding: 12px 24px 48px; font-size: 13px; }}
.jt-report h1 {{ font-size: 20px; margin: 6px 0 2px; overflow-wrap: anywhere; }}
.jt-report h2 {{ font-size: 16px; margin: 22px 0 6px; padding-bottom: 2px; border-bottom: 1px solid var(--jt-border); }}
.jt-report a {{ color: var(--jt-link); }}
.jt-report-meta {{ font-size: 12px; margin: 0 0 4px; overflow-wrap: anywhere; }}
.jt-report-nav {{ position: sticky; top: 0; z-index: 3; display: flex; flex-wrap: wrap; align-items: center;
    gap: 4px 14px; padding: 6px 0; font-size: 12px; background: var(--jt-surface);
    border-bottom: 1px solid var(--jt-border); }}
.jt-report button {{ font: inherit; font-size: 12px; color: var(--jt-fg); background: var(--jt-surface-2);
    border: 1px solid var(--jt-border-strong); border-radius: 3px; padding: 1px 8px; cursor: pointer; }}
.jt-report button:focus-visible {{ outline: 2px solid var(--jt-brand); outline-offset: 1px; }}
.jt-report .jt-table {{ margin: 4px 0; }}
.jt-report .jt-nowrap {{ white-space: nowrap; }}
.jt-report .jt-turns td:last-child {{ min-width: 18em; }}
.jt-report .jt-turns td:first-child, .jt-report .jt-turns td:last-child span {{ white-space: nowrap; }}
.jt-page {{ border-top: 1px solid var(--jt-border); }}
.jt-turns-box > summary {{ cursor: pointer; font-weight: 600; padding: 4px 0; color: var(--jt-fg); }}
.jt-page > summary {{ cursor: pointer; font-weight: 600; padding: 6px 0; color: var(--jt-fg); }}
.jt-report .jt-msg {{ scroll-margin-top: 48px; }}
.jt-report .jt-timeline {{ max-width: none; height: 16px; }}
.jt-report .jt-marker {{ height: 16px; }}
.jt-report .jt-marker-turn, .jt-report .jt-marker-call {{ height: 8px; }}
.jt-report .jt-marker-call {{ top: 8px; }}
.jt-marker-claim {{ background: var(--jt-warn); }}
.jt-left-out {{ border: 1px dashed var(--jt-border-strong); border-radius: 4px; padding: 6px 10px; margin: 8px 0;
    font-style: normal; }}
.jt-undated {{ font-weight: 600; }}
.jt-report-find {{ display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; }}
.jt-report-find input {{ font: inherit; font-size: 12px; width: 16em; padding: 1px 6px; color: var(--jt-fg);
    background: var(--jt-surface); border: 1px solid var(--jt-border-strong); border-radius: 3px; }}
.jt-report .jt-found {{ box-shadow: inset 0 0 0 1px var(--jt-brand); }}
.jt-report .jt-found-current, .jt-report .jt-jumped {{ outline: 2px solid var(--jt-brand); outline-offset: 2px; }}
</style>"""

#: The file's one script: the theme switch, "open / close every page", and opening the page a link points into
#: (a message on a closed page). Fixed code: no journal text is ever in it. The buttons it drives are hidden until it
#: runs, so a reader whose viewer runs no script sees no dead buttons (every page still opens by its summary).
_REPORT_SCRIPT_CODE: Final = r"""(function () {
  var root = document.documentElement;
  var themes = ["auto", "light", "dark"];
  var themeButton = document.getElementById("jt-theme");
  function showTheme(theme) {
    root.setAttribute("data-theme", theme);
    themeButton.textContent = "theme: " + theme;
  }
  themeButton.addEventListener("click", function () {
    var now = themes.indexOf(root.getAttribute("data-theme"));
    showTheme(themes[(now + 1) % themes.length]);
  });
  function pages(open) {
    var found = document.querySelectorAll("details.jt-page");
    for (var i = 0; i < found.length; i++) found[i].open = open;
  }
  document.getElementById("jt-open-all").addEventListener("click", function () { pages(true); });
  document.getElementById("jt-close-all").addEventListener("click", function () { pages(false); });
  function byId(id) {
    var target = document.getElementById(id);
    var seq = /^seq-(\d+)$/.exec(id);
    if (target || !seq) return target;
    // A deep link from the site's index (run.html#seq-12): the message at or before that seq.
    var messages = document.querySelectorAll(".jt-msg[id]"), best = null;
    for (var i = 0; i < messages.length; i++) {
      var found = /-seq-(\d+)$/.exec(messages[i].id);
      if (found && Number(found[1]) <= Number(seq[1])) best = messages[i];
    }
    return best;
  }
  // A long run's middle pages are stored gzipped in base64 (data-jt-gz): inflated in the page, with no request,
  // when one is opened, when a link points into it, and all at once for find and the jumps.
  function inflatedText(body) {
    if (!body.jtText) {
      var bytes = Uint8Array.from(atob(body.getAttribute("data-jt-gz")), function (c) { return c.charCodeAt(0); });
      body.jtText = new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    }
    return body.jtText;
  }
  function inflate(body) {
    if (!body.jtInflated) {
      body.jtInflated = inflatedText(body).then(function (html) {
        body.innerHTML = html;  // the report's own HTML, escaped when it was drawn, as every plain page is
        body.removeAttribute("data-jt-gz");
      });
    }
    return body.jtInflated;
  }
  function packedBodies() { return [].slice.call(document.querySelectorAll(".jt-packed-body[data-jt-gz]")); }
  function inflateAll() { return Promise.all(packedBodies().map(inflate)); }
  document.addEventListener("toggle", function (event) {
    var body = event.target.open && event.target.querySelector(".jt-packed-body[data-jt-gz]");
    if (body) inflate(body);
  }, true);
  function packedHolding(id) {
    var seq = /seq-(\d+)$/.exec(id), holding = null;
    if (!seq || document.getElementById(id)) return null;
    var pages = document.querySelectorAll("details.jt-packed");
    for (var i = 0; i < pages.length; i++) {
      if (Number(pages[i].getAttribute("data-first-seq")) <= Number(seq[1])) holding = pages[i];
    }
    return holding && holding.querySelector(".jt-packed-body[data-jt-gz]");
  }
  function reveal(id) {
    var packed = packedHolding(id);
    (packed ? inflate(packed) : Promise.resolve()).then(function () {
      var target = byId(id);
      for (var node = target; node; node = node.parentElement) if (node.tagName === "DETAILS") node.open = true;
      if (target && (packed || target.id !== id)) target.scrollIntoView();
    });
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (link) reveal(decodeURIComponent(link.getAttribute("href").slice(1)));
  });
  if (location.hash) reveal(decodeURIComponent(location.hash.slice(1)));
  window.addEventListener("hashchange", function () { reveal(decodeURIComponent(location.hash.slice(1))); });
  // Find in the whole run, every page (what the file holds: a value past the size bound is cut in it too).
  var findBox = document.getElementById("jt-find"), findCount = document.getElementById("jt-find-count");
  var messages = [], found = [], at = -1;
  function show(target) {
    for (var node = target; node; node = node.parentElement) if (node.tagName === "DETAILS") node.open = true;
    target.scrollIntoView({block: "center"});
  }
  function find() {
    // The first find of a long run unpacks its stored pages first: say so rather than look stuck.
    if (packedBodies().length && findBox.value.trim()) findCount.textContent = "searching every page…";
    inflateAll().then(findNow);
  }
  function findNow() {
    messages = [].slice.call(document.querySelectorAll("#conversation .jt-msg"));
    var words = findBox.value.toLowerCase().split(/\s+/).filter(function (word) { return word; });
    for (var i = 0; i < found.length; i++) found[i].classList.remove("jt-found", "jt-found-current");
    found = !words.length ? [] : messages.filter(function (message) {
      var text = message.textContent.toLowerCase();
      return words.every(function (word) { return text.indexOf(word) >= 0; });
    });
    for (var j = 0; j < found.length; j++) found[j].classList.add("jt-found");
    at = -1;
    findCount.textContent = words.length ? (found.length ? "0 of " + found.length : "no match") : "";
  }
  function step(by) {
    if (!found.length) return;
    if (at >= 0) found[at].classList.remove("jt-found-current");
    at = (at + by + found.length) % found.length;
    found[at].classList.add("jt-found-current");
    findCount.textContent = (at + 1) + " of " + found.length;
    show(found[at]);
  }
  findBox.addEventListener("input", find);
  findBox.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { event.preventDefault(); step(event.shiftKey ? -1 : 1); }
    if (event.key === "Escape") { findBox.value = ""; find(); }
  });
  document.getElementById("jt-find-next").addEventListener("click", function () { step(1); });
  document.getElementById("jt-find-previous").addEventListener("click", function () { step(-1); });
  // One key to the next place of a kind, after the last place reached (the kinds are the classes the calls carry).
  var kinds = __JT_KINDS__, runKey = __JT_RUN_KEY__, findSteps = __JT_FIND_STEPS__;
  var conversation = document.getElementById("conversation");
  // A process run is reached at the message where it starts (at or before its first seq, as a link to it lands):
  // every run's, listed on the section's heading, where the chips and the table link to only some of a long run's.
  function runStartsListed() {
    var listing = conversation.querySelector("[data-jt-run-starts]");
    return ((listing && listing.getAttribute("data-jt-run-starts")) || "").split(" ").filter(Boolean);
  }
  function placesOf(key) {
    if (key !== runKey) return [].slice.call(conversation.querySelectorAll(kinds[key]));
    var messages = [].slice.call(conversation.querySelectorAll(".jt-msg[id]"));
    var seqs = messages.map(function (message) {
      var found = /-seq-(\d+)$/.exec(message.id);
      return found ? Number(found[1]) : -1;
    });
    var listed = runStartsListed();
    var starts = [], taken = new Set();
    listed.map(Number).sort(function (a, b) { return a - b; }).forEach(function (seq) {
      var low = 0, high = seqs.length - 1, best = -1;
      while (low <= high) {
        var middle = (low + high) >> 1;
        if (seqs[middle] <= seq) { best = middle; low = middle + 1; } else { high = middle - 1; }
      }
      if (best >= 0 && !taken.has(best)) { taken.add(best); starts.push(messages[best]); }
    });
    return starts;
  }
  var here = null;
  function jump(key) { inflateAll().then(function () { jumpNow(key); }); }
  function jumpNow(key) {
    var places = placesOf(key);
    if (!places.length) return;
    var next = places.filter(function (place) {
      return here && (here.compareDocumentPosition(place) & Node.DOCUMENT_POSITION_FOLLOWING)
        && !here.contains(place);
    })[0] || places[0];
    if (here) here.classList.remove("jt-jumped");
    here = next;
    here.classList.add("jt-jumped");
    show(here);
  }
  var jumpButtons = document.querySelectorAll("button[data-jump]");
  // Each kind counted in the plain pages and, read apart without being shown, in each page still compressed.
  function countIn(root, key) { return key === runKey ? 0 : root.querySelectorAll(kinds[key]).length; }
  function showCounts(packedCounts) {
    for (var b = 0; b < jumpButtons.length; b++) {
      var key = jumpButtons[b].getAttribute("data-jump");
      var count = key === runKey ? runStartsListed().length : countIn(conversation, key);
      packedCounts.forEach(function (counts) {
        if (counts.body.hasAttribute("data-jt-gz")) count += counts[key] || 0;  // not yet among the plain pages
      });
      jumpButtons[b].querySelector(".jt-jump-count").textContent = count;
      jumpButtons[b].disabled = !count;
    }
  }
  for (var b = 0; b < jumpButtons.length; b++) {
    jumpButtons[b].addEventListener("click", function (event) { jump(event.currentTarget.getAttribute("data-jump")); });
  }
  showCounts([]);
  Promise.all(packedBodies().map(function (body) {
    return inflatedText(body).then(function (html) {
      var page = new DOMParser().parseFromString(html, "text/html"), counts = {body: body};
      Object.keys(kinds).forEach(function (key) { counts[key] = countIn(page, key); });
      return counts;
    });
  })).then(showCounts);
  document.addEventListener("keydown", function (event) {
    var typing = event.target.closest && event.target.closest("input, textarea, select");
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === __JT_FIND_BOX_KEY__) { event.preventDefault(); findBox.focus(); }
    else if (findSteps[event.key]) step(findSteps[event.key]);
    else if (kinds[event.key] || event.key === runKey) jump(event.key);
  });
  var controls = document.querySelectorAll(".jt-script-only");
  for (var i = 0; i < controls.length; i++) controls[i].hidden = false;
})();"""

#: How the report's script finds each kind of place a key of ``JUMPS`` reaches, by the classes the conversation's
#: HTML gives a call (a process run is found by the links to where it starts).
_JUMP_SELECTORS: Final = {
    "error": ".jt-call-error",
    "pending call": ".jt-call[data-state='waiting'], .jt-pending",
    "deferral": ".jt-call[data-state='deferred']",
    "approval": ".jt-call[data-state='approved once']",
}
_RUN_KEY: Final = next(key for key, kind in JUMPS if kind == "process run")

# The keys come from the one table every face reads; JSON is a JavaScript literal.
REPORT_SCRIPT: Final = (
    _REPORT_SCRIPT_CODE.replace(
        "__JT_KINDS__", json.dumps({key: _JUMP_SELECTORS[kind] for key, kind in JUMPS if kind in _JUMP_SELECTORS})
    )
    .replace("__JT_RUN_KEY__", json.dumps(_RUN_KEY))
    .replace("__JT_FIND_STEPS__", json.dumps(FIND_STEPS))
    .replace("__JT_FIND_BOX_KEY__", json.dumps(FIND_BOX_KEY))
)


def script_hash(script: str) -> str:
    """The content security policy's name for ``script``: its SHA-256, the one inline script a page may run."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


#: No request of any kind (``default-src 'none'``), inline styles, and only the script above: were journal text ever
#: to become markup, a browser would still neither run it nor fetch anything it names.
CONTENT_SECURITY_POLICY: Final = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src '{script_hash(REPORT_SCRIPT)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
