"""AuditSummary: findings by code and severity with counts, a bar chart, and the affected runs.

``AuditSummaryModel`` (pure) takes ``Finding`` values (``AuditResult.findings``) or the ``findings`` Arrow table.
The chart is an inline SVG drawn from the model (whole-number axis, colours from the JupyterLab theme), so the
widget needs nothing beyond a plain install; ``chart_png()`` draws the same chart with matplotlib for reports
(``pip install "journaltools[notebook]"``). Pressing an affected run's button opens its ConversationView.
Finding messages quote journal content (a tool's name, a terminal's message), so they are escaped like it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from journaltools.errors import MissingDependency
from journaltools.protocol.findings import SEVERITY_RANK, Finding
from journaltools.widgets._html import SEVERITY_COLOURS, esc, long_text, severity_badge, themed
from journaltools.widgets.runs import RunLoader

_NICE_STEPS = (1, 2, 5)


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
        the bars carry their counts and severities as text too."""
        counts = self.by_code()
        if not counts:
            return ""
        ticks = integer_ticks(max(c.count for c in counts))
        left, right, top, bar, gap = 180, 36, 8, 16, 6
        plot = width - left - right
        height = top + len(counts) * (bar + gap) + 34

        def x(value: int) -> float:
            return left + plot * value / ticks[-1]

        parts = [
            f'<svg class="jt-chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
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

    def to_html(self) -> str:
        totals = ", ".join(f"{severity_badge(s)}: <b>{n}</b>" for s, n in self.by_severity().items())
        rows = "".join(
            f'<tr class="jt-code jt-severity-row-{esc(c.severity)}"><td><code>{esc(c.code)}</code></td>'
            f"<td>{severity_badge(c.severity)}</td><td>{c.count}</td>"
            f"<td>{esc(', '.join(c.runs) or '—')}</td></tr>"
            for c in self.by_code()
        )
        details = "".join(
            f"<tr><td><code>{esc(f.run)}</code></td><td>{esc(f.seq)}</td><td>{esc(f.code)}</td>"
            f"<td>{long_text(f.message, 200)}</td></tr>"
            for f in self.findings
        )
        return themed(
            f"<div class='jt-audit'><p>{len(self.findings)} findings — {totals}</p>"
            "<table class='jt-table'><tr><th>code</th><th>severity</th><th>count</th><th>runs</th></tr>"
            f"{rows}</table><details><summary>every finding</summary><table class='jt-table'>"
            f"<tr><th>run</th><th>seq</th><th>code</th><th>message</th></tr>{details}</table></details></div>"
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
    """Counts, the chart, and one button per affected run that opens its ConversationView."""

    def __init__(self, model: AuditSummaryModel, loader: RunLoader | None = None) -> None:
        import ipywidgets as w

        self.model = model
        self.loader = loader
        self.table = w.HTML(model.to_html())
        self.chart = w.HTML(themed(model.chart_svg() if model.findings else "<p>No findings.</p>"))
        self.buttons = [w.Button(description=run, tooltip=f"open {run}") for run in model.affected_runs()]
        for button in self.buttons:
            button.on_click(lambda b: self.open_run(b.description))
        self.detail = w.VBox()
        self.widget = w.VBox(
            [
                w.HBox([self.table, self.chart]),
                w.HTML(themed("<b>affected runs</b> (open a conversation):")),
                w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap")),
                self.detail,
            ]
        )
        self.widget.add_class("jt")

    @classmethod
    def from_sources(cls, urls: list[str]) -> AuditSummary:
        from journaltools.audit import audit_sources
        from journaltools.widgets._source import RunFolds

        loaders = [RunFolds.open(url) for url in urls]

        def loader(run: str) -> Any:
            for load in loaders:
                result = load(run)
                if result is not None:
                    return result
            return None

        return cls(AuditSummaryModel(audit_sources(urls).findings), loader)

    def open_run(self, run: str) -> None:
        import ipywidgets as w

        from journaltools.widgets.conversation import ConversationView

        findings = "".join(
            f"<li>{esc(f.code)} at seq {esc(f.seq)}: {esc(f.message)}</li>" for f in self.model.findings_for(run)
        )
        result = self.loader(run) if self.loader is not None else None
        children: list[Any] = [w.HTML(themed(f"<h4>{esc(run)}</h4><ul>{findings}</ul>"))]
        if result is None:
            children.append(w.HTML(themed("<p>No journal for this run in the sources; see the findings above.</p>")))
        else:
            children.append(ConversationView.from_fold(result).widget)
        self.detail.children = tuple(children)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
