"""JSON as Go's ``encoding/json`` reads and writes it, for the two stores that hold Go-written JSON objects
(fisk-ai task records, agent-harness-go turn checkpoints).

Reading keeps what Python's ``json`` module throws away: the exact byte span of every value (a raw JSON field such
as a child descriptor is kept as the bytes that were stored, with its number spellings and even its invalid UTF-8),
and every key of an object in order, duplicates included (Go lets the last one win, and merges repeated objects).
Strings decode as Go decodes them: each byte that is not valid UTF-8 becomes its own U+FFFD, and a lone surrogate
escape becomes U+FFFD. The syntax is Go's scanner's: only space, tab, newline and carriage return between tokens,
no control bytes inside strings, at most 10,000 nested containers.

Writing gives Go's ``Marshal`` bytes (``compact`` / ``go_string``) and its ``MarshalIndent(v, "", "  ")`` bytes
(``indent``), and ``time_text`` / ``parse_go_time`` give Go's ``time.Time`` text with nanoseconds kept exactly.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

#: Go's scanner refuses a value nested deeper than this.
MAX_NESTING: Final = 10_000
_WHITESPACE: Final = b" \t\n\r"
_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX4: Final = re.compile(rb"[0-9A-Fa-f]{4}")
_SIMPLE_ESCAPES: Final = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}


def _one_replacement_per_byte(error: UnicodeError) -> tuple[str, int]:
    """Go's UTF-8 decoding: every byte that does not start a valid sequence is one U+FFFD (Python's ``replace``
    would make one U+FFFD of a truncated multi-byte sequence)."""
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd", error.start + 1


codecs.register_error("journaltools-go-utf8", _one_replacement_per_byte)


def go_utf8(data: bytes) -> str:
    """``data`` as Go reads it into a string: invalid bytes become U+FFFD one by one."""
    return data.decode("utf-8", "journaltools-go-utf8")


class GoJSONError(ValueError):
    """Bytes Go's decoder refuses; the message says where and why."""


@dataclass(slots=True)
class Node:
    """One parsed JSON value: ``kind`` is object, array, string, number, true, false or null; ``start``/``end``
    its byte span; ``value`` the decoded string, the number's text, the items, or the (key, value) pairs."""

    kind: str
    start: int
    end: int
    value: object = None

    def pairs(self) -> list[tuple[str, Node]]:
        assert self.kind == "object" and isinstance(self.value, list)
        return self.value

    def items(self) -> list[Node]:
        assert self.kind == "array" and isinstance(self.value, list)
        return self.value

    def text(self) -> str:
        assert self.kind in ("string", "number") and isinstance(self.value, str)
        return self.value


def _skip_whitespace(data: bytes, position: int) -> int:
    while position < len(data) and data[position] in _WHITESPACE:
        position += 1
    return position


def _parse_string(data: bytes, position: int) -> tuple[str, int]:
    """The string starting at the quote at ``position``, decoded as Go decodes it, and the position after it."""
    parts: list[str] = []
    run_start = position + 1
    index = run_start
    pending_high: int | None = None  # a high surrogate escape waiting for its low half

    def flush_high() -> None:
        nonlocal pending_high
        if pending_high is not None:
            parts.append("\ufffd")
            pending_high = None

    while True:
        if index >= len(data):
            raise GoJSONError(f"unexpected end of JSON input inside a string starting at byte {position}")
        byte = data[index]
        if byte == 0x22:  # closing quote
            if index > run_start:
                flush_high()
                parts.append(go_utf8(data[run_start:index]))
            flush_high()
            return "".join(parts), index + 1
        if byte < 0x20:
            raise GoJSONError(f"invalid character {chr(byte)!r} in string literal at byte {index}")
        if byte != 0x5C:  # not a backslash
            index += 1
            continue
        if index > run_start:
            flush_high()
            parts.append(go_utf8(data[run_start:index]))
        if index + 1 >= len(data):
            raise GoJSONError("unexpected end of JSON input inside an escape")
        escape = data[index + 1]
        if escape in _SIMPLE_ESCAPES:
            flush_high()
            parts.append(_SIMPLE_ESCAPES[escape])
            index += 2
        elif escape == ord("u"):
            digits = data[index + 2 : index + 6]
            if not _HEX4.fullmatch(digits):
                raise GoJSONError(f"invalid escape \\u{digits.decode('latin-1')!r} in string literal at byte {index}")
            code = int(digits, 16)
            index += 6
            if 0xDC00 <= code <= 0xDFFF and pending_high is not None:
                parts.append(chr(0x10000 + ((pending_high - 0xD800) << 10) + (code - 0xDC00)))
                pending_high = None
            elif 0xD800 <= code <= 0xDBFF:
                flush_high()
                pending_high = code
            else:
                flush_high()
                parts.append("\ufffd" if 0xDC00 <= code <= 0xDFFF else chr(code))
        else:
            raise GoJSONError(f"invalid character {chr(escape)!r} in string escape code at byte {index + 1}")
        if pending_high is not None and not data.startswith(b"\\u", index):
            flush_high()  # a high surrogate pairs only with the escape right after it
        run_start = index


