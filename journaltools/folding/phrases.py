"""What a folded run's state says to a person, shared by the command line and the widgets so both say the same
thing.

- ``attention_rank``: statuses in the order a triage looks at them (what needs a person first), not A to Z;
- ``why_stopped``: one line on why a folded run stopped or what it waits for.

Nothing here is HTML or terminal-safe: the views escape what they show, the CLI passes it through
``for_terminal``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from journaltools.goencoding.time import go_time

if TYPE_CHECKING:
    from journaltools.folding import FoldResult

#: Statuses by how urgently a person should look: a journal the runtime refuses, a run that failed, runs that
#: have not ended or wait for someone, runs cut short by a limit, and last the ones that completed.
ATTENTION: Final = ("invalid", "error", "open", "suspended", "budget", "max_iterations", "completed")


#: A journal (or a process run) that stops without a terminal: said as a post-mortem reads it, never "running"
#: (the process may have died months ago; only a time can say when it was last heard from).
NO_ENDING = "no ending recorded"


def ending_text(ending: str) -> str:
    """A process run's ending in words: a terminal reason, ``crashed``, or ``no ending recorded`` for the last
    process run of a journal with no terminal (the fold's ``running``)."""
    return NO_ENDING if ending == "running" else ending


def attention_rank(status: str) -> int:
    """``status``'s place in ``ATTENTION`` (an unknown terminal reason sorts after ``max_iterations``, before
    ``completed``: it ended, but not as planned)."""
    if status in ATTENTION:
        rank = ATTENTION.index(status)
        return rank if status != "completed" else len(ATTENTION)
    return ATTENTION.index("completed")


def reopening_text(result: FoldResult) -> str | None:
    """``completed at seq 3, then reopened by worker-9 at seq 4`` (``suspended at seq 4, then answered at seq 5:
    ready to resume``) for a run the newest line lists open again because records follow its last terminal; None
    for any other run (the August build lists the terminal)."""
    state, after = result.state, result.after_terminal
    if state is None or after is None or state.terminal is None:
        return None
    if not (state.reopened and state.generation.reopens_after_terminal):
        return None
    ending = f"{state.terminal.reason} at seq {after.terminal_seq}"
    if after.kind == "tool_result":  # the answer to a deferred call: what a suspended run waited for
        return f"{ending}, then answered at seq {after.seq}: ready to resume"
    if after.claimed_by is not None:
        return f"{ending}, then reopened by {after.claimed_by} at seq {after.seq}"
    what = f"a {after.kind} record" if after.kind != "unknown" else "a record of no known kind"
    return f"{ending}, then reopened by {what} at seq {after.seq}"


def unanswered_text(count: int, *, ended: bool) -> str:
    """The calls of a turn in flight: what an open run waits for, what an ended run left behind (it waits for
    nothing a reader can act on)."""
    calls = f"{count} tool call{'s' if count != 1 else ''}"
    return f"left {calls} unanswered" if ended else f"waiting for the results of {calls}"


def why_stopped(result: FoldResult) -> str:
    """Why a folded run stopped, or what it waits for, in one line beside its status (so the status's word is
    not said again): the first error of an invalid journal, the last terminal's message (or, for a run the
    newest line reopened, that ending and who reopened it), the deferred calls it waits on, the calls of a turn
    in flight, else the last stop reason. A run with no terminal and nothing in flight says "no ending recorded":
    its process may have died long ago, so it is not called running."""
    if result.status == "invalid":
        error = next((finding for finding in result.findings if finding.severity == "error"), None)
        if error is None:
            return "the journal breaks the protocol"
        where = f"seq {error.seq}: " if error.seq is not None else ""
        return f"{where}{error.code}: {error.message}"
    state = result.state
    parts: list[str] = []
    terminal = state.terminal if state is not None else None
    reopened = reopening_text(result)
    if reopened is not None:
        parts.append(f"{reopened}: the runtime lists it open")
    elif terminal is not None and terminal.message and not result.stale_terminal:
        parts.append(terminal.message)
    ended = result.status != "open"
    deferred = sum(1 for call in result.pending_calls if call.deferred is not None)
    waiting = len(result.pending_calls) - deferred
    if deferred:
        parts.append(f"waiting for an answer to {deferred} deferred call{'s' if deferred != 1 else ''}")
    if waiting:
        parts.append(unanswered_text(waiting, ended=ended))
    if result.stale_terminal:
        parts.append("a new turn follows the last terminal")
    if parts:
        return "; ".join(parts)
    stop = state.last_stop_reason if state is not None else ""
    if terminal is None:
        waits = "; waiting for the model" if result.waiting_for == "model" else ""
        return f"no ending recorded{waits}" + (f" (last stop reason: {stop})" if stop else "")
    return f"stop reason: {stop}" if stop else terminal.reason


def shown_time(value: datetime | str | None) -> str | None:
    """A time as every face shows it to a person: UTC, to the millisecond (``2026-08-21T07:14:03.512Z``), whatever
    offset and precision the journal or the store wrote (``--json`` and the tables' values keep those). None for no
    time; a text that is no time is shown as it is."""
    if value is None or value == "":
        return None
    moment = value if isinstance(value, datetime) else go_time(value)
    if moment is None:
        return str(value)
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
