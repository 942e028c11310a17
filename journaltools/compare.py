"""Compare two listings run by run (``journaltools compare``): typically the file listing against JetStream's.

The two backends list runs by different rules (PROTOCOL.md section 7). The file listing folds and validates
every run; the JetStream listing summarizes each run from its first and last record, by the type of the last
record alone. So the same records can be listed with two statuses, and a comparison classifies every
difference by its cause:

- ``agree``: both listings say the same of the same records;
- ``documented``: the turn in flight. The last record is an assistant turn that asked for tool calls with no
  results yet: ``open`` when folded (the calls are unanswered), ``completed`` by the two-record summary;
- ``summary_rule``: another difference that the two-record rule alone explains, on the same records. Applying
  the rule to one side's own first and last record gives the other side's status, and both sides hold the
  same last seq and a byte-identical last record (by SHA-256). A completed run that ends in a claim or a
  note, a trailing non-fatal error, a failed run followed by a note, a journal the file listing calls
  ``invalid`` because a record breaks the schema: all are this;
- ``discrepancy``: the two sides hold different records (last seq, first or last record bytes, record count),
  or the listings differ in a way neither rule explains. Only this is an error;
- ``missing_a`` / ``missing_b``: a run listed on one side only.

Every row explains itself in plain words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from journaltools.backends.base import RunSummary
from journaltools.protocol.findings import Finding

Verdict = Literal["agree", "documented", "summary_rule", "discrepancy", "missing_a", "missing_b"]
VERDICTS: tuple[Verdict, ...] = ("agree", "documented", "summary_rule", "discrepancy", "missing_a", "missing_b")

#: The verdicts each ``--fail-on`` threshold fails on.
FAIL_ON: dict[str, frozenset[str]] = {
    "discrepancy": frozenset({"discrepancy"}),
    "missing": frozenset({"discrepancy", "missing_a", "missing_b"}),
}

#: The finding each verdict becomes in an audit (``agree`` becomes none).
FINDING_CODE: dict[str, str] = {
    "documented": "listing_documented",
    "summary_rule": "listing_summary_rule",
    "discrepancy": "listing_discrepancy",
    "missing_a": "listing_discrepancy",
    "missing_b": "listing_discrepancy",
}

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


@dataclass(frozen=True, slots=True)
class _Side:
    """One side of a comparison: its listing row and the name it goes by in the explanations."""

    row: RunSummary
    label: str


def is_turn_in_flight(open_side: RunSummary, completed_side: RunSummary) -> bool:
    """The documented case: folded, the run is open on an assistant turn with calls; summarized, completed."""
    return (
        open_side.status == "open"
        and open_side.last_type == "assistant"
        and open_side.last_has_calls
        and completed_side.status == "completed"
        and completed_side.last_type == "assistant"
    )


def _record_differences(a: _Side, b: _Side) -> list[str]:
    """How the records the two sides hold differ, as far as the rows show (a digest unknown on one side is
    not compared here; ``summary_rule`` requires both)."""
    ra, rb = a.row, b.row
    differences = []
    if ra.last_seq != rb.last_seq:
        differences.append(f"the last seq is {ra.last_seq} in {a.label} but {rb.last_seq} in {b.label}")
    elif ra.last_sha256 is not None and rb.last_sha256 is not None and ra.last_sha256 != rb.last_sha256:
        differences.append(f"the last record (seq {ra.last_seq}) has different bytes in {a.label} and {b.label}")
    if ra.first_sha256 is not None and rb.first_sha256 is not None and ra.first_sha256 != rb.first_sha256:
        differences.append(f"the first record has different bytes in {a.label} and {b.label}")
    if ra.records is not None and rb.records is not None and ra.records != rb.records:
        differences.append(f"{a.label} holds {ra.records} records, {b.label} {rb.records}")
    return differences


def _field_differences(a: _Side, b: _Side) -> list[str]:
    ra, rb = a.row, b.row
    differences = []
    if ra.created != rb.created:
        differences.append(f"the run was created at {ra.created} per {a.label} but at {rb.created} per {b.label}")
    if ra.model != rb.model:
        differences.append(f"the model is {ra.model!r} per {a.label} but {rb.model!r} per {b.label}")
    return differences


def _documented_explanation(run: str, open_label: str, completed_label: str) -> str:
    return (
        f"Expected difference, not an error. The last record of {run} is an assistant turn that asked for "
        f"tool calls whose results have not been written yet. The {open_label} listing reads the whole run, "
        f"sees those calls still unanswered and says open. The {completed_label} listing only looks at the "
        f"first and last record, sees an assistant turn at the end and says completed. Both read the same "
        f"records; the run really is waiting for its tool results."
    )


def _last_record_words(row: RunSummary) -> str:
    """The last record as the two-record rule sees it: its type (and for an error, whether it is fatal)."""
    kind = row.last_type
    if kind is None:
        return "no readable last record"
    if kind == "error":
        return "a fatal error" if row.two_record_status == "failed" else "a non-fatal error"
    article = "an" if kind[:1] in "aeio" else "a"  # a user record, an assistant record
    return f"{article} {kind} record"


def _why_the_fold_differs(fold_side: _Side) -> str:
    row = fold_side.row
    if row.status == "invalid":
        problem = f" ({row.problem})" if row.problem else ""
        return (
            f"The {fold_side.label} listing validates every record and says invalid{problem}; "
            "the two-record summary does not validate (it only needs a meta record first), so it does not see that."
        )
    reason = ""
    if row.last_type in ("claim", "note"):
        reason = f": a trailing {row.last_type} is inert in the fold, so the records before it decide"
    elif row.last_type == "error" and row.two_record_status != "failed":
        reason = ": a non-fatal error does not end a run"
    return f"The {fold_side.label} listing folds the whole run and says {row.status}{reason}."


def _summary_rule_explanation(run: str, fold_side: _Side, summary_side: _Side) -> str:
    fold_row, summary_row = fold_side.row, summary_side.row
    return (
        f"Expected difference, not an error: both sides hold the same records of {run} (last seq "
        f"{fold_row.last_seq}, and the last record is byte-identical). The {summary_side.label} listing reads "
        f"only the first and last record and goes by the last one's type: {_last_record_words(summary_row)} "
        f"gives {summary_row.status}. {_why_the_fold_differs(fold_side)} Applying the two-record rule to the "
        f"{fold_side.label} side's own first and last record gives {summary_row.status} too."
    )


def _unexplained_hints(a: _Side, b: _Side) -> list[str]:
    """Why neither rule explains a status difference on what look like the same records."""
    hints = []
    for side in (a, b):
        row = side.row
        if row.two_record_status is None:
            why = f": {row.problem}" if row.problem else ""
            hints.append(f"{side.label} could not read the journal whole{why}, so the records cannot be compared")
        elif row.last_sha256 is None:
            hints.append(f"{side.label} did not read its last record, so the records cannot be shown to be the same")
    for side, other in ((a, b), (b, a)):
        rule = side.row.two_record_status
        if rule is not None and rule != other.row.status:
            hints.append(
                f"the two-record rule on {side.label}'s own first and last record gives {rule}, not {other.row.status}"
            )
    return hints


def _missing(run: str, present: _Side, absent_label: str) -> str:
    row = present.row
    text = f"{run} is listed by {present.label} ({row.status}) but {absent_label} has no journal for it."
    if row.status == "invalid" and row.two_record_status is None:
        why = f" ({row.problem})" if row.problem else ""
        text += (
            f" The journal is invalid{why}: migrate refuses a journal it cannot copy faithfully (a line that "
            "does not parse, seqs out of order, no records) and names it with the reason."
        )
    return text


def _explains_by_summary_rule(fold_side: _Side, summary_side: _Side) -> bool:
    """The rule applied to the fold side's own first and last record gives the summary side's status, on
    provably the same last record."""
    fold_row, summary_row = fold_side.row, summary_side.row
    return (
        fold_row.two_record_status is not None
        and fold_row.two_record_status == summary_row.status
        and fold_row.last_sha256 is not None
        and fold_row.last_sha256 == summary_row.last_sha256
        and fold_row.last_seq == summary_row.last_seq
    )


def compare_run(
    run: str, a: RunSummary | None, b: RunSummary | None, label_a: str = "a", label_b: str = "b"
) -> ComparedRun:
    """The verdict for one run, by cause (see the module doc)."""
    if a is None and b is None:
        raise ValueError(f"run {run!r} is in neither listing")
    if a is None:
        assert b is not None
        return ComparedRun(run, None, b.status, "missing_a", _missing(run, _Side(b, label_b), label_a))
    if b is None:
        return ComparedRun(run, a.status, None, "missing_b", _missing(run, _Side(a, label_a), label_b))
    side_a, side_b = _Side(a, label_a), _Side(b, label_b)

    def verdict(kind: Verdict, explanation: str) -> ComparedRun:
        return ComparedRun(run, a.status, b.status, kind, explanation)

    status_words = [f"{label_a} says {a.status} but {label_b} says {b.status}"] if a.status != b.status else []
    records_differ = _record_differences(side_a, side_b)
    if records_differ:
        return verdict(
            "discrepancy",
            "The two sides hold different records: " + "; ".join(records_differ + status_words) + ".",
        )
    # Created and model come from the first record: when its bytes are provably the same on both sides,
    # a difference there is how a listing reads it (a fold that refuses the version takes no model), not data.
    same_first = a.first_sha256 is not None and a.first_sha256 == b.first_sha256
    fields_differ = [] if same_first else _field_differences(side_a, side_b)
    if fields_differ:
        return verdict(
            "discrepancy",
            "The listings read the run's first record differently: " + "; ".join(status_words + fields_differ) + ".",
        )
    if a.status == b.status:
        return verdict("agree", f"Both listings say {a.status}.")
    if is_turn_in_flight(a, b):
        return verdict("documented", _documented_explanation(run, label_a, label_b))
    if is_turn_in_flight(b, a):
        return verdict("documented", _documented_explanation(run, label_b, label_a))
    if _explains_by_summary_rule(side_a, side_b):
        return verdict("summary_rule", _summary_rule_explanation(run, side_a, side_b))
    if _explains_by_summary_rule(side_b, side_a):
        return verdict("summary_rule", _summary_rule_explanation(run, side_b, side_a))
    words = status_words + _unexplained_hints(side_a, side_b)
    return verdict("discrepancy", "The listings disagree and no listing rule explains it: " + "; ".join(words) + ".")


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
    """One finding per run the listings disagree on: ``listing_documented`` (info) for the turn in flight,
    ``listing_summary_rule`` (info) for a difference the two-record rule explains, ``listing_discrepancy``
    (error) for any other, including a run listed on one side only. The message is the row's explanation."""
    return [
        Finding.of(row["run"], None, FINDING_CODE[row["verdict"]], row["explanation"], source)
        for row in comparison_rows(table)
        if row["verdict"] in FINDING_CODE
    ]
