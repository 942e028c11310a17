"""fisk-ai's runstate records, both generations: the record envelope and the ten payload kinds as typed values.

A record is ``{"seq", "protocol", "time"?, "optional"?, "<kind>": {...}}``: the payload key is the last segment
of the protocol id. The structs are those of the **newest** line (format version 1), which only added fields to
the August build's (format version 3), each omitted when zero: a record's ``time``, ``meta.agent``, the provider
``kind`` and ``dispatched`` of a tool result or deferral, and a terminal's ``summary``. An August journal decodes
into the same structs with those fields at zero; ``NEWEST_ONLY`` names them, so that the August build's model
(what its encoder writes, what its decoder reads) is these structs less those fields (``protocol.generations``).

Each struct declares its fields in the Go struct's order. A field the Go encoder always writes is
required; one it omits when zero (omitempty) has a zero default. That one declaration serves decoding
(the fast path decodes a canonical line straight into it), the exact reader (which fills the same
structs by the Go decoder's rules) and encoding (``protocol.encode`` gives the Go encoder's bytes).

Times are kept as the text Go would write for them (RFC 3339 with up to nine fraction digits), since a
Python datetime holds microseconds only; ``goencoding.time`` parses them when a caller needs a datetime.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Final, Literal

import msgspec

from journaltools.protocol.blocks import Message, ToolResultBlock, _Wire, go_named
from journaltools.protocol.credentials import masked_repr

#: The August build's format version (``meta.version``); ``protocol.generations`` names every version read.
FORMAT_VERSION: Final = 3
NAMESPACE: Final = "io.choria.fisk-ai.v1.session"

Kind = Literal[
    "meta",
    "assistant",
    "user",
    "tool_result",
    "deferred",
    "decision",
    "call_approval",
    "memory_revisions",
    "terminal",
    "claim",
]
#: The ten kinds in the order of the Go Record struct's payload fields.
KINDS: Final[tuple[Kind, ...]] = (
    "meta",
    "assistant",
    "user",
    "tool_result",
    "deferred",
    "decision",
    "call_approval",
    "memory_revisions",
    "terminal",
    "claim",
)
PROTOCOLS: Final[dict[str, Kind]] = {f"{NAMESPACE}.{kind}": kind for kind in KINDS}


def protocol_of(kind: Kind) -> str:
    return f"{NAMESPACE}.{kind}"


def kind_of(protocol: str) -> Kind | None:
    """The kind a protocol id names, or None for an id this reader does not know."""
    return PROTOCOLS.get(protocol)


#: The terminal reasons the runner writes; anything else is folded, and reported (``unknown_terminal_reason``).
TERMINAL_REASONS: Final = ("completed", "suspended", "error", "budget", "max_iterations")

Int64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
#: Go's ``int`` (64 bits where the runtime runs), named as Go names it in its errors.
GoInt = Annotated[Int64, go_named("int")]
UINT64_MAX: Final = (1 << 64) - 1
Uint64 = Annotated[int, msgspec.Meta(ge=0)]
#: msgspec reads integers up to 2**64 - 1 exactly and refuses larger ones, so ``ge=0`` is the whole uint64 check.
#: A time as the Go encoder writes it; the fast path also checks it is in that canonical form (the marker tells
#: ``protocol.native`` which strings are times).
GoTime = Annotated[str, msgspec.Meta(extra={"go_time": True})]

#: Go's zero ``time.Time``, what a record built without a time carries.
ZERO_TIME: Final = "0001-01-01T00:00:00Z"
#: A time Go omits when zero (``omitzero``): ``""`` stands for the zero time, which is never written.
OptionalGoTime = Annotated[str, msgspec.Meta(extra={"go_time": True})]

#: ``toolkit.Kind``: the provider that served a tool call, by its number (what the counters are keyed by) and its
#: token (what a record carries). ``parse_kind`` is ``toolkit.ParseKind``: exact and case-sensitive.
KIND_TOKENS: Final = ("unknown", "application", "builtin", "remote", "custom", "mcp")
KIND_UNKNOWN: Final = 0
KIND_REMOTE: Final = 3
KIND_MCP: Final = 5
_KIND_NUMBERS: Final = {token: number for number, token in enumerate(KIND_TOKENS) if number}


def parse_kind(token: str) -> int:
    """The kind number a record's token names; any other token (``"unknown"``, ``"MCP"``, ``""``) is unknown."""
    return _KIND_NUMBERS.get(token, KIND_UNKNOWN)


