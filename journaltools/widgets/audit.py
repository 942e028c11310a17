"""AuditSummary: findings by code and severity with counts, a bar chart, and the affected runs.

``AuditSummaryModel`` (pure) takes ``Finding`` values (``AuditResult.findings``) or the ``findings`` Arrow table.
The chart is an inline SVG drawn from the model (whole-number axis, colours from the JupyterLab theme), so the
widget needs nothing beyond a plain install; ``chart_png()`` draws the same chart with matplotlib for reports
(``pip install "journaltools[notebook]"``). Pressing an affected run's button opens its ConversationView.
Finding messages quote journal content (a tool's name, a terminal's message), so they are escaped like it.

Output stays bounded however big the audit: the findings are listed a page at a time, each code names its
first few runs only, and the affected runs are a fixed pool of buttons paged like RunBrowser's rows (100,000
findings would otherwise be tens of megabytes of HTML and ten thousand buttons).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from journaltools._base.readable import shorten_middle
from journaltools.errors import MissingDependency
from journaltools.exports.html import SEVERITY_COLOURS, esc, id_html, long_text, severity_badge, themed
from journaltools.protocol.findings import SEVERITY_RANK, Finding
from journaltools.widgets.runs_model import RunLoader

_NICE_STEPS = (1, 2, 5)

#: Findings per page of the "every finding" list, runs named per code, run buttons per page.
FINDINGS_PER_PAGE = 50
RUNS_PER_CODE = 5
RUN_BUTTONS = 24


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // max(1, size)))


def integer_ticks(maximum: int, most: int = 6) -> list[int]:
    """Whole-number axis ticks from 0 to at least ``maximum``: at most ``most`` of them, steps of 1, 2 or 5
    times a power of ten (counts are never drawn on a 0.0-1.0 axis)."""
    maximum = max(1, maximum)
    scale = 1
    while True:
        for base in _NICE_STEPS:
            step = base * scale
            top = -(-maximum // step) * step
            if top // step + 1 <= most:
                return list(range(0, top + 1, step))
        scale *= 10


@dataclass(frozen=True, slots=True)
class CodeCount:
    code: str
    severity: str
    count: int
    runs: tuple[str, ...]


@dataclass(slots=True)
class AuditSummaryModel:
    findings: list[Finding]

    @classmethod
    def from_table(cls, table: Any) -> AuditSummaryModel:
        """From the ``findings`` Arrow table (columns run, seq, code, severity, message[, source])."""
        return cls.from_rows(table.to_pylist())

    @classmethod
    def from_tables(cls, tables: Any) -> AuditSummaryModel:
        """From a ``journaltools.tables.Tables`` (its ``findings``)."""
        return cls.from_table(tables.findings)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> AuditSummaryModel:
        return cls(
            [
                Finding(
                    row.get("run"),
                    row.get("seq"),
                    str(row["code"]),
                    row["severity"],
                    str(row.get("message") or ""),
                    str(row.get("source") or ""),
                )
                for row in rows
            ]
        )

    def by_code(self) -> list[CodeCount]:
        """One entry per (code, severity): worst severity first, then most frequent."""
        groups: dict[tuple[str, str], list[Finding]] = {}
        for finding in self.findings:
            groups.setdefault((finding.code, finding.severity), []).append(finding)
        counts = [
            CodeCount(code, severity, len(items), tuple(sorted({f.run for f in items if f.run is not None})))
            for (code, severity), items in groups.items()
        ]
        counts.sort(key=lambda c: (-SEVERITY_RANK.get(c.severity, 0), -c.count, c.code))
        return counts

    def by_severity(self) -> dict[str, int]:
        totals = {"error": 0, "warning": 0, "info": 0}
        for finding in self.findings:
            totals[finding.severity] = totals.get(finding.severity, 0) + 1
        return totals

    def affected_runs(self) -> list[str]:
        return sorted({f.run for f in self.findings if f.run is not None})

    def findings_for(self, run: str) -> list[Finding]:
        return [f for f in self.findings if f.run == run]

    def chart_svg(self, width: int = 460) -> str:
        """A horizontal bar chart of counts by code as inline SVG, worst severity on top, whole-number axis;
        the bars carry their counts and severities as text too. ``width`` is the most it takes: it shrinks with
        the output area (the drawing scales), and the label column is as wide as the longest code."""
        counts = self.by_code()
        if not counts:
            return ""
        ticks = integer_ticks(max(c.count for c in counts))
        # About 7 px a character at the chart's 12 px font: a code is never cut at the left edge.
        left = min(width // 2, 12 + 7 * max(len(c.code) for c in counts))
        right = 12 + 7 * len(str(max(c.count for c in counts)))
        top, bar, gap = 8, 16, 6
        plot = width - left - right
        height = top + len(counts) * (bar + gap) + 34

        def x(value: int) -> float:
            return left + plot * value / ticks[-1]

        parts = [
            f'<svg class="jt-chart" role="img" width="100%" viewBox="0 0 {width} {height}" '
            f'style="max-width: {width}px; height: auto" preserveAspectRatio="xMinYMin meet" '
            'xmlns="http://www.w3.org/2000/svg"><title>findings by code</title>'
        ]
        axis_y = top + len(counts) * (bar + gap)
        for tick in ticks:
            parts.append(
                f'<line class="jt-grid" x1="{x(tick):.1f}" y1="{top - 2}" x2="{x(tick):.1f}" y2="{axis_y}"/>'
                f'<text class="jt-tick" x="{x(tick):.1f}" y="{axis_y + 14}" text-anchor="middle">{tick}</text>'
            )
        for index, entry in enumerate(counts):
            y = top + index * (bar + gap)
            parts.append(
                f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end">{esc(entry.code)}</text>'
                f'<rect class="jt-bar jt-bar-{esc(entry.severity)}" x="{left}" y="{y}" '
                f'width="{max(1.0, x(entry.count) - left):.1f}" height="{bar}" rx="2">'
                f"<title>{esc(entry.code)}: {entry.count} ({esc(entry.severity)})</title></rect>"
                f'<text class="jt-count" x="{x(entry.count) + 4:.1f}" y="{y + bar - 4}">{entry.count}</text>'
            )
        parts.append(
            f'<line class="jt-axis" x1="{left}" y1="{axis_y}" x2="{left + plot}" y2="{axis_y}"/>'
            f'<text x="{left + plot / 2:.1f}" y="{axis_y + 30}" text-anchor="middle">findings</text></svg>'
        )
        return "".join(parts)

    def codes_html(self) -> str:
        """Counts by code and severity; each code names its first few runs and how many more there are."""
        totals = ", ".join(f"{severity_badge(s)}: <b>{n:,}</b>" for s, n in self.by_severity().items())
        rows = []
        for c in self.by_code():
            # Each run shortened in its middle, the whole id in its tooltip (the buttons below open them).
            named = ", ".join(id_html(run, copy=False) for run in c.runs[:RUNS_PER_CODE]) or "—"
            more = f" and {len(c.runs) - RUNS_PER_CODE:,} more" if len(c.runs) > RUNS_PER_CODE else ""
            rows.append(
                f'<tr class="jt-code jt-severity-row-{esc(c.severity)}"><td><code>{esc(c.code)}</code></td>'
                f"<td>{severity_badge(c.severity)}</td><td>{c.count:,}</td><td>{named}{esc(more)}</td></tr>"
            )
        return (
            f"<p>{len(self.findings):,} findings — {totals}</p>"
            "<table class='jt-table'><tr><th>code</th><th>severity</th><th>count</th><th>runs</th></tr>"
            f"{''.join(rows)}</table>"
        )

    def findings_page_count(self, page_size: int = FINDINGS_PER_PAGE) -> int:
        return page_count(len(self.findings), page_size)

    def findings_html(self, page: int = 0, page_size: int = FINDINGS_PER_PAGE) -> str:
        """One page of every finding (run, seq, severity, code, message), the worst first: errors before warnings
        before the information a batch audit carries by the dozen (in the audit's order within each)."""
        page = min(max(0, page), self.findings_page_count(page_size) - 1)
        start = page * page_size
        ordered = sorted(self.findings, key=lambda finding: -SEVERITY_RANK.get(finding.severity, 0))
        shown = ordered[start : start + page_size]
        details = "".join(
            f"<tr><td>{id_html(f.run)}</td><td>{esc('—' if f.seq is None else f.seq)}</td>"
            f"<td>{severity_badge(f.severity)}</td><td>{esc(f.code)}</td><td>{long_text(f.message, 200)}</td></tr>"
            for f in shown
        )
        end = start + len(shown)
        return (
            f"<p class='jt-muted'>findings {start + 1 if shown else 0:,}-{end:,} of {len(self.findings):,}</p>"
            "<table class='jt-table jt-every-finding'><tr><th>run</th><th>seq</th><th>severity</th><th>code</th>"
            "<th>message</th></tr>"
            f"{details}</table>"
        )

    def to_html(self, page: int = 0, page_size: int = FINDINGS_PER_PAGE) -> str:
        """The counts and one page of the findings (``page``), never all of them at once."""
        return themed(
            f"<div class='jt-audit'>{self.codes_html()}<details><summary>every finding</summary>"
            f"{self.findings_html(page, page_size)}</details></div>"
        )

    def chart_png(self, width: float = 6.0) -> bytes:
        """The bar chart of counts by code, coloured by severity, as PNG bytes (matplotlib, whole-number axis).

        Raises ``MissingDependency`` (naming ``journaltools[notebook]``) when matplotlib is not installed."""
        try:
            from matplotlib.figure import Figure
            from matplotlib.ticker import MaxNLocator
        except ImportError as missing:
            raise MissingDependency("AuditSummaryModel.chart_png", "matplotlib") from missing

        counts = list(reversed(self.by_code()))
        figure = Figure(figsize=(width, max(1.5, 0.3 * len(counts) + 0.8)), dpi=80)
        axes = figure.subplots()
        axes.barh(
            [c.code for c in counts],
            [c.count for c in counts],
            color=[SEVERITY_COLOURS.get(c.severity, "#6b7280") for c in counts],
        )
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlim(0, integer_ticks(max((c.count for c in counts), default=1))[-1])
        axes.set_xlabel("findings")
        axes.set_title("findings by code (red error, amber warning, blue info)", fontsize=9)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        return buffer.getvalue()


class AuditSummary:
    """Counts, the chart, every finding a page at a time, and the affected runs as a fixed pool of buttons
    (paged) that open a run's ConversationView at its first finding."""

    def __init__(
        self, model: AuditSummaryModel, loader: RunLoader | None = None, page_size: int = FINDINGS_PER_PAGE
    ) -> None:
        import ipywidgets as w

        self.model = model
        self.loader = loader
        self.page_size = max(1, page_size)
        self.findings_page = 0
        self.runs_page = 0
        self.runs = model.affected_runs()
        self.table = w.HTML(themed(f"<div class='jt-audit'>{model.codes_html()}</div>"))
        self.chart = w.HTML(
            themed(model.chart_svg() if model.findings else "<p>No findings.</p>"),
            # Grows to the drawing's own width, shrinks with a narrow output area (the SVG scales with it).
            layout=w.Layout(flex="1 1 280px", max_width="476px", min_width="0", padding="0 0 0 16px"),
        )
        self.findings = w.HTML()
        self.previous_findings = w.Button(description="← previous findings")
        self.next_findings = w.Button(description="next findings →")
        self.previous_findings.on_click(lambda _b: self.show_findings(self.findings_page - 1))
        self.next_findings.on_click(lambda _b: self.show_findings(self.findings_page + 1))
        findings_bar = w.HBox([self.previous_findings, self.next_findings])
        findings_bar.add_class("jt-pager")
        self.buttons = [w.Button() for _ in range(min(RUN_BUTTONS, len(self.runs)))]
        for button in self.buttons:
            button.on_click(lambda b: self.open_run(b.tooltip.removeprefix("open ")) if b.tooltip else None)
        self.previous_runs = w.Button(description="← previous runs")
        self.next_runs = w.Button(description="next runs →")
        self.previous_runs.on_click(lambda _b: self.show_runs(self.runs_page - 1))
        self.next_runs.on_click(lambda _b: self.show_runs(self.runs_page + 1))
        self.runs_label = w.Label()
        runs_bar = w.HBox([self.previous_runs, self.runs_label, self.next_runs])
        runs_bar.add_class("jt-pager")
        self.detail = w.VBox()
        self.widget = w.VBox(
            [
                # Side by side where they fit, the chart below the counts where they do not.
                w.HBox([self.table, self.chart], layout=w.Layout(flex_flow="row wrap")),
                w.HTML(themed("<b>every finding</b>:")),
                self.findings,
                findings_bar,
                w.HTML(themed("<b>affected runs</b> (open a conversation):")),
                w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap")),
                runs_bar,
                self.detail,
            ]
        )
        self.widget.add_class("jt")
        self.widget.add_class("jt-audit-summary")
        self.show_findings(0)
        self.show_runs(0)

    def show_findings(self, page: int) -> None:
        pages = self.model.findings_page_count(self.page_size)
        self.findings_page = min(max(0, page), pages - 1)
        self.findings.value = themed(self.model.findings_html(self.findings_page, self.page_size))
        self.previous_findings.disabled = self.findings_page == 0
        self.next_findings.disabled = self.findings_page >= pages - 1

    def show_runs(self, page: int) -> None:
        """The affected runs of ``page`` on the pool's buttons (the pool never grows with the audit)."""
        size = max(1, len(self.buttons))
        pages = page_count(len(self.runs), size)
        self.runs_page = min(max(0, page), pages - 1)
        shown = self.runs[self.runs_page * size : (self.runs_page + 1) * size]
        for index, button in enumerate(self.buttons):
            run = shown[index] if index < len(shown) else None
            button.description = shorten_middle(run) if run is not None else ""
            button.tooltip = f"open {run}" if run is not None else ""
            button.layout.display = "" if run is not None else "none"
        first = self.runs_page * size + 1 if shown else 0
        self.runs_label.value = f"runs {first:,}-{first + len(shown) - 1 if shown else 0:,} of {len(self.runs):,}"
        self.previous_runs.disabled = self.runs_page == 0
        self.next_runs.disabled = self.runs_page >= pages - 1

    @classmethod
    def from_sources(cls, urls: list[str]) -> AuditSummary:
        from journaltools.audits.sources import audit_sources
        from journaltools.widgets._source import RunFolds

        loaders = [RunFolds.open(url) for url in urls]

        class Loader:
            def __call__(self, run: str) -> Any:
                for load in loaders:
                    result = load(run)
                    if result is not None:
                        return result
                return None

            def facts(self, run: str) -> Any:
                for load in loaders:
                    found = load.facts(run)
                    if found is not None:
                        return found
                return None

        return cls(AuditSummaryModel(audit_sources(urls).findings), Loader())

    def open_run(self, run: str) -> None:
        import ipywidgets as w

        from journaltools.widgets.conversation import ConversationView

        mine = self.model.findings_for(run)
        findings = "".join(
            f"<li>{esc(f.code)}{'' if f.seq is None else f' at seq {esc(f.seq)}'}: {esc(f.message)}</li>"
            for f in mine[:20]
        )
        more = f"<li>and {len(mine) - 20:,} more</li>" if len(mine) > 20 else ""
        result = self.loader(run) if self.loader is not None else None
        children: list[Any] = [w.HTML(themed(f"<h4>{esc(run)}</h4><ul>{findings}{more}</ul>"))]
        if result is None:
            children.append(w.HTML(themed("<p>No journal for this run in the sources; see the findings above.</p>")))
        else:
            facts_of = getattr(self.loader, "facts", None)
            view = ConversationView.from_fold(result, facts=facts_of(run) if callable(facts_of) else None)
            first = next((f.seq for f in mine if f.seq is not None), None)
            if first is not None:
                view.jump_to_seq(first)  # open where the finding is
            children.append(view.widget)
        self.detail.children = tuple(children)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
