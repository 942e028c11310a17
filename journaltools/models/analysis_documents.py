"""The ``--json`` documents of the analyses: the newest runtime's own ``stats``, ``query`` and ``search`` (described,
never re-encoded: journaltools writes the runtime's bytes), ``grep`` and ``diff``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from journaltools.models.document_base import Generation, JsonValue, _Document
from journaltools.models.outputs import Deferred, GateDocument, ToolResultBlock

# -- stats, query, search: the newest runtime's own documents (described, never re-encoded) ------------------------

#: A time as Go writes it (RFC 3339, up to nine fraction digits, the record's own offset).
GoTimeText = Annotated[str, Field(description="RFC 3339 as Go writes it; the key is left out when the time is zero")]


#: A cost in the price table's currency; null where no price applies (never a guessed zero).
Money = Annotated[float | None, Field(description="in the price table's currency; null where no price applies")]


# -- grep --------------------------------------------------------------------------------------------------------

GrepWhere = Literal["prompt", "user", "assistant", "thinking", "tool_input", "tool_result"]


# -- diff --------------------------------------------------------------------------------------------------------


#: ``journaltools schema --output NAME``: each command's ``--json`` document.
class StatsTokens(_Document):
    in_tokens: int
    out_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    thinking_tokens: int = Field(description="part of out_tokens, not on top of it")


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


class DiffEnding(_Document):
    """How each side ended, or what it waits for, in the words every face uses."""

    a: str = Field(description="side A's ending: a process run's, else the run's status and why")
    b: str = Field(description="side B's ending")
    changed: bool = Field(description="the two endings differ")


class DiffFindings(_Document):
    """The warning and error findings of each side by code (a process run's: those at its seqs)."""

    a: dict[str, int] = Field(description="side A's findings: code -> how many")
    b: dict[str, int] = Field(description="side B's findings")
    changed: bool = Field(description="the two sides' findings differ")


class DiffToolErrors(_Document):
    """How many calls of each side a failed result answered."""

    a: int
    b: int
    changed: bool


class DiffDocument(_Document):
    """``diff --json``: two runs, or two process runs of one, aligned by iteration and tool_use_id."""

    model_config = ConfigDict(title="journaltools diff --json")

    a: DiffSide
    b: DiffSide
    same_records: bool = Field(description="both scopes hold the same records, byte for byte")
    identical: bool = Field(description="nothing compared differs")
    ending: DiffEnding
    findings: DiffFindings
    tool_errors: DiffToolErrors
    fingerprint: DiffFingerprint
    first_divergence: DiffCallPair | None
    turns: list[DiffTurn]
    calls: list[DiffCallPair]
    only_in_a: list[DiffCall]
    only_in_b: list[DiffCall]
    totals: dict[str, DiffDelta]
    times: DiffTimes


# -- diff --cohort ------------------------------------------------------------------------------------------------


class CohortEnding(_Document):
    runs: int
    share: float = Field(description="of the cohort's runs, 0 to 1")


class CohortTool(_Document):
    calls: int
    errors: int = Field(description="calls whose result is an error")
    runs: int = Field(description="runs that called the tool")
    error_share: float = Field(description="errors / calls")


class CohortSpread(_Document):
    runs: int = Field(description="runs that have the figure (a wall clock only where records are dated)")
    median: float | None = Field(description="nearest rank: a run's value; null when no run has the figure")
    p90: float | None


class CohortSide(_Document):
    where: str = Field(description="the filter expression that keeps the cohort's runs")
    runs: int
    endings: dict[str, CohortEnding]
    tools: dict[str, CohortTool]
    tokens_per_run: CohortSpread = Field(description="input, output and both cache tiers, as the runtime totals")
    seconds_per_run: CohortSpread = Field(description="the run's wall clock")
    findings: dict[str, int] = Field(description="findings by code")


class CohortStandout(_Document):
    run: str
    cohort: Literal["A", "B"]
    measure: Literal["tokens", "seconds"]
    value: float
    other_median: float = Field(description="the other cohort's median of the same measure")


class CohortDiffDocument(_Document):
    """``diff SOURCE --cohort A --cohort B --json``: two sets of runs side by side."""

    model_config = ConfigDict(title="journaltools diff --cohort --json")

    a: CohortSide
    b: CohortSide
    moved_most: list[CohortStandout] = Field(description="each cohort's runs farthest from the other's median")
