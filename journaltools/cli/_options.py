"""Every value a person types on the command line, read by one parser per kind: counts, durations and moments,
sizes, free text, paths to write, statuses, segment numbers. Each is an argparse type, so a bad value is bad usage
(exit 2) in one line naming the option, never a traceback."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from journaltools.tables.where import RunFilter


def segment_number(text: str) -> int:
    """A process run's number (``diff --segments``): 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a segment number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value


def add_stuck_after(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--stuck-after``, the same option (and default) for ``audit --turn-store`` and ``turns``."""
    parser.add_argument(
        "--stuck-after", type=duration_value, default="1h", metavar="DURATION", help=f"{help_text} (default 1h)"
    )


def add_prices(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--prices FILE``, the same option for ``stats``, ``audit`` and ``report``: the user's own prices (none are
    bundled)."""
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help=f"your price table, per model and per million tokens (JSON or TOML; schema --input prices): {help_text}",
    )


def duration_value(text: str) -> timedelta:
    """An argparse type: a bad duration is bad usage (exit 2), said by argparse."""
    from journaltools.audits.turns import parse_duration
    from journaltools.errors import JournalError

    try:
        return parse_duration(text)
    except JournalError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 is not above 0")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value


#: ``report --max-size``'s default as ``--help`` says it (``journaltools.exports.report.DEFAULT_MAX_BYTES``; a test
#: holds the two equal, so ``--help`` need not import the report's code).
REPORT_MAX_SIZE_TEXT: Final = "10M"

#: ``report --max-size``'s least (``journaltools.exports.report.MIN_MAX_BYTES``).
REPORT_MIN_SIZE: Final = 200_000

_SIZE_UNITS: Final = {"": 1, "k": 1_000, "m": 1_000_000}


def byte_size(text: str) -> int:
    """An argparse type: a size in bytes, or with ``k`` or ``M`` (``10M``, ``500k``), at least ``REPORT_MIN_SIZE``."""
    word = text.strip().lower().removesuffix("b")
    unit = word[-1:] if word[-1:] in ("k", "m") else ""
    try:
        value = int(float(word[: len(word) - len(unit)]) * _SIZE_UNITS[unit])
    except (ValueError, OverflowError):  # not a number, or nan, inf or 1e400: no size
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (such as 10M, 500k or 2000000)") from None
    if value < REPORT_MIN_SIZE:
        raise argparse.ArgumentTypeError(f"{text!r} is below the least size, {REPORT_MIN_SIZE:,} bytes (200k)")
    return value


def text_value(text: str) -> str:
    """An argparse type: free text (a result, a pattern, a name to match). Python hands over argv's bytes that are
    not UTF-8 as lone surrogates, which no journal, JSON document or pattern can hold: bad usage, said here once."""
    if any("\ud800" <= char <= "\udfff" for char in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not UTF-8 text")
    return text


def output_path(text: str) -> str:
    """An argparse type: a file or directory to write. Its name goes into the notes and documents that say what
    was written, so it is UTF-8 text (``text_value``), and it names something."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names nothing to write")
    return text_value(text)


def status_list(text: str) -> list[str]:
    """An argparse type: ``--status error,invalid`` (commas or the option again)."""
    chosen = [word.strip() for word in text_value(text).split(",") if word.strip()]
    if not chosen:
        raise argparse.ArgumentTypeError("name at least one status")
    return chosen


def moment_value(text: str) -> datetime:
    """An argparse type: an ISO 8601 date or time (UTC unless it carries an offset), or a duration back from
    now. A bad one is bad usage (exit 2), said by argparse."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        try:
            back = duration_value(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is neither an ISO 8601 date or time (2026-08-21, 2026-08-21T23:36:20Z) nor a duration "
                "back from now (90s, 30m, 2h, 1d)"
            ) from None
        try:
            return datetime.now(UTC) - back
        except OverflowError:
            raise argparse.ArgumentTypeError(f"{text!r} back from now is before the year 1") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def add_run_targets(parser: argparse.ArgumentParser) -> None:
    """``[SOURCE] RUN``: the one run a command reads, its source left out for the runtime's own directory."""
    parser.add_argument("targets", nargs="+", metavar="[SOURCE] RUN", help="RUN may be left out after a journal file")


def add_fail_on(parser: argparse.ArgumentParser) -> None:
    """``--fail-on``: the exit status of a command whose findings are data, not failures."""
    parser.add_argument("--fail-on", choices=["error", "warning"], help="exit 1 if a finding this severe exists")


def where_of(args: argparse.Namespace) -> RunFilter | None:
    """``--where`` parsed before any source is opened (``ls``, ``audit``, ``search``): a filter that cannot be one is
    bad usage (``InvalidFilter``, exit 2) and costs no read. pyarrow is imported only when the option is given."""
    if not getattr(args, "where", None):
        return None
    from journaltools.tables.schema import schema_of
    from journaltools.tables.where import parse_filter

    # With --prices (audit), the runs table has its cost columns, and a filter may name them.
    return parse_filter(args.where, schema_of("runs", priced=getattr(args, "prices", None) is not None))
