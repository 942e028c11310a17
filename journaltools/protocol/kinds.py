"""fisk-ai runstate version 3: the record envelope and the ten payload kinds as typed values.

A record is ``{"seq", "protocol", "optional"?, "<kind>": {...}}``: the payload key is the last segment of
the protocol id. No record carries a run id or a time of its own; the run id is ``meta.run_id`` (and the
file name or subject), and the only times are ``meta.created``, ``claim.claimed`` and what the store adds.

Each struct declares its fields in the Go struct's order. A field the Go encoder always writes is
required; one it omits when zero (omitempty) has a zero default. That one declaration serves decoding
(the fast path decodes a canonical line straight into it), the exact reader (which fills the same
structs by the Go decoder's rules) and encoding (``protocol.encode`` gives the Go encoder's bytes).

Times are kept as the text Go would write for them (RFC 3339 with up to nine fraction digits), since a
Python datetime holds microseconds only; ``protocol.times`` parses them when a caller needs a datetime.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from journaltools.protocol.blocks import Message, ToolResultBlock, _Wire
from journaltools.protocol.credentials import masked_repr

#: The one format version this reader folds (``meta.version``).
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
UINT64_MAX: Final = (1 << 64) - 1
Uint64 = Annotated[int, msgspec.Meta(ge=0)]
#: msgspec reads integers up to 2**64 - 1 exactly and refuses larger ones, so ``ge=0`` is the whole uint64 check.
#: A time as the Go encoder writes it; the fast path also checks it is in that canonical form (the marker tells
#: ``protocol.native`` which strings are times).
GoTime = Annotated[str, msgspec.Meta(extra={"go_time": True})]

#: Go's zero ``time.Time``, what a record built without a time carries.
ZERO_TIME: Final = "0001-01-01T00:00:00Z"


class Fingerprint(_Wire, kw_only=True, frozen=True):
    provider: str
    model: str
    system_hash: str
    tools_hash: str
    thinking_mode: str
    reasoning_effort: str = ""
    max_tokens: Int64
    max_iterations: Int64


class Meta(_Wire, kw_only=True, frozen=True):
    version: Int64
    run_id: str
    created: GoTime
    fingerprint: Fingerprint
    prompt: str
    interactive: bool = False
    #: A credential: never shown, logged or exported outside the raw record bytes.
    conversation_token: str = ""
    caller: str = ""

    def __repr__(self) -> str:
        return masked_repr(self, "conversation_token")


class Assistant(_Wire, kw_only=True, frozen=True):
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
    message: Message


class ToolResult(_Wire, kw_only=True, frozen=True):
    tool_use_id: str
    result: ToolResultBlock
    remote: bool = False


class Deferred(_Wire, kw_only=True, frozen=True):
    tool_use_id: str
    tool_name: str
    note: str = ""
    handle: str = ""


class Decision(_Wire, kw_only=True, frozen=True):
    tool: str


class CallApproval(_Wire, kw_only=True, frozen=True):
    tool_use_id: str
    tool_name: str


class MemoryRevisions(_Wire, kw_only=True, frozen=True):
    #: ``None`` is Go's nil map (written ``null``); keys are written sorted.
    revisions: dict[str, Uint64] | None


class Terminal(_Wire, kw_only=True, frozen=True):
    reason: str
    message: str = ""


class Claim(_Wire, kw_only=True, frozen=True):
    by: str
    claimed: GoTime


Payload = Meta | Assistant | User | ToolResult | Deferred | Decision | CallApproval | MemoryRevisions | Terminal | Claim


class Record(_Wire, kw_only=True, frozen=True):
    """One journal record. Only the payload its ``protocol`` selects is folded; the others are kept."""

    seq: Uint64
    protocol: str
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


def make_record(seq: int, payload: Payload, *, optional: bool = False) -> Record:
    """A record carrying ``payload`` under its own kind's key and protocol id."""
    kind = _KIND_OF_PAYLOAD[type(payload)]
    fields: dict[str, object] = {kind: payload}
    return Record(seq=seq, protocol=protocol_of(kind), optional=optional, **fields)  # type: ignore[arg-type]


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
