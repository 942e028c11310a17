"""The places of a run a reader goes to, and what a find looks through: for every face of the conversation.

"Jump to" reaches the ending, the turn in flight, each process run, each finding, and each call that went wrong or
still waits (a tool error, a call waiting for its result, a deferral, a call approved once and not run yet). A find
looks through every message of the run, whatever page it is on: its text, thinking, provider blocks, and each
call's tool name, input and result (with a deferral's note and handle), every word of the query in one message, in
any case. The notebook's conversation view and the anywidget one read these; the offline report finds and jumps
by the same kinds of place in its own page (``report_page``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from journaltools.exports.why import Why
from journaltools.folding import Segment
from journaltools.folding.conversation import CallState, CallView, MessageView, MessageViews, Part, PendingView
from journaltools.folding.phrases import NO_ENDING, ending_text
from journaltools.protocol.findings import Finding


@dataclass(frozen=True, slots=True)
class Target:
    """A place "jump to" reaches: a label and the seq it names."""

    label: str
    seq: int


class Arranged(Protocol):
    """What the places are read from: a conversation arranged for display (``conversation.ConversationModel``)."""

    status: str
    messages: Sequence[MessageView]
    pending: PendingView | None
    why: Why
    segments: list[Segment]
    finding_values: list[Finding]

    def ending_seq(self) -> int: ...

    def call_marks(self) -> Iterable[tuple[int, str, bool, CallState]]: ...


#: How each call that went wrong or waits is named in "jump to", by its state (an error first, whatever its state).
CALL_PLACES: Final = {
    "error": "tool error",
    "waiting": "call waiting for its result",
    "deferred": "deferral",
    "approved once": "approved once, not run yet",
}


def targets_of(model: Arranged) -> list[Target]:
    """Every place "jump to" reaches, in journal order after the ending and the turn in flight."""
    ending = model.ending_seq()
    if model.why.terminal_reason is None and model.status != "invalid":
        found = [Target(f"the last record (seq {ending}): {NO_ENDING}", ending)]
    else:
        found = [Target(f"the ending: {model.why.banner().title.lower()} (seq {ending})", ending)]
    if model.pending is not None:
        found.append(Target(f"the turn in flight (seq {model.pending.seq})", model.pending.seq))
    for segment in model.segments:
        who = segment.claimed_by or "first run"
        found.append(Target(f"process run #{segment.index}: {who} → {ending_text(segment.ending)}", segment.first_seq))
    for finding in model.finding_values:
        if finding.seq is not None:
            found.append(Target(f"finding at seq {finding.seq}: {finding.code}", finding.seq))
    for seq, name, is_error, state in model.call_marks():
        kind = "error" if is_error else state
        if kind in CALL_PLACES:
            found.append(Target(f"{CALL_PLACES[kind]}: {name} (seq {seq})", seq))
    return found


def call_marks_of(
    messages: Sequence[MessageView], pending: PendingView | None
) -> Iterator[tuple[int, str, bool, CallState]]:
    """Each call of ``messages`` and of the turn in flight as ``(seq, tool name, is_error, state)``, in order."""
    marks = messages.call_marks() if isinstance(messages, MessageViews) else _marks_of_views(messages)
    yield from marks
    if pending is not None:
        for call in pending.calls:
            yield pending.seq, call.name, call.is_error, call.state


def _marks_of_views(messages: Sequence[MessageView]) -> Iterator[tuple[int, str, bool, CallState]]:
    for message in messages:
        for part in message.parts:
            if part.call is not None:
                yield message.seq, part.call.name, part.call.is_error, part.call.state


def _call_words(call: CallView) -> list[str]:
    return [call.name, call.input_text, call.result_text or "", call.note, call.handle]


def _part_words(part: Part) -> list[str]:
    return _call_words(part.call) if part.call is not None else [part.text, part.label]


def haystack(message: MessageView) -> str:
    """What a find looks through in one message, lower-cased."""
    words = [word for part in (*message.parts, *message.paired_parts) for word in _part_words(part)]
    return "\n".join(words).lower()


def pending_haystack(pending: PendingView) -> str:
    words = [pending.text, *pending.thinking, *(word for part in pending.providers for word in _part_words(part))]
    words += [word for call in pending.calls for word in _call_words(call)]
    return "\n".join(words).lower()


def find_seqs(model: Arranged, query: str) -> list[int]:
    """The seqs of the messages (and of the turn in flight) holding every word of ``query``, in journal order;
    none for a query of no words."""
    words = query.lower().split()
    if not words:
        return []
    found = [message.seq for message in model.messages if _holds(haystack(message), words)]
    if model.pending is not None and _holds(pending_haystack(model.pending), words):
        found.append(model.pending.seq)
    return found


def _holds(text: str, words: Sequence[str]) -> bool:
    return all(word in text for word in words)


__all__: Sequence[str] = ["CALL_PLACES", "Arranged", "Target", "call_marks_of", "find_seqs", "haystack", "targets_of"]
