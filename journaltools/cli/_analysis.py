"""``stats``, ``query`` and ``search``: the newest runtime's ``session stats/query/search``, its exact ``--json``
bytes, and a readable account for a terminal (``journaltools.analyses.search`` does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime

from journaltools.analyses.query import Call, CallFilter, compile_pattern, query_json, run_calls
from journaltools.analyses.search import SearchFilter, SearchResult, search_listing, search_time
from journaltools.analyses.stats import Statistics, StatisticsCost, ToolStats, statistics, statistics_cost
from journaltools.cli._options import where_of
from journaltools.cli._output import UsageError, _note, _say, human_duration, print_table
from journaltools.cli._sources import _is_source, _only_run, _open, _source_and_rest, read_named
from journaltools.errors import InvalidPattern, InvalidSearch
from journaltools.folding.facts import degraded_analysis
from journaltools.folding.phrases import shown_time
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.goencoding.json import go_utf8
from journaltools.sources.base import RunRead
from journaltools.tables.prices import TIERS, read_prices


def _write(document: bytes) -> None:
    sys.stdout.buffer.write(document)
    sys.stdout.flush()


def _read(command: str, words: Sequence[str]) -> RunRead:
    """The run named by ``[SOURCE] RUN`` (or the one run of a journal file given alone), read as the runtime's
    ``Store.Records`` reads it: unfolded, and refused when a line does not decode."""
    if len(words) == 1 and _is_source(words[0]):  # one journal file: its run, as show takes it
        with _open(words[0], command) as backend:
            return backend.read_run(_only_run(backend), strict=True)
    source, (run,) = _source_and_rest(command, words, ["RUN"])
    with _open(source, command) as backend:
        return read_named(backend, run, strict=True)


def _degraded_note(command: str, read: RunRead) -> FoldedRun:
    """Say, once, what the journal cannot tell (its ``degraded_analysis`` finding, as ``load`` reports it; on
    stderr, so ``--json`` stays the runtime's bytes), and give the run folded."""
    folded = fold_run(read)
    degraded = degraded_analysis(read.run, read.typed(), folded.facts())
    if degraded is not None:
        _note(command, f"info: {degraded.message}")
    return folded


# -- stats -------------------------------------------------------------------------------------------------------


def _says_dispatch(tool: ToolStats) -> bool:
    """Whether any answered call of ``tool`` says whether it reached its provider (a kind, or ``remote``)."""
    return any(kind != "unknown" for kind in tool.kinds) or tool.dispatched > 0 or tool.undispatched > 0


def cmd_stats(args: argparse.Namespace) -> int:
    prices = read_prices(args.prices) if args.prices else None  # a wrong price file: bad usage, before any read
    read = _read("stats", args.targets)
    folded = _degraded_note("stats", read)
    run, stats = read.run, statistics(folded.facts())
    cost = statistics_cost(stats, prices) if prices is not None else None
    if args.json:
        _write(stats.to_json(cost))
    else:
        # The fold owns the rule for record times that run backwards; the runtime's stats do not know it.
        findings = folded.findings
        print_stats(run, stats, backwards=[f.seq for f in findings if f.code == "times_out_of_order" and f.seq])
        if cost is not None:
            print_cost(cost)
    return 0


def _money(value: float | None, currency: str | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:,.6f}".rstrip("0").rstrip(".") + (f" {currency}" if currency else "")


def print_cost(cost: StatisticsCost) -> None:
    """The run's cost by the user's prices, after the runtime's account (which stays as it is)."""
    total = cost.total
    parts = " / ".join(
        f"{_money(total.of(tier), None)} {label}"
        for tier, label in zip(TIERS, ("in", "out", "cache read", "cache write"), strict=True)
    )
    _say(f"\ncost: {_money(total.total, cost.currency)} ({parts}), by your price table")
    if cost.note:
        _say(f"cost: {cost.note}")


def _tokens_line(stats: Statistics) -> str:
    tokens = stats.tokens
    split = f"{tokens.in_tokens} in / {tokens.out_tokens} out"
    if tokens.cache_read_tokens or tokens.cache_create_tokens:
        split += f" / {tokens.cache_read_tokens} cache read / {tokens.cache_create_tokens} cache write"
    if stats.max_tokens:
        return f"{tokens.total} of {stats.max_tokens} budget ({split})"
    return f"{tokens.total} ({split})"


def print_stats(run: str, stats: Statistics, *, backwards: Sequence[int] = ()) -> None:
    """What a run cost, for a person: the frame, a table of model responses, a table of tools. ``backwards``: the
    seqs dated before the dated record before them, across which no interval is a duration."""
    _say(f"run {run}")
    frame = [("agent", stats.agent), ("caller", stats.caller), ("model", stats.model)]
    _say(" · ".join(f"{key} {value}" for key, value in frame if value) or "no meta record")
    _say(f"status: {stats.terminal or 'open'}")
    dates = [f"created {shown_time(stats.created)}"] if stats.created else []
    if stats.ended:
        dates.append(f"ended {shown_time(stats.ended)}")
    elif stats.updated:
        dates.append(f"last record {shown_time(stats.updated)}")
    if dates:
        _say(" · ".join(dates))
    cap = f" (at most {stats.max_iterations} per turn)" if stats.max_iterations else ""
    _say(f"iterations: {stats.iterations}{cap}")
    wall = stats.wall_clock_ns
    if backwards:
        _say(f"wall clock: unknown: record times run backwards at seq {', '.join(map(str, backwards))}")
    elif wall is not None:
        _say(f"wall clock: {human_duration(wall)} (creation to the last journal record)")
    else:
        _say("wall clock: not recorded in this journal" + ("" if stats.dated else " (no record carries a time)"))
    _say(f"tokens: {_tokens_line(stats)}")
    if stats.responses:
        _say("\nmodel responses")
        print_table(
            [
                {
                    "seq": response.seq,
                    "iteration": response.iteration,
                    "time": shown_time(response.time),
                    "in": response.tokens.in_tokens,
                    "out": response.tokens.out_tokens,
                    "cache_read": response.tokens.cache_read_tokens,
                    "cache_write": response.tokens.cache_create_tokens,
                    "thinking": response.tokens.thinking_tokens,
                    "total": response.tokens.total,
                }
                for response in stats.responses
            ],
            ["seq", "iteration", "time", "in", "out", "cache_read", "cache_write", "thinking", "total"],
            labels={"cache_read": "cache read", "cache_write": "cache write"},
        )
    if not stats.tools:
        return
    _say("\ntools")
    rows = []
    for tool in stats.tools:
        time = "-"
        if tool.timed:
            time = human_duration(tool.duration_ns)
            if tool.timed < tool.calls:
                time += f" ({tool.timed} of {tool.calls} calls)"
        rows.append(
            {
                "tool": tool.tool,
                "kind": ", ".join(tool.kinds) or "-",
                "calls": tool.calls,
                # A result that names no provider kind and is not remote (every August one) says nothing of
                # dispatch: unknown is shown as such, not as 0 (--json keeps the runtime's counts).
                "dispatched": tool.dispatched if _says_dispatch(tool) else "-",
                "not_run": tool.undispatched if _says_dispatch(tool) else "-",
                "unanswered": tool.unanswered,
                "errors": tool.errors,
                "time": time,
            }
        )
    print_table(
        rows,
        ["tool", "kind", "calls", "dispatched", "not_run", "unanswered", "errors", "time"],
        labels={"not_run": "not run"},
    )
    calls = sum(tool.calls for tool in stats.tools)
    timed = sum(tool.timed for tool in stats.tools)
    untimed = sum(tool.untimed for tool in stats.tools)
    if untimed and untimed == calls:
        _say("untimed: the journal records no times for these calls (untimed is not instant)")
    elif untimed:
        _say(f"untimed: {untimed} of {calls} calls ended with a record that carries no time")
    if calls - timed - untimed > 0:
        _say(f"unanswered: {calls - timed - untimed} of {calls} calls have no answer yet")
    if not stats.kinds_recorded:
        _say("kinds: the journal records no provider kinds; 'remote' results read as remote, the rest as unknown")


# -- query -------------------------------------------------------------------------------------------------------


def _call_filter(args: argparse.Namespace) -> CallFilter:
    if args.calls_only and args.results_only:
        raise UsageError("--calls-only and --results-only cannot both be set")
    try:
        return CallFilter(
            tools=tuple(args.tool or ()),
            iteration=args.iteration,
            answered=args.results_only,
            errors=args.errors,
            input=compile_pattern("input-match", args.input_match),
            output=compile_pattern("output-match", args.output_match),
        )
    except InvalidPattern as exc:
        raise UsageError(str(exc)) from None


def cmd_query(args: argparse.Namespace) -> int:
    call_filter = _call_filter(args)
    read = _read("query", args.targets)
    run = read.run
    selected = call_filter.select(run_calls(_degraded_note("query", read).facts()))
    if args.json:
        _write(query_json(run, selected, calls_only=args.calls_only, results_only=args.results_only))
        return 0
    if not selected:
        _say("No matching calls")
        return 0
    _say(f"run {run}: {len(selected)} call{'s' if len(selected) != 1 else ''}")
    for number, call in enumerate(selected, 1):
        print_call(number, call, calls_only=args.calls_only, results_only=args.results_only)
    return 0


def _status(call: Call) -> str:
    if call.answer is None:
        return "no answer yet"
    return "error" if call.answer.result.is_error else "answered"


def print_call(number: int, call: Call, *, calls_only: bool, results_only: bool) -> None:
    """One call for a person: what, when, how long, then its input and its answer."""
    heading = [f"\ncall {number}: {call.tool} [{call.tool_use_id}] iteration {call.iteration}"]
    if not calls_only:
        heading.append(_status(call))
        if call.answer is not None and call.answer.kind:
            dispatched = "dispatched" if call.answer.dispatched else "not run"
            heading.append(f"{call.answer.kind}, {dispatched}")
    if call.duration_ns is not None:
        # A deferred call is timed to its deferral: the answer comes whenever somebody supplies it.
        verb = "deferred after" if call.deferred is not None else "took"
        heading.append(f"{verb} {human_duration(call.duration_ns)}")
    elif call.answer is not None or call.deferred is not None:
        heading.append("untimed")
    _say(" · ".join(heading))
    if call.time:
        _say(f"  made {call.time}" + (f" · answered {call.answer_time}" if call.answer_time and not calls_only else ""))
    if call.deferred is not None and not calls_only:
        deferred = call.deferred
        said = f" ({deferred.note})" if deferred.note else ""
        handle = f" [handle {deferred.handle}]" if deferred.handle else ""
        _say(f"  deferred{said}{handle}")
    if not results_only:
        _say("  input: " + (go_utf8(call.input) if call.input else "-"))
    if call.answer is not None and not calls_only:
        _say("  answer: " + call.answer.result.content.replace("\n", "\n    "))


# -- search ------------------------------------------------------------------------------------------------------


def _search_filter(args: argparse.Namespace) -> SearchFilter:
    now = datetime.now().astimezone()
    try:
        return SearchFilter(
            agent=args.identity or "",
            model=args.model or "",
            caller=args.caller or "",
            status=args.status or "",
            since=search_time("since", args.since or "", now),
            until=search_time("until", args.until or "", now),
            prompt=compile_pattern("match", args.match),
        )
    except (InvalidPattern, InvalidSearch) as exc:
        raise UsageError(str(exc)) from None


def cmd_search(args: argparse.Namespace) -> int:
    search_filter = _search_filter(args)
    source = args.source
    if source is None:
        from journaltools.cli._sources import _default_source

        source = _default_source()
    where = where_of(args)
    with _open(source, "search") as backend:
        listing = backend.iter_listing()
        if where is not None:
            from journaltools.tables.loader import kept_runs

            kept = kept_runs(backend, where)  # judged on the runs table; the search then reads its listing rows
            listing = (summary for summary in listing if summary.run in kept)
        result = search_listing(listing, search_filter)
    skipped = result.skipped
    if skipped:
        _note(
            "search",
            f"info: {len(skipped)} run(s) not searched: the runtime's fold refuses their journals, so its listing "
            f"leaves them out ({', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''}); ls lists them invalid",
        )
    if result.august:
        _note(
            "search",
            f"info: {result.august} run(s) found were written by the August build, which the newest runtime's "
            "listing skips; they are dated by their file's modification time",
        )
    if args.json:
        _write(result.to_json())
    else:
        print_search(result, search_filter)
    return 0


def print_search(result: SearchResult, search_filter: SearchFilter) -> None:
    if not result.runs:
        _say("No sessions matched")
    else:
        columns = ["run_id"]
        columns += ["agent"] if search_filter.agent else []
        columns += ["caller"] if search_filter.caller else []
        columns += ["model", "status"]
        columns += ["created"] if search_filter.since is not None or search_filter.until is not None else []
        columns += ["updated", "prompt"]
        print_table(
            [
                {
                    "run_id": run.run_id,
                    "agent": run.agent,
                    "caller": run.caller,
                    "model": run.model,
                    "status": run.status,
                    "created": run.created or None,
                    "updated": run.updated or None,
                    "prompt": " ".join(run.prompt.split()),
                }
                for run in result.runs
            ],
            columns,
            labels={"run_id": "run"},
        )
    excluded = result.no_agent_excluded
    if excluded:
        runs = "1 more run" if excluded == 1 else f"{excluded} more runs"
        _say(
            f"\n{runs} matched every other filter but name no agent, so --identity left "
            f"{'it' if excluded == 1 else 'them'} out (journaled before the agent was recorded)"
        )


__all__ = ["cmd_query", "cmd_search", "cmd_stats", "human_duration"]
