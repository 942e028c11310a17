"""Real-format journals built record by record: ``JournalBuilder`` writes each record as the runtime's Go encoder
would (both generations), with the blocks (``text``, ``thinking``, ``tool_use``, ``provider``), the tool
definitions and their hashes, and the claimant and time helpers the generator and the samples share."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import msgspec

from journaltools.protocol import encode

if TYPE_CHECKING:
    from journaltools.folding.fold import FoldResult, Walk
from journaltools.protocol.blocks import (
    ASSISTANT,
    USER,
    Block,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_uses,
)
from journaltools.protocol.encode import encode_go_json, encode_record, raw_json
from journaltools.protocol.generations import AUGUST, Generation
from journaltools.protocol.kinds import (
    NAMESPACE,
    Assistant,
    CallApproval,
    Claim,
    Decision,
    Deferred,
    Fingerprint,
    MemoryRevisions,
    Meta,
    Payload,
    Record,
    Summary,
    SummaryCounters,
    Terminal,
    ToolResult,
    User,
    make_record,
)

_NANOS: Final = 1_000_000_000


def epoch_ns(moment: datetime) -> int:
    """A timezone-aware datetime as integer nanoseconds since 1970 (what ``format_go_time`` takes)."""
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * _NANOS + delta.microseconds * 1_000


def claimant(user: str, host: str, pid: int) -> str:
    """A claim's ``by`` as the runtime builds it by default: ``<identity>@<hostname> pid <pid>``."""
    return f"{user}@{host} pid {pid}"


class ToolDefinition(msgspec.Struct, frozen=True):
    """A tool definition as the runtime hashes it: a Go struct without JSON tags, so its Go field names are the
    keys, in this order, all written."""

    Name: str
    Description: str
    InputSchema: dict[str, Any]
    DeferLoading: bool = False


def system_hash(*system_blocks: str) -> str:
    """The runtime's ``system_hash`` of the given system blocks (``protocol.encode.system_hash``)."""
    return encode.system_hash(system_blocks)


def tools_hash(tools: Sequence[ToolDefinition]) -> str:
    """The runtime's ``tools_hash``: SHA-256 of the Go JSON encoding of the tool definitions, in order."""
    return hashlib.sha256(encode_go_json(list(tools))).hexdigest()


def text(value: str) -> Block:
    return Block(text=TextBlock(text=value))


def thinking(value: str, signature: bytes = b"") -> Block:
    """A thinking block; the JSON holds base64 of ``signature`` (the Anthropic codec keeps the signature text's
    bytes, so pass the text encoded)."""
    return Block(thinking=ThinkingBlock(text=value, signature=signature))


def tool_use(call_id: str, name: str, arguments: Any) -> Block:
    """A call; ``arguments`` is any JSON-encodable value, stored as Go writes a ``json.RawMessage``."""
    return Block(tool_use=ToolUseBlock(id=call_id, name=name, input=raw_json(arguments)))


def provider(kind: str, raw: Any) -> Block:
    """A provider block kept verbatim (``redacted_thinking``, ``server_tool_use``, ...)."""
    return Block(provider=ProviderBlock(kind=kind, raw=raw_json(raw)))


