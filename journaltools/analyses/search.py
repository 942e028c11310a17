"""``session search``, and the newest runtime's own analysis of runs it belongs to: ``session stats`` (``stats``),
``session query`` (``query``) and ``session search`` (here), reproduced.

The newest fisk-ai line ships three inspection commands over its journals (NEWEST A1-A4). journaltools answers the
same questions from the same records, with the same rules, and writes the same bytes for ``--json``:

- ``statistics(facts)``: what a run cost (``session stats``): the frame from the meta record, the tokens of each
  model response and in total, and a row per tool (calls, kinds, dispatched, not run, unanswered, errors, time);
- ``run_calls(facts)``: each tool call paired with the record that answered it (``session query``), selected by
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

import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from journaltools.analyses.query import compile_pattern
from journaltools.analyses.runtime_bytes import (
    go_time_text,
    instant_ns,
    json_document,
    json_int,
    json_object,
    json_string,
)
from journaltools.errors import InvalidSearch
from journaltools.goencoding.regexp import GoRegexp
from journaltools.goencoding.time import GoTime, parse_go_time
from journaltools.sources.listing import RunSummary

#: What ``session search --status`` accepts: ``open``, or a reason the runner ends a run with.
SEARCH_STATUSES = ("open", "completed", "suspended", "error", "budget", "max_iterations")


# -- values ------------------------------------------------------------------------------------------------------


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
        created = instant_ns(run.created)
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
        return json_document(_search_json(self))


# -- building them -----------------------------------------------------------------------------------------------


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
        created=go_time_text(summary.created or ""),
        updated=go_time_text(updated),
        ended=go_time_text(summary.ended or ""),
        prompt=summary.prompt or "",
        generation=summary.generation,
    )


def select_runs(rows: Iterable[SearchRun], search_filter: SearchFilter) -> tuple[list[SearchRun], int]:
    """``SearchFilter.Select`` then the runtime's order: the latest ``updated`` first."""
    kept, no_agent = search_filter.select(rows)
    # Go's sort.Slice is not stable; it keeps the given order of ties for up to twelve rows (insertion sort), which
    # a stable sort reproduces. Ties beyond that need two runs whose last records share a nanosecond.
    kept.sort(key=lambda run: -instant_ns(run.updated))
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


def _search_json(result: SearchResult) -> bytes:
    runs = []
    for run in result.runs:
        pairs = [("run_id", json_string(run.run_id))]
        for key, text in (("agent", run.agent), ("caller", run.caller), ("model", run.model)):
            if text:
                pairs.append((key, json_string(text)))
        pairs.append(("status", json_string(run.status)))
        for key, time in (("created", run.created), ("updated", run.updated), ("ended", run.ended)):
            if time:
                pairs.append((key, json_string(time)))
        pairs.append(("prompt", json_string(run.prompt)))
        runs.append(json_object(pairs))
    return json_object(
        [("runs", b"[" + b",".join(runs) + b"]"), ("no_agent_excluded", json_int(result.no_agent_excluded))]
    )


# -- the public faces: open a source, read, answer ---------------------------------------------------------------


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
    "SearchFilter",
    "SearchResult",
    "SearchRun",
    "search",
    "search_listing",
    "search_run_of",
    "search_time",
    "select_runs",
]
