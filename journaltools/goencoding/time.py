"""Go's ``time.Time`` as its JSON methods read and write it, to the nanosecond, for every Go-written record.

Reading is ``time.Parse(time.RFC3339, text)`` as Go implements it (``parse_go_time``), looser than RFC 3339 and
with Go's error text; writing is ``MarshalJSON``'s text: RFC 3339 with up to nine fraction digits, trailing zeros
dropped, ``Z`` for a zero offset. A run-journal record keeps a time as that text (``canonical_go_time``: Python
datetimes hold microseconds, Go nanoseconds), so writing it back gives the same bytes; the turn and task stores
hold a ``GoTime`` (the instant and its offset).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from journaltools.goencoding.json import GoJSONError
from journaltools.goencoding.json_values import Node

_RFC3339_LAYOUT: Final = "2006-01-02T15:04:05Z07:00"
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in(month: int, year: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _DAYS_IN_MONTH[month - 1]


def valid_calendar_date(text: str) -> bool:
    """For a time already in canonical RFC 3339 form, whether its date exists (Go's parser refuses February 29
    outside leap years and a day beyond the month's last)."""
    digits = text[0:4] + text[5:7] + text[8:10]
    if len(digits) != 8 or not (digits.isascii() and digits.isdigit()):
        return False  # int() would also read non-ASCII digits, which Go's parser refuses
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    return 1 <= month <= 12 and 1 <= day <= _days_in(month, year)


def _go_quote(text: str) -> str:
    """Go's time package quoting for error messages: non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for char in text:
        if char >= "\x80" or char < " ":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


class _TimeText:
    """A cursor over the time text, raising Go's ``ParseError`` wording."""

    def __init__(self, text: str) -> None:
        self.whole = text
        self.rest = text

    def cannot_parse(self, value_element: str, layout_element: str) -> GoJSONError:
        return GoJSONError(
            f"parsing time {_go_quote(self.whole)} as {_go_quote(_RFC3339_LAYOUT)}: "
            f"cannot parse {_go_quote(value_element)} as {_go_quote(layout_element)}"
        )

    def out_of_range(self, what: str) -> GoJSONError:
        return GoJSONError(f"parsing time {_go_quote(self.whole)}: {what} out of range")

    def literal(self, char: str) -> None:
        if not self.rest.startswith(char):
            raise self.cannot_parse(self.rest, char)
        self.rest = self.rest[1:]

    def number(self, layout_element: str, *, fixed: bool) -> int:
        """Go's getnum: two digits, or one when the layout element allows it."""
        rest = self.rest
        if not (rest[:1].isascii() and rest[:1].isdigit()):
            raise self.cannot_parse(rest, layout_element)
        if not (rest[1:2].isascii() and rest[1:2].isdigit()):
            if fixed:
                raise self.cannot_parse(rest, layout_element)
            self.rest = rest[1:]
            return int(rest[0])
        self.rest = rest[2:]
        return int(rest[:2])


def _two_digits(text: str) -> int | None:
    return int(text) if len(text) == 2 and text.isascii() and text.isdigit() else None


@dataclass(slots=True)  # not frozen: a frozen dataclass is slower to build, and this one never escapes
class _Fields:
    """A parsed time as Go holds it before any arithmetic: the wall clock and the zone offset (None for ``Z``)."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    nanos: int
    offset: int | None


def _parse_rfc3339(text: str) -> _Fields:
    """``time.Parse(time.RFC3339, text)`` (REAL-SYSTEM.md addendum rule 8): a one-digit hour, a comma before the
    fraction, more than nine fraction digits cut to nine and zone offsets up to 24:60 are accepted; anything
    else raises ``GoJSONError`` with Go's error text."""
    cursor = _TimeText(text)
    rest = cursor.rest
    if len(rest) < 4 or not (rest[:4].isascii() and rest[:4].isdigit()):
        raise cursor.cannot_parse(rest, "2006")
    year = int(rest[:4])
    cursor.rest = rest[4:]
    cursor.literal("-")
    month = cursor.number("01", fixed=True)
    if not 1 <= month <= 12:
        raise cursor.out_of_range("month")
    cursor.literal("-")
    day = cursor.number("02", fixed=True)
    cursor.literal("T")
    hour = cursor.number("15", fixed=False)
    if hour >= 24:
        raise cursor.out_of_range("hour")
    cursor.literal(":")
    minute = cursor.number("04", fixed=True)
    if minute >= 60:
        raise cursor.out_of_range("minute")
    cursor.literal(":")
    second = cursor.number("05", fixed=True)
    if second >= 60:
        raise cursor.out_of_range("second")
    nanos = 0
    rest = cursor.rest
    if len(rest) >= 2 and rest[0] in ".," and rest[1].isascii() and rest[1].isdigit():
        digits = 1
        while digits < len(rest) and rest[digits].isascii() and rest[digits].isdigit():
            digits += 1
        # Go reads at most nine fraction digits and ignores the rest.
        fraction = rest[1:digits][:9]
        nanos = int(fraction.ljust(9, "0"))
        cursor.rest = rest[digits:]
    rest = cursor.rest
    offset: int | None = None
    if rest[:1] == "Z":
        cursor.rest = rest[1:]
    else:
        if len(rest) < 6 or rest[3] != ":":
            raise cursor.cannot_parse(rest, "Z07:00")
        hours, minutes = _two_digits(rest[1:3]), _two_digits(rest[4:6])
        if hours is None or minutes is None:
            raise cursor.cannot_parse(rest, "Z07:00")
        # Go compares with > here, so +24:00 and minute 60 are accepted.
        if hours > 24:
            raise cursor.out_of_range("time zone offset hour")
        if minutes > 60:
            raise cursor.out_of_range("time zone offset minute")
        if rest[0] not in "+-":
            raise cursor.cannot_parse(rest, "Z07:00")
        offset = (hours * 60 + minutes) * 60 * (-1 if rest[0] == "-" else 1)
        cursor.rest = rest[6:]
    if cursor.rest:
        raise GoJSONError(f"parsing time {_go_quote(text)}: extra text: {_go_quote(cursor.rest)}")
    if not 1 <= day <= _days_in(month, year):
        raise cursor.out_of_range("day")
    return _Fields(year, month, day, hour, minute, second, nanos, offset)


def _rfc3339_text(fields: _Fields) -> str:
    """What ``MarshalJSON`` writes for a wall clock and offset: no trailing fraction zeros, ``Z`` for zero."""
    written = (
        f"{fields.year:04d}-{fields.month:02d}-{fields.day:02d}"
        f"T{fields.hour:02d}:{fields.minute:02d}:{fields.second:02d}"
    )
    if fields.nanos:
        written += "." + f"{fields.nanos:09d}".rstrip("0")
    if not fields.offset:
        return written + "Z"
    sign = "-" if fields.offset < 0 else "+"
    hours, minutes = divmod(abs(fields.offset) // 60, 60)
    return f"{written}{sign}{hours:02d}:{minutes:02d}"


def canonical_go_time(text: str) -> str:
    """``text`` parsed as Go parses it, returned as ``MarshalJSON`` writes the result (the form a run-journal
    record keeps). Raises ``GoJSONError`` with Go's error text."""
    return _rfc3339_text(_parse_rfc3339(text))


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_NS: Final = 86_400 * 1_000_000_000
_ZERO_UNIX_NS: Final = -62_135_596_800 * 1_000_000_000
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
#: The Gregorian calendar repeats every 400 years (146,097 days): Go's year 0, which Python's dates do not hold, is
#: dated as year 400 one cycle earlier.
_CYCLE_YEARS, _CYCLE_DAYS = 400, 146_097
#: The day of 0001-01-01 since 1970: a day before it is in year 0.
_YEAR_ONE_DAY: Final = date(1, 1, 1).toordinal() - _EPOCH_ORDINAL


def _days_since_epoch(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a date of Go's calendar (proleptic Gregorian, years 0 to 9999)."""
    if year == 0:
        return date(_CYCLE_YEARS, month, day).toordinal() - _CYCLE_DAYS - _EPOCH_ORDINAL
    return date(year, month, day).toordinal() - _EPOCH_ORDINAL


@dataclass(frozen=True, slots=True, order=False)
class GoTime:
    """A Go ``time.Time`` as the turn checkpoints and tasks use it: an instant to the nanosecond, and its location.

    ``offset`` is None for Go's ``time.UTC`` (written ``Z``); a number of seconds for any other location, including
    a zero offset read from ``+00:00`` (Go then holds the local or a fixed zone, which Validate refuses)."""

    unix_ns: int
    offset: int | None = None

    #: Go's zero time, 0001-01-01T00:00:00Z.
    @classmethod
    def zero(cls) -> GoTime:
        return cls(_ZERO_UNIX_NS)

    def is_zero(self) -> bool:
        return self.unix_ns == _ZERO_UNIX_NS

    @property
    def is_utc(self) -> bool:
        return self.offset is None

    def utc(self) -> GoTime:
        return GoTime(self.unix_ns)

    def before(self, other: GoTime) -> bool:
        return self.unix_ns < other.unix_ns

    def equal(self, other: GoTime) -> bool:
        """Go's ``Equal``: the same instant, whatever the locations."""
        return self.unix_ns == other.unix_ns

    def to_datetime(self) -> datetime:
        """The instant as an aware UTC datetime, cut to microseconds (for tables and arithmetic only). Raises
        ``OverflowError`` outside years 1 to 9999 in UTC, which Go holds and a datetime does not (``go_time``
        answers None there)."""
        return _EPOCH + timedelta(microseconds=self.unix_ns // 1000)

    @classmethod
    def from_datetime(cls, moment: datetime) -> GoTime:
        if moment.tzinfo is None:
            raise ValueError("a naive datetime has no instant: give it a time zone")
        delta = moment - _EPOCH
        return cls((delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000)

    def text(self) -> str:
        """RFC 3339 with up to nine fraction digits, trailing zeros dropped, as Go's ``MarshalJSON`` writes it."""
        offset = self.offset or 0
        days, within_day = divmod(self.unix_ns + offset * 1_000_000_000, _DAY_NS)
        seconds, nanos = divmod(within_day, 1_000_000_000)
        year_zero = days < _YEAR_ONE_DAY
        local = _EPOCH + timedelta(days=days + (_CYCLE_DAYS if year_zero else 0), seconds=seconds)
        year = local.year - (_CYCLE_YEARS if year_zero else 0)
        return _rfc3339_text(
            _Fields(year, local.month, local.day, local.hour, local.minute, local.second, nanos, offset)
        )


def parse_go_time(text: str) -> GoTime:
    """``time.Parse(time.RFC3339, text)`` as Go does it, as an instant and offset; ``GoJSONError`` otherwise."""
    fields = _parse_rfc3339(text)
    days = _days_since_epoch(fields.year, fields.month, fields.day)
    unix_seconds = days * 86_400 + fields.hour * 3600 + fields.minute * 60 + fields.second - (fields.offset or 0)
    return GoTime(unix_seconds * 1_000_000_000 + fields.nanos, fields.offset)


def go_time_field(data: bytes, node: Node, current: Any) -> Any:
    """A ``time.Time`` struct field (``goencoding.json_values.go_struct``): ``null`` keeps the earlier value."""
    if node.kind == "null":
        return current
    if node.kind != "string":
        raise GoJSONError(f"json: cannot unmarshal {node.kind} into a Go time.Time")
    return parse_go_time(node.text())


def go_time(text: str | None) -> datetime | None:
    """A time as the runtime writes it (RFC 3339, up to nine fraction digits, any offset) in UTC, cut to
    microseconds; None for an absent or unreadable one (the exact reader accepts times Python cannot hold). For
    columns and displays, which hold microseconds; ``parse_go_time`` keeps the nanoseconds."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        return None
    try:
        return value.astimezone(UTC)
    except OverflowError:  # year 1 with a positive offset falls before the first representable instant
        return None


def format_go_time(unix_ns: int, offset_seconds: int = 0) -> str:
    """The text Go's MarshalJSON writes for the instant ``unix_ns`` shown at ``offset_seconds`` east of UTC."""
    return GoTime(unix_ns, offset_seconds).text()


def now_go_time(*, local: bool = False) -> str:
    """Now, to the nanosecond: in UTC (``claim.claimed``), or in the machine's zone (``meta.created``)."""
    now_ns = time.time_ns()
    if not local:
        return format_go_time(now_ns)
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return format_go_time(now_ns, int(offset.total_seconds()))


__all__ = [
    "GoTime",
    "canonical_go_time",
    "format_go_time",
    "go_time",
    "go_time_field",
    "now_go_time",
    "parse_go_time",
    "valid_calendar_date",
]