def parse_value(data: bytes, position: int = 0) -> tuple[Node, int]:
    """One JSON value starting at ``position`` (whitespace first is skipped); the node and the position after it.

    Iterative, so a deeply nested value is refused at Go's limit, not at Python's recursion limit."""
    stack: list[tuple[Node, str | None]] = []  # open containers, and the key an object is waiting to fill
    position = _skip_whitespace(data, position)
    while True:
        if position >= len(data):
            raise GoJSONError("unexpected end of JSON input")
        byte = data[position]
        node: Node | None = None
        if byte == ord("{") or byte == ord("["):
            if len(stack) >= MAX_NESTING:
                raise GoJSONError(f"exceeded max depth of {MAX_NESTING} at byte {position}")
            container = Node("object" if byte == ord("{") else "array", position, -1, [])
            position = _skip_whitespace(data, position + 1)
            closing = ord("}") if byte == ord("{") else ord("]")
            if position < len(data) and data[position] == closing:
                container.end = position + 1
                node, position = container, position + 1
            elif container.kind == "object":
                first_key, position = _object_key(data, position)
                stack.append((container, first_key))
                continue
            else:
                stack.append((container, None))
                continue
        elif byte == 0x22:
            text, end = _parse_string(data, position)
            node, position = Node("string", position, end, text), end
        elif byte == ord("-") or ord("0") <= byte <= ord("9"):
            match = _NUMBER.match(data, position)
            if match is None:
                raise GoJSONError(f"invalid number at byte {position}")
            node = Node("number", position, match.end(), match.group().decode("ascii"))
            position = match.end()
            if position < len(data) and data[position] in b"0123456789.eE+-":
                raise GoJSONError(f"invalid character {chr(data[position])!r} in numeric literal at byte {position}")
        else:
            for literal in ("true", "false", "null"):
                if data.startswith(literal.encode(), position):
                    node = Node(literal, position, position + len(literal))
                    position += len(literal)
                    break
            else:
                shown = go_utf8(data[position : position + 4])[:1]
                raise GoJSONError(f"invalid character {shown!r} looking for beginning of value at byte {position}")
        # A finished value: hand it to its container, closing every container it completes.
        while True:
            if not stack:
                return node, position
            container, waiting_key = stack[-1]
            if waiting_key is None:
                container.items().append(node)
            else:
                container.pairs().append((waiting_key, node))
            position = _skip_whitespace(data, position)
            if position >= len(data):
                raise GoJSONError("unexpected end of JSON input")
            separator = data[position]
            closing = ord("}") if container.kind == "object" else ord("]")
            if separator == closing:
                container.end = position + 1
                stack.pop()
                node, position = container, position + 1
                continue
            if separator != ord(","):
                where = "object key:value pair" if container.kind == "object" else "array element"
                raise GoJSONError(f"invalid character {chr(separator)!r} after {where} at byte {position}")
            position = _skip_whitespace(data, position + 1)
            if container.kind == "object":
                next_key, position = _object_key(data, position)
                stack[-1] = (container, next_key)
            break


def _object_key(data: bytes, position: int) -> tuple[str, int]:
    """A key and its colon, leaving ``position`` at the start of the value."""
    if position >= len(data) or data[position] != 0x22:
        raise GoJSONError(f"invalid character looking for beginning of object key string at byte {position}")
    key, position = _parse_string(data, position)
    position = _skip_whitespace(data, position)
    if position >= len(data) or data[position] != ord(":"):
        raise GoJSONError(f"invalid character after object key at byte {position}")
    return key, _skip_whitespace(data, position + 1)