class JournalBuilder:
    """One run's records, appended with consecutive seqs starting at the meta record's seq 1.

    Each method appends one record the way the runtime writes it (``optional`` set only where the runtime sets
    it) and returns it; ``records`` is the journal so far, ``journal_bytes()`` its file content. Iterations
    count up across the whole run, as the runner numbers them.

    For the newest line (``generation=NEWEST``) each record is dated with ``time`` as it stands when the record
    is added (the caller moves it on, as a runner's clock does; ``""`` leaves a record undated), results and
    deferrals carry a provider kind and dispatch, and a terminal carries the summary the fold gives up to it.
    """

    def __init__(
        self,
        run_id: str,
        *,
        prompt: str,
        created: str,
        fingerprint: Fingerprint,
        interactive: bool = False,
        conversation_token: str = "",
        caller: str = "",
        version: int | None = None,
        generation: Generation = AUGUST,
        agent: str = "",
        time: str = "",
        clock: Callable[[], str] | None = None,
    ) -> None:
        self.run_id = run_id
        self.records: list[Record] = []
        #: The fold of the records so far (``_fold_so_far``): how many it was fed, and the last of them.
        self._walk: Walk | None = None
        self._fed = 0
        self._fed_last: Record | None = None
        self.next_iteration = 0
        self.generation = generation
        self.newest = generation is not AUGUST
        #: The time the next records are dated with (newest line only).
        self.time = time
        #: Asked for each record's time instead, when given (a clock that moves on with every record).
        self.clock = clock
        self.meta = Meta(
            version=generation.version if version is None else version,
            run_id=run_id,
            created=created,
            fingerprint=fingerprint,
            prompt=prompt,
            interactive=interactive,
            conversation_token=conversation_token,
            caller=caller,
            agent=agent if self.newest else "",
        )
        self.add(self.meta)

    @property
    def last_seq(self) -> int:
        return self.records[-1].seq if self.records else 0

    def add(self, payload: Payload, *, optional: bool = False) -> Record:
        record = make_record(self.last_seq + 1, payload, optional=optional, time=self._time())
        self.records.append(record)
        return record

    def _time(self) -> str:
        if not self.newest:
            return ""
        if self.clock is not None:
            self.time = self.clock()
        return self.time

    def assistant(
        self,
        *content: Block,
        stop_reason: str | None = None,
        in_tokens: int = 100,
        out_tokens: int = 20,
        cache_read_tokens: int = 0,
        cache_create_tokens: int = 0,
        thinking_tokens: int = 0,
    ) -> Record:
        """A model reply; ``stop_reason`` defaults to ``tool_use`` when it calls a tool, else ``end_turn``."""
        message = Message(role=ASSISTANT, content=list(content))
        if stop_reason is None:
            stop_reason = "tool_use" if tool_uses(message) else "end_turn"
        record = self.add(
            Assistant(
                iteration=self.next_iteration,
                message=message,
                stop_reason=stop_reason,
                in_tokens=in_tokens,
                out_tokens=out_tokens,
                cache_read_tokens=cache_read_tokens,
                cache_create_tokens=cache_create_tokens,
                thinking_tokens=thinking_tokens,
            )
        )
        self.next_iteration += 1
        return record

    def user(self, words: str) -> Record:
        """A free-standing follow-up: role user and one text block, as the runtime's writers make it."""
        return self.add(User(message=Message(role=USER, content=[text(words)])))

    def result(
        self,
        call: ToolUseBlock | str,
        content: str,
        *,
        is_error: bool = False,
        remote: bool = False,
        kind: str = "",
        dispatched: bool = True,
    ) -> Record:
        """A call's result. The newest line also names its provider (``kind``, by default ``remote`` for a remote
        call, else ``application``) and whether it ran; it still writes ``remote`` for a remote call that ran."""
        call_id = call if isinstance(call, str) else call.id
        block = ToolResultBlock(tool_use_id=call_id, content=content, is_error=is_error)
        if not self.newest:
            return self.add(ToolResult(tool_use_id=call_id, result=block, remote=remote))
        kind = kind or ("remote" if remote else "application")
        ran_remotely = kind == "remote" and dispatched
        return self.add(
            ToolResult(tool_use_id=call_id, result=block, remote=ran_remotely, kind=kind, dispatched=dispatched)
        )

    def deferred(
        self, call: ToolUseBlock, *, note: str = "", handle: str = "", kind: str = "custom", dispatched: bool = True
    ) -> Record:
        """A deferral (the newest line names the provider that deferred it, and whether the call reached it)."""
        if not self.newest:
            return self.add(Deferred(tool_use_id=call.id, tool_name=call.name, note=note, handle=handle))
        return self.add(
            Deferred(
                tool_use_id=call.id, tool_name=call.name, note=note, handle=handle, kind=kind, dispatched=dispatched
            )
        )

    def decision(self, tool: str) -> Record:
        """A standing approval; the runtime writes it ``optional:true``."""
        return self.add(Decision(tool=tool), optional=True)

    def call_approval(self, call: ToolUseBlock) -> Record:
        """A one-shot approval of one call (``optional:true``, as the runtime's tests write it)."""
        return self.add(CallApproval(tool_use_id=call.id, tool_name=call.name), optional=True)

    def memory_revisions(self, revisions: dict[str, int]) -> Record:
        """The memory revisions the run knew, written after its terminal, ``optional:true``."""
        return self.add(MemoryRevisions(revisions=dict(sorted(revisions.items()))), optional=True)

    def terminal(self, reason: str, message: str = "") -> Record:
        """A terminal; the newest line's carries the runner's counts, which equal the fold's up to it."""
        if not self.newest:
            return self.add(Terminal(reason=reason, message=message))
        return self.add(Terminal(reason=reason, message=message, summary=self.summary()))

    def summary(self) -> Summary:
        """What the fold of the records so far counts: the summary a newest terminal written now carries."""
        state = self._fold_so_far().state
        assert state is not None  # the builder always starts with its meta record
        counters = state.counters
        by_kind = {str(kind): count for kind, count in sorted((counters.tool_calls_by_kind or {}).items())}
        return Summary(
            turns=state.turns,
            context_tokens=state.context_tokens,
            counters=SummaryCounters(
                llm_calls=counters.llm_calls,
                tool_calls=counters.tool_calls,
                remote_tool_calls=counters.remote_tool_calls,
                mcp_tool_calls=counters.mcp_tool_calls,
                tool_calls_by_kind=dict(sorted(by_kind.items())),
                in_tokens=counters.in_tokens,
                out_tokens=counters.out_tokens,
                cache_read_tokens=counters.cache_read_tokens,
                cache_create_tokens=counters.cache_create_tokens,
                thinking_tokens=counters.thinking_tokens,
            ),
        )

    def _fold_so_far(self) -> FoldResult:
        """The fold of ``records``, fed only the records added since the last time it was asked: a run of a
        hundred thousand records ends many turns, and folding it whole at each terminal took minutes. A record
        taken back or replaced since (a story tearing a journal's tail) starts the fold again."""
        from journaltools.folding.fold import Walk

        fed = self._fed
        if self._walk is None or len(self.records) < fed or (fed and self.records[fed - 1] is not self._fed_last):
            self._walk, fed = Walk(None, strict=False), 0
        self._walk.feed(self.records[fed:])
        self._fed, self._fed_last = len(self.records), self.records[-1]
        return self._walk.result()

    def claim(self, by: str, claimed: str) -> Record:
        return self.add(Claim(by=by, claimed=claimed))

    def unknown(self, kind: str, *, optional: bool) -> Record:
        """A record of a protocol this runtime does not know (``<namespace>.<kind>``), without a payload."""
        record = Record(
            seq=self.last_seq + 1,
            protocol=f"{NAMESPACE}.{kind}",
            time=self._time(),
            optional=optional,
        )
        self.records.append(record)
        return record

    def journal_bytes(self) -> bytes:
        return journal_bytes(self.records)


