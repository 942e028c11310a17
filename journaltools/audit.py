"""Batch audits: every record and run of one or more sources checked, every problem a finding.

An audit never stops at the first bad journal. It checks what the source system never checks
(PROTOCOL.md section 9): every record against its schema, the optional-flag rules, run ids against
file names and subjects, sequence gaps, approvals without deferrals, and every fold rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from journaltools.backends.base import Backend, RunRead
from journaltools.backends.registry import open_source
from journaltools.fold import FoldResult, fold
from journaltools.protocol.findings import Finding, at_least


@dataclass(slots=True)
class RunAudit:
    """One run's audit: what was read, its lenient fold (None when the journal was refused) and its findings."""

    source: str
    read: RunRead
    result: FoldResult | None
    findings: list[Finding]


@dataclass(slots=True)
class AuditResult:
    findings: list[Finding] = field(default_factory=list)
    runs: int = 0
    records: int = 0

    def worst(self) -> str | None:
        for severity in ("error", "warning", "info"):
            if any(finding.severity == severity for finding in self.findings):
                return severity
        return None

    def fails(self, threshold: str) -> bool:
        return any(at_least(finding.severity, threshold) for finding in self.findings)


def _with_source(findings: list[Finding], source: str) -> list[Finding]:
    return [
        Finding(f.run, f.seq, f.code, f.severity, f.message, f.source or source) if not f.source else f
        for f in findings
    ]


def audit_run(backend: Backend, run: str) -> RunAudit:
    """Read leniently and fold leniently: the findings of one run, in journal order."""
    read = backend.read_run(run, strict=False)
    findings = list(read.findings)
    result = None
    if read.complete:
        result = fold(read.records, strict=False, run=run)
        findings.extend(result.findings)
    return RunAudit(backend.url, read, result, _with_source(findings, backend.url))


def iter_run_audits(backend: Backend, runs: Sequence[str] | None = None) -> Iterator[RunAudit]:
    """One run at a time, so memory holds one journal, not the source."""
    for run in runs if runs is not None else backend.list_runs():
        yield audit_run(backend, run)


def source_findings(backend: Backend) -> list[Finding]:
    """Findings about the source itself rather than one readable run (e.g. journals with unusable names)."""
    unusable = getattr(backend, "unusable_journal_names", None)
    if unusable is None:
        return []
    return [
        Finding.of(None, None, "invalid_run_id", f"{name}: the file name is not a valid run id; not read", backend.url)
        for name in unusable()
    ]


def audit_sources(urls: Sequence[str]) -> AuditResult:
    """Audit every run of every source; findings in source, run and journal order."""
    result = AuditResult()
    for url in urls:
        with open_source(url) as backend:
            result.findings.extend(source_findings(backend))
            for run_audit in iter_run_audits(backend):
                result.runs += 1
                result.records += len(run_audit.read.records)
                result.findings.extend(run_audit.findings)
    return result