def parse_single(data: bytes) -> Node:
    """Exactly one JSON value, as ``json.NewDecoder(r).Decode`` followed by a check for end of input reads it:
    whitespace around it is fine, a second value or anything else after it is refused."""
    if not data.strip(_WHITESPACE):
        raise GoJSONError("EOF (no JSON value)")
    node, position = parse_value(data)
    rest = _skip_whitespace(data, position)
    if rest < len(data):
        try:
            parse_value(data, rest)
        except GoJSONError as exc:
            raise GoJSONError(f"after the value: {exc}") from None
        raise GoJSONError("trailing JSON value")
    return node


def is_valid(data: bytes) -> bool:
    """``json.Valid``: one value, optionally surrounded by whitespace."""
    try:
        node, position = parse_value(data)
    except GoJSONError:
        return False
    del node
    return _skip_whitespace(data, position) == len(data)


def compact(data: bytes) -> bytes:
    """``json.Compact``: the whitespace between tokens removed, every other byte kept (strings untouched).
    ``data`` must be valid JSON (``is_valid``)."""
    out = bytearray()
    in_string = escaped = False
    for byte in data:
        if in_string:
            out.append(byte)
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte not in _WHITESPACE:
            out.append(byte)
            in_string = byte == 0x22
    return bytes(out)


_HTML_ESCAPES: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def html_escape(data: bytes) -> bytes:
    """Go's HTML-safe escaping of JSON text: ``<``, ``>``, ``&``, U+2028 and U+2029 can only stand inside strings,
    so replacing them everywhere is exact."""
    for plain, escaped in _HTML_ESCAPES:
        if plain in data:
            data = data.replace(plain, escaped)
    return data


def html_unescape(data: bytes) -> bytes:
    """The inverse of ``html_escape`` on compact JSON: what the bytes were before ``Marshal`` escaped them."""
    for plain, escaped in _HTML_ESCAPES:
        if escaped in data:
            data = data.replace(escaped, plain)
    return data


def marshal_raw(raw: bytes) -> bytes:
    """A ``json.RawMessage`` as ``Marshal`` writes it: compacted, then HTML-escaped."""
    return html_escape(compact(raw))


_SHORT_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def _escape_character(match: re.Match[str]) -> str:
    character = match.group()
    if character in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[character]
    if "\ud800" <= character <= "\udfff":
        return "\ufffd"  # a lone surrogate: Go holds no such string, and writes invalid UTF-8 as U+FFFD
    return f"\\u{ord(character):04x}"


def go_string(text: str) -> bytes:
    """A string as Go's encoder writes it (Go 1.22+: ``\\b`` and ``\\f`` short escapes; HTML characters escaped)."""
    return b'"' + _NEEDS_ESCAPE.sub(_escape_character, text).encode("utf-8") + b'"'


def indent(compact_json: bytes) -> bytes:
    """``json.Indent(dst, src, "", "  ")`` of compact JSON: what ``MarshalIndent`` writes (empty ``{}``/``[]``
    stay on one line). Works on bytes, so invalid UTF-8 in a raw field passes through as Go lets it."""
    out = bytearray()
    depth = 0
    in_string = escaped = False
    need_indent = False  # after an opening bracket: the newline comes unless the container is empty
    for byte in compact_json:
        if in_string:
            out.append(byte)
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
            continue
        if byte in _WHITESPACE:
            continue
        if need_indent and byte not in b"]}":
            need_indent = False
            depth += 1
            out += b"\n" + b"  " * depth
        if byte == 0x22:
            in_string = True
            out.append(byte)
        elif byte in b"{[":
            out.append(byte)
            need_indent = True
        elif byte == ord(","):
            out += b",\n" + b"  " * depth
        elif byte == ord(":"):
            out += b": "
        elif byte in b"]}":
            if need_indent:
                need_indent = False  # an empty container
            else:
                depth -= 1
                out += b"\n" + b"  " * depth
            out.append(byte)
        else:
            out.append(byte)
    return bytes(out)


# -- decoding into Go structs ----------------------------------------------------------------------
#
# encoding/json into Go values: each decoder takes the document bytes, a parsed node and the value decoded so far
# (Go decodes a repeated key into the same field again) and returns the new value.

_FOLDS_TO: Final = {"s": "\u017f", "k": "\u212a"}  # the two non-ASCII runes Go's case folding maps onto ASCII


