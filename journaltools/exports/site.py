"""A whole source as one offline site (``journaltools report SOURCE --all -o DIR``, ``report_site``).

``DIR/index.html`` lists every run of the source: its status, why it stopped or what it waits for, its prompt, model,
tokens, times and findings, with status chips and a search box; each run's report (the page ``journaltools report``
makes, drawn by the same code) is beside it in ``DIR/runs/``, linked both ways. A message has a deep link,
``runs/<run>.html#seq-12`` (the message at or before seq 12). Everything opens from ``file://``: no page asks for
anything, and each page's content security policy forbids every request. ``--zip`` hands it on as one ``.zip``.

The index reads the runs table (``tables.load``: the same status and ``why`` as ``ls`` and the run browser); each
page folds its run as ``report`` does. Runs are read one at a time and each page written before the next is read,
so memory holds one run, whatever the source's size.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from journaltools._base.readable import shorten_end
from journaltools._base.urls import masked
from journaltools.exports.facts import Prices
from journaltools.exports.html import STYLE, esc, status_badge
from journaltools.exports.report import DEFAULT_MAX_BYTES, report_of_read
from journaltools.exports.report_page import REPORT_STYLE, script_hash
from journaltools.folding.phrases import STORE_UPDATED, shown_time
from journaltools.tables.costs import total_tokens

#: The index's name, and the folder beside it that holds the runs' pages.
INDEX: Final = "index.html"
RUNS: Final = "runs"
#: How much of a prompt a row of the index shows (its tooltip holds up to ``PROMPT_TOOLTIP`` characters).
PROMPT_SHOWN: Final = 140
PROMPT_TOOLTIP: Final = 2_000

#: The index's one script: the theme switch, the status chips and the search box (every word must be found in the
#: row's text). Fixed code, no journal text; the controls it drives stay hidden when it does not run, and the table
#: then shows every run.
SITE_SCRIPT: Final = r"""(function () {
  var root = document.documentElement;
  var themes = ["auto", "light", "dark"];
  var themeButton = document.getElementById("jt-theme");
  themeButton.addEventListener("click", function () {
    var now = themes.indexOf(root.getAttribute("data-theme"));
    var next = themes[(now + 1) % themes.length];
    root.setAttribute("data-theme", next);
    themeButton.textContent = "theme: " + next;
  });
  var rows = document.querySelectorAll("tr.jt-site-run");
  var chips = document.querySelectorAll("button.jt-chip[data-status]");
  var search = document.getElementById("jt-search");
  var count = document.getElementById("jt-shown");
  function apply() {
    var chosen = [];
    for (var i = 0; i < chips.length; i++) {
      if (chips[i].getAttribute("aria-pressed") === "true") chosen.push(chips[i].getAttribute("data-status"));
    }
    var words = search.value.toLowerCase().split(/\s+/).filter(function (word) { return word; });
    var shown = 0;
    for (var j = 0; j < rows.length; j++) {
      var row = rows[j];
      var text = row.textContent.toLowerCase() + " " + (row.getAttribute("data-search") || "");
      var keep = (!chosen.length || chosen.indexOf(row.getAttribute("data-status")) >= 0)
        && words.every(function (word) { return text.indexOf(word) >= 0; });
      row.hidden = !keep;
      if (keep) shown++;
    }
    count.textContent = shown + " of " + rows.length + " runs shown";
  }
  for (var k = 0; k < chips.length; k++) {
    chips[k].addEventListener("click", function (event) {
      var chip = event.currentTarget;
      chip.setAttribute("aria-pressed", chip.getAttribute("aria-pressed") === "true" ? "false" : "true");
      apply();
    });
  }
  search.addEventListener("input", apply);
  var controls = document.querySelectorAll(".jt-script-only");
  for (var m = 0; m < controls.length; m++) controls[m].hidden = false;
  apply();
})();"""

#: No request of any kind, inline styles, and only the script above.
SITE_SECURITY_POLICY: Final = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src '{script_hash(SITE_SCRIPT)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

SITE_STYLE: Final = """<style>
.jt-report.jt-site { max-width: 120em; }
.jt-site .jt-site-scroll { overflow-x: auto; }
.jt-site table.jt-table { width: 100%; }
.jt-site .jt-site-model { white-space: nowrap; }
.jt-site td { vertical-align: top; }
.jt-site .jt-site-why { min-width: 16em; }
.jt-site .jt-site-prompt { min-width: 12em; max-width: 28em; overflow-wrap: anywhere; }
.jt-site .jt-num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.jt-site .jt-site-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 8px 0; }
.jt-site .jt-chip { border-radius: 12px; padding: 1px 10px; }
.jt-site .jt-chip[aria-pressed="true"] { border-color: var(--jt-brand); box-shadow: inset 0 0 0 1px var(--jt-brand); }
.jt-site #jt-search { font: inherit; font-size: 12px; width: 24em; max-width: 100%; padding: 2px 6px;
    color: var(--jt-fg); background: var(--jt-surface); border: 1px solid var(--jt-border-strong); border-radius: 3px; }
