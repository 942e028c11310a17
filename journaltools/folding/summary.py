"""What a runs row takes from a journal's fold, the same whichever fold made it.

The native walk (``folding.native``) answers a ``NativeRun`` for each journal it takes; the Python fold answers a
``FoldResult``, of which ``python_summary`` keeps the same values under the same names (``PythonSummary``). The tables'
one run row (``tables.build``) is made from either, so a rule for a column is said once. A journal the Python path
could not fold (a refused read), or that has no meta record to fold from, has no value for what the runtime's state
would have said: those are None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from journaltools.folding.facts import undated
from journaltools.folding.fold import FoldResult
from journaltools.folding.native import NativeRun
from journaltools.folding.state import COUNTER_NAMES
from journaltools.protocol.credentials import conversation_digest
from journaltools.protocol.generations import Generation, generation_of_version
from journaltools.protocol.kinds import Meta, Record

#: A proven meta record, first in a journal the native walk takes (``native.usable_first``), or any journal's
#: first record: what the run row reads its meta columns and its first time from.
FirstRecord = Record


class PythonSummary(NamedTuple):
    """What the runs row of a journal the Python fold tabled takes from it (``python_summary``): ``NativeRun``'s
    values under its names."""

    records: int
    last_seq: int
    segments: int
    resumes: int
    stale_terminal: bool
    reopened: bool | None
    turns: int | None
    context_tokens: int | None
    terminal_reason: str | None
    terminal_message: str | None
    last_stop_reason: str | None
    next_iteration: int | None
    waiting_for: str | None
    #: ``state.COUNTER_NAMES`` order (each None without a state).
    counters: tuple[int | None, ...]
    tool_calls_by_kind: list[tuple[str, int]] | None
    pending_calls: int | None
    open_deferrals: int | None
    approvals: list[str] | None
    call_approvals: list[str] | None
    memory_keys: list[str] | None
    #: The last record's own time (``""`` when undated or not folded), and the last one Go does not call zero.
    last_time: str
    last_dated_time: str


#: The fold's values a runs row holds, whichever fold made them.
RunSummary = PythonSummary | NativeRun

_NO_COUNTERS = (None,) * len(COUNTER_NAMES)


def python_summary(records: Sequence[Record], result: FoldResult | None, read_last_seq: int) -> PythonSummary:
    """What the runs row of a journal the Python path tabled takes from its records and lenient fold (``result``
    None: a refused read, never folded; ``read_last_seq`` is then the last seq the reader saw)."""
    state = result.state if result is not None else None
    resumes = sum(1 for record in records if record.kind == "claim")
    last_dated = next((record.time for record in reversed(records) if not undated(record.time)), "")
    if result is None or state is None:
        # Nothing the runtime's state would say: only what the records and the fold's own walk tell.
        return PythonSummary(
            records=len(records),
            last_seq=result.last_seq if result is not None else read_last_seq,
            segments=len(result.segments) if result is not None else 0,
            resumes=resumes,
            stale_terminal=result.stale_terminal if result is not None else False,
            reopened=None,
            turns=None,
            context_tokens=None,
            terminal_reason=None,
            terminal_message=None,
            last_stop_reason=None,
            next_iteration=None,
            waiting_for=result.waiting_for if result is not None else None,
            counters=_NO_COUNTERS,
            tool_calls_by_kind=None,
            pending_calls=None,
            open_deferrals=None,
            approvals=None,
            call_approvals=None,
            memory_keys=None,
            last_time="",
            last_dated_time=last_dated,
        )
    terminal, pending, counters = state.terminal, state.pending, state.counters
    return PythonSummary(
        len(records),
        result.last_seq,
        len(result.segments),
        resumes,
        result.stale_terminal,
        state.reopened,
        state.turns,
        state.context_tokens,
        terminal.reason if terminal is not None else None,
        (terminal.message or None) if terminal is not None else None,
        state.last_stop_reason or None,
        state.next_iteration,
        result.waiting_for,
        tuple(getattr(counters, name) for name in COUNTER_NAMES),
        list(counters.by_kind_tokens().items()),
        len(result.pending_calls),
        len(pending.open_deferrals()) if pending is not None else 0,
        list(state.approvals or ()),
        [approval.tool_use_id for approval in state.call_approvals or ()],
        sorted(state.memory_revisions or {}),
        records[-1].time if records else "",
        last_dated,
    )


class MetaColumns(NamedTuple):
    """What a runs row says of its meta record (all None without one): ``created`` as the journal wrote it."""

    generation: str | None
    created: str | None
    model: str | None
    provider: str | None
    prompt: str | None
    interactive: bool | None
    agent: str | None
    caller: str | None
    #: The conversation token's digest (``texts.conversation_digest``), never the token.
    conversation: str | None


NO_META: MetaColumns = MetaColumns(*(None,) * len(MetaColumns._fields))


def meta_columns(first: FirstRecord | None) -> tuple[MetaColumns, Generation | None]:
    """The meta columns of a journal whose first record is ``first``, and the rules its version names (None without
    a meta record, or for a version no build writes)."""
    meta: Meta | None = first.meta if first is not None else None
    if meta is None:
        return NO_META, None
    generation = generation_of_version(meta.version)
    fingerprint = meta.fingerprint
    columns = MetaColumns(
        generation.name if generation is not None else None,
        meta.created,
        fingerprint.model,
        fingerprint.provider,
        meta.prompt,
        meta.interactive,
        meta.agent or None,
        meta.caller or None,
        conversation_digest(meta.conversation_token),
    )
    return columns, generation


def dated_by_last_record(generation: Generation | None) -> bool:
    """Whether a run is dated by its last record's own time (the newest line dates every record), else by its
    store's; a version no build writes (None) is read by the newest line's rules, which date every record."""
    return generation is None or generation.dates_records


__all__ = [
    "NO_META",
    "FirstRecord",
    "MetaColumns",
    "PythonSummary",
    "RunSummary",
    "dated_by_last_record",
    "meta_columns",
    "python_summary",
]