def provider_of(kind: str, *, remote: bool, dispatched: bool) -> tuple[int, bool]:
    """The newest fold's rule for a tool result (or a deferral): its provider's kind number and whether the call was
    handed to it. A result naming a kind says both; one without (every August result) ran remotely when marked
    ``remote``, and is otherwise of unknown kind and not known to have run."""
    if kind:
        return parse_kind(kind), dispatched
    if remote:
        return KIND_REMOTE, True
    return KIND_UNKNOWN, False


def kind_token(number: int) -> str:
    """The token of a kind number (an unknown number reads as ``unknown``)."""
    return KIND_TOKENS[number] if 0 <= number < len(KIND_TOKENS) else "unknown"


class Fingerprint(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.Fingerprint"

    provider: str
    model: str
    system_hash: str
    tools_hash: str
    thinking_mode: str
    reasoning_effort: str = ""
    max_tokens: Int64
    max_iterations: Int64


class Meta(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.MetaRecord"

    version: GoInt
    run_id: str
    created: GoTime
    fingerprint: Fingerprint
    prompt: str
    interactive: bool = False
    #: A credential: never shown, logged or exported outside the raw record bytes.
    conversation_token: str = ""
    caller: str = ""
    #: The configured identity of the process that created the journal (newest line only).
    agent: str = ""

    def __repr__(self) -> str:
        return masked_repr(self, "conversation_token")


class Assistant(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.AssistantRecord"

    iteration: Int64
    message: Message
    stop_reason: str = ""
    in_tokens: Int64
    out_tokens: Int64
    cache_read_tokens: Int64 = 0
    cache_create_tokens: Int64 = 0
    #: A part of ``out_tokens``, never to be added to it.
    thinking_tokens: Int64 = 0


class User(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.UserRecord"

    message: Message


class ToolResult(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.ToolResultRecord"

    tool_use_id: str
    result: ToolResultBlock
    #: The August build's one provider fact; the newest line still writes it (remote kind and dispatched).
    remote: bool = False
    #: The provider's token (newest line only; ``parse_kind`` reads it).
    kind: str = ""
    #: Whether the call was handed to its provider (newest line only): a refused or denied call was not.
    dispatched: bool = False


class Deferred(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.DeferredRecord"

    tool_use_id: str
    tool_name: str
    note: str = ""
    handle: str = ""
    kind: str = ""
    dispatched: bool = False


class Decision(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.DecisionRecord"

    tool: str


class CallApproval(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.CallApprovalRecord"

    tool_use_id: str
    tool_name: str


class MemoryRevisions(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.MemoryRevisionsRecord"

    #: ``None`` is Go's nil map (written ``null``); keys are written sorted.
    revisions: dict[str, Uint64] | None


class SummaryCounters(_Wire, kw_only=True, frozen=True):
    """``runstate.Counters`` as the newest line writes it in a summary: every counter omitted when zero."""

    GO_TYPE: ClassVar[str] = "runstate.Counters"

    llm_calls: GoInt = 0
    tool_calls: GoInt = 0
    remote_tool_calls: GoInt = 0
    mcp_tool_calls: GoInt = 0
    #: Keyed by the kind's **number** in decimal (``"1"`` application, ``"5"`` mcp): Go's int map keys.
    tool_calls_by_kind: Annotated[dict[str, Int64], go_named("map[toolkit.Kind]int")] = msgspec.field(
        default_factory=dict
    )
    in_tokens: GoInt = 0
    out_tokens: GoInt = 0
    cache_read_tokens: GoInt = 0
    cache_create_tokens: GoInt = 0
    thinking_tokens: GoInt = 0


class Summary(_Wire, kw_only=True, frozen=True):
    """What the runner counted up to a terminal (newest line only): a cache the fold never reads, a listing does."""

    GO_TYPE: ClassVar[str] = "runstate.ConversationSummary"

    turns: GoInt
    context_tokens: GoInt
    counters: SummaryCounters


class Terminal(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.TerminalRecord"

    reason: Annotated[str, go_named("runstate.TerminalReason")]
    message: str = ""
    summary: Summary | None = None


class Claim(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "runstate.ClaimRecord"

    by: str
    claimed: GoTime


Payload = Meta | Assistant | User | ToolResult | Deferred | Decision | CallApproval | MemoryRevisions | Terminal | Claim


class Record(_Wire, kw_only=True, frozen=True):
    """One journal record. Only the payload its ``protocol`` selects is folded; the others are kept."""

    GO_TYPE: ClassVar[str] = "runstate.Record"

    seq: Uint64
    protocol: Annotated[str, go_named("runstate.Protocol")]
    #: When the runner journaled it (newest line only); ``""`` for an undated record.
    time: OptionalGoTime = ""
    optional: bool = False
    meta: Meta | None = None
    assistant: Assistant | None = None
    user: User | None = None
    tool_result: ToolResult | None = None
    deferred: Deferred | None = None
    decision: Decision | None = None
    call_approval: CallApproval | None = None
    memory_revisions: MemoryRevisions | None = None
    terminal: Terminal | None = None
    claim: Claim | None = None

    @property
    def kind(self) -> Kind | None:
        return PROTOCOLS.get(self.protocol)

    def payload(self) -> Payload | None:
        """The payload the protocol selects (None when it is absent or the protocol is unknown)."""
        kind = PROTOCOLS.get(self.protocol)
        if kind is None:
            return None
        value: Payload | None = getattr(self, kind)
        return value


def make_record(seq: int, payload: Payload, *, optional: bool = False, time: str = "") -> Record:
    """A record carrying ``payload`` under its own kind's key and protocol id."""
    kind = _KIND_OF_PAYLOAD[type(payload)]
    fields: dict[str, object] = {kind: payload}
    return Record(seq=seq, protocol=protocol_of(kind), time=time, optional=optional, **fields)  # type: ignore[arg-type]


#: The fields the newest line added, by struct: absent from the August build's model (its decoder ignores such
#: keys as unknown, its encoder never writes them).
NEWEST_ONLY: Final[dict[type, frozenset[str]]] = {
    Record: frozenset({"time"}),
    Meta: frozenset({"agent"}),
    ToolResult: frozenset({"kind", "dispatched"}),
    Deferred: frozenset({"kind", "dispatched"}),
    Terminal: frozenset({"summary"}),
}


def newest_fields_set(record: Record) -> bool:
    """Whether ``record`` holds any value only the newest line writes (an August line holding one is not canonical)."""
    if record.time:
        return True
    if record.meta is not None and record.meta.agent:
        return True
    result = record.tool_result
    if result is not None and (result.kind or result.dispatched):
        return True
    deferred = record.deferred
    if deferred is not None and (deferred.kind or deferred.dispatched):
        return True
    return record.terminal is not None and record.terminal.summary is not None


_KIND_OF_PAYLOAD: Final[dict[type, Kind]] = {
    Meta: "meta",
    Assistant: "assistant",
    User: "user",
    ToolResult: "tool_result",
    Deferred: "deferred",
    Decision: "decision",
    CallApproval: "call_approval",
    MemoryRevisions: "memory_revisions",
    Terminal: "terminal",
    Claim: "claim",
}
