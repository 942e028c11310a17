"""Compare two listings run by run (``journaltools compare``): typically the file listing against JetStream's.

The runtime lists runs by two rules (``journaltools.sources.listing``): the file rule folds the whole journal and names
the last terminal's reason; the JetStream rule reads two records and says ``open`` unless the very last one is a
terminal. So the same records can list differently, in one direction only, and every difference is classified by
its cause:

- ``agree``: both listings say the same of the same records;
- ``documented``: the same records; the file rule names the last terminal's reason, the JetStream rule says
  ``open``, and a new turn (a user or assistant record) follows that terminal: the conversation's next turn is in
  flight, the case the runtime's own documentation names;
- ``summary_rule``: the same records, and only records that start no turn follow the last terminal
  (``memory_revisions`` after every run that read memory, a claim, a decision, a call approval, an unknown
  optional record); or the file rule refuses a journal that the JetStream rule reads from its two records; or
  the stream holds every record but they were published out of seq order, the meta message last, so the
  JetStream rule reads the meta record as the run's last (and the runtime could not append to the run there);
- ``discrepancy``: the two sides hold different records (the last seq or the last record's bytes differ), or no
  rule explains the difference. Only this is an error;
- ``missing_a`` / ``missing_b``: a run listed on one side only.

There is no same-records case where the file rule says ``open`` and the JetStream rule a terminal reason: that
is always a discrepancy. Every row explains itself in plain words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from journaltools.protocol.findings import Finding
from journaltools.sources.listing import TURN_KINDS, RunSummary

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


def _record_differences(a: _Side, b: _Side) -> list[str]:
    ra, rb = a.row, b.row
    if ra.last_seq != rb.last_seq:
        return [f"the last seq is {ra.last_seq} in {a.label} but {rb.last_seq} in {b.label}"]
    if ra.last_sha256 is not None and rb.last_sha256 is not None and ra.last_sha256 != rb.last_sha256:
        return [f"the last record (seq {ra.last_seq}) has different bytes in {a.label} and {b.label}"]
    if ra.records is not None and rb.records is not None and ra.records != rb.records:
        return [f"{a.label} holds {ra.records} records, {b.label} {rb.records}"]
    if ra.created is not None and rb.created is not None and ra.created != rb.created:
        return [f"the run was created at {ra.created} per {a.label} but at {rb.created} per {b.label}"]
    return []


def _sides_by_rule(a: _Side, b: _Side) -> tuple[_Side, _Side] | None:
    """(file side, JetStream side), or None when both sides list by the same rule."""
    if a.row.rule == "file" and b.row.rule == "jetstream":
        return a, b
    if a.row.rule == "jetstream" and b.row.rule == "file":
        return b, a
    return None


def _kinds_words(kinds: Sequence[str]) -> str:
    shown = ", ".join(kinds[:4]) + (f" and {len(kinds) - 4} more" if len(kinds) > 4 else "")
    return f"{len(kinds)} record{'s' if len(kinds) != 1 else ''} ({shown})"


def _classify_rule_difference(run: str, file: _Side, stream: _Side) -> tuple[Verdict, str] | None:
    """The verdict a listing rule explains, or None."""
    frow, srow = file.row, stream.row
    same = f"Both sides hold the same records of {run} (last seq {frow.last_seq}, the last record byte-identical)."
    if frow.status == "invalid" and srow.status != "invalid":
        why = f" ({frow.problem})" if frow.problem else ""
        return "summary_rule", (
            f"Expected difference, not an error. {same} The {file.label} listing folds the whole journal and "
            f"refuses it{why}; the {stream.label} listing reads only the meta record and the last record, "
            f"which decode, and says {srow.status}."
        )
    after = frow.after_terminal
    if srow.status != "open" or not after:
        return None
    if any(kind in TURN_KINDS for kind in after):
        return "documented", (
            f"Expected difference, not an error: the case the runtime documents. {same} The last terminal "
            f"({frow.status}) is followed by {_kinds_words(after)}: the conversation's next turn is in flight. "
            f"The {file.label} listing folds the journal and still names the last terminal's reason, "
            f"{frow.status}; the {stream.label} listing sees a last record that is not a terminal and says open."
        )
    return "summary_rule", (
        f"Expected difference, not an error. {same} The last terminal ({frow.status}) is followed by "
        f"{_kinds_words(after)}, none of which starts a turn. The {file.label} listing names the last "
        f"terminal's reason; the {stream.label} listing goes by the last record alone, which is not a "
        "terminal, and says open."
    )


def _published_out_of_order(run: str, file: _Side, stream: _Side) -> str | None:
    """The explanation when the stream holds every record the file does, but its meta message is the run's last."""
    frow, srow = file.row, stream.row
    held = srow.held_out_of_order
    if held is None or frow.records is None or held != (frow.records, frow.last_seq):
        return None
    return (
        f"Expected difference, not an error, but a broken copy. Both sides hold the {frow.records} records of {run} "
        f"(up to seq {frow.last_seq}), but the {stream.label} stream holds them out of seq order, its meta message "
        f"last (a copy published subject by subject). The {stream.label} listing reads the run's last message, the "
        f"meta record, and says {srow.status}; the {file.label} listing folds the journal and says {frow.status}. "
        f"The runtime could not append to this run on {stream.label}: its writer would continue from seq "
        f"{srow.last_seq}, whose successor is taken."
    )


def _missing(run: str, present: _Side, absent_label: str) -> str:
    row = present.row
    text = f"{run} is listed by {present.label} ({row.status}) but {absent_label} has no journal for it."
    if row.status == "invalid" and row.problem:
        text += f" The journal is invalid ({row.problem})."
    return text


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
    by_rule = _sides_by_rule(side_a, side_b)
    reordered = _published_out_of_order(run, *by_rule) if by_rule is not None else None
    if reordered is not None:
        return verdict("summary_rule", reordered)
    differences = _record_differences(side_a, side_b)
    if differences:
        return verdict(
            "discrepancy", "The two sides hold different records: " + "; ".join(differences + status_words) + "."
        )
    if a.status == b.status:
        return verdict("agree", f"Both listings say {a.status}.")
    explained = _classify_rule_difference(run, *by_rule) if by_rule is not None else None
    if explained is not None:
        return verdict(*explained)
    hint = (
        "both list by the same rule, so the same records must list the same"
        if by_rule is None
        else "no listing rule turns these records into these two statuses"
    )
    return verdict("discrepancy", f"The listings disagree: {'; '.join(status_words)}; {hint}.")


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
