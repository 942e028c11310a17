"""Why a run ended, or what it waits for, in the same words everywhere (banners, rows, TimeTravel).

From the fold (PROTOCOL 5): the last terminal's reason and message, the last assistant ``stop_reason``, the
open deferrals a suspended run waits on (tool, note, handle), the pending calls of a turn in flight, and
whether a new turn follows the last terminal (``stale_terminal``: the status still names the old ending).
An ``invalid`` run names its first error finding. The texts are plain; the views escape them (a deferral's
note and handle are written by tools and are as untrusted as message content).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from journaltools.exports.html import Banner, Tone
from journaltools.folding import FoldResult, PendingCall
from journaltools.folding.phrases import NO_ENDING, reopening_text, unanswered_text
from journaltools.protocol.findings import Finding

_TITLES: dict[str, str] = {
    "completed": "Completed",
    "open": "Open",
    "suspended": "Suspended",
    "error": "Ended in error",
    "budget": "Token budget exhausted",
    "max_iterations": "Iteration cap reached",
    "invalid": "Invalid journal",
}

_TONES: dict[str, Tone] = {
    "completed": "ok",
    "open": "info",
    "suspended": "warn",
    "error": "error",
    "budget": "warn",
    "max_iterations": "warn",
    "invalid": "error",
}


def title_of(status: str) -> str:
    return _TITLES.get(status, f"Ended: {status}")


def tone_of(status: str) -> Tone:
    return _TONES.get(status, "muted")


def finding_text(finding: Finding) -> str:
    """``seq 3: unknown_protocol — <message>`` (the seq left out when the finding has none)."""
    where = f"seq {finding.seq}: " if finding.seq is not None else ""
    return f"{where}{finding.code} — {finding.message}"


def call_state(call: PendingCall) -> str:
    """A pending call's state in words: deferred (waiting for an answer), approved once, or waiting to run."""
    if call.deferred is not None:
        return "deferred"
    if call.call_approved:
        return "approved once"
    return "waiting"


def pending_text(call: PendingCall) -> str:
    """``shell (tu_1): deferred — note "…", handle "…"`` for one pending call."""
    words = f"{call.name} ({call.id}): {call_state(call)}"
    if call.deferred is not None:
        extras = (
            f'note "{call.deferred.note}"' if call.deferred.note else "",
            f'handle "{call.deferred.handle}"' if call.deferred.handle else "",
        )
        shown = ", ".join(extra for extra in extras if extra)
        words += f" — {shown}" if shown else ""
    return words


def waiting_text(waiting_for: str | None) -> str:
    """What a run that has not ended (or will resume) waits for, in words (a count of calls: ``unanswered_text``)."""
    if waiting_for == "answer":
        return "waiting for an answer to a deferred call"
    if waiting_for == "tools":
        return "waiting for the results of its tool calls"
    if waiting_for == "model":
        return "waiting for the model (the conversation ends with a user message)"
    # No terminal and nothing in flight: the process may have died long ago, so the run is not "running".
    return NO_ENDING


@dataclass(frozen=True, slots=True)
class Why:
    """Everything a post-mortem reads first, from one fold."""

    status: str
    terminal_reason: str | None
    terminal_message: str | None
    last_stop_reason: str | None
    stale_terminal: bool
    waiting_for: str | None
    pending: list[PendingCall] = field(default_factory=list)
    open_deferrals: list[PendingCall] = field(default_factory=list)
    problem: str | None = None
    #: For a run the newest line reopened: its last ending and who reopened it (``folding.phrases``).
    reopening: str | None = None

    @classmethod
    def of(cls, result: FoldResult, status: str | None = None) -> Why:
        state = result.state
        terminal = state.terminal if state is not None else None
        errors = [finding for finding in result.findings if finding.severity == "error"]
        problem = None
        if errors:
            more = f" (+{len(errors) - 1} more error findings)" if len(errors) > 1 else ""
            problem = finding_text(errors[0]) + more
        return cls(
            status=status or result.status,
            terminal_reason=terminal.reason if terminal is not None else None,
            terminal_message=(terminal.message or None) if terminal is not None else None,
            last_stop_reason=(state.last_stop_reason or None) if state is not None else None,
            stale_terminal=result.stale_terminal,
            waiting_for=result.waiting_for,
            pending=list(result.pending_calls),
            # The runtime lists open deferrals by call id; pending_calls are in message order.
            open_deferrals=sorted(
                (call for call in result.pending_calls if call.deferred is not None), key=lambda c: c.id.encode()
            ),
            problem=problem,
            reopening=reopening_text(result),
        )

    def detail(self) -> str:
        """The one line under the banner's title: the terminal's message, what the run waits on, or the problem."""
        if self.status == "invalid":
            return self.problem or "the journal breaks the protocol (see its findings)"
        parts: list[str] = []
        if self.reopening:
            parts.append(f"{self.reopening}: the runtime lists it open")
        elif self.terminal_message:
            parts.append(self.terminal_message)
        if self.open_deferrals:
            parts.append("waiting for an answer: " + "; ".join(pending_text(c) for c in self.open_deferrals))
        others = [call for call in self.pending if call.deferred is None]
        if others:
            ended = self.status != "open"
            parts.append(f"{unanswered_text(len(others), ended=ended)}: " + "; ".join(pending_text(c) for c in others))
        if not parts and self.terminal_reason is None:
            parts.append(waiting_text(self.waiting_for))
        return "; ".join(parts)

    def note(self) -> str:
        """The small print: the last stop reason and, when a new turn follows the last terminal, that the
        status names the previous turn's ending."""
        parts = []
        if self.last_stop_reason:
            parts.append(f"last stop reason: {self.last_stop_reason}")
        if self.stale_terminal:
            parts.append(
                f"a new turn follows the last terminal ({self.terminal_reason}): the next turn is in flight, "
                "the status still names the previous turn's ending"
            )
        return "; ".join(parts)

    def banner(self) -> Banner:
        return Banner(tone_of(self.status), title_of(self.status), self.detail(), self.note())


def banner_for(result: FoldResult, status: str | None = None) -> Banner:
    """The banner at the top of a conversation. ``status`` defaults to the fold's (``open``, the last terminal's
    reason, or ``invalid``); a caller passes a listing's own status to show that instead."""
    return Why.of(result, status).banner()


def first_error(findings: Sequence[Finding]) -> str | None:
    errors = [finding for finding in findings if finding.severity == "error"]
    return finding_text(errors[0]) if errors else None