def key_matches(key: str, name: str) -> bool:
    if len(key) != len(name):
        return False
    for got, want in zip(key, name, strict=True):
        if got == want or (want.isalpha() and got == want.upper()) or _FOLDS_TO.get(want) == got:
            continue
        return False
    return True


Decoder = Callable[[bytes, Node, Any], Any]


def _field_for(key: str, fields: dict[str, Decoder], strict: bool) -> str | None:
    if key in fields:
        return key
    for name in fields:
        if key_matches(key, name):
            return name
    if strict:
        raise GoJSONError(f"json: unknown field {key!r}")
    return None


def go_struct(fields: dict[str, Decoder], zero: Callable[[], dict[str, Any]], *, strict: bool = True) -> Decoder:
    """A Go struct: an object's keys matched to ``fields`` case-insensitively (an exact match first), decoded
    into the values so far (a repeated key decodes again: objects merge, the last scalar wins); ``null`` keeps
    them. ``strict``: an unknown key is refused (``DisallowUnknownFields``), else ignored."""

    def decode(data: bytes, node: Node, current: Any) -> Any:
        if node.kind == "null":
            return current
        if node.kind != "object":
            raise GoJSONError(f"json: cannot unmarshal {node.kind} into a Go struct")
        values = dict(current) if current is not None else zero()
        for key, value in node.pairs():
            name = _field_for(key, fields, strict)
            if name is not None:
                values[name] = fields[name](data, value, values[name])
        return values

    return decode


def go_pointer(target: Decoder) -> Decoder:
    def decode(data: bytes, node: Node, current: Any) -> Any:
        if node.kind == "null":
            return None
        return target(data, node, current)

    return decode


def go_slice(element: Decoder) -> Decoder:
    def decode(data: bytes, node: Node, current: Any) -> Any:
        if node.kind == "null":
            return None
        if node.kind != "array":
            raise GoJSONError(f"json: cannot unmarshal {node.kind} into a Go slice")
        backing = list(current or [])  # Go decodes into the existing elements
        items = node.items()
        for index, item in enumerate(items):
            if index < len(backing):
                backing[index] = element(data, item, backing[index])
            else:
                backing.append(element(data, item, None))
        return backing[: len(items)]

    return decode


def go_string_field(data: bytes, node: Node, current: Any) -> Any:
    if node.kind == "null":
        return current
    if node.kind != "string":
        raise GoJSONError(f"json: cannot unmarshal {node.kind} into a Go string")
    return node.text()


def go_unsigned(bits: int) -> Decoder:
    def decode(data: bytes, node: Node, current: Any) -> Any:
        if node.kind == "null":
            return current
        if node.kind != "number" or not node.text().isdigit():
            raise GoJSONError(f"json: cannot unmarshal {node.kind} {data[node.start : node.end]!r} into uint{bits}")
        value = int(node.text())
        if value >= 1 << bits:
            raise GoJSONError(f"json: cannot unmarshal number {node.text()} into uint{bits} (overflow)")
        return value

    return decode


def go_time_field(data: bytes, node: Node, current: Any) -> Any:
    if node.kind == "null":
        return current
    if node.kind != "string":
        raise GoJSONError(f"json: cannot unmarshal {node.kind} into a Go time.Time")
    return parse_go_time(node.text())


def go_raw_field(data: bytes, node: Node, current: Any) -> Any:
    return data[node.start : node.end]


# -- time.Time ---------------------------------------------------------------------------------------

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_NS: Final = 86_400 * 1_000_000_000


@dataclass(frozen=True, slots=True, order=False)
class GoTime:
    """A Go ``time.Time`` as the turn checkpoints use it: an instant to the nanosecond, and its location.

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
        """The instant as an aware UTC datetime, cut to microseconds (for tables and arithmetic only)."""
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
        local_ns = self.unix_ns + offset * 1_000_000_000
        days, within_day = divmod(local_ns, _DAY_NS)
        seconds, nanos = divmod(within_day, 1_000_000_000)
        moment = _EPOCH + timedelta(days=days, seconds=seconds)
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        if moment.year < 1000:
            text = f"{moment.year:04d}" + text[text.index("-") :]
        if nanos:
            text += "." + f"{nanos:09d}".rstrip("0")
        if offset == 0:
            return text + "Z"
        sign = "-" if offset < 0 else "+"
        hours, minutes = divmod(abs(offset) // 60, 60)
        return f"{text}{sign}{hours:02d}:{minutes:02d}"


_ZERO_UNIX_NS: Final = -62_135_596_800 * 1_000_000_000


def _days_in(month: int, year: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _two_digits(text: str, position: int, fixed: bool) -> tuple[int, int]:
    """Go's ``getnum``: one or two digits (exactly two when ``fixed``); the number and the position after it."""
    if position >= len(text) or not text[position].isascii() or not text[position].isdigit():
        raise GoJSONError("bad number")
    if position + 1 >= len(text) or not text[position + 1].isascii() or not text[position + 1].isdigit():
        if fixed:
            raise GoJSONError("bad number")
        return int(text[position]), position + 1
    return int(text[position : position + 2]), position + 2


