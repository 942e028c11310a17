"""What the fold produces: the runtime's ``RunState``, field for field, as typed values.

``RunState`` holds exactly what fisk-ai's ``runstate.Fold`` returns, so it can be compared with the Go state
(``to_go_json``, in the shape of the journal's own generation) and resumed from. The newest line's fold added the
agent, one time per message, the result times, when the run ended, turns, context tokens, ``Reopened`` and
counters by provider kind; the fold computes them for August journals too (their records are simply undated,
and their results' kinds come from ``remote``), but the August state marshals without them. What journaltools
adds for a post-mortem (status, process-run segments, findings, the pending calls with their deferral notes) lives
beside it in ``FoldResult`` (``folding.fold``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from journaltools.protocol.blocks import Message, ToolResultBlock, ToolUseBlock, tool_uses
from journaltools.protocol.credentials import masked_repr
from journaltools.protocol.generations import NEWEST, Generation
from journaltools.protocol.kinds import ZERO_TIME, CallApproval, Deferred, Fingerprint, Terminal, kind_token

_INT64 = 1 << 64
_INT64_MAX = (1 << 63) - 1


def wrap_int64(value: int) -> int:
    """``value`` as Go's int64 arithmetic leaves it (sums of counters wrap around on overflow)."""
    value %= _INT64
    return value - _INT64 if value > _INT64_MAX else value


@dataclass(slots=True)
class Counters:
    llm_calls: int = 0
    tool_calls: int = 0
    #: Calls a remote provider ran (the newest line: dispatched ones only).
    remote_tool_calls: int = 0
    #: Calls an MCP server ran (dispatched): the newest line's counter, computed for August journals too (0).
    mcp_tool_calls: int = 0
    in_tokens: int = 0
    out_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    #: Part of ``out_tokens``.
    thinking_tokens: int = 0
    #: Every result counted by its provider kind's number (``kinds.KIND_TOKENS``); None when there is no result,
    #: as Go leaves the map nil.
    tool_calls_by_kind: dict[int, int] | None = None

    def wrapped(self) -> Counters:
        by_kind = self.tool_calls_by_kind
        wrapped = Counters()
        for name in COUNTER_NAMES:
            setattr(wrapped, name, wrap_int64(getattr(self, name)))
        if by_kind is not None:
            wrapped.tool_calls_by_kind = {kind: wrap_int64(n) for kind, n in by_kind.items()}
        return wrapped

    @property
    def total_tokens(self) -> int:
        """The runtime CLI's total: input, output and both cache tiers (thinking is inside output)."""
        return self.in_tokens + self.out_tokens + self.cache_read_tokens + self.cache_create_tokens

    def to_json(self) -> dict[str, int]:
        """The integer counters by name (``tool_calls_by_kind`` is ``by_kind_tokens``)."""
        return {name: getattr(self, name) for name in COUNTER_NAMES}

    def by_kind_tokens(self) -> dict[str, int]:
        """The calls per provider kind, keyed by the kind's token (``application``, ``mcp``...), in kind order."""
        by_kind = self.tool_calls_by_kind or {}
        return {kind_token(kind): by_kind[kind] for kind in sorted(by_kind)}

    def to_newest_go_json(self) -> dict[str, Any]:
        """As the newest line marshals ``Counters``: its JSON tags, zeros omitted, kinds keyed by number."""
        out: dict[str, Any] = {}
        for name in COUNTER_NAMES:
            value = getattr(self, name)
            if value:
                out[name] = value
            if name == "mcp_tool_calls" and self.tool_calls_by_kind:
                # Go marshals an int map key in decimal and sorts the keys as text.
                out["tool_calls_by_kind"] = dict(sorted((str(k), n) for k, n in self.tool_calls_by_kind.items()))
        return out


