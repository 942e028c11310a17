"""What a folded run's state says to a person, shared by the command line and the widgets so both say the same
thing.

- ``attention_rank``: statuses in the order a triage looks at them (what needs a person first), not A to Z;
- ``why_stopped``: one line on why a folded run stopped or what it waits for.

Nothing here is HTML or terminal-safe: the views escape what they show, the CLI passes it through
``for_terminal``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from journaltools.folding.facts import undated
from journaltools.goencoding.time import go_time

if TYPE_CHECKING:
    from journaltools.folding import FoldResult
    from journaltools.folding.fold import AfterTerminal

#: Statuses by how urgently a person should look: a journal the runtime refuses, a run that failed, runs that
#: have not ended or wait for someone, runs cut short by a limit, and last the ones that completed.
ATTENTION: Final = ("invalid", "error", "open", "suspended", "budget", "max_iterations", "completed")


#: A journal (or a process run) that stops without a terminal: said as a post-mortem reads it, never "running"
#: (the process may have died months ago; only a time can say when it was last heard from).
NO_ENDING = "no ending recorded"

#: What a run's "updated" is when no record of it is dated (every August journal): the store's time, not the run's.
STORE_UPDATED = "the file's modification time (or the stream's last message time), not the run's"


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
    return reopening_phrase(state.terminal.reason, after)


def reopening_phrase(terminal_reason: str, after: AfterTerminal) -> str:
    """``reopening_text`` of a run whose last terminal gave ``terminal_reason`` and ``after`` followed it (from a
    fold, or from the native walk's row)."""
    ending = f"{terminal_reason} at seq {after.terminal_seq}"
    if after.kind == "tool_result":  # the answer to a deferred call: what a suspended run waited for
        return f"{ending}, then answered at seq {after.seq}: ready to resume"
    if after.claimed_by is not None:
        return f"{ending}, then reopened by {after.claimed_by} at seq {after.seq}"
    what = f"a {after.kind} record" if after.kind != "unknown" else "a record of no known kind"
    return f"{ending}, then reopened by {what} at seq {after.seq}"


def approvals_text(approvals: Sequence[str]) -> str:
    """A run's standing approvals in one line: each tool once, in the order first approved, with how many decision
    records approved it when more than one (a long run journals one per decision: hundreds of the same names)."""
    counts = Counter(approvals)
    named = dict.fromkeys(approvals)
    return ", ".join(tool if counts[tool] == 1 else f"{tool} ({counts[tool]:,} times)" for tool in named)


def unanswered_text(count: int, *, ended: bool) -> str:
    """The calls of a turn in flight: what an open run waits for, what an ended run left behind (it waits for
    nothing a reader can act on)."""
    calls = f"{count} tool call{'s' if count != 1 else ''}"
    return f"left {calls} unanswered" if ended else f"waiting for the results of {calls}"


@dataclass(frozen=True, slots=True)
class Ending:
    """What the one line on why a run stopped is made of, whoever holds it: a fold (``ending_of``) or a ``runs``
    table row (the widgets), so both say it in the same words (``why_of``)."""

    status: str
    #: ``seq N: code: message`` of an invalid journal's first error.
    problem: str | None = None
    #: ``completed at seq 3, then reopened by worker-9 at seq 4`` (``reopening_text``), for a reopened run.
    reopening: str | None = None
    terminal_reason: str | None = None
    terminal_message: str | None = None
    stale_terminal: bool = False
    #: Calls of the turn in flight with no result: those a deferral answers later, and the others.
    deferred: int = 0
    unanswered: int = 0
    waiting_for: str | None = None
    last_stop_reason: str | None = None


def problem_text(seq: int | None, code: str, message: str) -> str:
    """An invalid journal's first error, as its why."""
    return f"{f'seq {seq}: ' if seq is not None else ''}{code}: {message}"


def ending_of(result: FoldResult) -> Ending:
    state = result.state
    terminal = state.terminal if state is not None else None
    error = next((finding for finding in result.findings if finding.severity == "error"), None)
    deferred = sum(1 for call in result.pending_calls if call.deferred is not None)
    return Ending(
        status=result.status,
        problem=problem_text(error.seq, error.code, error.message) if error is not None else None,
        reopening=reopening_text(result),
        terminal_reason=terminal.reason if terminal is not None else None,
        terminal_message=(terminal.message or None) if terminal is not None else None,
        stale_terminal=result.stale_terminal,
        deferred=deferred,
        unanswered=len(result.pending_calls) - deferred,
        waiting_for=result.waiting_for,
        last_stop_reason=(state.last_stop_reason or None) if state is not None else None,
    )


def ending_of_row(row: Mapping[str, Any], *, problem: str | None = None, reopening: str | None = None) -> Ending:
    """What ``why_of`` needs, from the columns of a ``runs`` table row (its status, terminal, calls in flight, stop
    reason): the native walk's row as it is tabled, or a row read back from a table. ``problem`` and ``reopening``
    are what a row's columns do not hold (an invalid journal's first error; who reopened it, and where)."""
    pending, deferred = int(row.get("pending_calls") or 0), int(row.get("open_deferrals") or 0)
    return Ending(
        status=str(row["status"]),
        problem=problem,
        reopening=reopening,
        terminal_reason=row.get("terminal_reason"),
        terminal_message=row.get("terminal_message"),
        stale_terminal=bool(row.get("stale_terminal")),
        deferred=deferred,
        unanswered=max(0, pending - deferred),
        waiting_for=row.get("waiting_for"),
        last_stop_reason=row.get("last_stop_reason"),
    )


def why_stopped(result: FoldResult) -> str:
    """Why a folded run stopped, or what it waits for, in one line beside its status (``why_of``)."""
    return why_of(ending_of(result))


def why_of(ending: Ending) -> str:
    """Why a run stopped, or what it waits for, in one line beside its status (so the status's word is not said
    again): the first error of an invalid journal, the last terminal's message (or, for a run the newest line
    reopened, that ending and who reopened it), the deferred calls it waits on, the calls of a turn in flight, else
    the last stop reason. A run with no terminal and nothing in flight says "no ending recorded": its process may
    have died long ago, so it is not called running."""
    if ending.status == "invalid":
        return ending.problem or "the journal breaks the protocol"
    parts: list[str] = []
    if ending.reopening is not None:
        parts.append(f"{ending.reopening}: the runtime lists it open")
    elif ending.terminal_message and not ending.stale_terminal:
        parts.append(ending.terminal_message)
    if ending.deferred:
        parts.append(f"waiting for an answer to {ending.deferred} deferred call{'s' if ending.deferred != 1 else ''}")
    if ending.unanswered:
        parts.append(unanswered_text(ending.unanswered, ended=ending.status != "open"))
    if ending.stale_terminal:
        parts.append("a new turn follows the last terminal")
    if parts:
        return "; ".join(parts)
    stop = ending.last_stop_reason
    if ending.terminal_reason is None:
        waits = "; waiting for the model" if ending.waiting_for == "model" else ""
        return f"{NO_ENDING}{waits}" + (f" (last stop reason: {stop})" if stop else "")
    return f"stop reason: {stop}" if stop else ending.terminal_reason


def shown_time(value: datetime | str | None) -> str | None:
    """A time as every face shows it to a person: UTC, to the millisecond (``2026-08-21T07:14:03.512Z``), whatever
    offset and precision the journal or the store wrote (``--json`` and the tables' values keep those). None for no
    time (Go's zero time included); a text that is no time is shown as it is."""
    if value is None or (isinstance(value, str) and undated(value)):  # Go's zero time: an undated record
        return None
    moment = value if isinstance(value, datetime) else go_time(value)
    if moment is None:
        return str(value)
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