def parse_go_time(text: str) -> GoTime:
    """``time.Parse(time.RFC3339, text)`` as Go does it (looser than RFC 3339: a one-digit hour, a comma before the
    fraction, more than nine fraction digits cut to nine, zone offsets up to 24:60); ``GoJSONError`` otherwise."""

    def refuse(why: str) -> GoJSONError:
        return GoJSONError(f'parsing time "{text}" as RFC 3339: {why}')

    def literal(position: int, expected: str) -> int:
        if not text.startswith(expected, position):
            raise refuse(f"cannot parse {text[position:]!r} as {expected!r}")
        return position + len(expected)

    try:
        year_text = text[0:4]
        if len(year_text) < 4 or not all(c.isascii() and c.isdigit() for c in year_text):
            raise refuse("cannot parse the year")
        year = int(year_text)
        position = literal(4, "-")
        month, position = _two_digits(text, position, True)
        if not 1 <= month <= 12:
            raise refuse("month out of range")
        position = literal(position, "-")
        day, position = _two_digits(text, position, True)
        position = literal(position, "T")
        hour, position = _two_digits(text, position, False)
        if hour > 23:
            raise refuse("hour out of range")
        position = literal(position, ":")
        minute, position = _two_digits(text, position, True)
        if minute > 59:
            raise refuse("minute out of range")
        position = literal(position, ":")
        second, position = _two_digits(text, position, True)
        if second > 59:
            raise refuse("second out of range")
        nanos = 0
        if position + 1 < len(text) and text[position] in ".," and text[position + 1].isdigit():
            end = position + 1
            while end < len(text) and text[end].isascii() and text[end].isdigit():
                end += 1
            digits = text[position + 1 : end][:9]
            nanos = int(digits.ljust(9, "0"))
            position = end
        offset: int | None
        if text.startswith("Z", position):
            offset, position = None, position + 1
        else:
            zone = text[position : position + 6]
            if len(zone) < 6 or zone[0] not in "+-" or zone[3] != ":":
                raise refuse(f"cannot parse {text[position:]!r} as 'Z07:00'")
            zone_hours, _ = _two_digits(zone, 1, True)
            zone_minutes, _ = _two_digits(zone, 4, True)
            if zone_hours > 24:
                raise refuse("time zone offset hour out of range")
            if zone_minutes > 60:
                raise refuse("time zone offset minute out of range")
            offset = (zone_hours * 60 + zone_minutes) * 60 * (-1 if zone[0] == "-" else 1)
            position += 6
        if position != len(text):
            raise refuse(f"extra text: {text[position:]!r}")
        if not 1 <= day <= _days_in(month, year):
            raise refuse("day out of range")
    except GoJSONError as exc:
        if str(exc).startswith("parsing time"):
            raise
        raise refuse(str(exc)) from None
    if year == 0:
        raise refuse("year 0 is outside what journaltools represents")
    since_epoch = datetime(year, month, day, hour, minute, second, tzinfo=UTC) - _EPOCH
    unix_seconds = since_epoch.days * 86_400 + since_epoch.seconds - (offset or 0)
    unix_ns = unix_seconds * 1_000_000_000 + nanos
    return GoTime(unix_ns, offset)


__all__ = [
    "MAX_NESTING",
    "Decoder",
    "GoJSONError",
    "GoTime",
    "Node",
    "compact",
    "go_pointer",
    "go_raw_field",
    "go_slice",
    "go_string",
    "go_string_field",
    "go_struct",
    "go_time_field",
    "go_unsigned",
    "go_utf8",
    "html_escape",
    "html_unescape",
    "indent",
    "is_valid",
    "key_matches",
    "marshal_raw",
    "parse_go_time",
    "parse_single",
    "parse_value",
]