#: The integer counters' names, in the runtime's order: what every view of them iterates.
COUNTER_NAMES: tuple[str, ...] = tuple(name for name in Counters.__slots__ if name != "tool_calls_by_kind")
#: The counters the August build's ``Counters`` has.
_AUGUST_COUNTERS: tuple[str, ...] = tuple(name for name in COUNTER_NAMES if name != "mcp_tool_calls")


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """An assistant turn whose calls are not all answered: nothing of it is committed to ``messages``."""

    assistant: Message
    iteration: int
    stop_reason: str
    #: The results gathered so far, in journal order.
    results: tuple[ToolResultBlock, ...]
    answered: frozenset[str]
    deferred: dict[str, Deferred]
    #: The seq of the assistant record that opened the turn.
    seq: int
    #: That record's time (``ZERO_TIME`` when undated).
    time: str = ZERO_TIME

    def unanswered_calls(self) -> list[ToolUseBlock]:
        """The turn's calls without a result, in message order."""
        return [call for call in tool_uses(self.assistant) if call.id not in self.answered]

    def open_deferrals(self) -> list[Deferred]:
        """Deferred calls not answered yet, sorted by call id (byte order), as the runtime lists them."""
        open_ = [d for call_id, d in self.deferred.items() if call_id not in self.answered]
        return sorted(open_, key=lambda deferred: deferred.tool_use_id.encode())


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call of the turn in flight that has no result yet, with what the journal says about it."""

    id: str
    name: str
    input: bytes
    deferred: Deferred | None
    call_approved: bool


@dataclass(slots=True)
class RunState:
    version: int
    run_id: str
    fingerprint: Fingerprint
    prompt: str
    interactive: bool
    #: A credential: never shown, logged or exported (``conversation_digest`` is what tables carry).
    conversation_token: str
    caller: str
    messages: list[Message]
    counters: Counters = field(default_factory=Counters)
    next_iteration: int = 0
    pending: PendingTurn | None = None
    last_stop_reason: str = ""
    approvals: list[str] | None = None
    call_approvals: list[CallApproval] | None = None
    memory_revisions: dict[str, int] | None = None
    terminal: Terminal | None = None
    #: The rules the journal was folded by (its ``meta.version``'s build).
    generation: Generation = NEWEST
    agent: str = ""
    #: One per message of ``messages``: when it was journaled, as Go writes the time (``ZERO_TIME`` when undated).
    times: list[str] = field(default_factory=list)
    #: When each answered call's result was journaled, by tool_use_id (dated results only; None when none is).
    result_times: dict[str, str] | None = None
    #: The last terminal's time; ``ZERO_TIME`` when undated, when there is none, or when the run was reopened.
    ended: str = ZERO_TIME
    #: The prompt and every user record (merged follow-ups too).
    turns: int = 1
    #: What the last model response read: its input and both cache tiers.
    context_tokens: int = 0
    #: Something was journaled after the last terminal: the run is open again (``ending()`` is None).
    reopened: bool = False

    def __repr__(self) -> str:
        return masked_repr(self, "conversation_token")

    def completed(self) -> bool:
        return self.terminal is not None and self.terminal.reason == "completed"

    def ending(self) -> Terminal | None:
        """The runtime's ``Ending()``: the last terminal, unless something was journaled after it."""
        return None if self.reopened else self.terminal

    def to_go_json(self) -> dict[str, Any]:
        """The state exactly as Go's encoding/json marshals the runtime's RunState (Go field names, nil as
        null), in the shape of the generation it was folded by: what the real corpora record, and so what the
        corpus tests compare with. The newest line's RunState has the August fields and more."""
        pending = self.pending
        state: dict[str, Any] = {
            "Version": self.version,
            "RunID": self.run_id,
            "Fingerprint": _plain(self.fingerprint),
            "Prompt": self.prompt,
            "Interactive": self.interactive,
            "ConversationToken": self.conversation_token,
            "Caller": self.caller,
            "Messages": _plain(self.messages),
            "Counters": {_go_name(name): getattr(self.counters, name) for name in _AUGUST_COUNTERS},
            "NextIteration": self.next_iteration,
            "Pending": None if pending is None else _pending_go_json(pending),
            "LastStopReason": self.last_stop_reason,
            "Approvals": self.approvals,
            "CallApprovals": _plain(self.call_approvals) if self.call_approvals is not None else None,
            "MemoryRevisions": self.memory_revisions,
            "Terminal": _plain(self.terminal) if self.terminal is not None else None,
        }
        if not self.generation.extended_records:
            return state
        return {
            **state,
            "Agent": self.agent,
            "Times": list(self.times),
            "ResultTimes": dict(self.result_times) if self.result_times is not None else None,
            "Ended": self.ended,
            # The newest Counters has JSON tags: snake_case keys, zeros omitted, kinds keyed by number.
            "Counters": self.counters.to_newest_go_json(),
            "Turns": self.turns,
            "ContextTokens": self.context_tokens,
            "Pending": None if pending is None else {**_pending_go_json(pending), "Time": pending.time},
            "Reopened": self.reopened,
        }


