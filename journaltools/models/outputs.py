"""The ``--json`` documents of the command line, described as pydantic models, so a script or a service that
consumes them can validate what it reads (``journaltools schema --output NAME`` prints each JSON Schema).

The commands' own code produces the documents (``cli/``): raw JSON from a journal (a tool input, a provider
block) keeps its exact spelling there, so nothing is re-encoded through these models. They describe; a test holds
every document the command line prints on the real corpora to them, with no key left undescribed.

Every document may gain keys (docs/interfaces.md: "more may be added"), so none of the models refuses a key it
does not know; ``OPEN_DOCUMENTS`` (``document_base``) is the one switch for that.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from journaltools.models.document_base import FindingDocument, Generation, JsonValue, _Document

# -- shared pieces -----------------------------------------------------------------------------------------------


# -- ls ----------------------------------------------------------------------------------------------------------


class ListingRow(_Document):
    """One run of a listing (``ls --json`` is a list of these), by its backend's own listing rule."""

    run: str
    status: str = Field(
        description="open, a terminal reason (completed, suspended, error, ...) or invalid, by the rule of the "
        "journal's generation (newest: Ending(), open again when anything follows the last terminal)"
    )
    created: str | None = Field(description="meta.created, as the journal spells it")
    updated: str | None = Field(
        description="RFC 3339: a newest journal's last record's own time, else the file's modification time or the "
        "last message's time"
    )
    updated_from: Literal["record", "file", "message"] | None = Field(
        description="what updated is: the last record's own time, the file's modification time (a copied directory "
        "moves it), or the last message's time"
    )
    model: str | None
    prompt: str | None = Field(description="the run's prompt, whole")
    last_seq: int
    records: int | None = Field(description="how many records, or null where the rule does not count (JetStream)")
    source: str | None = Field(None, description="the source of the row; present only when several were listed")
    agent: str | None = Field(description="meta.agent, the process identity that created the run ('' when none)")
    caller: str | None = Field(description="meta.caller, who started the run")
    ended: str | None = Field(description="when the ending terminal was journaled (newest line), or null")
    generation: Generation | None = Field(description="whose format the journal is in: newest or august")
    run_id: str | None = Field(description="meta.run_id: the name the runtime's listings give the run")
    why: str | None = Field(description="why the run stopped or what it waits for, in one line (null: not known)")
    writer: Literal["held", "free", "unknown"] = Field(
        description="whether a process holds the run's lock now (read from the kernel's lock table; the lock is never "
        "taken or tested): held, free (none does, or no lock file), or unknown (a stream, or no lock table)"
    )
    silent_for: float | None = Field(description="seconds since the run was last heard from (updated), or null")


# -- show --------------------------------------------------------------------------------------------------------


class Fingerprint(_Document):
    """``meta.fingerprint``, as the runtime serializes it (the resume gate compares it with a candidate)."""

    provider: str
    model: str
    system_hash: str
    tools_hash: str
    thinking_mode: str
    reasoning_effort: str | None = Field(None, description="left out when empty")
    max_tokens: int
    max_iterations: int


class TextBlock(_Document):
    text: str


class ThinkingBlock(_Document):
    text: str | None = Field(None, description="left out when empty")
    signature: str | None = Field(None, description="base64 of the provider's signature bytes; left out when empty")


class ToolUseBlock(_Document):
    id: str
    name: str
    input: JsonValue


class ToolResultBlock(_Document):
    tool_use_id: str
    content: str
    is_error: bool | None = Field(None, description="present (true) only for an error result")


class ProviderBlock(_Document):
    kind: str
    raw: JsonValue


class Block(_Document):
    """One content block of a neutral message: exactly one of its keys is present."""

    text: TextBlock | None = None
    thinking: ThinkingBlock | None = None
    tool_use: ToolUseBlock | None = None
    tool_result: ToolResultBlock | None = None
    provider: ProviderBlock | None = None


