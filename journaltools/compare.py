"""Compare two listings run by run (``journaltools compare``): typically the file listing against JetStream's.

The two backends list runs by different rules (PROTOCOL.md section 7). The file listing folds every run;
the JetStream listing summarizes each run from its first and last record. They disagree in exactly one
documented way: a run whose last record is an assistant turn that asked for tool calls, with no results yet,
is ``open`` when folded (the calls are unanswered) and ``completed`` by the two-record summary (the last
record is an assistant turn). That case gets the verdict ``documented`` and a plain explanation; any other
difference is a ``discrepancy``; a run listed on one side only is ``missing_a`` or ``missing_b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from journaltools.backends.base import RunSummary
from journaltools.protocol.findings import Finding

Verdict = Literal["agree", "documented", "discrepancy", "missing_a", "missing_b"]
VERDICTS: tuple[Verdict, ...] = ("agree", "documented", "discrepancy", "missing_a", "missing_b")

COMPARISON_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("status_a", pa.string()),
        pa.field("status_b", pa.string()),
        pa.field("verdict", pa.string(), nullable=False),
        pa.field("explanation", pa.string(), nullable=False),
    ]
)


@dataclass(frozen=True, slots=True)
class ComparedRun:
    run: str
    status_a: str | None
    status_b: str | None
    verdict: Verdict
    explanation: str

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "status_a": self.status_a,
            "status_b": self.status_b,
            "verdict": self.verdict,
            "explanation": self.explanation,
        }


def is_turn_in_flight(open_side: RunSummary, completed_side: RunSummary) -> bool:
    """The documented case: folded, the run is open on an assistant turn with calls; summarized, completed."""
    return (
        open_side.status == "open"
        and open_side.last_type == "assistant"
        and open_side.last_has_calls
        and completed_side.status == "completed"
        and completed_side.last_type == "assistant"
    )


def _other_differences(a: RunSummary, b: RunSummary, label_a: str, label_b: str) -> list[str]:
    differences = []
    if a.last_seq != b.last_seq:
        differences.append(f"the last seq is {a.last_seq} in {label_a} but {b.last_seq} in {label_b}")
    if a.created != b.created:
        differences.append(f"the run was created at {a.created} per {label_a} but at {b.created} per {label_b}")
    if a.model != b.model:
        differences.append(f"the model is {a.model!r} per {label_a} but {b.model!r} per {label_b}")
    if a.records is not None and b.records is not None and a.records != b.records:
        differences.append(f"{label_a} holds {a.records} records, {label_b} {b.records}")
    return differences


def _documented_explanation(run: str, open_label: str, completed_label: str) -> str:
    return (
        f"Expected difference, not an error. The last record of {run} is an assistant turn that asked for "
        f"tool calls whose results have not been written yet. The {open_label} listing reads the whole run, "
        f"sees those calls still unanswered and says open. The {completed_label} listing only looks at the "
        f"first and last record, sees an assistant turn at the end and says completed. Both read the same "
        f"records; the run really is waiting for its tool results."
    )


def _missing(run: str, present: RunSummary, label_present: str, label_absent: str) -> str:
    text = f"{run} is listed by {label_present} ({present.status}) but {label_absent} has no journal for it."
    if present.status == "invalid":
        text += " The journal is invalid, and migrate refuses invalid journals rather than copy them."
    return text


def compare_run(
    run: str, a: RunSummary | None, b: RunSummary | None, label_a: str = "a", label_b: str = "b"
) -> ComparedRun:
    """The verdict for one run (see the module doc)."""
    if a is None and b is None:
        raise ValueError(f"run {run!r} is in neither listing")
    if a is None:
        assert b is not None
        return ComparedRun(run, None, b.status, "missing_a", _missing(run, b, label_b, label_a))
    if b is None:
        return ComparedRun(run, a.status, None, "missing_b", _missing(run, a, label_a, label_b))
    differences = _other_differences(a, b, label_a, label_b)
    if not differences:
        if a.status == b.status:
            return ComparedRun(run, a.status, b.status, "agree", f"Both listings say {a.status}.")
        if is_turn_in_flight(a, b):
            return ComparedRun(run, a.status, b.status, "documented", _documented_explanation(run, label_a, label_b))
        if is_turn_in_flight(b, a):
            return ComparedRun(run, a.status, b.status, "documented", _documented_explanation(run, label_b, label_a))
    words = []
    if a.status != b.status:
        words.append(f"{label_a} says {a.status} but {label_b} says {b.status}")
    words.extend(differences)
    explanation = "The listings disagree: " + "; ".join(words) + ". This is not the documented difference."
    return ComparedRun(run, a.status, b.status, "discrepancy", explanation)


def compare_runs(
    a: Sequence[RunSummary], b: Sequence[RunSummary], label_a: str = "a", label_b: str = "b"
) -> list[ComparedRun]:
    """Every run of either listing, sorted by run id, with its verdict."""
    by_run_a = {row.run: row for row in a}
    by_run_b = {row.run: row for row in b}
    return [
        compare_run(run, by_run_a.get(run), by_run_b.get(run), label_a, label_b)
        for run in sorted(by_run_a.keys() | by_run_b.keys())
    ]


def compare_listings(
    a: Sequence[RunSummary], b: Sequence[RunSummary], label_a: str = "a", label_b: str = "b"
) -> pa.Table:
    """The comparison as an Arrow table: ``run, status_a, status_b, verdict, explanation``.

    The labels name the two sides in the explanations and in the table's metadata.
    """
    rows = compare_runs(a, b, label_a, label_b)
    columns = {
        "run": [row.run for row in rows],
        "status_a": [row.status_a for row in rows],
        "status_b": [row.status_b for row in rows],
        "verdict": [row.verdict for row in rows],
        "explanation": [row.explanation for row in rows],
    }
    schema = COMPARISON_SCHEMA.with_metadata({"label_a": label_a, "label_b": label_b})
    return pa.Table.from_pydict(columns, schema=schema)


def comparison_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of ``compare_listings`` as plain dicts (``compare --json``)."""
    rows: list[dict[str, Any]] = table.select(list(COMPARISON_SCHEMA.names)).to_pylist()
    return rows


def findings_from_comparison(table: pa.Table, source: str = "") -> list[Finding]:
    """``listing_documented`` (info) for the documented case, ``listing_discrepancy`` (error) for any other
    disagreement, including a run listed on one side only."""
    findings = []
    for row in comparison_rows(table):
        verdict = row["verdict"]
        if verdict == "documented":
            findings.append(Finding.of(row["run"], None, "listing_documented", row["explanation"], source))
        elif verdict != "agree":
            findings.append(Finding.of(row["run"], None, "listing_discrepancy", row["explanation"], source))
    return findings