def journal_bytes(records: Iterable[Record]) -> bytes:
    """The file journal of ``records``: each record's Go-encoded bytes and ``\\n``."""
    return b"".join(encode_record(record) + b"\n" for record in records)


def calls_of(record: Record) -> list[ToolUseBlock]:
    """The calls an assistant record makes, in message order (none for any other record)."""
    return tool_uses(record.assistant.message) if record.assistant is not None else []


# The fleet every sample and generated run works in: one system prompt, ten tools, one fingerprint per model.


@dataclass(frozen=True, slots=True)
class FleetTool:
    name: str
    #: How the runtime runs it: locally, on another agent (remote results), or answered later (deferred).
    how: str
    argument: str


FLEET_TOOLS: Final = (
    FleetTool("stream_ls", "local", "filter"),
    FleetTool("stream_info", "local", "stream"),
    FleetTool("consumer_ls", "local", "stream"),
    FleetTool("consumer_info", "local", "consumer"),
    FleetTool("server_ping", "local", "cluster"),
    FleetTool("kv_get", "local", "key"),
    FleetTool("stream_rm", "gated", "stream"),
    FleetTool("server_run", "gated", "command"),
    FleetTool("remote_incident_agent", "remote", "prompt"),
    FleetTool("change_request_open", "deferred", "summary"),
)

TOOL_DEFINITIONS: Final = tuple(
    ToolDefinition(tool.name, f"{tool.name.replace('_', ' ')}", {"properties": {tool.argument: {"type": "string"}}})
    for tool in FLEET_TOOLS
)

SYSTEM_PROMPT: Final = "You operate NATS JetStream clusters for the platform team. Inspect before you change."


def fingerprint_for(model: str, *, thinking_mode: str = "off", max_tokens: int = 2_000_000) -> Fingerprint:
    return Fingerprint(
        provider="anthropic",
        model=model,
        system_hash=system_hash(SYSTEM_PROMPT),
        tools_hash=tools_hash(TOOL_DEFINITIONS),
        thinking_mode=thinking_mode,
        max_tokens=max_tokens,
        max_iterations=50,
    )
