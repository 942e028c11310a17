"""``session stats``: a run's tokens per model response and a row per tool with its calls and time, by the newest
runtime's rules (NEWEST A2), with the same ``--json`` bytes; a cost when the user gives prices."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from journaltools.analyses.runtime_bytes import (
    go_time_text,
    json_document,
    json_int,
    json_number,
    json_object,
    json_string,
)
from journaltools.folding.facts import CallFact, RunFacts
from journaltools.folding.state import wrap_int64
from journaltools.goencoding.time import parse_go_time
from journaltools.sources.registry import run_facts
from journaltools.tables.prices import TIERS, Cost, PriceTable, TokenCounts, cost_of, unpriced


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
        return json_document(_statistics_json(self, cost))


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


def statistics(facts: RunFacts) -> Statistics:
    """``runstate.Stats`` of a journal, from the facts of its records (pure)."""
    run_id = agent = model = caller = created = terminal = ended = ""
    max_iterations = max_tokens = 0
    meta = facts.meta
    if meta is not None:
        run_id, agent, model, caller = meta.run_id, meta.agent, meta.model, meta.caller
        created = go_time_text(meta.created) or go_time_text(meta.time)
        max_iterations, max_tokens = meta.max_iterations, meta.max_tokens
    updated = go_time_text(facts.last_go_time())
    # Reported only when nothing follows the last terminal (the runtime's Ending()).
    if facts.ends_with_terminal and facts.terminal_seq is not None:
        terminal, ended = facts.terminal_reason, go_time_text(facts.times.get(facts.terminal_seq, ""))
    responses = tuple(
        ResponseTokens(
            response.iteration,
            go_time_text(response.time),
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


def _tokens_json(tokens: Tokens) -> bytes:
    return json_object(
        [
            ("in_tokens", json_int(tokens.in_tokens)),
            ("out_tokens", json_int(tokens.out_tokens)),
            ("cache_read_tokens", json_int(tokens.cache_read_tokens)),
            ("cache_create_tokens", json_int(tokens.cache_create_tokens)),
            ("thinking_tokens", json_int(tokens.thinking_tokens)),
        ]
    )


def _cost_json(cost: Cost, currency: str | None = None, note: str | None = None) -> bytes:
    """``{currency?, input, output, cache_read, cache_create, total, note?}``, null where a cost is unknown."""
    pairs = [("currency", json_string(currency))] if currency else []
    pairs += [(tier, json_number(cost.of(tier))) for tier in TIERS]
    pairs.append(("total", json_number(cost.total)))
    if note:
        pairs.append(("note", json_string(note)))
    return json_object(pairs)


def _statistics_json(stats: Statistics, cost: StatisticsCost | None = None) -> bytes:
    pairs: list[tuple[str, bytes]] = [("run_id", json_string(stats.run_id))]
    for key, text in (("agent", stats.agent), ("model", stats.model), ("caller", stats.caller)):
        if text:
            pairs.append((key, json_string(text)))
    for key, time in (("created", stats.created), ("updated", stats.updated)):
        if time:
            pairs.append((key, json_string(time)))
    if stats.terminal:
        pairs.append(("terminal", json_string(stats.terminal)))
    if stats.ended:
        pairs.append(("ended", json_string(stats.ended)))
    pairs.append(("iterations", json_int(stats.iterations)))
    if stats.max_iterations:
        pairs.append(("max_iterations", json_int(stats.max_iterations)))
    if stats.max_tokens:
        pairs.append(("max_tokens", json_int(stats.max_tokens)))
    pairs.append(("tokens", _tokens_json(stats.tokens)))
    responses = []
    for index, response in enumerate(stats.responses):
        fields: list[tuple[str, bytes]] = [("iteration", json_int(response.iteration))]
        if response.time:
            fields.append(("time", json_string(response.time)))
        fields.append(("tokens", _tokens_json(response.tokens)))
        if cost is not None:
            fields.append(("cost", _cost_json(cost.responses[index])))
        responses.append(json_object(fields))
    pairs.append(("responses", b"[" + b",".join(responses) + b"]"))
    tools = []
    for tool in stats.tools:
        fields = [("tool", json_string(tool.tool))]
        if tool.kinds:
            fields.append(("kinds", b"[" + b",".join(json_string(kind) for kind in tool.kinds) + b"]"))
        fields += [
            ("calls", json_int(tool.calls)),
            ("dispatched", json_int(tool.dispatched)),
            ("undispatched", json_int(tool.undispatched)),
            ("unanswered", json_int(tool.unanswered)),
            ("errors", json_int(tool.errors)),
            ("duration_ns", json_int(tool.duration_ns)),
            ("timed", json_int(tool.timed)),
            ("untimed", json_int(tool.untimed)),
        ]
        tools.append(json_object(fields))
    pairs.append(("tools", b"[" + b",".join(tools) + b"]"))
    if cost is not None:
        pairs.append(("cost", _cost_json(cost.total, cost.currency, cost.note)))
    return json_object(pairs)


def stats(source: str | os.PathLike[str] | None, run: str) -> Statistics:
    """``session stats`` of ``run`` in ``source`` (a directory, journal file, ``nats://`` URL...; None: the
    runtime's own directory). ``.to_json()`` gives the runtime's bytes."""
    return statistics(run_facts(source, run))
