"""The ``--json`` documents of the command line, described as pydantic models, so a script or a service that
consumes them can validate what it reads (``journaltools schema --output NAME`` prints each JSON Schema).

The commands' own code produces the documents (``cli/``): raw JSON from a journal (a tool input, a provider
block) keeps its exact spelling there, so nothing is re-encoded through these models. They describe; a test holds
every document the command line prints on the real corpora to them, with no key left undescribed.

Every document may gain keys (docs/interfaces.md: "more may be added"), so none of the models refuses a key it
does not know; ``OPEN_DOCUMENTS`` is the one switch for that.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

#: Whether the published models accept keys they do not describe (the promise of docs/interfaces.md). The test
#: that holds the command line to its schemas closes them itself, so an undescribed key still fails it.
OPEN_DOCUMENTS: Final = True


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow" if OPEN_DOCUMENTS else "forbid", frozen=True)


Severity = Literal["error", "warning", "info"]
#: The generations of fisk-ai's journals: the newest line (format version 1) and the August build (version 3).
Generation = Literal["newest", "august"]
#: What a JSON value from the journal may be, kept as the journal wrote it (a tool input, a provider block).
JsonValue = Annotated[Any, Field(description="any JSON value, exactly as the journal holds it")]


# -- shared pieces -----------------------------------------------------------------------------------------------


class FindingDocument(_Document):
    """One finding: an element of ``audit --json``, and of ``show --json``'s ``findings``."""

    run: str | None = Field(description="the run, or null for a finding about the source itself")
    seq: int | None = Field(description="the record's seq, or null when the finding is about no one record")
    code: str = Field(description="a finding code (docs/interfaces.md, Finding codes)")
    severity: Severity
    message: str = Field(description="one line saying what was found")
    source: str = Field(description='the source the run was read from ("" when not told)')


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


# -- stats, query, search: the newest runtime's own documents (described, never re-encoded) ------------------------

#: A time as Go writes it (RFC 3339, up to nine fraction digits, the record's own offset).
GoTimeText = Annotated[str, Field(description="RFC 3339 as Go writes it; the key is left out when the time is zero")]


class StatsTokens(_Document):
    in_tokens: int
    out_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    thinking_tokens: int = Field(description="part of out_tokens, not on top of it")


#: A cost in the price table's currency; null where no price applies (never a guessed zero).
Money = Annotated[float | None, Field(description="in the price table's currency; null where no price applies")]


class StatsCost(_Document):
    """``stats --prices FILE --json`` only (journaltools' addition, not the runtime's): what the tokens cost by the
    user's price table, per tier and in total."""

    currency: str | None = Field(None, description="the price table's currency; left out when it names none")
    input: Money
    output: Money
    cache_read: Money
    cache_create: Money
    total: Money
    note: str | None = Field(None, description="why a cost is null: the model or tier without a price")


class StatsResponse(_Document):
    """One model response (an assistant record)."""

    iteration: int
    time: GoTimeText | None = Field(None, description="when it was journaled; left out when undated")
    tokens: StatsTokens
    cost: StatsCost | None = Field(None, description="with --prices only: this response's cost (no currency)")


class StatsTool(_Document):
    """What the run's calls to one tool came to."""

    tool: str
    kinds: list[str] | None = Field(
        None, description="sorted provider tokens of its answered calls; left out when none is answered"
    )
    calls: int
    dispatched: int = Field(description="answered calls whose result says the call reached its provider")
    undispatched: int = Field(description="answered calls whose result says it did not run (denied, refused)")
    unanswered: int
    errors: int
    duration_ns: int = Field(description="nanoseconds the timed calls took")
    timed: int
    untimed: int = Field(description="calls that ended with a record carrying no time (untimed is not instant)")


