"""The places of a run a reader goes to, and what a find looks through: for every face of the conversation.

"Jump to" reaches the ending, the turn in flight, each process run, each finding, and each call that went wrong or
still waits (a tool error, a call waiting for its result, a deferral, a call approved once and not run yet). A find
looks through every message of the run, whatever page it is on: its text, thinking, provider blocks, and each
call's tool name, input and result (with a deferral's note and handle), every word of the query in one message, in
any case. The notebook's conversation view and the anywidget one read these; the offline report finds and jumps
by the same kinds of place in its own page (``report_page``). Every face answers the same keys (``JUMPS``,
``FIND_STEPS``, ``FIND_BOX_KEY``), declared here once.
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

#: The places one key reaches, after the last place reached: its key, and the kind of place (the name on the
#: report's button). The report, the notebook's conversation view and the anywidget one all read this table.
JUMPS: Final = (("e", "error"), ("p", "pending call"), ("d", "deferral"), ("a", "approval"), ("r", "process run"))
#: The keys that step through what a find found: to the next message found, and to the previous one.
FIND_STEPS: Final = {"n": 1, "N": -1}
#: The key that puts the keyboard in the find box.
FIND_BOX_KEY: Final = "/"


@dataclass(frozen=True, slots=True)
class Target:
    """A place "jump to" reaches: a label and the seq it names, and the kind of place a key of ``JUMPS`` reaches
    it as ("error", "process run"...; "" for a place no key reaches: the ending, a finding)."""

    label: str
    seq: int
    jump: str = ""


class Arranged(Protocol):
    """What the places are read from: a conversation arranged for display (``conversation.ConversationModel``)."""

    status: str
    messages: Sequence[MessageView]
    pending: PendingView | None
    why: Why
    segments: list[Segment]
    finding_values: list[Finding]

    def ending_seq(self) -> int: ...

    def call_marks(self, *, settled: bool = True) -> Iterable[tuple[int, str, bool, CallState]]: ...


#: How each call that went wrong or waits is named in "jump to", by its state (an error first, whatever its state).
CALL_PLACES: Final = {
    "error": "tool error",
    "waiting": "call waiting for its result",
    "deferred": "deferral",
    "approved once": "approved once, not run yet",
}
#: The kind of place (a name of ``JUMPS``) each such call is for its key, by the same states.
CALL_JUMPS: Final = {"error": "error", "waiting": "pending call", "deferred": "deferral", "approved once": "approval"}


def targets_of(model: Arranged) -> list[Target]:
    """Every place "jump to" reaches, in journal order after the ending and the turn in flight."""
    ending = model.ending_seq()
    if model.why.terminal_reason is None and model.status != "invalid":
        found = [Target(f"the last record (seq {ending}): {NO_ENDING}", ending)]
    else:
        found = [Target(f"the ending: {model.why.banner().title.lower()} (seq {ending})", ending)]
    if model.pending is not None:
        found.append(Target(f"the turn in flight (seq {model.pending.seq})", model.pending.seq, "pending call"))
    for segment in model.segments:
        who = segment.claimed_by or "first run"
        label = f"process run #{segment.index}: {who} → {ending_text(segment.ending)}"
        found.append(Target(label, segment.first_seq, "process run"))
    for finding in model.finding_values:
        if finding.seq is not None:
            found.append(Target(f"finding at seq {finding.seq}: {finding.code}", finding.seq))
    for seq, name, is_error, state in model.call_marks(settled=False):
        kind = "error" if is_error else state
        if kind in CALL_PLACES:
            found.append(Target(f"{CALL_PLACES[kind]}: {name} (seq {seq})", seq, CALL_JUMPS[kind]))
    return found


def next_place(targets: Sequence[Target], key: str, here: Target | None) -> Target | None:
    """The place of the kind ``key`` reaches (``JUMPS``) after ``here`` (the place last reached, by any key or
    "jump to"), in journal order (places of one seq in the order ``targets`` gives them); round again to the first
    past the last. None for a key of no kind, or a kind the run has no place of."""
    kind = dict(JUMPS).get(key)
    places = sorted(
        ((target.seq, index, target) for index, target in enumerate(targets) if target.jump == kind and kind),
        key=lambda place: place[:2],
    )
    if not places:
        return None
    if here is not None:
        # ``here`` may be of a list since grown (a followed run): past its seq when it is no longer among them.
        at = next((index for index, target in enumerate(targets) if target == here), len(targets))
        later = [target for seq, index, target in places if (seq, index) > (here.seq, at)]
        if later:
            return later[0]
    return places[0][2]


class Found:
    """What a find found (the seqs, in journal order) and which of them is shown: the one "n of m" of every face."""

    def __init__(self, model: Arranged | None = None, query: str = "") -> None:
        self.query = query
        self.seqs = find_seqs(model, query) if model is not None else []
        #: The index in ``seqs`` of the message shown, -1 before the first step.
        self.at = -1

    def label(self) -> str:
        """ "3 of 12" once stepped, "0 of 12" before, "no match", or "" for a query of no words."""
        if not self.query.split():
            return ""
        if not self.seqs:
            return "no match"
        return f"{self.at + 1:,} of {len(self.seqs):,}"

    def step(self, step: int) -> int | None:
        """The seq of the next (``step`` 1) or previous (-1) message found, round again past either end."""
        if not self.seqs:
            return None
        self.at = (self.at + step) % len(self.seqs) if self.at >= 0 or step > 0 else len(self.seqs) - 1
        return self.seqs[self.at]


def call_marks_of(
    messages: Sequence[MessageView], pending: PendingView | None, *, settled: bool = True
) -> Iterator[tuple[int, str, bool, CallState]]:
    """Each call of ``messages`` and of the turn in flight as ``(seq, tool name, is_error, state)``, in order;
    ``settled=False`` leaves out the calls answered without an error."""
    if isinstance(messages, MessageViews):
        yield from messages.call_marks(settled=settled)
    else:
        yield from _marks_of_views(messages, settled)
    if pending is not None:
        for call in pending.calls:
            if settled or call.is_error or call.state != "answered":
                yield pending.seq, call.name, call.is_error, call.state


def _marks_of_views(messages: Sequence[MessageView], settled: bool) -> Iterator[tuple[int, str, bool, CallState]]:
    for message in messages:
        for part in message.parts:
            call = part.call
            if call is not None and (settled or call.is_error or call.state != "answered"):
                yield message.seq, call.name, call.is_error, call.state


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


__all__: Sequence[str] = [
    "CALL_JUMPS",
    "CALL_PLACES",
    "FIND_BOX_KEY",
    "FIND_STEPS",
    "JUMPS",
    "Arranged",
    "Found",
    "Target",
    "call_marks_of",
    "find_seqs",
    "haystack",
    "next_place",
    "targets_of",
]
