"""Two sets of runs side by side (``journaltools diff SOURCE --cohort A --cohort B``, ``jt.diff_cohorts``).

People change a prompt, a model or a tool and need to know what moved between the runs before and the runs after:
how the runs ended, which tools were called and how often they failed, what a run cost in tokens and in time, what
the audit found, and which runs stand out most. Each cohort is the runs a filter expression keeps
(``tables.where``), read from the same tables ``load`` builds, so a cohort's counts are ``ls --where``'s.

Tokens per run are the runtime CLI's total (input, output and both cache tiers); time per run is its wall clock,
known only for runs that date their records (the newest line), and said so. A median and a 90th percentile are of
the runs that have the figure (nearest rank: the value of a run, never an interpolation).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from journaltools.tables.costs import total_tokens
from journaltools.tables.schema import Tables
from journaltools.tables.where import filtered_tables, tables_of_runs, where_filter

#: What a person reads for a measure the JSON names by its unit (its values are durations, spelled by the face).
_MEASURE_WORDS: Final = {"seconds": "wall clock"}
#: How many runs "moved most" names for each measure.
STANDOUTS: Final = 5


@dataclass(frozen=True, slots=True)
class Spread:
    """A measure over a cohort's runs: how many runs have it, their median and 90th percentile (None for none)."""

    runs: int
    median: float | None
    p90: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        ordered = sorted(values)
        return cls(len(ordered), _rank(ordered, 0.5), _rank(ordered, 0.9))


