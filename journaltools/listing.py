"""The two listing rules (PROTOCOL.md section 7), pure functions over records.

The file backend folds every run; JetStream summarizes from the first and last record only. They
disagree in one documented case: a run whose last record is an assistant turn with tool calls in
flight is ``open`` by the fold and ``completed`` by the two-record summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from journaltools.backends.base import ListingStatus, RunSummary
from journaltools.fold import FoldResult, fold
from journaltools.protocol.records import AssistantRecord, MetaRecord, RawRecord, validate_record


def _last_type_and_calls(last: RawRecord | None) -> tuple[str | None, bool]:
    if last is None:
        return None, False
    validated = validate_record(last)
    if isinstance(validated, AssistantRecord):
        return "assistant", any(block.type == "tool_use" for block in validated.content)
    return last.type, False


def status_of_fold(result: FoldResult) -> ListingStatus:
    """The file listing's status of a lenient fold: ``invalid`` when any finding is an error, else the fold's.

    Every view that shows a run's status (``ls``, the ``runs`` table, the widgets) uses this one rule."""
    if any(finding.severity == "error" for finding in result.findings):
        return "invalid"
    return result.status


def summarize_by_fold(run: str, records: Sequence[RawRecord], complete: bool = True) -> RunSummary:
    """The file listing's row: the run folded leniently; a run with any error finding is ``invalid``."""
    if not complete:  # refused (a corrupt line): not folded, but its parseable records still say something
        first = records[0] if records else None
        created = first.ts if first is not None and first.type == "meta" else None
        last_seq = max((record.seq or 0 for record in records), default=0)
        return RunSummary(run, "invalid", created, last_seq, len(records), None)
    result = fold(records, strict=False, run=run)
    status = status_of_fold(result)
    last_type, last_has_calls = _last_type_and_calls(records[-1] if records else None)
    return RunSummary(
        run,
        status,
        records[0].ts if records else None,
        (records[-1].seq or 0) if records else 0,
        len(records),
        result.model,
        last_type,
        last_has_calls,
    )


def status_from_last_record(last: RawRecord | None) -> ListingStatus:
    """JetStream's rule: the status by the type of the last record alone."""
    if last is None:
        return "invalid"
    validated = validate_record(last)
    kind = last.type
    if kind == "assistant":
        return "completed"
    if kind == "deferral":
        return "suspended"
    if kind == "error":
        fatal = getattr(validated, "fatal", last.body.get("fatal"))
        return "failed" if fatal is True else "open"
    if kind == "cancel":
        return "cancelled"
    return "open"


def summarize_two_records(run: str, first: RawRecord | None, last: RawRecord | None) -> RunSummary:
    """The JetStream listing's row, from ``journal.R.1`` and the last message on ``journal.R.*``."""
    meta = validate_record(first) if first is not None else None
    model = meta.fingerprint.model if isinstance(meta, MetaRecord) else None
    created = first.ts if first is not None else None
    status = status_from_last_record(last) if isinstance(meta, MetaRecord) else "invalid"
    last_type, last_has_calls = _last_type_and_calls(last)
    last_seq = (last.seq or 0) if last is not None else 0
    return RunSummary(run, status, created, last_seq, None, model, last_type, last_has_calls)