class Message(_Document):
    """A neutral message exactly as the runtime serializes it."""

    role: str
    content: list[Block] | None


class AnthropicMessage(_Document):
    """A message as Anthropic Messages API input (``show --anthropic``)."""

    role: Literal["user", "assistant"]
    content: list[dict[str, Any]] = Field(description="Anthropic content blocks, each with its 'type'")


class Deferred(_Document):
    tool_use_id: str
    tool_name: str
    note: str | None = Field(None, description="left out when empty")
    handle: str | None = Field(None, description="left out when empty")
    kind: str | None = Field(None, description="the provider that deferred it (newest line); left out when empty")
    dispatched: bool | None = Field(None, description="the call reached its provider (newest line); else left out")


class PendingTurn(_Document):
    """The assistant turn in flight: nothing of it is committed to ``messages`` yet."""

    assistant: Message
    iteration: int
    stop_reason: str
    seq: int = Field(description="the seq of the record that started the turn")
    results: list[ToolResultBlock] = Field(description="the results gathered so far, in journal order")
    answered: list[str] = Field(description="the ids of the answered calls")
    deferred: dict[str, Deferred] = Field(description="call id to its deferral")
    time: str | None = Field(description="when its assistant record was journaled (RFC 3339), or null when undated")


class CallDeferral(_Document):
    note: str
    handle: str


class PendingCall(_Document):
    id: str
    name: str
    input: JsonValue
    deferred: CallDeferral | None
    call_approved: bool


class Counters(_Document):
    """The runtime's counters (thinking tokens are part of out_tokens)."""

    llm_calls: int
    tool_calls: int
    remote_tool_calls: int
    in_tokens: int
    out_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    thinking_tokens: int
    mcp_tool_calls: int = Field(description="calls an MCP server ran (dispatched)")
    tool_calls_by_kind: dict[str, int] = Field(
        description="every result by its provider's token (application, builtin, remote, custom, mcp, unknown)"
    )


class Resume(_Document):
    last_seq: int
    next_iteration: int
    last_stop_reason: str
    waiting_for: Literal["model", "tools", "answer"] | None


class CallApproval(_Document):
    tool_use_id: str
    tool_name: str


class SummaryCounters(_Document):
    """The runner's counters in a terminal summary, each left out when zero; kinds keyed by the kind's number."""

    llm_calls: int | None = None
    tool_calls: int | None = None
    remote_tool_calls: int | None = None
    mcp_tool_calls: int | None = None
    tool_calls_by_kind: dict[str, int] | None = Field(None, description="keyed by the kind's number, as Go writes it")
    in_tokens: int | None = None
    out_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_create_tokens: int | None = None
    thinking_tokens: int | None = None


class Summary(_Document):
    """What the runner counted up to a terminal (newest line)."""

    turns: int
    context_tokens: int
    counters: SummaryCounters


class Terminal(_Document):
    reason: str
    message: str | None = Field(None, description="left out when empty")
    summary: Summary | None = Field(None, description="the runner's counts (newest line); left out when absent")


class Segment(_Document):
    """One process run within the journal: from its claim (or the meta record) to the record before the next."""

    index: int
    first_seq: int
    last_seq: int
    claimed_by: str | None
    claimed_at: str | None
    ending: str = Field(description="a terminal reason, crashed or running")
    terminal_message: str | None
    llm_calls: int
    tool_calls: int
    in_tokens: int
    out_tokens: int


