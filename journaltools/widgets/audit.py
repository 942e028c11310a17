"""AuditSummary: findings by code and severity with counts, a small chart, and the affected runs.

``AuditSummaryModel`` (pure) takes ``Finding`` values (``AuditResult.findings``) or the ``findings`` Arrow table.
``AuditSummary`` draws the chart with matplotlib (Agg, no pyplot state) and opens an affected run's
ConversationView when its button is pressed.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from journaltools.protocol.findings import SEVERITY_RANK, Finding
from journaltools.widgets._html import SEVERITY_COLOURS, STYLE, esc, long_text, severity_badge
from journaltools.widgets.runs import RunLoader


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
        return (
            f"{STYLE}<div class='jt-audit'><p>{len(self.findings)} findings — {totals}</p>"
            "<table class='jt-table'><tr><th>code</th><th>severity</th><th>count</th><th>runs</th></tr>"
            f"{rows}</table><details><summary>every finding</summary><table class='jt-table'>"
            f"<tr><th>run</th><th>seq</th><th>code</th><th>message</th></tr>{details}</table></details></div>"
        )

    def chart_png(self, width: float = 6.0) -> bytes:
        """A horizontal bar chart of counts by code, coloured by severity, as PNG bytes."""
        from matplotlib.figure import Figure

        counts = list(reversed(self.by_code()))
        figure = Figure(figsize=(width, max(1.5, 0.3 * len(counts) + 0.8)), dpi=80)
        axes = figure.subplots()
        axes.barh(
            [c.code for c in counts],
            [c.count for c in counts],
            color=[SEVERITY_COLOURS.get(c.severity, "#6b7280") for c in counts],
        )
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
        self.chart = w.Image(value=model.chart_png(), format="png") if model.findings else w.HTML("<p>No findings.</p>")
        self.buttons = [w.Button(description=run, tooltip=f"open {run}") for run in model.affected_runs()]
        for button in self.buttons:
            button.on_click(lambda b: self.open_run(b.description))
        self.detail = w.VBox()
        self.widget = w.VBox(
            [
                w.HBox([self.table, self.chart]),
                w.HTML("<b>affected runs</b> (open a conversation):"),
                w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap")),
                self.detail,
            ]
        )

    @classmethod
    def from_sources(cls, urls: list[str]) -> AuditSummary:
        from journaltools.audit import audit_sources
        from journaltools.widgets.runs import load_source

        loaders = [load_source(url)[1] for url in urls]

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
        children: list[Any] = [w.HTML(f"{STYLE}<h4>{esc(run)}</h4><ul>{findings}</ul>")]
        if result is None:
            children.append(w.HTML("<p>The journal could not be folded (it was refused); see the findings above.</p>"))
        else:
            children.append(ConversationView.from_fold(result).widget)
        self.detail.children = tuple(children)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