.jt-site code { overflow-wrap: anywhere; }
</style>"""


@dataclass(frozen=True, slots=True)
class SitePage:
    """One run's page: its file (relative to the site's folder) and what its size bound left out."""

    run: str
    file: str
    messages: int
    messages_shown: int
    left_out_from_seq: int | None


@dataclass(frozen=True, slots=True)
class Site:
    """What ``report_site`` wrote: the folder (or the ``.zip``), its index and one page per run."""

    path: Path
    index: str
    pages: tuple[SitePage, ...]

    def summary(self) -> str:
        cut = [page for page in self.pages if page.left_out_from_seq is not None]
        line = f"wrote {self.path}: {INDEX} and {len(self.pages):,} run page{'s' if len(self.pages) != 1 else ''}"
        if cut:
            line += f"; the size bound left messages out of {len(cut):,} (each page says from which seq)"
        return line


def page_file(run: str) -> str:
    """The page of ``run`` relative to the site's folder: ``runs/<run>.html``, the id itself when it is a safe file
    name, else its safe characters and a digest of the whole id (so two ids never share a page)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", run)[:120].lstrip(".") or "_"
    if safe != run:
        safe += "-" + hashlib.sha256(run.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{RUNS}/{safe}.html"


def _findings_text(errors: int, warnings: int) -> str:
    parts = [f"{count} {word}{'s' if count != 1 else ''}" for count, word in ((errors, "error"), (warnings, "warning"))]
    return ", ".join(part for part, count in zip(parts, (errors, warnings), strict=True) if count)


def _row_html(row: Mapping[str, Any], page: SitePage) -> str:
    run = str(row["run"])
    status = str(row.get("status") or "invalid")
    prompt = str(row.get("prompt") or "")
    tokens = total_tokens(row)
    created = shown_time(row.get("created")) or "—"
    updated = shown_time(row.get("updated")) or "—"
    updated_title = STORE_UPDATED if row.get("generation") == "august" else ""
    findings = _findings_text(int(row.get("error_findings") or 0), int(row.get("warning_findings") or 0))
    cut = (
        f'<br><span class="jt-muted">page holds {page.messages_shown:,} of {page.messages:,} messages</span>'
        if page.left_out_from_seq is not None
        else ""
    )
    searched = " ".join(str(row.get(name) or "") for name in ("prompt", "agent", "caller", "provider", "why"))
    return (
        f'<tr class="jt-site-run" data-status="{esc(status)}" data-search="{esc(searched.lower()[:PROMPT_TOOLTIP])}">'
        f'<td><a href="{esc(page.file)}"><code>{esc(run)}</code></a>{cut}</td>'
        f"<td>{status_badge(status)}</td>"
        f'<td class="jt-site-why">{esc(row.get("why") or "—")}</td>'
        f'<td class="jt-site-prompt" title="{esc(prompt[:PROMPT_TOOLTIP])}">'
        f"{esc(shorten_end(' '.join(prompt.split()), PROMPT_SHOWN) or '—')}</td>"
        f'<td class="jt-site-model">{esc(row.get("model") or "—")}</td>'
        f'<td class="jt-num">{esc(f"{tokens:,}" if tokens is not None else "—")}</td>'
        f'<td class="jt-nowrap">{esc(created)}</td>'
        f'<td class="jt-nowrap" title="{esc(updated_title)}">{esc(updated)}</td>'
        f"<td>{esc(findings or '—')}</td></tr>"
    )


def index_html(rows: Sequence[Mapping[str, Any]], pages: Mapping[str, SitePage], source: str, made: datetime) -> str:
    """The index page: the runs (newest first), their chips and the search box over them."""
    from journaltools._base.version import __version__

    ordered = sorted(rows, key=lambda row: str(row["run"]), reverse=True)  # run ids sort by creation, as ls's
    counts: dict[str, int] = {}
    for row in ordered:
        status = str(row.get("status") or "invalid")
        counts[status] = counts.get(status, 0) + 1
    chips = "".join(
        f'<button type="button" class="jt-chip" data-status="{esc(status)}" aria-pressed="false">'
        f"{esc(status)} {count:,}</button>"
        for status, count in sorted(counts.items())
    )
    heads = ("run", "status", "why it stopped", "prompt", "model", "tokens", "created (UTC)", "updated (UTC)",
             "findings")  # fmt: skip
    body = "".join(_row_html(row, pages[str(row["run"])]) for row in ordered)
    title = f"journaltools: {len(ordered):,} runs of {source}"
    return (
        '<!DOCTYPE html>\n<html lang="en" data-theme="auto"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(SITE_SECURITY_POLICY)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc(title)}</title>{STYLE}{REPORT_STYLE}{SITE_STYLE}</head><body>"
        '<div class="jt jt-report jt-site"><header>'
        f"<h1>{len(ordered):,} run{'s' if len(ordered) != 1 else ''}</h1>"
        f'<p class="jt-report-meta jt-muted">{esc(source)} · made {esc(shown_time(made) or "")} by journaltools '
        f"{esc(__version__)} · each run's report in {RUNS}/</p>"
        '<nav class="jt-report-nav"><span id="jt-shown" class="jt-muted"></span>'
        '<button type="button" id="jt-theme" class="jt-script-only" hidden>theme: auto</button></nav></header>'
        f'<div class="jt-site-controls jt-script-only" hidden>{chips}'
        '<input id="jt-search" type="search" placeholder="search runs, prompts, why they stopped…" '
        'aria-label="search runs"></div>'
        '<div class="jt-site-scroll"><table class="jt-table"><thead><tr>'
        f"{''.join(f'<th>{esc(head)}</th>' for head in heads)}</tr></thead>"
        f"<tbody>{body}</tbody></table></div></div>"
        f"<script>{SITE_SCRIPT}</script></body></html>\n"
    )


def _runs_rows(backend: Any, prices: Prices | None) -> list[dict[str, Any]]:
    from journaltools.tables import load

    tables = load(backend, strict=False, records=False, progress=False, prices=prices)
    rows: list[dict[str, Any]] = tables.runs.to_pylist()
    return rows


def _pages(backend: Any, runs: Sequence[str], folder: Path, source: str, **options: Any) -> Iterator[SitePage]:
    """Each run's page written into ``folder``, one run read at a time."""
    from journaltools._base.oserrors import writing

    for run in runs:
        made = report_of_read(backend.read_run(run, strict=False), source=source, index_href=f"../{INDEX}", **options)
        file = page_file(run)
        with writing(folder / file, "write a run's page") as handle:
            handle.write(made.html.encode("utf-8", "replace"))
        yield SitePage(run, file, made.messages, made.messages_shown, made.left_out_from_seq)


def report_site(
    source: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    as_zip: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    prices: Prices | None = None,
    made: datetime | None = None,
) -> Site:
    """Write every run of ``source`` as a site into the folder ``path`` (made if missing; its ``index.html`` and
    ``runs/`` replaced), or, with ``as_zip``, into the one file ``path`` (a ``.zip`` whose entries sit under a folder
    named as the file). Journals the runtime would refuse are reported as far as they read, ``invalid``."""
    from journaltools.sources.registry import open_source

    target = Path(path)
    with open_source(os.fspath(source)) as backend:
        url = masked(backend.url)
        rows = _runs_rows(backend, prices)
        runs = [str(row["run"]) for row in rows]
        if as_zip:
            with tempfile.TemporaryDirectory(prefix="journaltools-site-") as scratch:
                folder = Path(scratch) / target.stem
                pages = _write(backend, rows, runs, folder, url, made, max_bytes=max_bytes, prices=prices)
                _zip(folder, target)
        else:
            pages = _write(backend, rows, runs, target, url, made, max_bytes=max_bytes, prices=prices)
    return Site(target, INDEX, pages)


def _write(
    backend: Any,
    rows: list[dict[str, Any]],
    runs: list[str],
    folder: Path,
    source: str,
    made: datetime | None,
    **options: Any,
) -> tuple[SitePage, ...]:
    from journaltools._base.oserrors import writing

    (folder / RUNS).mkdir(parents=True, exist_ok=True)
    pages = tuple(_pages(backend, runs, folder, source, **options))
    by_run = {page.run: page for page in pages}
    with writing(folder / INDEX, "write the site's index") as handle:
        handle.write(index_html(rows, by_run, source, made or datetime.now(UTC)).encode("utf-8", "replace"))
    return pages


def _zip(folder: Path, target: Path) -> None:
    """``folder`` as one ``.zip`` at ``target`` (written beside it, then put in place)."""
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, Path(folder.name) / file.relative_to(folder))
    shutil.move(partial, target)


__all__: Sequence[str] = ["INDEX", "Site", "SitePage", "index_html", "page_file", "report_site"]
