"""The two listing rules (PROTOCOL.md section 7), pure functions over records.

The file backend folds every run; JetStream summarizes from the first and last record only. They
disagree in one documented case: a run whose last record is an assistant turn with tool calls in
flight is ``open`` by the fold and ``completed`` by the two-record summary. Other differences follow
from the two-record rule too (a trailing claim or note, a record that breaks the schema); each row
carries the digests of its first and last record and the two-record rule's status on its own records,
so ``journaltools.compare`` can tell a difference the rule explains from one where the records differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from journaltools.backends.base import ListingStatus, RunSummary
from journaltools.fold import FoldResult, fold
from journaltools.protocol.envelope import is_timestamp
from journaltools.protocol.findings import Finding
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


def _sha256(record: RawRecord | None) -> str | None:
    return hashlib.sha256(record.raw).hexdigest() if record is not None else None


@dataclass(frozen=True, slots=True)
class UnfoldedFacts:
    """What a run's records say without folding them: the facts every view shows for an invalid run."""

    created: str | None
    """The first record's ``ts`` when that record is a meta record with a valid timestamp."""
    last_seq: int
    """The last record's ``seq`` (0 when it has none, as for an empty journal)."""
    model: str | None
    """The model the meta record's fingerprint names, whether or not the journal folds (a newer version, say)."""


def unfolded_facts(records: Sequence[RawRecord]) -> UnfoldedFacts:
    """``created``, ``last_seq`` and ``model`` from the records alone.

    ``ls`` and the ``runs`` table both use this for a run that is invalid (refused by the reader, or folded
    with an error), so the two agree on every run; for a run that folds cleanly it equals the fold's values."""
    if not records:
        return UnfoldedFacts(None, 0, None)
    first, last = records[0], records[-1]
    is_meta = first.type == "meta"
    fingerprint = first.body.get("fingerprint") if is_meta else None
    model = fingerprint.get("model") if isinstance(fingerprint, dict) else None
    return UnfoldedFacts(
        created=first.ts if is_meta and is_timestamp(first.ts) else None,
        last_seq=last.seq or 0,
        model=model if isinstance(model, str) else None,
    )


def _problem(findings: Sequence[Finding]) -> str | None:
    """The first error, in one line: what a listing row says about why the run is invalid."""
    first = next((finding for finding in findings if finding.severity == "error"), None)
    if first is None:
        return None
    where = f"seq {first.seq}: " if first.seq is not None else ""
    return f"{where}{first.code}: {first.message}"


def summarize_by_fold(
    run: str, records: Sequence[RawRecord], complete: bool = True, findings: Sequence[Finding] = ()
) -> RunSummary:
    """The file listing's row: the run folded leniently; a run with any error finding is ``invalid``.

    ``complete`` is False for a journal the reader refused (a corrupt line); ``findings`` are the reader's
    findings for it, which say why in ``problem``.
    """
    first = records[0] if records else None
    last = records[-1] if records else None
    facts = unfolded_facts(records)
    if not complete:  # refused (a corrupt line): not folded, but its parseable records still say something
        refused = _problem(findings) or "the journal was refused: a line does not parse"
        return RunSummary(
            run,
            "invalid",
            facts.created,
            facts.last_seq,
            len(records),
            facts.model,
            problem=refused,
            first_sha256=_sha256(first),
        )
    result = fold(records, strict=False, run=run)
    status = status_of_fold(result)
    problem = _problem(result.findings)
    last_type, last_has_calls = _last_type_and_calls(last)
    two_records = summarize_two_records(run, first, last).status if records else None
    return RunSummary(
        run,
        status,
        facts.created,
        facts.last_seq,
        len(records),
        result.model or facts.model,
        last_type,
        last_has_calls,
        first_sha256=_sha256(first),
        last_sha256=_sha256(last),
        two_record_status=two_records,
        problem=problem,
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


def _two_record_problem(first: RawRecord | None, last: RawRecord | None, meta: object) -> str | None:
    if first is None:
        return "journal.R.1 holds no readable record"
    if not isinstance(meta, MetaRecord):
        return "the first record is not a valid meta record"
    if last is None:
        return "the last record does not parse"
    return None


def summarize_two_records(run: str, first: RawRecord | None, last: RawRecord | None) -> RunSummary:
    """The JetStream listing's row, from ``journal.R.1`` and the last message on ``journal.R.*``."""
    meta = validate_record(first) if first is not None else None
    model = meta.fingerprint.model if isinstance(meta, MetaRecord) else None
    created = first.ts if first is not None else None
    status = status_from_last_record(last) if isinstance(meta, MetaRecord) else "invalid"
    last_type, last_has_calls = _last_type_and_calls(last)
    last_seq = (last.seq or 0) if last is not None else 0
    return RunSummary(
        run,
        status,
        created,
        last_seq,
        None,
        model,
        last_type,
        last_has_calls,
        first_sha256=_sha256(first),
        last_sha256=_sha256(last),
        two_record_status=status,
        problem=_two_record_problem(first, last, meta) if status == "invalid" else None,
    )
