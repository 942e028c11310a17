"""A folded run's messages as a person reads them: each message's parts (text, thinking, tool calls beside the
results that answer them, provider blocks), the turn in flight and what it waits for, and the header's facts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from journaltools._base.readable import readable_json
from journaltools.folding import FoldResult
from journaltools.folding.texts import conversation_digest, raw_json_text
from journaltools.protocol.blocks import Message, ProviderBlock, ToolResultBlock, ToolUseBlock, to_anthropic

CallState = Literal["answered", "deferred", "approved once", "waiting"]

PartKind = Literal["text", "thinking", "call", "result", "provider", "empty"]


@dataclass(frozen=True, slots=True)
class CallView:
    """A tool call with its input and (when answered) its result, shown side by side."""

    id: str
    name: str
    input_text: str
    result_text: str | None
    is_error: bool
    state: CallState
    note: str = ""
    handle: str = ""

    @property
    def flags(self) -> list[str]:
        """Plain words about the call: error, and its state when it is not simply answered."""
        words = ["error"] if self.is_error else []
        if self.state != "answered":
            words.append(self.state)
        return words


@dataclass(frozen=True, slots=True)
class Part:
    """One block of a message. ``label`` is a provider block's kind; ``text`` the block's text or JSON."""

    kind: PartKind
    text: str = ""
    call: CallView | None = None
    label: str = ""


@dataclass(frozen=True, slots=True)
class MessageView:
    """One committed message. ``seq`` is the record it came from (``FoldResult.message_seqs``)."""

    index: int
    role: str
    parts: list[Part]
    seq: int = 0
    #: Tool results of this message drawn beside their calls (so not again here).
    paired_results: int = 0
    #: The index of the earliest message holding a call those results answer: a window that starts after it
    #: does not show the calls, so it shows these results on their own (``paired_parts``).
    paired_from: int | None = None
    paired_parts: list[Part] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PendingView:
    """The assistant turn in flight: its text, thinking, provider blocks and calls, each call with its state
    (nothing of it is committed to the conversation)."""

    seq: int
    iteration: int
    stop_reason: str
    text: str
    calls: list[CallView]
    thinking: list[str] = field(default_factory=list)
    providers: list[Part] = field(default_factory=list)

    @property
    def waiting(self) -> int:
        return sum(1 for call in self.calls if call.state != "answered")


def _call(
    use: ToolUseBlock, answer: ToolResultBlock | None, state: CallState, note: str = "", handle: str = ""
) -> CallView:
    return CallView(
        id=use.id,
        name=use.name,
        input_text=readable_json(raw_json_text(use.input)),
        result_text=answer.content if answer is not None else None,
        is_error=answer.is_error if answer is not None else False,
        state=state,
        note=note,
        handle=handle,
    )


def _provider_part(block: ProviderBlock) -> Part:
    """A provider's own block: its kind, and its raw JSON as the journal holds it (reindented, never re-encoded)."""
    return Part("provider", readable_json(raw_json_text(block.raw, indent=False)), label=block.kind)


