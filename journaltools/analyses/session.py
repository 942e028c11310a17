"""The newest runtime's own analysis of runs, reproduced: ``session stats``, ``session query`` and ``session search``.

The newest fisk-ai line ships three inspection commands over its journals (NEWEST A1-A4). journaltools answers the
same questions from the same records, with the same rules, and writes the same bytes for ``--json``:

- ``statistics(records)``: what a run cost (``session stats``): the frame from the meta record, the tokens of each
  model response and in total, and a row per tool (calls, kinds, dispatched, not run, unanswered, errors, time);
- ``run_calls(records)``: each tool call paired with the record that answered it (``session query``), selected by
  a ``CallFilter``;
- ``select_runs(summaries, SearchFilter)``: runs by agent, model, caller, status, creation time and prompt
  (``session search``), over the listing rows of a source.

The pairing and the timing of calls are ``folding.facts.RunFacts``' (one walk per journal, shared with the tables);
this module only aggregates and writes. ``*_json`` give the runtime's exact bytes: two-space indentation, HTML
escaping off (U+2028 and U+2029 still escaped, as Go always does), times as Go marshals them, zero times and empty
optional fields omitted, a trailing newline.

An August journal (format version 3) holds no record times and no provider kinds: its calls are all untimed, their
kinds come from ``remote`` (``remote`` or ``unknown``), and ``Statistics.dated`` / ``Statistics.kinds_recorded``
say so, so nobody reads "untimed" as "instant". The runtime's ``Store.Records`` reads such a journal too (it does not
look at the version), so its ``stats`` and ``query`` agree with these. Its listing skips them; ``search`` here keeps
them (they are runs too), and ``SearchResult.august`` counts them.

The public faces are ``stats``, ``calls`` and ``search`` (exported as ``jt.stats`` ...), which open a source.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from journaltools.errors import InvalidPattern, InvalidSearch
from journaltools.folding.facts import CallFact, RunFacts
from journaltools.folding.state import wrap_int64
from journaltools.goencoding.json import go_utf8
from journaltools.goencoding.json_values import compact, go_string, indent
from journaltools.goencoding.regexp import GoRegexp, GoRegexpError, compile_go
from journaltools.goencoding.time import GoTime, canonical_go_time, parse_go_time
from journaltools.protocol.kinds import ZERO_TIME, Deferred, Record, ToolResult
from journaltools.sources.listing import RunSummary
from journaltools.tables.prices import TIERS, Cost, PriceTable, TokenCounts, cost_of, unpriced

#: What ``session search --status`` accepts: ``open``, or a reason the runner ends a run with.
SEARCH_STATUSES = ("open", "completed", "suspended", "error", "budget", "max_iterations")


# -- values ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tokens:
    """A token count split into the tiers a provider reports. ``thinking_tokens`` is part of ``out_tokens``."""

    in_tokens: int = 0
    out_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    thinking_tokens: int = 0

    @property
    def total(self) -> int:
        """What a token budget counts: input, output and both cache tiers (thinking is already in the output)."""
        return self.in_tokens + self.out_tokens + self.cache_read_tokens + self.cache_create_tokens

    def counts(self) -> TokenCounts:
        """The four priced counts (``journaltools.tables.prices``)."""
        return TokenCounts(self.in_tokens, self.out_tokens, self.cache_read_tokens, self.cache_create_tokens)

    def __add__(self, other: Tokens) -> Tokens:
        # The runtime's sums are int64 and wrap, as the fold's counters do: never a count no int64 holds.
        return Tokens(
            wrap_int64(self.in_tokens + other.in_tokens),
            wrap_int64(self.out_tokens + other.out_tokens),
            wrap_int64(self.cache_read_tokens + other.cache_read_tokens),
            wrap_int64(self.cache_create_tokens + other.cache_create_tokens),
            wrap_int64(self.thinking_tokens + other.thinking_tokens),
        )


@dataclass(frozen=True, slots=True)
class ResponseTokens:
    """One model response (an assistant record): its iteration, when it was journaled (``""`` when undated), its
    tokens, and the record's seq (not in the runtime's document)."""

    iteration: int
    time: str
    tokens: Tokens
    seq: int


@dataclass(frozen=True, slots=True)
class ToolStats:
    """What a run's calls to one tool came to, by the runtime's rules (NEWEST A2)."""

    tool: str
    #: The provider tokens of the answered calls, sorted (August results: ``remote`` or ``unknown``).
    kinds: tuple[str, ...]
    calls: int
    #: Answered calls whose result says the call reached its provider.
    dispatched: int
    #: Answered calls whose result says it did not (denied, refused). A result that says neither (an August
    #: result that is not ``remote``) counts in neither.
    undispatched: int
    unanswered: int
    errors: int
    #: The time the timed calls took, in nanoseconds, and how many calls that covers.
    duration_ns: int
    timed: int
    #: Calls that ended (by a result or a deferral) with no time: a record carries none, or time runs backwards.
    #: A call that never ended is neither timed nor untimed.
    untimed: int


@dataclass(frozen=True, slots=True)
class Statistics:
    """``session stats`` of one run. Times are Go's text (``""`` when absent)."""

    run_id: str
    agent: str
    model: str
    caller: str
    created: str
    updated: str
    #: The reason of the terminal that ends the run, ``""`` when open or reopened; ``ended`` when it was journaled.
    terminal: str
    ended: str
    iterations: int
    max_iterations: int
    max_tokens: int
    tokens: Tokens
    responses: tuple[ResponseTokens, ...]
    tools: tuple[ToolStats, ...]
    #: Whether any record carries its own time (only the newest line dates records).
    dated: bool = True
    #: Whether any result or deferral names its provider kind (only the newest line does).
    kinds_recorded: bool = True

    @property
    def wall_clock(self) -> timedelta | None:
        """Creation to the last dated record; None when either is missing or they run backwards."""
        gap = self.wall_clock_ns
        return None if gap is None else timedelta(microseconds=gap // 1000)

    @property
    def wall_clock_ns(self) -> int | None:
        if not self.created or not self.updated:
            return None
        gap = parse_go_time(self.updated).unix_ns - parse_go_time(self.created).unix_ns
        return gap if gap >= 0 else None

    def to_json(self, cost: StatisticsCost | None = None) -> bytes:
        """The exact bytes ``session stats --json`` prints; given ``cost`` (``statistics_cost``), with a ``cost``
        object added to the document and to each response, every other byte the runtime's."""
        return _document(_statistics_json(self, cost))


@dataclass(frozen=True, slots=True)
class StatisticsCost:
    """What a run's tokens cost by the user's prices (``statistics_cost``): in total, per response, and why a
    cost is null where one is (``note``, naming the model or the tier)."""

    currency: str | None
    total: Cost
    responses: tuple[Cost, ...]
    note: str | None


def statistics_cost(stats: Statistics, prices: PriceTable) -> StatisticsCost:
    """The cost of ``stats``' tokens by ``prices``, by the one cost rule (``journaltools.tables.prices.cost_of``); the
    run's model (the meta record's) prices every response."""
    model = stats.model or None
    counts = stats.tokens.counts()
    responses = tuple(cost_of(prices, model, response.tokens.counts()) for response in stats.responses)
    return StatisticsCost(prices.currency, cost_of(prices, model, counts), responses, unpriced(prices, model, counts))


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call paired with its answer (``session query``), by NEWEST A1's pairing."""

    iteration: int
    tool_use_id: str
    tool: str
    #: The input as journaled (raw JSON; ``b""`` when the call carried none).
    input: bytes
    #: When the assistant record that made it was journaled (``""`` when undated).
    time: str
    deferred: Deferred | None
    answer: ToolResult | None
    answer_time: str
    #: By the runtime's timing rule (not in its document); None when untimed or not ended.
    duration_ns: int | None
    #: The seqs of the records that made, deferred and answered it (not in the runtime's document).
    made_seq: int
    deferred_seq: int | None
    answered_seq: int | None

    @property
    def is_error(self) -> bool:
        return self.answer is not None and self.answer.result.is_error

    @classmethod
    def of(cls, fact: CallFact) -> Call:
        return cls(
            iteration=fact.iteration,
            tool_use_id=fact.tool_use_id,
            tool=fact.tool,
            input=fact.input,
            time=fact.made_time,
            deferred=fact.deferral,
            answer=fact.answer,
            answer_time=fact.answered_time,
            duration_ns=fact.duration_ns,
            made_seq=fact.made_seq,
            deferred_seq=fact.deferred_seq,
            answered_seq=fact.answered_seq,
        )


def compile_pattern(flag: str, pattern: str | None) -> GoRegexp | None:
    """A ``--input-match`` / ``--output-match`` / ``--match`` pattern compiled by Go's rules; None for no pattern
    (an empty one is none, as the runtime reads it). ``InvalidPattern`` names the flag and why Go refuses it."""
    if not pattern:
        return None
    try:
        return compile_go(pattern)
    except GoRegexpError as exc:
        raise InvalidPattern(flag, pattern, str(exc)) from None


@dataclass(frozen=True, slots=True)
class CallFilter:
    """``runstate.CallFilter``: every criterion given must hold. ``errors`` and ``output`` select answered calls
    only. Patterns are Go regular expressions (``compile_pattern``)."""

    tools: tuple[str, ...] = ()
    iteration: int | None = None
    answered: bool = False
    errors: bool = False
    input: GoRegexp | None = None
    output: GoRegexp | None = None

    def matches(self, call: Call) -> bool:
        if self.tools and call.tool not in self.tools:
            return False
        if self.iteration is not None and call.iteration != self.iteration:
            return False
        answer = call.answer
        if (self.answered or self.errors or self.output is not None) and answer is None:
            return False
        if self.errors and answer is not None and not answer.result.is_error:
            return False
        # Go matches the raw input bytes: a byte that is not UTF-8 reads as U+FFFD, as go_utf8 decodes it.
        if self.input is not None and not self.input.search(go_utf8(call.input)):
            return False
        return not (self.output is not None and answer is not None and not self.output.search(answer.result.content))

    def select(self, calls: Iterable[Call]) -> list[Call]:
        return [call for call in calls if self.matches(call)]


@dataclass(frozen=True, slots=True)
class SearchRun:
    """One run ``session search`` lists. Times are Go's text (``""`` when absent)."""

    run_id: str
    agent: str
    caller: str
    model: str
    #: ``open`` or the reason of the terminal that ends the run.
    status: str
    created: str
    updated: str
    ended: str
    prompt: str
    #: ``newest`` or ``august`` (not in the runtime's document: its listing skips August runs).
    generation: str | None = None


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """``runstate.SearchFilter``. ``agent`` excludes a run that names no agent (unlike ``ls --agent``);
    ``since`` <= created < ``until``; ``prompt`` is a Go regular expression (``compile_pattern``)."""

    agent: str = ""
    model: str = ""
    caller: str = ""
    status: str = ""
    since: GoTime | None = None
    until: GoTime | None = None
    prompt: GoRegexp | None = None

    def _matches_others(self, run: SearchRun) -> bool:
        if self.model and run.model != self.model:
            return False
        if self.caller and run.caller != self.caller:
            return False
        if self.status == "open" and run.status != "open":
            return False
        if self.status and self.status != "open" and run.status != self.status:
            return False
        created = _instant(run.created)
        if self.since is not None and created < self.since.unix_ns:
            return False
        if self.until is not None and not created < self.until.unix_ns:
            return False
        return not (self.prompt is not None and not self.prompt.search(run.prompt))

    def select(self, runs: Iterable[SearchRun]) -> tuple[list[SearchRun], int]:
        """The runs it keeps, in the order given, and how many were left out only for naming no agent."""
        kept: list[SearchRun] = []
        no_agent = 0
        for run in runs:
            if not self._matches_others(run):
                continue
            if self.agent and not run.agent:
                no_agent += 1
                continue
            if self.agent and run.agent != self.agent:
                continue
            kept.append(run)
        return kept, no_agent


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What ``session search`` finds: the runs, newest activity first, and the count ``--identity`` hid."""

    runs: tuple[SearchRun, ...]
    no_agent_excluded: int
    #: Runs of the source the runtime's newest listing would not list, so they were not searched: those whose
    #: journal its fold refuses (``invalid``), by id.
    skipped: tuple[str, ...] = ()
    #: Runs kept that an August build wrote (the newest runtime's listing skips them).
    august: int = 0

    def to_json(self) -> bytes:
        """The exact bytes ``session search --json`` prints."""
        return _document(_search_json(self))


# -- building them -----------------------------------------------------------------------------------------------


def _is_zero(time: str) -> bool:
    return not time or time == ZERO_TIME


def _go_time(time: str) -> str:
    """A time as Go marshals it; ``""`` for none or Go's zero time."""
    if _is_zero(time):
        return ""
    try:
        return canonical_go_time(time)
    except ValueError:
        return time


def _instant(time: str) -> int:
    """A time's instant in nanoseconds (Go's zero time for none, which sorts before every other)."""
    return GoTime.zero().unix_ns if _is_zero(time) else parse_go_time(time).unix_ns


def statistics(records: Sequence[Record], facts: RunFacts | None = None) -> Statistics:
    """``runstate.Stats`` over a journal's records (pure; ``facts`` when already made)."""
    facts = facts if facts is not None else RunFacts.of(records)
    run_id = agent = model = caller = created = updated = terminal = ended = ""
    max_iterations = max_tokens = 0
    first = records[0] if records else None
    if first is not None and first.kind == "meta" and first.meta is not None:
        meta = first.meta
        run_id, agent, model, caller = meta.run_id, meta.agent, meta.fingerprint.model, meta.caller
        created = _go_time(meta.created) or _go_time(first.time)
        max_iterations, max_tokens = meta.fingerprint.max_iterations, meta.fingerprint.max_tokens
    # The last record carrying a time Go does not call zero.
    updated = next((_go_time(record.time) for record in reversed(records) if not _is_zero(record.time)), "")
    last = records[-1] if records else None
    # Reported only when nothing follows the last terminal (the runtime's Ending()).
    if last is not None and last.kind == "terminal" and last.terminal is not None:
        terminal, ended = last.terminal.reason, _go_time(last.time)
    responses = tuple(
        ResponseTokens(
            response.iteration,
            _go_time(response.time),
            Tokens(
                response.in_tokens,
                response.out_tokens,
                response.cache_read_tokens,
                response.cache_create_tokens,
                response.thinking_tokens,
            ),
            response.seq,
        )
        for response in facts.responses
    )
    total = Tokens()
    for response in responses:
        total = total + response.tokens
    return Statistics(
        run_id=run_id,
        agent=agent,
        model=model,
        caller=caller,
        created=created,
        updated=updated,
        terminal=terminal,
        ended=ended,
        iterations=len(responses),
        max_iterations=max_iterations,
        max_tokens=max_tokens,
        tokens=total,
        responses=responses,
        tools=tool_stats(facts.calls),
        dated=facts.dated,
        kinds_recorded=facts.kinds_recorded,
    )


def tool_stats(calls: Iterable[CallFact]) -> tuple[ToolStats, ...]:
    """A row per tool, ordered by name as Go compares strings (by UTF-8 bytes)."""
    rows: dict[str, dict[str, int]] = {}
    kinds: dict[str, set[str]] = {}
    for call in calls:
        row = rows.setdefault(call.tool, dict.fromkeys(("calls", "dispatched", "undispatched", "unanswered"), 0))
        kinds.setdefault(call.tool, set())
        row["calls"] += 1
        if call.duration_ns is not None:
            row["duration_ns"] = row.get("duration_ns", 0) + call.duration_ns
            row["timed"] = row.get("timed", 0) + 1
        elif call.ended:
            row["untimed"] = row.get("untimed", 0) + 1
        if call.answer is None:
            row["unanswered"] += 1
            continue
        kind = call.kind
        if kind is not None:
            kinds[call.tool].add(kind)
        if call.is_error:
            row["errors"] = row.get("errors", 0) + 1
        if call.says_dispatch:
            row["dispatched" if call.dispatched else "undispatched"] += 1
    return tuple(
        ToolStats(
            tool=tool,
            kinds=tuple(sorted(kinds[tool], key=str.encode)),
            calls=row["calls"],
            dispatched=row["dispatched"],
            undispatched=row["undispatched"],
            unanswered=row["unanswered"],
            errors=row.get("errors", 0),
            duration_ns=row.get("duration_ns", 0),
            timed=row.get("timed", 0),
            untimed=row.get("untimed", 0),
        )
        for tool, row in sorted(rows.items(), key=lambda item: item[0].encode("utf-8", "surrogatepass"))
    )


def run_calls(records: Sequence[Record], facts: RunFacts | None = None) -> list[Call]:
    """``runstate.Calls`` over a journal's records: every call in the order made, each with its answer."""
    facts = facts if facts is not None else RunFacts.of(records)
    return [Call.of(fact) for fact in facts.calls]


def search_run_of(summary: RunSummary) -> SearchRun:
    """A listing row as the runtime's ``RunInfo`` as ``session search`` shows it."""
    updated = summary.updated_text or ""
    if not updated and summary.updated is not None:
        updated = GoTime.from_datetime(summary.updated).text()
    return SearchRun(
        run_id=summary.meta_run_id if summary.meta_run_id is not None else summary.run,
        agent=summary.agent or "",
        caller=summary.caller or "",
        model=summary.model or "",
        status=summary.status,
        created=_go_time(summary.created or ""),
        updated=_go_time(updated),
        ended=_go_time(summary.ended or ""),
        prompt=summary.prompt or "",
        generation=summary.generation,
    )


def select_runs(rows: Iterable[SearchRun], search_filter: SearchFilter) -> tuple[list[SearchRun], int]:
    """``SearchFilter.Select`` then the runtime's order: the latest ``updated`` first."""
    kept, no_agent = search_filter.select(rows)
    # Go's sort.Slice is not stable; it keeps the given order of ties for up to twelve rows (insertion sort), which
    # a stable sort reproduces. Ties beyond that need two runs whose last records share a nanosecond.
    kept.sort(key=lambda run: -_instant(run.updated))
    return kept, no_agent


def search_time(flag: str, value: str, now: datetime) -> GoTime | None:
    """A ``--since`` / ``--until`` value as the runtime reads it: an RFC 3339 time, a date (local midnight), or a
    duration back from ``now`` (``90s``, ``2h``, ``7d``, ``2w``); None for an empty one."""
    if not value:
        return None
    try:
        return parse_go_time(value)
    except ValueError:
        pass
    try:
        day = datetime.strptime(value, "%Y-%m-%d")
        if len(value) == 10:
            return GoTime.from_datetime(day.astimezone())
    except ValueError:
        pass
    back = _go_duration(value)
    if back is None or back < 0:
        raise InvalidSearch(
            f"invalid --{flag} {value!r}: give a duration ago such as 24h or 7d, a date such as 2006-01-02, or an "
            "RFC3339 time"
        )
    moment = GoTime.from_datetime(now)
    return GoTime(moment.unix_ns - back)


#: fisk's ParseDuration: a signed number and a unit, as many times as the text holds (what lies between is passed
#: over, as its FindAllStringSubmatch passes it over).
_FISK_PART = re.compile(r"([-+]?)(([0-9.]+)([a-zA-Z]+))")
#: fisk's own units, in hours: a number of them is truncated to whole hours, as ``time.Duration(val*24)`` does.
_FISK_HOURS = {"w": 168, "W": 168, "d": 24, "D": 24, "M": 720, "y": 8760, "Y": 8760}
#: Go's ``time.ParseDuration`` units, in nanoseconds.
_GO_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_GO_NUMBER = re.compile(r"[0-9]*(?:\.[0-9]*)?")


def _go_duration(text: str) -> int | None:
    """A duration as fisk's ``ParseDuration`` reads it (the runtime's ``--since``/``--until``), in nanoseconds;
    None where it refuses the text. Beyond Go's units: ``w``, ``d``, ``M`` (30 days) and ``y`` (365 days)."""
    if text == "0":
        return 0
    text = text.strip()
    parts = _FISK_PART.findall(text)
    if not text or not parts:
        return None
    total = 0
    for _, _, number, unit in parts:
        if unit in _FISK_HOURS:
            try:
                # strconv.ParseFloat(number, 32): a float32's value, then float64 arithmetic in Go.
                value = struct.unpack("f", struct.pack("f", float(number)))[0]
            except (ValueError, OverflowError):
                return None
            total += int(value * _FISK_HOURS[unit]) * 3_600_000_000_000
        elif unit in _GO_UNITS and _GO_NUMBER.fullmatch(number) and number.strip("."):
            # time.ParseDuration: exact decimal arithmetic, truncated to the nanosecond.
            total += int(Decimal(number) * _GO_UNITS[unit])
        else:
            return None
    return -total if parts[0][0] == "-" else total


# -- the runtime's bytes -----------------------------------------------------------------------------------------


def _document(compact_json: bytes) -> bytes:
    """A compact document as the runtime's encoder writes it: indented by two spaces, a newline after it."""
    return indent(compact_json) + b"\n"


def _string(text: str) -> bytes:
    return go_string(text, escape_html=False)


def _object(pairs: Iterable[tuple[str, bytes]]) -> bytes:
    return b"{" + b",".join(_string(key) + b":" + value for key, value in pairs) + b"}"


def _int(value: int) -> bytes:
    return str(value).encode()


def _bool(value: bool) -> bytes:
    return b"true" if value else b"false"


def _tokens_json(tokens: Tokens) -> bytes:
    return _object(
        [
            ("in_tokens", _int(tokens.in_tokens)),
            ("out_tokens", _int(tokens.out_tokens)),
            ("cache_read_tokens", _int(tokens.cache_read_tokens)),
            ("cache_create_tokens", _int(tokens.cache_create_tokens)),
            ("thinking_tokens", _int(tokens.thinking_tokens)),
        ]
    )


def _number(value: float | None) -> bytes:
    return b"null" if value is None else json.dumps(value).encode()


def _cost_json(cost: Cost, currency: str | None = None, note: str | None = None) -> bytes:
    """``{currency?, input, output, cache_read, cache_create, total, note?}``, null where a cost is unknown."""
    pairs = [("currency", _string(currency))] if currency else []
    pairs += [(tier, _number(cost.of(tier))) for tier in TIERS]
    pairs.append(("total", _number(cost.total)))
    if note:
        pairs.append(("note", _string(note)))
    return _object(pairs)


def _statistics_json(stats: Statistics, cost: StatisticsCost | None = None) -> bytes:
    pairs: list[tuple[str, bytes]] = [("run_id", _string(stats.run_id))]
    for key, text in (("agent", stats.agent), ("model", stats.model), ("caller", stats.caller)):
        if text:
            pairs.append((key, _string(text)))
    for key, time in (("created", stats.created), ("updated", stats.updated)):
        if time:
            pairs.append((key, _string(time)))
    if stats.terminal:
        pairs.append(("terminal", _string(stats.terminal)))
    if stats.ended:
        pairs.append(("ended", _string(stats.ended)))
    pairs.append(("iterations", _int(stats.iterations)))
    if stats.max_iterations:
        pairs.append(("max_iterations", _int(stats.max_iterations)))
    if stats.max_tokens:
        pairs.append(("max_tokens", _int(stats.max_tokens)))
    pairs.append(("tokens", _tokens_json(stats.tokens)))
    responses = []
    for index, response in enumerate(stats.responses):
        fields: list[tuple[str, bytes]] = [("iteration", _int(response.iteration))]
        if response.time:
            fields.append(("time", _string(response.time)))
        fields.append(("tokens", _tokens_json(response.tokens)))
        if cost is not None:
            fields.append(("cost", _cost_json(cost.responses[index])))
        responses.append(_object(fields))
    pairs.append(("responses", b"[" + b",".join(responses) + b"]"))
    tools = []
    for tool in stats.tools:
        fields = [("tool", _string(tool.tool))]
        if tool.kinds:
            fields.append(("kinds", b"[" + b",".join(_string(kind) for kind in tool.kinds) + b"]"))
        fields += [
            ("calls", _int(tool.calls)),
            ("dispatched", _int(tool.dispatched)),
            ("undispatched", _int(tool.undispatched)),
            ("unanswered", _int(tool.unanswered)),
            ("errors", _int(tool.errors)),
            ("duration_ns", _int(tool.duration_ns)),
            ("timed", _int(tool.timed)),
            ("untimed", _int(tool.untimed)),
        ]
        tools.append(_object(fields))
    pairs.append(("tools", b"[" + b",".join(tools) + b"]"))
    if cost is not None:
        pairs.append(("cost", _cost_json(cost.total, cost.currency, cost.note)))
    return _object(pairs)


def _deferred_json(deferred: Deferred) -> bytes:
    pairs = [("tool_use_id", _string(deferred.tool_use_id)), ("tool_name", _string(deferred.tool_name))]
    for key, text in (("note", deferred.note), ("handle", deferred.handle), ("kind", deferred.kind)):
        if text:
            pairs.append((key, _string(text)))
    if deferred.dispatched:
        pairs.append(("dispatched", b"true"))
    return _object(pairs)


def _answer_json(answer: ToolResult) -> bytes:
    result = answer.result
    inner = [("tool_use_id", _string(result.tool_use_id)), ("content", _string(result.content))]
    if result.is_error:
        inner.append(("is_error", b"true"))
    pairs = [("tool_use_id", _string(answer.tool_use_id)), ("result", _object(inner))]
    if answer.remote:
        pairs.append(("remote", b"true"))
    if answer.kind:
        pairs.append(("kind", _string(answer.kind)))
    if answer.dispatched:
        pairs.append(("dispatched", b"true"))
    return _object(pairs)


def _call_json(call: Call, *, calls_only: bool, results_only: bool) -> bytes:
    pairs = [
        ("iteration", _int(call.iteration)),
        ("tool_use_id", _string(call.tool_use_id)),
        ("tool", _string(call.tool)),
    ]
    if call.input and not results_only:
        # A json.RawMessage: compacted, and not HTML-escaped by this encoder (escapes the journal holds stay).
        pairs.append(("input", compact(call.input)))
    if not _is_zero(call.time):
        pairs.append(("time", _string(_go_time(call.time))))
    if call.deferred is not None:
        pairs.append(("deferred", _deferred_json(call.deferred)))
    if call.answer is not None and not calls_only:
        pairs.append(("answer", _answer_json(call.answer)))
        if not _is_zero(call.answer_time):
            pairs.append(("answer_time", _string(_go_time(call.answer_time))))
    return _object(pairs)


def query_json(run_id: str, calls: Sequence[Call], *, calls_only: bool = False, results_only: bool = False) -> bytes:
    """The exact bytes ``session query RUN --json`` prints for the selected ``calls`` (``calls_only`` leaves out
    each answer, ``results_only`` each input)."""
    listed = b",".join(_call_json(call, calls_only=calls_only, results_only=results_only) for call in calls)
    return _document(_object([("run_id", _string(run_id)), ("calls", b"[" + listed + b"]")]))


def _search_json(result: SearchResult) -> bytes:
    runs = []
    for run in result.runs:
        pairs = [("run_id", _string(run.run_id))]
        for key, text in (("agent", run.agent), ("caller", run.caller), ("model", run.model)):
            if text:
                pairs.append((key, _string(text)))
        pairs.append(("status", _string(run.status)))
        for key, time in (("created", run.created), ("updated", run.updated), ("ended", run.ended)):
            if time:
                pairs.append((key, _string(time)))
        pairs.append(("prompt", _string(run.prompt)))
        runs.append(_object(pairs))
    return _object([("runs", b"[" + b",".join(runs) + b"]"), ("no_agent_excluded", _int(result.no_agent_excluded))])


# -- the public faces: open a source, read, answer ---------------------------------------------------------------


def _read(source: str | os.PathLike[str] | None, run: str) -> list[Record]:
    """A run's records as the runtime's ``Store.Records`` returns them: read without folding, refused when a
    line does not decode (what ``Store.Records`` refuses)."""
    from journaltools.sources.registry import default_source, open_source

    with open_source(str(source) if source is not None else str(default_source())) as backend:
        read = backend.read_run(run, strict=True)
    return read.typed()


def stats(source: str | os.PathLike[str] | None, run: str) -> Statistics:
    """``session stats`` of ``run`` in ``source`` (a directory, journal file, ``nats://`` URL...; None: the
    runtime's own directory). ``.to_json()`` gives the runtime's bytes."""
    return statistics(_read(source, run))


def calls(
    source: str | os.PathLike[str] | None,
    run: str,
    *,
    tools: Sequence[str] = (),
    iteration: int | None = None,
    answered: bool = False,
    errors: bool = False,
    input_match: str | None = None,
    output_match: str | None = None,
) -> list[Call]:
    """``session query``: the tool calls of ``run`` that every criterion given selects, each with its answer.
    ``input_match`` / ``output_match`` are Go regular expressions (``InvalidPattern`` when Go would refuse one)."""
    call_filter = CallFilter(
        tools=tuple(tools),
        iteration=iteration,
        answered=answered,
        errors=errors,
        input=compile_pattern("input-match", input_match),
        output=compile_pattern("output-match", output_match),
    )
    return call_filter.select(run_calls(_read(source, run)))


def search(
    source: str | os.PathLike[str] | None = None,
    *,
    agent: str = "",
    model: str = "",
    caller: str = "",
    status: str = "",
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    match: str | None = None,
) -> SearchResult:
    """``session search`` over the listing of ``source``: the runs every criterion given selects, latest activity
    first. ``since``/``until`` take a datetime or the runtime's text (RFC 3339, a date, a duration back from now);
    ``match`` is a Go regular expression over the prompt. A run whose journal the runtime's fold refuses is not
    listed by the runtime, so it is not searched (``SearchResult.skipped`` names it)."""
    from journaltools.sources.registry import default_source, open_source

    if status and status not in SEARCH_STATUSES:
        raise InvalidSearch(f"invalid status {status!r}: give one of {', '.join(SEARCH_STATUSES)}")
    now = datetime.now().astimezone()

    def bound(flag: str, value: str | datetime | None) -> GoTime | None:
        if isinstance(value, datetime):
            return GoTime.from_datetime(value)
        return search_time(flag, value or "", now)

    search_filter = SearchFilter(
        agent=agent,
        model=model,
        caller=caller,
        status=status,
        since=bound("since", since),
        until=bound("until", until),
        prompt=compile_pattern("match", match),
    )
    with open_source(str(source) if source is not None else str(default_source())) as backend:
        return search_listing(backend.iter_listing(), search_filter)


def search_listing(summaries: Iterable[RunSummary], search_filter: SearchFilter) -> SearchResult:
    """``session search`` over listing rows: a row the runtime's listing would leave out (``invalid``: its fold
    refuses the journal) is skipped and named, the rest filtered and ordered (``select_runs``)."""
    rows: list[SearchRun] = []
    skipped: list[str] = []
    for summary in summaries:
        if summary.status == "invalid":
            skipped.append(summary.run)
        else:
            rows.append(search_run_of(summary))
    kept, no_agent = select_runs(rows, search_filter)
    august = sum(1 for run in kept if run.generation == "august")
    return SearchResult(tuple(kept), no_agent, tuple(skipped), august)


__all__ = [
    "SEARCH_STATUSES",
    "Call",
    "CallFilter",
    "ResponseTokens",
    "SearchFilter",
    "SearchResult",
    "SearchRun",
    "Statistics",
    "Tokens",
    "ToolStats",
    "calls",
    "compile_pattern",
    "query_json",
    "run_calls",
    "search",
    "search_listing",
    "search_run_of",
    "search_time",
    "select_runs",
    "statistics",
    "stats",
    "tool_stats",
]
