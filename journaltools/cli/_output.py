"""Output for people and for scripts: JSON on stdout, tables, one-line notes on stderr."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from journaltools._base.text import for_terminal
from journaltools.folding.phrases import shown_time

if TYPE_CHECKING:
    from journaltools.protocol.findings import Finding


class UsageError(Exception):
    """Bad usage found after parsing (a run that must be named, a bad ``--config``): exit 2, one line."""


# -- output ------------------------------------------------------------------------------------------------------


def _emit_json(document: Any) -> None:
    import msgspec  # here, not at the top: ``--help`` never loads it

    # msgspec, not the json module: the journal's raw JSON (tool inputs, provider blocks) is spliced in as the
    # runtime wrote it, so a number like 1e3 or an integer beyond 64 bits keeps its spelling.
    encoded = msgspec.json.encode(document)
    try:
        text = msgspec.json.format(encoded, indent=2)
    except (RecursionError, msgspec.DecodeError):
        # msgspec's formatter recurses (about 1,000 levels); a tool input the runtime accepts nests up to 10,000.
        # Such a document is written compact: indenting 10,000 levels would write some 400 MB of spaces. The
        # formatter also refuses a lone surrogate escape ("\ud800"), which the runtime keeps in raw JSON as it is.
        text = encoded
    sys.stdout.buffer.write(text + b"\n")
    sys.stdout.flush()


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return shown_time(value) or "-"
    return str(value)


def print_table(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    wide: Sequence[str] = (),
    labels: dict[str, str] | None = None,
    *,
    wrap: str | None = None,
    width: int | None = None,
) -> None:
    """A plain aligned table; cells are cut at 60 characters except in the ``wide`` columns (put those last).
    A column is headed by its key in capitals, or by ``labels[key]`` when given. ``wrap`` (the last column) is
    wrapped at word boundaries so each line fits ``width`` characters, its further lines under its first."""

    def cell(value: Any, column: str) -> str:
        text = for_terminal(_text(value), newlines=False)
        return text if len(text) <= 60 or column in wide or column == wrap else text[:57] + "..."

    cells = [[cell(row.get(column), column) for column in columns] for row in rows]
    heads = [(labels or {}).get(column, column).upper() for column in columns]
    widths = [max([len(head)] + [len(line[i]) for line in cells]) for i, head in enumerate(heads)]
    room = None
    if wrap is not None and width is not None and columns and columns[-1] == wrap:
        indent = sum(widths[:-1]) + 2 * (len(widths) - 1)
        room = max(WRAP_LEAST, width - indent)
        widths[-1] = min(widths[-1], room)
    print("  ".join(head.ljust(width) for head, width in zip(heads, widths, strict=True)).rstrip())
    for line in cells:
        if room is None:
            print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())
            continue
        first, *more = textwrap.wrap(line[-1], room, break_on_hyphens=False) or [""]
        print("  ".join(value.ljust(width) for value, width in zip([*line[:-1], first], widths, strict=True)).rstrip())
        for rest in more:
            print(" " * indent + rest)


#: The least room a wrapped column keeps, however wide the columns before it.
WRAP_LEAST = 30


def _say(text: str = "") -> None:
    """Print a line of human-readable output that may hold journal content (newlines kept, controls escaped)."""
    print(for_terminal(text))


def _note(command: str, text: str) -> None:
    """One line on stderr: a warning or a finding worth seeing even with ``--json``."""
    print(f"journaltools {command}: {for_terminal(text, newlines=False)}", file=sys.stderr)


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as every ``--json`` output shows it (``source`` included, unlike ``Finding.to_json``)."""
    return {
        "run": finding.run,
        "seq": finding.seq,
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "source": finding.source,
    }


#: Beyond this many, files that are merely not journals are summed up in one line (``audit`` lists each).
NOT_JOURNALS_SHOWN = 5


def _where(finding: Finding) -> str:
    """``run R seq N: `` for a finding about a journal (the message itself may not name them)."""
    if finding.run is None:
        return ""
    return f"run {finding.run} seq {'-' if finding.seq is None else finding.seq}: "


def _note_findings(command: str, findings: Sequence[Finding]) -> None:
    minor = [finding for finding in findings if finding.severity == "info"]
    for finding in findings:
        if finding.severity != "info" or len(minor) <= NOT_JOURNALS_SHOWN:
            _note(command, f"{finding.severity}: {_where(finding)}{finding.code}: {finding.message}")
    if len(minor) > NOT_JOURNALS_SHOWN:
        _note(command, f"info: {len(minor)} entries are not journals and were not read; audit lists them")


def format_journal_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
    *,
    prefix: str = "journaltools",
) -> str:
    """A journaltools warning as one line, ``<prefix>: warning: <message>``: Python's own format adds the source
    path and line of the ``warnings.warn`` call on a second line, which says nothing to a user. Control characters
    and newlines in the message are shown escaped, as in every line journaltools prints."""
    return f"{prefix}: warning: {for_terminal(str(message), newlines=False)}\n"


def install_warning_format(prefix: str = "journaltools") -> None:
    """Print journaltools' warnings (``JournalWarning``) as one line each, starting ``<prefix>: warning:``; every
    other warning keeps the format it had. For a command line's ``main``; calling it again replaces the prefix
    (the format underneath stays the one found the first time)."""
    import warnings

    from journaltools.errors import JournalWarning

    current = warnings.formatwarning
    original = getattr(current, "_journaltools_original", current)

    def formatwarning(
        message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
    ) -> str:
        if issubclass(category, JournalWarning):
            return format_journal_warning(message, category, filename, lineno, line, prefix=prefix)
        return original(message, category, filename, lineno, line)

    formatwarning._journaltools_original = original  # type: ignore[attr-defined]
    warnings.formatwarning = formatwarning


def human_duration(nanoseconds: int) -> str:
    """A duration for a person: ``850ms``, ``3.7s``, ``2m05s``, ``3h12m``, ``3d01h``."""
    if nanoseconds < 1_000_000:
        return f"{nanoseconds / 1000:.0f}µs" if nanoseconds >= 1000 else f"{nanoseconds}ns"
    if nanoseconds < 1_000_000_000:
        return f"{nanoseconds / 1_000_000:.0f}ms"
    seconds = nanoseconds / 1_000_000_000
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    minutes, second = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{second:02d}s"
    hours, minute = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minute:02d}m"
    days, hour = divmod(hours, 24)
    return f"{days}d{hour:02d}h"


def fitted_columns(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    width: int | None,
    *,
    flexible: dict[str, int],
    droppable: Sequence[str],
) -> tuple[list[str], dict[str, int]]:
    """Which columns a table of ``rows`` keeps, and how far each flexible one is cut, to fit ``width`` characters
    (None: everything, whole): the flexible columns give way first, down to their least, then the droppable ones
    are left out in order. What cannot fit by then is printed as it is."""
    kept = list(columns)
    natural = {column: max([len(column)] + [len(_text(row.get(column))) for row in rows]) for column in columns}
    cuts: dict[str, int] = {}
    if width is None:
        return kept, cuts

    def total() -> int:
        return sum(min(natural[column], cuts.get(column, natural[column])) for column in kept) + 2 * (len(kept) - 1)

    for column, least in flexible.items():
        if column in kept and total() > width:
            cuts[column] = max(least, natural[column] - (total() - width))
    for column in droppable:
        if total() <= width:
            break
        if column in kept:
            kept.remove(column)
    return kept, {column: limit for column, limit in cuts.items() if column in kept and limit < natural[column]}