class ShowDocument(_Document):
    """``show --json``: the runtime's folded state of one run in snake_case, and what journaltools reads from it.
    Never the conversation token."""

    model_config = ConfigDict(title="journaltools show --json")

    run: str
    status: str = Field(description="open, a terminal reason or invalid")
    prompt: str | None
    interactive: bool | None
    caller: str | None
    fingerprint: Fingerprint | None
    messages: list[Message] | list[AnthropicMessage] = Field(
        description="the committed conversation; with --anthropic, as Anthropic Messages API input"
    )
    message_seqs: list[int] = Field(description="for each message, the seq of the record it came from")
    pending: PendingTurn | None
    pending_calls: list[PendingCall] = Field(description="the unanswered calls, in message order")
    open_deferrals: list[Deferred] = Field(description="deferred calls not answered yet, sorted by id")
    counters: Counters
    resume: Resume
    approvals: list[str] | None = Field(description="standing approvals (tool names, journal order)")
    call_approvals: list[CallApproval] | None
    memory_revisions: dict[str, int] | None = Field(description="memory key to revision")
    terminal: Terminal | None = Field(description="the last terminal")
    stale_terminal: bool = Field(description="a new turn follows the last terminal")
    segments: list[Segment]
    findings: list[FindingDocument] = Field(description="the reader's and the fold's")
    generation: Generation | None = Field(description="whose rules read and folded the journal")
    agent: str | None = Field(description="meta.agent, the process identity that created the run")
    times: list[str | None] = Field(description="for each message, when it was journaled (RFC 3339), or null")
    result_times: dict[str, str] = Field(description="tool_use_id to when its result was journaled (RFC 3339)")
    ended: str | None = Field(description="when the last terminal was journaled, or null (undated, none, reopened)")
    turns: int = Field(description="the prompt and every user record")
    context_tokens: int = Field(description="what the last model response read: input and both cache tiers")
    reopened: bool = Field(description="something was journaled after the last terminal")
    ending: Terminal | None = Field(description="the terminal that ends the run, or null when open or reopened")


# -- compare, gate, migrate, answer ------------------------------------------------------------------------------


class ComparisonRow(_Document):
    """One run of ``compare --json``: the two listings side by side."""

    run: str
    status_a: str | None = Field(description="the run's status in SOURCE_A's listing, or null when it has none")
    status_b: str | None = Field(description="the run's status in SOURCE_B's listing, or null when it has none")
    verdict: Literal["agree", "documented", "summary_rule", "discrepancy", "missing_a", "missing_b"]
    explanation: str = Field(description="why, in a sentence")


class FieldVerdict(_Document):
    model_config = ConfigDict(populate_by_name=True)

    field: Literal[
        "provider",
        "model",
        "system_hash",
        "tools_hash",
        "thinking_mode",
        "reasoning_effort",
        "max_tokens",
        "max_iterations",
    ]
    field_class: Literal["hard", "blocking", "tools", "budget"] = Field(alias="class")
    stored: str | int = Field(description="the value in the run's fingerprint")
    candidate: str | int = Field(description="the candidate's value (the stored one when it gave none)")
    verdict: Literal["same", "refused", "forced", "allowed", "reported"]
    why: str = Field(description='"" when the field is the same')


class GateDocument(_Document):
    """``gate --json``: the runtime's resume decision for a candidate configuration."""

    model_config = ConfigDict(title="journaltools gate --json")

    resumable: bool
    fields: list[FieldVerdict] = Field(description="the eight fingerprint fields, in the fingerprint's order")
    warnings: list[str]
    refusal: str | None = Field(description="the first refusal in the runtime's order, or null when resumable")


class MigrateRefusal(_Document):
    run: str
    code: str
    message: str


class MigrateMismatch(_Document):
    run: str
    message: str


class MigrateNote(_Document):
    run: str
    note: str


class MigrateDocument(_Document):
    """``migrate --json``: what a copy between backends did."""

    model_config = ConfigDict(title="journaltools migrate --json")

    runs: int = Field(description="runs in the destination, record for record, after this migration")
    records: int = Field(description="records of those runs")
    verified: bool = Field(description="every migrated record read back with the same digest")
    refused: list[MigrateRefusal]
    copied: int = Field(description="records written by this migration (a re-run copies none)")
    skipped: int
    mismatches: list[MigrateMismatch]
    notes: list[MigrateNote]


class AnswerDocument(_Document):
    """``answer --json``: where the answer landed."""

    run: str
    call: str
    seq: int = Field(description="the seq of the tool_result record appended")
