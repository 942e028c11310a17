"""TurnCheckpoints: the records of a turn-checkpoint store, those needing an operator first, next to the runs.

``TurnCheckpointsModel`` is pure: it takes a ``TurnAudit`` (``audits.turns.audit_turns``) and, optionally,
the ``runs`` table of ``journaltools.tables``, and pairs every record with the runs whose meta names its task.
``TurnCheckpoints`` is the ipywidgets view: a "needs attention only" switch, a code filter and the table.
Everything shown comes from a store or a journal, so every value is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from journaltools.audits.turns import TurnAudit, TurnFinding
from journaltools.exports.html import esc, id_html, long_text, severity_badge, status_badge, themed
from journaltools.protocol.findings import SEVERITY_RANK


@dataclass(frozen=True, slots=True)
class LinkedRun:
    run: str
    status: str


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One stored record, its findings and the runs of its task."""

    key: str
    workspace_id: str | None
    task_id: str | None
    phase: str | None
    revision: int | None
    owner_identity: str | None
    age_s: float | None
    tool_calls: int
    needs_operator: bool
    findings: tuple[TurnFinding, ...]
    runs: tuple[LinkedRun, ...]
    problem: str | None = None

    @property
    def worst(self) -> str | None:
        ranked = sorted(self.findings, key=lambda f: -SEVERITY_RANK.get(f.severity, 0))
        return ranked[0].severity if ranked else None


