"""Why a run ended, or what it waits for, in the same words everywhere (banners, rows, TimeTravel).

Post-mortem starts here (PROTOCOL.md section 10): a failed run names its fatal error, a cancelled one who
cancelled it and why, an invalid one its first error finding; every other status says what the run waits
for, and the last assistant ``stop_reason`` is always given when there is one.
"""

from __future__ import annotations

from journaltools.fold import FoldResult
from journaltools.listing import status_of_fold
from journaltools.protocol.findings import Finding
from journaltools.widgets._html import Banner, Tone

_TITLES: dict[str, str] = {
    "completed": "Completed",
    "open": "Open",
    "suspended": "Suspended",
    "cancelled": "Cancelled",
    "failed": "Failed",
    "invalid": "Invalid journal",
}

_TONES: dict[str, Tone] = {
    "completed": "ok",
    "open": "info",
    "suspended": "warn",
    "cancelled": "muted",
    "failed": "error",
    "invalid": "error",
}


def finding_text(finding: Finding) -> str:
    """``seq 3: schema_violation — <message>`` (the seq left out when the finding has none)."""
    where = f"seq {finding.seq}: " if finding.seq is not None else ""
    return f"{where}{finding.code} — {finding.message}"


def waiting_text(waiting_for: str | None, pending: int = 0) -> str:
    """What a run that has not ended waits for, in words."""
    if waiting_for == "answer":
        return "waiting for an answer to a deferred call"
    if waiting_for == "tools":
        calls = f"{pending} tool call{'s' if pending != 1 else ''}" if pending else "its tool calls"
        return f"waiting for the results of {calls}"
    if waiting_for == "model":
        return "waiting for the model (the conversation ends with a user message)"
    return "nothing to wait for"


def reason_text(
    status: str,
    *,
    end_reason: str | None = None,
    stop_reason: str | None = None,
    waiting_for: str | None = None,
    problem: str | None = None,
    pending: int = 0,
) -> str:
    """The one-line reason shown in a RunBrowser row, from the ``runs`` table's columns."""
    if status in ("failed", "cancelled") and end_reason:
        return end_reason
    if status == "invalid":
        return problem or "the journal breaks the protocol (see its findings)"
    if status == "completed":
        return f"stop reason: {stop_reason}" if stop_reason else "completed"
    if status in ("open", "suspended"):
        return waiting_text(waiting_for, pending)
    return end_reason or ""


def banner_for(result: FoldResult, status: str | None = None) -> Banner:
    """The banner at the top of a conversation: the status, why it ended or what it waits for, and the last
    stop reason. ``status`` defaults to the listing's rule (``status_of_fold``)."""
    status = status or status_of_fold(result)
    tone = _TONES.get(status, "muted")
    stop = f"last stop reason: {result.stop_reason}" if result.stop_reason else ""
    ending = result.ending
    if status in ("failed", "cancelled") and ending is not None:
        return Banner(tone, f"{_TITLES[status]} at seq {ending.seq}", ending.text, stop)
    if status == "invalid":
        errors = [finding for finding in result.findings if finding.severity == "error"]
        more = f" (+{len(errors) - 1} more error findings)" if len(errors) > 1 else ""
        detail = (finding_text(errors[0]) + more) if errors else "the journal breaks the protocol"
        note = f"read leniently, the fold says {result.status}" + (f"; {stop}" if stop else "")
        return Banner(tone, _TITLES[status], detail, note)
    if status == "suspended":
        deferred = [call for call in result.pending if call.deferred is not None and call.approval is None]
        calls = ", ".join(f"{call.name} ({call.id}), deferred for {call.deferred}" for call in deferred)
        detail = f"waiting for an answer: {calls}" if calls else waiting_text("answer")
        return Banner(tone, _TITLES[status], detail, stop)
    if status == "open":
        waiting = result.resume.waiting_for
        if waiting == "tools":
            calls = ", ".join(f"{call.name} ({call.id})" for call in result.pending)
            detail = f"{waiting_text('tools', len(result.pending))}: {calls}"
        elif waiting is None and not result.messages:
            detail = "no conversation yet"
        else:
            detail = waiting_text(waiting)
        return Banner(tone, _TITLES[status], detail, stop)
    if status == "completed":
        return Banner(tone, _TITLES[status], stop or "the conversation ends with an assistant message")
    return Banner(tone, _TITLES.get(status, status), ending.text if ending is not None else "", stop)
