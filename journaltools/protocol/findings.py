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
    # journaltools' own, beyond the interface's list:
    "unreadable_journal": "error",  # a journal that cannot be read (permission, a FIFO or link, an I/O error)
    "not_a_journal": "info",  # a file in a source directory that is not a journal: not read
    # Turn checkpoints (journaltools.turnjournal.analysis): what a turn store holds that needs an operator.
    "turn_call_requested": "warning",  # a requested call in an active turn: it may have run; never replayed by itself
    "turn_call_uncertain": "warning",  # a call whose outcome is uncertain in an active turn: an operator decides
    "turn_stuck": "warning",  # an active record unchanged in its phase for longer than the threshold
    "turn_unacknowledged": "warning",  # completing/failing/interrupting longer than the threshold: no acknowledgement
    "turn_index_orphan": "warning",  # an owner-index entry without a record of that owner (a create that crashed)
    "turn_index_missing": "error",  # an active record missing from its owner's index: startup recovery never sees it
    "turn_index_invalid": "error",  # an owner-index blob that does not parse: recovery of that owner fails
    "turn_record_invalid": "error",  # a stored record that is not a valid turn record
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
