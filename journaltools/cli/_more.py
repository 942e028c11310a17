"""``grep`` and ``diff``: the command line over ``journaltools.analyses.textgrep``, ``.rundiff`` and ``.cohorts``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from journaltools.cli._output import UsageError, _emit_json, _note, _say
from journaltools.cli._sources import _default_source
from journaltools.errors import InvalidGrep

if TYPE_CHECKING:
    from journaltools.analyses.cohorts import CohortDiff

# -- grep --------------------------------------------------------------------------------------------------------

#: Beyond this many, the runs a lenient read could not read whole are summed up in one line on stderr.
REFUSED_NAMED = 5


def _pattern_and_sources(first: str, rest: Sequence[str]) -> tuple[str, list[str]]:
    """``grep SOURCE PATTERN [SOURCE...]``, as every other command puts its source first, or the older
    ``grep PATTERN [SOURCE...]``: the source comes first when the first word can only be one (a pattern may hold a
    ``/``, so ``names_a_source``, not the looser test a run takes) and the second cannot."""
    from journaltools.cli._sources import names_a_source

    if rest and names_a_source(first) and not names_a_source(rest[0]):
        return rest[0], [first, *rest[1:]]
    return first, list(rest)


def cmd_grep(args: argparse.Namespace) -> int:
    from journaltools._base.text import for_terminal
    from journaltools.analyses.textgrep import grep

    pattern, sources = _pattern_and_sources(args.pattern, args.sources)
    where = [place.strip() for chosen in args.where or () for place in chosen.split(",") if place.strip()]
    try:
        found = grep(
            pattern,
            sources or [_default_source()],
            ignore_case=args.ignore_case,
            regex=args.regex,
            where=where or None,
            context=args.context,
        )
    except InvalidGrep as exc:  # a pattern that cannot be one is bad usage, like an unknown option
        raise UsageError(str(exc)) from None
    refused = sorted({finding.run or finding.source for finding in found.findings})
    if refused:
        shown = ", ".join(refused[:REFUSED_NAMED]) + (
            f" and {len(refused) - REFUSED_NAMED} more" if len(refused) > REFUSED_NAMED else ""
        )
        _note(
            "grep", f"{len(refused)} journal(s) could not be read whole; their readable records were searched: {shown}"
        )
    if args.json:
        _emit_json(found.to_json())
        return 0
    several = len(sources) > 1
    for row in found.table.to_pylist():
        snippet = for_terminal(row["snippet"], newlines=False)
        call = f" {row['call_id']}" if row["call_id"] else ""
        place = f"{row['source']} " if several else ""
        print(for_terminal(f"{place}{row['run']} {row['seq']} {row['where']}{call}: ", newlines=False) + snippet)
    return 0


# -- diff --------------------------------------------------------------------------------------------------------


def _sides(args: argparse.Namespace) -> tuple[str, str, str, str]:
    """(source A, run A, source B, run B) from ``[SOURCE] RUN_A RUN_B`` or ``SOURCE_A RUN SOURCE_B RUN``; with
    ``--segments`` also ``[SOURCE] RUN`` (one run's process runs)."""
    from journaltools.cli._sources import _source_and_rest

    words = args.targets
    if len(words) == 4:
        return words[0], words[1], words[2], words[3]
    if args.segments is not None and len(words) < 3:
        source, (run,) = _source_and_rest("diff", words, ["RUN"])
        return source, run, source, run
    source, (run_a, run_b) = _source_and_rest("diff", words, ["RUN_A", "RUN_B"])
    return source, run_a, source, run_b


def cmd_diff(args: argparse.Namespace) -> int:
    from journaltools.analyses.rundiff import diff

    if args.cohort is not None:
        return _diff_cohorts(args)
    source_a, run_a, source_b, run_b = _sides(args)
    result = diff(
        source_a,
        run_a,
        run_b,
        source_b=source_b,
        segments=tuple(args.segments) if args.segments is not None else None,
        strict=not args.lenient,
    )
    if args.json:
        _emit_json(result.to_json())
    else:
        for line in result.text_lines():
            _say(line)
    return 0


# -- diff --cohort -------------------------------------------------------------------------------------------------


def _diff_cohorts(args: argparse.Namespace) -> int:
    """``diff [SOURCE] --cohort A --cohort B``: two sets of runs of one source side by side."""
    from journaltools.analyses.cohorts import diff_cohorts
    from journaltools.cli._sources import _open
    from journaltools.tables import load

    if len(args.cohort) != 2:
        raise UsageError(f"--cohort takes two cohorts, A and B: give it twice, not {len(args.cohort)} time(s)")
    if len(args.targets) > 1 or args.segments is not None:
        raise UsageError("with --cohort, diff compares the runs of one SOURCE: give no RUN and no --segments")
    source = args.targets[0] if args.targets else _default_source()
    with _open(source, "diff") as backend:
        tables = load(backend, strict=False, records=False, progress=False)
    result = diff_cohorts(tables, args.cohort[0], args.cohort[1])
    for name, side in (("A", result.a), ("B", result.b)):
        if not side.runs:  # figures of no run read as if a cohort had been measured: say so first
            _note("diff", f"cohort {name} keeps no run of {source}: {side.expression}")
    if args.json:
        _emit_json(result.to_dict())
        return 0
    print_cohorts(result)
    return 0


def print_cohorts(result: CohortDiff) -> None:
    """The cohort diff as a person reads it: who is in each cohort, then a table for each measure."""
    from journaltools.cli._output import human_duration, print_table

    _say(f"A: {result.a.expression}  ({len(result.a.runs):,} runs)")
    _say(f"B: {result.b.expression}  ({len(result.b.runs):,} runs)")
    for section in result.sections(lambda seconds: human_duration(round(seconds * 1e9))):
        _say()
        _say(section.title)
        print_table(section.rows, section.columns)