def _age_text(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


@dataclass(slots=True)
class TurnCheckpointsModel:
    """Every record row, the findings that name no record (index entries of missing records, unreadable blobs),
    and the current filter."""

    store: str
    rows: list[TurnRow]
    loose: list[TurnFinding]
    attention_only: bool = False
    codes: frozenset[str] = field(default_factory=frozenset)  # empty: every code

    @classmethod
    def from_audit(cls, audit: TurnAudit, runs: Any = None) -> TurnCheckpointsModel:
        """From ``audit_turns(...)``; ``runs``: the ``runs`` Arrow table, or rows with ``run``, ``status``, ``task``."""
        by_task: dict[str, list[LinkedRun]] = {}
        run_rows: Iterable[Mapping[str, Any]] = runs.to_pylist() if hasattr(runs, "to_pylist") else runs or []
        for run in run_rows:
            if run.get("task") is not None:
                by_task.setdefault(str(run["task"]), []).append(LinkedRun(str(run["run"]), str(run["status"])))
        findings: dict[tuple[str | None, str | None, int | None], list[TurnFinding]] = {}
        by_location: dict[str, list[TurnFinding]] = {}
        for finding in audit.turn_findings:
            if finding.location is not None:
                by_location.setdefault(finding.location, []).append(finding)
            else:
                findings.setdefault((finding.workspace_id, finding.task_id, finding.revision), []).append(finding)
        rows = []
        for record in audit.records.to_pylist():
            own = tuple(by_location.pop(record["key"], []))
            if record["workspace_id"] is not None:
                own += tuple(findings.pop((record["workspace_id"], record["task_id"], record["revision"]), []))
            rows.append(
                TurnRow(
                    key=record["key"],
                    workspace_id=record["workspace_id"],
                    task_id=record["task_id"],
                    phase=record["phase"],
                    revision=record["revision"],
                    owner_identity=record["owner_identity"],
                    age_s=record["age_s"],
                    tool_calls=int(record["tool_calls"] or 0),
                    needs_operator=bool(record["needs_operator"]),
                    findings=own,
                    runs=tuple(sorted(by_task.get(record["task_id"] or "", []), key=lambda r: r.run)),
                    problem=record["problem"],
                )
            )
        loose = [finding for group in [*findings.values(), *by_location.values()] for finding in group]
        return cls(audit.store, rows, loose)

    @property
    def code_choices(self) -> list[str]:
        return sorted({f.code for row in self.rows for f in row.findings} | {f.code for f in self.loose})

    def visible(self) -> list[TurnRow]:
        """Rows with findings first (worst first, then oldest), then the rest by workspace and task."""
        kept = [
            row
            for row in self.rows
            if (not self.attention_only or row.findings or row.needs_operator)
            and (not self.codes or any(f.code in self.codes for f in row.findings))
        ]
        return sorted(
            kept,
            key=lambda row: (
                -SEVERITY_RANK.get(row.worst or "", -1),
                -(row.age_s or 0.0) if row.findings else 0.0,
                row.workspace_id or "",
                row.task_id or "",
                row.key,
            ),
        )

    def visible_loose(self) -> list[TurnFinding]:
        return [f for f in self.loose if not self.codes or f.code in self.codes]

    def with_filter(self, attention_only: bool = False, codes: Iterable[str] = ()) -> TurnCheckpointsModel:
        return replace(self, attention_only=attention_only, codes=frozenset(codes))

    def summary(self) -> dict[str, int]:
        findings = [f for row in self.rows for f in row.findings] + self.loose
        totals = {"records": len(self.rows), "needs_attention": sum(1 for r in self.rows if r.findings)}
        for severity in ("error", "warning", "info"):
            totals[severity] = sum(1 for f in findings if f.severity == severity)
        return totals

    def to_html(self) -> str:
        totals = self.summary()
        head = "".join(
            f"<th>{esc(name)}</th>"
            for name in ("workspace", "task", "phase", "rev", "owner", "age", "calls", "findings", "runs")
        )
        body = []
        for row in self.visible():
            findings = "".join(
                f"<div>{severity_badge(f.severity)} <code>{esc(f.code)}</code> {long_text(f.message, 160)}</div>"
                for f in row.findings
            )
            if row.problem is not None:
                findings += f"<div>{long_text(row.problem, 160)}</div>"
            runs = " ".join(f"{id_html(r.run)} {status_badge(r.status)}" for r in row.runs) or "—"
            flag = " jt-turn-attention" if row.findings else ""
            revision = row.revision if row.revision is not None else "—"
            body.append(
                f'<tr class="jt-turn{flag}" data-key="{esc(row.key)}">'
                f"<td>{id_html(row.workspace_id)}</td><td>{id_html(row.task_id or row.key)}</td>"
                f"<td>{esc(row.phase or 'unreadable')}</td><td>{esc(revision)}</td>"
                f"<td>{id_html(row.owner_identity)}</td><td>{esc(_age_text(row.age_s))}</td>"
                f"<td>{esc(row.tool_calls)}</td><td>{findings or '—'}</td><td>{runs}</td></tr>"
            )
        loose = "".join(
            f"<li>{severity_badge(f.severity)} <code>{esc(f.code)}</code> {esc(f.message)}</li>"
            for f in self.visible_loose()
        )
        loose_html = f"<p><b>not tied to one stored record</b></p><ul>{loose}</ul>" if loose else ""
        counts = ", ".join(f"{severity_badge(s)}: <b>{totals[s]}</b>" for s in ("error", "warning", "info"))
        return themed(
            f"<div class='jt-turns'><p>{esc(self.store)}: {totals['records']} records, "
            f"{totals['needs_attention']} need attention — {counts}</p>"
            f"<table class='jt-table jt-turns-table'><tr>{head}</tr>{''.join(body)}</table>{loose_html}</div>"
        )


class TurnCheckpoints:
    """The view: a "needs attention only" switch, a code filter and the table."""

    def __init__(self, model: TurnCheckpointsModel) -> None:
        import ipywidgets as w

        self.model = model
        self.attention_box = w.Checkbox(value=model.attention_only, description="needs attention only")
        self.code_box = w.SelectMultiple(options=model.code_choices, description="codes", rows=4)
        self.table = w.HTML(model.to_html())
        for control in (self.attention_box, self.code_box):
            control.observe(self._on_controls, names="value")
        self.widget = w.VBox([w.HBox([self.attention_box, self.code_box]), self.table])

    @classmethod
    def from_store(cls, url: str, runs: Any = None, **audit_options: Any) -> TurnCheckpoints:
        """Audit the turn store at ``url`` (``audit_turns`` options as keywords) and show it next to ``runs``."""
        from journaltools.audits.turns import audit_turns

        return cls(TurnCheckpointsModel.from_audit(audit_turns(url, **audit_options), runs))

    def _on_controls(self, _change: object) -> None:
        self.model = self.model.with_filter(self.attention_box.value, self.code_box.value)
        self.table.value = self.model.to_html()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
