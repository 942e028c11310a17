"""Times as the runtime writes them: Go's ``time.Time`` JSON form, RFC 3339 with up to nine fraction digits.

A record keeps a time as that text (Python datetimes hold microseconds, Go nanoseconds), so writing it back
gives the same bytes. These helpers make the text from a clock and read it into a datetime for analysis.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone


def format_go_time(unix_ns: int, offset_seconds: int = 0) -> str:
    """The text Go's MarshalJSON writes for the instant ``unix_ns`` shown at ``offset_seconds`` east of UTC:
    trailing fraction zeros dropped, no fraction when it is zero, ``Z`` for a zero offset."""
    seconds, nanos = divmod(unix_ns, 1_000_000_000)
    local = datetime.fromtimestamp(seconds, UTC) + timedelta(seconds=offset_seconds)
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    if offset_seconds == 0:
        return text + "Z"
    sign = "+" if offset_seconds > 0 else "-"
    hours, minutes = divmod(abs(offset_seconds) // 60, 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


def now_go_time(*, local: bool = False) -> str:
    """Now, to the nanosecond: in UTC (``claim.claimed``), or in the machine's zone (``meta.created``)."""
    now_ns = time.time_ns()
    if not local:
        return format_go_time(now_ns)
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return format_go_time(now_ns, int(offset.total_seconds()))


def parse_go_time(text: str) -> datetime | None:
    """The instant a Go time text names, to the microsecond (None for text that is not RFC 3339)."""
    head, _, rest = text.partition(".")
    fraction = ""
    if rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        fraction, zone = rest[:digits], rest[digits:]
    else:
        head, zone = text[:19], text[19:]
    try:
        moment = datetime.strptime(head[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    micros = int((fraction + "000000")[:6]) if fraction else 0
    if zone in ("Z", "z"):
        tz = UTC
    else:
        try:
            sign = 1 if zone[0] == "+" else -1
            tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
        except (IndexError, ValueError):
            return None
    return moment.replace(microsecond=micros, tzinfo=tz)
