"""What a folded run's state says to a person, shared by the command line and the widgets so both say the same
thing.

- ``attention_rank``: statuses in the order a triage looks at them (what needs a person first), not A to Z;
- ``why_stopped``: one line on why a folded run stopped or what it waits for.

Nothing here is HTML or terminal-safe: the views escape what they show, the CLI passes it through
``for_terminal``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from journaltools.folding import FoldResult

#: Statuses by how urgently a person should look: a journal the runtime refuses, a run that failed, runs that
#: have not ended or wait for someone, runs cut short by a limit, and last the ones that completed.
ATTENTION: Final = ("invalid", "error", "open", "suspended", "budget", "max_iterations", "completed")


def attention_rank(status: str) -> int:
    """``status``'s place in ``ATTENTION`` (an unknown terminal reason sorts after ``max_iterations``, before
    ``completed``: it ended, but not as planned)."""
    if status in ATTENTION:
        rank = ATTENTION.index(status)
        return rank if status != "completed" else len(ATTENTION)
    return ATTENTION.index("completed")


def why_stopped(result: FoldResult) -> str:
    """Why a folded run stopped, or what it waits for, in one line beside its status (so the status's word is
    not said again): the first error of an invalid journal, the last terminal's message, the deferred calls it
    waits on, the calls of a turn in flight, else the last stop reason. A run with no terminal and nothing in
    flight says "no ending recorded": its process may have died long ago, so it is not called running."""
    if result.status == "invalid":
        error = next((finding for finding in result.findings if finding.severity == "error"), None)
        if error is None:
            return "the journal breaks the protocol"
        where = f"seq {error.seq}: " if error.seq is not None else ""
        return f"{where}{error.code}: {error.message}"
    state = result.state
    parts: list[str] = []
    terminal = state.terminal if state is not None else None
    if terminal is not None and terminal.message and not result.stale_terminal:
        parts.append(terminal.message)
    deferred = sum(1 for call in result.pending_calls if call.deferred is not None)
    waiting = len(result.pending_calls) - deferred
    if deferred:
        parts.append(f"waiting for an answer to {deferred} deferred call{'s' if deferred != 1 else ''}")
    if waiting:
        parts.append(f"waiting for the results of {waiting} tool call{'s' if waiting != 1 else ''}")
    if result.stale_terminal:
        parts.append("a new turn follows the last terminal")
    if parts:
        return "; ".join(parts)
    stop = state.last_stop_reason if state is not None else ""
    if terminal is None:
        waits = "; waiting for the model" if result.waiting_for == "model" else ""
        return f"no ending recorded{waits}" + (f" (last stop reason: {stop})" if stop else "")
    return f"stop reason: {stop}" if stop else terminal.reason