def _rank(ordered: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile: the smallest value with at least ``share`` of the values at or below it."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool in a cohort: its calls, the errors among their results, and the runs that called it."""

    calls: int
    errors: int
    runs: int

    @property
    def error_share(self) -> float:
        return self.errors / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class Standout:
    """A run of one cohort far from the other cohort's median on a measure."""

    run: str
    cohort: str
    measure: str
    value: float
    other_median: float


@dataclass(frozen=True, slots=True)
class Cohort:
    """What one cohort's runs add up to."""

    expression: str
    runs: tuple[str, ...]
    endings: dict[str, int]
    tools: dict[str, ToolUse]
    tokens: Spread
    seconds: Spread
    findings: dict[str, int]
    #: run → its total tokens and its wall clock in seconds (None where unknown), for the standouts.
    measures: dict[str, tuple[float | None, float | None]] = field(repr=False)

    def share(self, ending: str) -> float:
        return self.endings.get(ending, 0) / len(self.runs) if self.runs else 0.0


@dataclass(frozen=True, slots=True)
class Section:
    """One table of a cohort diff as a person reads it: its title, its columns, a row of texts per line."""

    title: str
    columns: tuple[str, ...]
    rows: list[dict[str, str]]


def _share(part: float) -> str:
    return f"{100 * part:.0f}%"


@dataclass(frozen=True, slots=True)
class CohortDiff:
    """Two cohorts and the runs of each that stand out most against the other."""

    a: Cohort
    b: Cohort
    standouts: tuple[Standout, ...]

    def endings(self) -> list[str]:
        return sorted(set(self.a.endings) | set(self.b.endings))

    def tools(self) -> list[str]:
        return sorted(set(self.a.tools) | set(self.b.tools))

    def finding_codes(self) -> list[str]:
        return sorted(set(self.a.findings) | set(self.b.findings))

    def sections(self, duration: Callable[[float], str]) -> list[Section]:
        """The comparison's tables for a person, each figure worded once for every face (the command line, the
        notebook): endings, the spreads per run (``duration`` spells a time in seconds as the face does), tool
        calls, findings and the runs that moved most. A table with no row is left out."""
        a, b = self.a, self.b

        def figure(value: float | None, seconds: bool) -> str:
            if value is None:
                return "—"
            return duration(value) if seconds else f"{value:,.0f}"

        def spread(label: str, first: Spread, second: Spread, seconds: bool) -> dict[str, str]:
            return {
                "per run": label,
                "a": f"{figure(first.median, seconds)} / {figure(first.p90, seconds)}",
                "b": f"{figure(second.median, seconds)} / {figure(second.p90, seconds)}",
                "runs with it": f"{first.runs:,} / {second.runs:,}",
            }

        def tool(use: ToolUse | None) -> tuple[str, str]:
            return (f"{use.calls:,}", f"{use.errors:,} ({_share(use.error_share)})") if use else ("0", "—")

        tools = []
        for name in self.tools():
            (a_calls, a_errors), (b_calls, b_errors) = tool(a.tools.get(name)), tool(b.tools.get(name))
            tools.append(
                {"tool": name, "a calls": a_calls, "a errors": a_errors, "b calls": b_calls, "b errors": b_errors}
            )
        found = [
            Section("endings", ("ending", "a", "b", "change"), [
                {"ending": name, "a": f"{a.endings.get(name, 0):,} ({_share(a.share(name))})",
                 "b": f"{b.endings.get(name, 0):,} ({_share(b.share(name))})",
                 "change": f"{100 * (b.share(name) - a.share(name)):+.0f} points"}
                for name in self.endings()
            ]),
            Section("median / p90", ("per run", "a", "b", "runs with it"), [
                spread("tokens", a.tokens, b.tokens, False), spread("wall clock", a.seconds, b.seconds, True)
            ]),
            Section("tool calls", ("tool", "a calls", "a errors", "b calls", "b errors"), tools),
            Section("findings", ("finding", "a", "b"), [
                {"finding": code, "a": f"{a.findings.get(code, 0):,}", "b": f"{b.findings.get(code, 0):,}"}
                for code in self.finding_codes()
            ]),
            Section("moved most (each cohort's runs farthest from the other's median)",
                    ("cohort", "run", "measure", "value", "other's median"), [
                {"cohort": s.cohort, "run": s.run, "measure": _MEASURE_WORDS.get(s.measure, s.measure),
                 "value": figure(s.value, s.measure == "seconds"),
                 "other's median": figure(s.other_median, s.measure == "seconds")}
                for s in self.standouts
            ]),
        ]  # fmt: skip
        return [section for section in found if section.rows]

    def to_dict(self) -> dict[str, Any]:
        """Every figure, as ``--json`` gives it."""

        def side(cohort: Cohort) -> dict[str, Any]:
            return {
                "where": cohort.expression,
                "runs": len(cohort.runs),
                "endings": {
                    name: {"runs": count, "share": cohort.share(name)} for name, count in cohort.endings.items()
                },
                "tools": {
                    name: {"calls": use.calls, "errors": use.errors, "runs": use.runs, "error_share": use.error_share}
                    for name, use in cohort.tools.items()
                },
                "tokens_per_run": _spread_dict(cohort.tokens),
                "seconds_per_run": _spread_dict(cohort.seconds),
                "findings": dict(cohort.findings),
            }

        return {
            "a": side(self.a),
            "b": side(self.b),
            "moved_most": [
                {
                    "run": s.run,
                    "cohort": s.cohort,
                    "measure": s.measure,
                    "value": s.value,
                    "other_median": s.other_median,
                }
                for s in self.standouts
            ],
        }


def _spread_dict(spread: Spread) -> dict[str, Any]:
    return {"runs": spread.runs, "median": spread.median, "p90": spread.p90}


def _as_float(value: int | None) -> float | None:
    return None if value is None else float(value)


def _seconds(value: Any) -> float | None:
    """A wall clock (an Arrow duration read back as a ``timedelta``, or pandas' ``Timedelta``) in seconds."""
    if value is None:
        return None
    seconds = value.total_seconds() if hasattr(value, "total_seconds") else None
    return float(seconds) if seconds is not None else None


@dataclass(frozen=True, slots=True)
class ChosenRuns:
    """A cohort named by its runs rather than by a filter expression: the runs a person picked (the run browser's
    "A: these runs"), and a label that says how (the search and the chips in force)."""

    label: str
    runs: frozenset[str]


#: What names a cohort: a filter expression over the runs table, or the runs themselves.
CohortChoice = str | ChosenRuns


def cohort_of(tables: Tables, choice: CohortChoice) -> Cohort:
    """The runs of ``tables`` that ``choice`` keeps (an expression's, or the chosen runs among them), added up."""
    if isinstance(choice, ChosenRuns):
        expression, kept = choice.label, tables_of_runs(tables, choice.runs)
    else:
        expression = choice
        kept = filtered_tables(tables, where_filter(choice, priced="cost" in tables.runs.schema.names))
    rows = kept.runs.to_pylist()
    runs = tuple(str(row["run"]) for row in rows)
    endings = Counter(str(row["status"]) for row in rows)
    calls: dict[str, list[int]] = {}
    callers: dict[str, set[str]] = {}
    for call in kept.tool_calls.select(["run", "name", "is_error"]).to_pylist():
        name = str(call["name"])
        counts = calls.setdefault(name, [0, 0])
        counts[0] += 1
        counts[1] += 1 if call["is_error"] else 0
        callers.setdefault(name, set()).add(str(call["run"]))
    tools = {name: ToolUse(count[0], count[1], len(callers[name])) for name, count in calls.items()}
    measures = {str(row["run"]): (_as_float(total_tokens(row)), _seconds(row.get("wall_clock"))) for row in rows}
    tokens = [value for value, _ in measures.values() if value is not None]
    seconds = [value for _, value in measures.values() if value is not None]
    findings = Counter(str(code) for code in kept.findings.column("code").to_pylist())
    return Cohort(
        expression,
        runs,
        dict(endings),
        tools,
        Spread.of(tokens),
        Spread.of(seconds),
        dict(findings),
        measures,
    )


def _standouts(a: Cohort, b: Cohort, label_a: str, label_b: str) -> tuple[Standout, ...]:
    """For each measure, the runs of each cohort farthest from the other cohort's median (by ratio, the larger
    first), at most ``STANDOUTS`` of each cohort."""
    found: list[Standout] = []
    for index, measure in enumerate(("tokens", "seconds")):
        for mine, label, other in ((a, label_a, b), (b, label_b, a)):
            median = (other.tokens if index == 0 else other.seconds).median
            if not median:
                continue
            values = [(run, pair[index]) for run, pair in mine.measures.items() if pair[index] is not None]
            far = sorted(values, key=lambda item: (-abs(math.log((item[1] or 0) / median + 1e-12)), item[0]))
            found.extend(Standout(run, label, measure, float(value or 0), median) for run, value in far[:STANDOUTS])
    return tuple(found)


def diff_cohorts(source: Tables | str | os.PathLike[str], a: CohortChoice, b: CohortChoice) -> CohortDiff:
    """The runs ``a`` keeps beside the runs ``b`` keeps (two filter expressions over the runs table, as
    ``ls --where`` takes them, or runs chosen by hand, ``ChosenRuns``): endings, tools and their errors, tokens and
    time per run, findings by code, and the runs of each that stand out most against the other. ``source`` is the
    tables ``load`` made, or a source to load (leniently: a journal the runtime would refuse is an ``invalid`` run
    of its cohort)."""
    if isinstance(source, Tables):
        tables = source
    else:
        from journaltools.tables import load

        tables = load(os.fspath(source), strict=False, records=False, progress=False)
    first, second = cohort_of(tables, a), cohort_of(tables, b)
    return CohortDiff(first, second, _standouts(first, second, "A", "B"))


__all__: Sequence[str] = [
    "ChosenRuns",
    "Cohort",
    "CohortChoice",
    "CohortDiff",
    "Section",
    "Spread",
    "Standout",
    "ToolUse",
    "cohort_of",
    "diff_cohorts",
]