class MessageViews(Sequence[MessageView]):
    """Every committed message as parts (``message_views``), each made when first asked for: a page of a run of
    100,000 records draws its 50 messages without making the other views. What pairs a result with its call is
    read once, in one walk over the blocks; a view then needs only its own message.

    A tool_result that answers a call made before it (in an earlier message, or earlier in the same one) is drawn
    with that call, not again; ``call_marks`` says what each call is (its seq, name, error, state) without drawing
    its input."""

    __slots__ = (
        "_call_messages",
        "_call_positions",
        "_calls",
        "_first_call",
        "_messages",
        "_results",
        "_seqs",
        "_views",
    )

    def __init__(self, messages: Sequence[Message], seqs: Sequence[int] | None = None) -> None:
        # A copy: a run followed as it is written folds on into the same list, and these views are of this moment.
        self._messages = tuple(messages)
        count = len(self._messages)
        known = list(seqs[:count]) if seqs is not None else []
        self._seqs = known + [0] * (count - len(known))
        results: dict[str, ToolResultBlock] = {}
        #: Every call, in order, with the index of the message making it and its block's index there: ``call_marks``
        #: without a second walk. Plain lists of ints: a pair per call would be one more object per call for the
        #: collector to scan.
        calls: list[ToolUseBlock] = []
        call_messages: list[int] = []
        call_positions: list[int] = []
        #: Where each call id is first made: its index in ``calls``.
        first_call: dict[str, int] = {}
        # One walk over every block of a run's messages, its open's share of them: so kept to the bare loop.
        for index, message in enumerate(self._messages):
            content = message.content
            if not content:
                continue
            for position, block in enumerate(content):
                use = block.tool_use
                if use is not None:
                    if use.id not in first_call:
                        first_call[use.id] = len(calls)
                    calls.append(use)
                    call_messages.append(index)
                    call_positions.append(position)
                    continue
                result = block.tool_result
                if result is not None and result.tool_use_id not in results:
                    results[result.tool_use_id] = result
        self._results, self._first_call = results, first_call
        self._calls, self._call_messages, self._call_positions = calls, call_messages, call_positions
        self._views: list[MessageView | None] = [None] * count

    @property
    def seqs(self) -> list[int]:
        """Each message's record seq, in order (do not change it)."""
        return self._seqs

    @property
    def made(self) -> int:
        """How many of the views have been made so far (a page makes its own, a find every one)."""
        return sum(1 for view in self._views if view is not None)

    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> MessageView: ...
    @overload
    def __getitem__(self, index: slice) -> list[MessageView]: ...
    def __getitem__(self, index: int | slice) -> MessageView | list[MessageView]:
        if isinstance(index, slice):
            return [self._view(i) for i in range(*index.indices(len(self._messages)))]
        if index < 0:
            index += len(self._messages)
        if not 0 <= index < len(self._messages):
            raise IndexError(index)
        return self._view(index)

    def __iter__(self) -> Iterator[MessageView]:
        return (self._view(index) for index in range(len(self._messages)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (MessageViews, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessageViews({len(self)} messages)"

    def call_marks(self, *, settled: bool = True) -> Iterator[tuple[int, str, bool, CallState]]:
        """Each call of the committed messages, in order, as ``(seq, tool name, is_error, state)``: what "jump to"
        needs of a call, without drawing its input (the view of the call says the same). ``settled=False`` leaves
        out the calls answered without an error, which "jump to" does not list (most calls of a long run)."""
        results, seqs = self._results, self._seqs
        for use, index in zip(self._calls, self._call_messages, strict=True):
            answer = results.get(use.id)
            if answer is None:
                yield seqs[index], use.name, False, "waiting"
            elif settled or answer.is_error:
                yield seqs[index], use.name, answer.is_error, "answered"

    def _view(self, index: int) -> MessageView:
        view = self._views[index]
        if view is None:
            view = self._views[index] = self._made(index)
        return view

    def _made_at(self, call: str) -> tuple[int, int] | None:
        """Where the call ``call`` is first made: (message index, block index)."""
        first = self._first_call.get(call)
        return None if first is None else (self._call_messages[first], self._call_positions[first])

    def _made(self, index: int) -> MessageView:
        message = self._messages[index]
        parts: list[Part] = []
        paired = 0
        paired_from: int | None = None
        paired_parts: list[Part] = []
        for position, block in enumerate(message.content or ()):
            if block.text is not None:
                parts.append(Part("text", block.text.text))
            elif block.thinking is not None:
                parts.append(Part("thinking", block.thinking.text))
            elif block.tool_use is not None:
                answer = self._results.get(block.tool_use.id)
                parts.append(Part("call", call=_call(block.tool_use, answer, "answered" if answer else "waiting")))
            elif block.tool_result is not None:
                made = self._made_at(block.tool_result.tool_use_id)
                if made is None or made >= (index, position):  # never paired with a call: show it on its own
                    parts.append(Part("result", block.tool_result.content, label=block.tool_result.tool_use_id))
                else:
                    paired += 1
                    paired_from = made[0] if paired_from is None else min(paired_from, made[0])
                    paired_parts.append(Part("result", block.tool_result.content, label=block.tool_result.tool_use_id))
            elif block.provider is not None:
                parts.append(_provider_part(block.provider))
            else:
                parts.append(Part("empty"))
        return MessageView(index, message.role, parts, self._seqs[index], paired, paired_from, paired_parts)


def message_views(messages: list[Message], seqs: list[int] | None = None) -> list[MessageView]:
    """Every message as parts, with its record's seq; a tool_result that answers a call shown is drawn with
    that call, not again (``MessageViews``, made at once)."""
    return list(MessageViews(messages, seqs))


def pending_view(result: FoldResult) -> PendingView | None:
    state = result.state
    if state is None or state.pending is None:
        return None
    pending = state.pending
    answers = {block.tool_use_id: block for block in pending.results}
    unanswered = {call.id: call for call in result.pending_calls}
    texts: list[str] = []
    thinking: list[str] = []
    providers: list[Part] = []
    calls: list[CallView] = []
    for block in pending.assistant.content or ():
        if block.text is not None:
            texts.append(block.text.text)
        elif block.thinking is not None:
            thinking.append(block.thinking.text)
        elif block.provider is not None:
            providers.append(_provider_part(block.provider))
        if block.tool_use is None:
            continue
        use = block.tool_use
        waiting = unanswered.get(use.id)
        if use.id in pending.answered or waiting is None:
            calls.append(_call(use, answers.get(use.id), "answered"))
        elif waiting.deferred is not None:
            calls.append(_call(use, None, "deferred", waiting.deferred.note, waiting.deferred.handle))
        else:
            calls.append(_call(use, None, "approved once" if waiting.call_approved else "waiting"))
    return PendingView(
        pending.seq, pending.iteration, pending.stop_reason, "\n\n".join(texts), calls, thinking, providers
    )


def header_of(result: FoldResult, status: str) -> dict[str, Any]:
    """The header's facts as plain values (the token only as its digest)."""
    state = result.state
    header: dict[str, Any] = {"run": result.run, "status": status, "last_seq": result.last_seq}
    header["records"] = result.records
    header["waiting_for"] = result.waiting_for
    if state is None:
        return header
    fp = state.fingerprint
    header.update(
        provider=fp.provider,
        model=fp.model,
        thinking_mode=fp.thinking_mode,
        reasoning_effort=fp.reasoning_effort or None,
        max_tokens=fp.max_tokens,
        max_iterations=fp.max_iterations,
        system_hash=fp.system_hash[:12],
        tools_hash=fp.tools_hash[:12],
        caller=state.caller or None,
        interactive=state.interactive,
        conversation=conversation_digest(state.conversation_token),
        next_iteration=state.next_iteration,
        last_stop_reason=state.last_stop_reason or None,
        approvals=list(state.approvals or ()),
        call_approvals=[approval.tool_use_id for approval in state.call_approvals or ()],
        memory_revisions=dict(state.memory_revisions or {}),
        **state.counters.to_json(),
        total_tokens=state.counters.total_tokens,
    )
    return header


def anthropic_input(result: FoldResult) -> list[dict[str, Any]]:
    """The folded conversation as Anthropic Messages API input (``protocol.blocks.to_anthropic``: roles alternate,
    no empty block), what ``show --anthropic`` prints to replay a run."""
    return to_anthropic(result.messages)