class StatsDocument(_Document):
    """``stats --json``: exactly what the newest runtime's ``session stats --json`` prints."""

    run_id: str
    agent: str | None = Field(None, description="left out when empty")
    model: str | None = Field(None, description="left out when empty")
    caller: str | None = Field(None, description="left out when empty")
    created: GoTimeText | None = Field(None, description="meta.created, else the meta record's time")
    updated: GoTimeText | None = Field(None, description="the last dated record's time")
    terminal: str | None = Field(None, description="the reason of the last record when it is a terminal")
    ended: GoTimeText | None = Field(None, description="when that terminal was journaled")
    iterations: int = Field(description="model responses across the whole run")
    max_iterations: int | None = Field(None, description="left out when zero")
    max_tokens: int | None = Field(None, description="left out when zero")
    tokens: StatsTokens
    responses: list[StatsResponse]
    tools: list[StatsTool] = Field(description="one row per tool, sorted by name")
    cost: StatsCost | None = Field(None, description="with --prices only (not the runtime's): the run's cost")


class QueryAnswer(_Document):
    """The tool_result record that answered a call, as journaled."""

    tool_use_id: str
    result: ToolResultBlock
    remote: bool | None = Field(None, description="present (true) for a dispatched remote call")
    kind: str | None = Field(None, description="the provider's token (newest line); left out when empty")
    dispatched: bool | None = Field(None, description="present (true) when the call reached its provider")


class QueryCall(_Document):
    iteration: int
    tool_use_id: str
    tool: str
    input: JsonValue = Field(None, description="the call's input as journaled; left out by --results-only")
    time: GoTimeText | None = Field(None, description="when the assistant record that made it was journaled")
    deferred: Deferred | None = Field(None, description="the deferral, when the call deferred")
    answer: QueryAnswer | None = Field(None, description="left out while unanswered and by --calls-only")
    answer_time: GoTimeText | None = Field(None, description="when the answer was journaled")


class QueryDocument(_Document):
    """``query --json``: exactly what the newest runtime's ``session query --json`` prints."""

    run_id: str
    calls: list[QueryCall]


class SearchRunRow(_Document):
    run_id: str
    agent: str | None = Field(None, description="left out when empty")
    caller: str | None = Field(None, description="left out when empty")
    model: str | None = Field(None, description="left out when empty")
    status: str = Field(description="open, or the reason of the terminal that ends the run")
    created: GoTimeText | None = None
    updated: GoTimeText | None = None
    ended: GoTimeText | None = None
    prompt: str


class SearchDocument(_Document):
    """``search --json``: exactly what the newest runtime's ``session search --json`` prints."""

    runs: list[SearchRunRow] = Field(description="the latest activity first")
    no_agent_excluded: int = Field(description="runs --identity left out only because they name no agent")


# -- grep --------------------------------------------------------------------------------------------------------

GrepWhere = Literal["prompt", "user", "assistant", "thinking", "tool_input", "tool_result"]


class GrepMatch(_Document):
    """One text that holds the pattern."""

    source: str = Field(description="the source the run was read from")
    run: str
    seq: int = Field(description="the record holding the text")
    where: GrepWhere = Field(description="the meta record's prompt, a message's text, thinking, a tool input or result")
    call_id: str | None = Field(description="the tool_use id of a tool input or result, else null")
    count: int = Field(description="how often the pattern occurs in the text")
    snippet: str = Field(description="the first occurrence with up to --context characters each side")


class GrepDocument(_Document):
    """``grep --json``: every text of every run that holds the pattern."""

    model_config = ConfigDict(title="journaltools grep --json")

    pattern: str
    regex: bool = Field(description="whether the pattern is an RE2 regular expression (-E) rather than literal text")
    ignore_case: bool
    where: list[GrepWhere] = Field(description="the places searched")
    runs: int = Field(description="how many runs were searched")
    matches: list[GrepMatch]


# -- diff --------------------------------------------------------------------------------------------------------


