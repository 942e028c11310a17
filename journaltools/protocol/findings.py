"""Finding codes (INTERFACES.md) and the finding value every check reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

#: code -> severity. The codes of the interface (docs/interfaces.md) keep their meaning; more may be added.
FINDING_SEVERITY: dict[str, Severity] = {
    "torn_tail": "warning",
    "corrupt_line": "error",
    "empty_journal": "error",
    "not_meta_first": "error",
    "version_mismatch": "error",
    "seq_not_increasing": "error",
    "seq_gap": "warning",
    "duplicate_result": "warning",
    "listing_documented": "info",
    "listing_summary_rule": "info",
    "listing_discrepancy": "error",
    "invalid_run_id": "error",
    "resumed_after_torn_tail": "error",
    "noncanonical_line": "warning",
    "duplicate_meta": "error",
    "missing_payload": "error",
    "unknown_protocol": "error",
    "result_outside_turn": "error",
    "unanswered_call": "warning",
    "unknown_call_result": "warning",
    "tool_use_id_mismatch": "warning",
    "unknown_deferral": "warning",
    "unknown_terminal_reason": "warning",
    "turn_without_claim": "warning",
    "stream_config": "warning",
    "schema_violation": "warning",
    # journaltools' own, beyond the interface's list:
    "unreadable_journal": "error",
    "journal_too_large": "error",  # more bytes (decompressed) or records than the bounds per journal: not read
    # a JetStream record stored under a subject naming another seq than its body (the runtime never writes one)
    "subject_seq_mismatch": "warning",  # a journal that cannot be read (permission, a FIFO or link, an I/O error)
    "not_a_journal": "info",  # a file in a source directory that is not a journal: not read
    # meta.run_id names another run than the journal's file or subject: the runtime's listings go by meta.run_id
    "run_id_mismatch": "warning",
    # a run listed, then gone before it was read (a retention job deleted it, a rename replaced it): left out
    "vanished": "warning",
    # a journal without the newest line's additive fields (record times, meta.agent, result kinds): what analysis
    # is missing for it, so nobody reads "untimed" as "instant"
    "degraded_analysis": "info",
    # a value the runtime accepts that the column it lands in cannot hold (a time outside years 1-9999 UTC, a duration
    # beyond int64 nanoseconds): null in its table, the rest of the run loaded
    "value_out_of_range": "warning",
    # a load or audit given prices (--prices): a run whose model (or a tier it used) the price table does not price,
    # so its cost is null, never zero
    "no_price": "info",
    # a record dated before the dated record before it (another host's clock, a resume on a clock behind): the
    # runtime accepts it; no interval across the two is shown as a duration
    "times_out_of_order": "warning",
}


@dataclass(frozen=True, slots=True)
class Finding:
    run: str | None
    seq: int | None
    code: str
    severity: Severity
    message: str
    source: str = ""

    @classmethod
    def of(cls, run: str | None, seq: int | None, code: str, message: str, source: str = "") -> Finding:
        return cls(run, seq, code, FINDING_SEVERITY[code], message, source)

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if k != "source"}


def at_least(severity: str, threshold: str) -> bool:
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]