def _pending_go_json(pending: PendingTurn) -> dict[str, Any]:
    return {
        "Assistant": _plain(pending.assistant),
        "Iteration": pending.iteration,
        "StopReason": pending.stop_reason,
        "Results": _plain(list(pending.results)) if pending.results else None,
        "Answered": {call_id: True for call_id in sorted(pending.answered)},
        "Deferred": {call_id: _plain(d) for call_id, d in sorted(pending.deferred.items())},
    }


def _plain(value: Any) -> Any:
    """Typed wire values as the JSON values Go would marshal them to.

    A raw JSON field (a tool input, a provider block) the runtime accepts but Python cannot hold as values (nested
    deeper than Python's recursion allows, up to Go's 10,000 levels, or an integer past Python's digit limit) stays
    a ``msgspec.Raw`` of its exact bytes: encoding the result with msgspec still gives Go's bytes."""
    from journaltools.protocol.encode import encode_go_json

    encoded = encode_go_json(value)
    try:
        return _raw_value(encoded)
    except _NotPlain:
        return _plain_keeping_raw(value)


class _NotPlain(Exception):
    """JSON that Python cannot turn into values (too deep, an integer too long)."""


def _raw_value(encoded: bytes) -> Any:
    try:
        return msgspec.json.decode(encoded)
    except msgspec.ValidationError:
        raise _NotPlain() from None  # an integer beyond 64 bits
    except RecursionError:
        raise _NotPlain() from None
    except msgspec.DecodeError:
        pass
    try:
        # A raw JSON field keeps invalid UTF-8 verbatim, as the runtime does; Go prints it as U+FFFD.
        return json.loads(encoded.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        raise _NotPlain() from None


def _plain_keeping_raw(value: Any) -> Any:
    """``_plain`` one raw field at a time: each that Python can hold becomes values, the others stay Raw."""
    from journaltools.goencoding.json_values import html_escape

    raws: dict[str, msgspec.Raw] = {}

    def placeholder(obj: Any) -> Any:
        if not isinstance(obj, msgspec.Raw):
            raise TypeError(f"cannot encode {type(obj).__name__}")
        key = f"\x00raw{len(raws)}\x00"  # no journal string holds NUL bytes beside these words
        raws[key] = obj
        return key

    shallow = msgspec.to_builtins(value, enc_hook=placeholder)

    def resolve(item: Any) -> Any:
        raw = raws.get(item) if isinstance(item, str) else None
        if raw is None:
            return item
        encoded = html_escape(bytes(raw))
        try:
            return _raw_value(encoded)
        except _NotPlain:
            return msgspec.Raw(encoded.decode("utf-8", "replace").encode())

    # The structure around the raw fields is the runtime's (a few levels): walked with a stack all the same.
    root = [shallow]
    stack: list[list[Any] | dict[str, Any]] = [root]
    while stack:
        container = stack.pop()
        keys = range(len(container)) if isinstance(container, list) else list(container)
        for key in keys:
            item = container[key]  # type: ignore[index]
            if isinstance(item, (list, dict)):
                stack.append(item)
            else:
                container[key] = resolve(item)  # type: ignore[index]
    return root[0]


def _go_name(snake: str) -> str:
    special = {"llm_calls": "LlmCalls"}
    return special.get(snake) or "".join(part.capitalize() for part in snake.split("_"))