class DiffSide(_Document):
    source: str
    run: str
    segment: int | None = Field(description="the process run compared (from 0), or null for the whole journal")
    generation: Generation | None
    status: str
    first_seq: int
    last_seq: int
    records: int
    dated: bool = Field(description="whether any record in scope carries its own time (newest line)")


class DiffDelta(_Document):
    a: int | None
    b: int | None
    delta: int | None = Field(description="b - a, or null when either is null")


class DiffCall(_Document):
    tool_use_id: str
    name: str
    iteration: int
    input: JsonValue = Field(description="the call's input, the raw JSON the journal holds")
    made_seq: int
    answered_seq: int | None
    outcome: Literal["answered", "deferred", "waiting"]
    result: str | None = Field(description="the result's content, a deferral's note, or null")
    is_error: bool | None
    kind: str | None = Field(description="the provider kind by the fold's rule; null while unanswered")
    dispatched: bool | None
    duration_ns: int | None = Field(description="by the runtime's timing rule; null when untimed")


class DiffCallPair(_Document):
    turn: int
    aligned_by: Literal["tool_use_id", "position"] | None = Field(description="null: a call only in one")
    differs: list[Literal["name", "input", "result", "kind", "dispatched"]]
    a: DiffCall | None
    b: DiffCall | None


class DiffTurn(_Document):
    turn: int = Field(description="the iteration, counted from a segment's first one")
    iteration_a: int | None
    iteration_b: int | None
    seq_a: int | None
    seq_b: int | None
    stop_reason_a: str | None
    stop_reason_b: str | None
    text_differs: bool
    calls: DiffDelta
    tokens: dict[str, DiffDelta] = Field(description="in, out, cache read, cache create and thinking tokens")
    model_ns: DiffDelta = Field(description="from the record before the model's response to it (dated only)")
    tools_ns: DiffDelta = Field(description="the sum of the turn's call durations (dated only)")


class DiffFieldChange(_Document):
    model_config = ConfigDict(populate_by_name=True)

    field: str
    field_class: Literal["hard", "blocking", "tools", "budget", "mode"] = Field(alias="class")
    a: str | int | bool | None
    b: str | int | bool | None
    changed: bool


class DiffFingerprint(_Document):
    changed: list[str]
    fields: list[DiffFieldChange]
    gate: GateDocument | None = Field(description="the resume gate on B's fingerprint as A's candidate (follow-up)")


class DiffTimes(_Document):
    compared: bool
    why_not: str | None


class DiffDocument(_Document):
    """``diff --json``: two runs, or two process runs of one, aligned by iteration and tool_use_id."""

    model_config = ConfigDict(title="journaltools diff --json")

    a: DiffSide
    b: DiffSide
    same_records: bool = Field(description="both scopes hold the same records, byte for byte")
    identical: bool = Field(description="nothing compared differs")
    fingerprint: DiffFingerprint
    first_divergence: DiffCallPair | None
    turns: list[DiffTurn]
    calls: list[DiffCallPair]
    only_in_a: list[DiffCall]
    only_in_b: list[DiffCall]
    totals: dict[str, DiffDelta]
    times: DiffTimes


#: ``journaltools schema --output NAME``: each command's ``--json`` document.
OUTPUT_DOCUMENTS: Final[dict[str, Any]] = {
    "ls": list[ListingRow],
    "show": ShowDocument,
    "audit": list[FindingDocument],
    "compare": list[ComparisonRow],
    "gate": GateDocument,
    "migrate": MigrateDocument,
    "answer": AnswerDocument,
    "stats": StatsDocument,
    "query": QueryDocument,
    "search": SearchDocument,
    "grep": GrepDocument,
    "diff": DiffDocument,
}


@cache
def output_adapter(name: str) -> TypeAdapter[Any]:
    """The validator of the ``--json`` document of ``name``: ``output_adapter("show").validate_json(text)``.
    ``KeyError`` for a name that is not in ``OUTPUT_DOCUMENTS``."""
    return TypeAdapter(OUTPUT_DOCUMENTS[name])
