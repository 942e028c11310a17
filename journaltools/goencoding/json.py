"""Go's ``encoding/json``, written once for every reader and writer of Go-written JSON in journaltools: the fisk-ai
run journal's exact reader (``protocol.goreader``), the task store (``stores.tasks``) and the agent-harness-go turn
checkpoints (``stores.turns``). Each rule lives here once; the callers keep only their record shapes.

- syntax (``tokenize``): Go's scanner, checked over the whole input before anything is decoded; only space,
  tab, newline and carriage return between tokens, no control bytes in strings, at most 10,000 open
  containers, and Go's error wording. Iterative, so deep nesting cannot exhaust the interpreter's stack;
- strings (``string_value``): each byte that is not valid UTF-8 becomes its own U+FFFD, and a surrogate
  escape that is not half of a valid pair becomes U+FFFD;
- numbers (``parse_go_integer``): ``strconv.ParseInt``/``ParseUint`` on a number token;
- keys (``fold_key``): ``strings.EqualFold`` against lowercase ASCII field names;
- in ``json_values``: a parse tree (``parse_value``, ``parse_single``) with every value's byte span and every key
  of an object in order, duplicates included, and small combinators decoding it into Go structs (``go_struct``...);
- in ``json_values``, writing: the HTML-safe escapes (``html_escape``), ``json.Compact`` (``compact``), ``Marshal``
  of a string (``go_string``) and of a ``json.RawMessage`` (``marshal_raw``), ``MarshalIndent`` (``indent``);
- ``[]byte`` fields: ``base64.StdEncoding`` as Go decodes it (``go_base64``).

Go's ``time.Time`` text is ``goencoding.time``'.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

#: encoding/json's nesting limit: this many containers may be open at once, the outermost included.
MAX_DEPTH: Final = 10_000
#: The reason Go gives for input that stops in the middle of a value.
UNEXPECTED_END: Final = "unexpected end of JSON input"


class GoJSONError(ValueError):
    """Bytes Go's decoder refuses; ``reason`` is Go's error text (Go 1.27 wording where known)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


# ---------------------------------------------------------------------------------------------------
# UTF-8: Go replaces each invalid byte by its own U+FFFD, where Python's "replace" handler would replace a
# whole truncated multi-byte sequence by one.


def go_quoted(text: str) -> str:
    """``text`` quoted as Go's ``%q`` quotes printable text, every control character escaped (journal content in
    a message)."""
    return json.dumps(text, ensure_ascii=False)


def _replace_one_byte(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\ufffd", error.start + 1


_GO_REPLACE: Final = "journaltools-go-replace"
codecs.register_error(_GO_REPLACE, _replace_one_byte)


def go_utf8(data: bytes) -> str:
    """``data`` as Go reads bytes into a string: every byte that does not start a valid UTF-8 sequence becomes
    its own U+FFFD."""
    return data.decode("utf-8", _GO_REPLACE)


# ---------------------------------------------------------------------------------------------------
# Tokens. The tokenizer checks the whole input first (Go's decoder refuses a syntax error anywhere before
# it decodes a field) and records, for every container, the index just past its subtree, so a decoder
# skips an unknown or raw value in one step however deep it is.

OBJECT: Final = 0
ARRAY: Final = 1
STRING: Final = 2
NUMBER: Final = 3
TRUE: Final = 4
FALSE: Final = 5
NULL: Final = 6
#: A token kind as Go's type errors name it ("cannot unmarshal bool into ...").
KIND_NAMES: Final = ("object", "array", "string", "number", "bool", "bool", "null")

_STRING_TOKEN: Final = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
_NUMBER_TOKEN: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SPACES: Final = re.compile(rb"[ \t\n\r]+")
_WHITESPACE: Final = b" \t\n\r"
_JSON_SPACE: Final = frozenset(_WHITESPACE)
_LITERALS: Final = {ord("t"): (b"true", TRUE), ord("f"): (b"false", FALSE), ord("n"): (b"null", NULL)}
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")

# What the tokenizer expects next.
_VALUE: Final = 0
_VALUE_OR_CLOSE: Final = 1  # just after "["
_KEY: Final = 2
_KEY_OR_CLOSE: Final = 3  # just after "{"
_COLON: Final = 4
_COMMA_OR_CLOSE: Final = 5
_DONE: Final = 6


def _quote_rune(raw: bytes, pos: int) -> str:
    """The character at ``pos`` quoted as Go's error messages quote it (``'x'``, ``'\\t'``, ``'\\ufeff'``)."""
    lead = raw[pos]
    width = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4
    try:
        char = raw[pos : pos + width].decode("utf-8")
    except UnicodeDecodeError:
        return f"'\\x{lead:02x}'"
    if len(char) != 1:
        return f"'\\x{lead:02x}'"
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    code = ord(char)
    if char in named:
        text = named[char]
    elif char in "'\\":
        text = "\\" + char
    elif char.isprintable():
        text = char
    elif code < 0x80:
        text = f"\\x{code:02x}"
    elif code < 0x10000:
        text = f"\\u{code:04x}"
    else:
        text = f"\\U{code:08x}"
    return f"'{text}'"


def _syntax_error(raw: bytes, pos: int, context: str) -> GoJSONError:
    if pos >= len(raw):
        return GoJSONError(UNEXPECTED_END)
    return GoJSONError(f"invalid character {_quote_rune(raw, pos)} {context}")


@dataclass(slots=True)
class Tokens:
    """The tokens of one JSON value, in order: an object's members are its key and value tokens in turn."""

    raw: bytes
    kinds: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    #: For each token, the index of the first token after its whole value.
    after: list[int] = field(default_factory=list)
    #: Whether white space stood anywhere between the tokens (Go's encoder writes none).
    whitespace: bool = False
    #: The position just after the value.
    end: int = 0


def tokenize(raw: bytes, start: int = 0, *, whole: bool = True) -> Tokens:
    """The tokens of the JSON value at ``start`` (white space first is skipped). ``whole``: the value must be
    all that follows, as ``json.Unmarshal`` requires; otherwise the tokenizer stops just after it, as
    ``json.Decoder.Decode`` does. Raises ``GoJSONError`` with Go's reason."""
    tokens = Tokens(raw)
    kinds, starts, ends, after = tokens.kinds, tokens.starts, tokens.ends, tokens.after
    open_containers: list[int] = []
    size = len(raw)
    pos = start
    expect = _VALUE
    while True:
        if pos < size and raw[pos] in _JSON_SPACE:
            match = _SPACES.match(raw, pos)
            assert match is not None
            pos = match.end()
            tokens.whitespace = True
        if pos >= size:
            if expect == _DONE:
                return tokens
            raise GoJSONError(UNEXPECTED_END)
        char = raw[pos]
        if expect == _DONE:  # tokens.end was set when the value ended, before any white space after it
            if not whole:
                return tokens
            raise _syntax_error(raw, pos, "after top-level value")
        if expect == _COLON:
            if char != 0x3A:  # ':'
                raise _syntax_error(raw, pos, "after object key")
            pos += 1
            expect = _VALUE
            continue
        if expect == _COMMA_OR_CLOSE:
            in_object = kinds[open_containers[-1]] == OBJECT
            if char == 0x2C:  # ','
                pos += 1
                expect = _KEY if in_object else _VALUE
                continue
            if char != (0x7D if in_object else 0x5D):
                context = "after object key:value pair" if in_object else "after array element"
                raise _syntax_error(raw, pos, context)
            expect = _close(tokens, open_containers, pos)
            pos += 1
            continue
        if expect in (_KEY, _KEY_OR_CLOSE):
            if char == 0x7D and expect == _KEY_OR_CLOSE:  # '}'
                expect = _close(tokens, open_containers, pos)
                pos += 1
                continue
            if char != 0x22:
                raise _syntax_error(raw, pos, "looking for beginning of object key string")
            pos = _scan_string(tokens, pos)
            expect = _COLON
            continue
        # A value is expected.
        if char == 0x5D and expect == _VALUE_OR_CLOSE:  # ']'
            expect = _close(tokens, open_containers, pos)
            pos += 1
            continue
        if char == 0x7B or char == 0x5B:  # '{' or '['
            open_containers.append(len(kinds))
            if len(open_containers) > MAX_DEPTH:
                raise GoJSONError("exceeded max depth")
            kinds.append(OBJECT if char == 0x7B else ARRAY)
            starts.append(pos)
            ends.append(-1)
            after.append(-1)
            pos += 1
            expect = _KEY_OR_CLOSE if char == 0x7B else _VALUE_OR_CLOSE
            continue
        if char == 0x22:
            pos = _scan_string(tokens, pos)
        elif char == 0x2D or 0x30 <= char <= 0x39:
            pos = _scan_number(tokens, pos)
        elif char in _LITERALS:
            pos = _scan_literal(tokens, pos)
        else:
            raise _syntax_error(raw, pos, "looking for beginning of value")
        if open_containers:
            expect = _COMMA_OR_CLOSE
        else:
            expect = _DONE
            tokens.end = pos


def _close(tokens: Tokens, open_containers: list[int], pos: int) -> int:
    index = open_containers.pop()
    tokens.ends[index] = pos + 1
    tokens.after[index] = len(tokens.kinds)
    if open_containers:
        return _COMMA_OR_CLOSE
    tokens.end = pos + 1
    return _DONE


def _add_scalar(tokens: Tokens, kind: int, start: int, end: int) -> int:
    tokens.after.append(len(tokens.kinds) + 1)
    tokens.kinds.append(kind)
    tokens.starts.append(start)
    tokens.ends.append(end)
    return end


def _scan_string(tokens: Tokens, pos: int) -> int:
    match = _STRING_TOKEN.match(tokens.raw, pos)
    if match is not None:
        return _add_scalar(tokens, STRING, pos, match.end())
    raise _string_error(tokens.raw, pos)


def _string_error(raw: bytes, pos: int) -> GoJSONError:
    """Why the string starting at ``pos`` does not scan (the regular expression only says that it does not)."""
    index = pos + 1
    size = len(raw)
    while index < size:
        char = raw[index]
        if char < 0x20:
            return _syntax_error(raw, index, "in string")
        if char == 0x5C:  # backslash
            if index + 1 >= size:
                break
            escape = raw[index + 1]
            if escape in b'"\\/bfnrt':
                index += 2
                continue
            if escape != 0x75:  # 'u'
                return _syntax_error(raw, index + 1, "in string escape code")
            for digit in range(index + 2, index + 6):
                if digit >= size:
                    return GoJSONError(UNEXPECTED_END)
                if raw[digit] not in _HEX:
                    return _syntax_error(raw, digit, "in \\u hexadecimal character escape")
            index += 6
            continue
        index += 1
    return GoJSONError(UNEXPECTED_END)


def _scan_number(tokens: Tokens, pos: int) -> int:
    raw = tokens.raw
    match = _NUMBER_TOKEN.match(raw, pos)
    if match is None:  # a lone "-"
        raise _syntax_error(raw, pos + 1, "in numeric literal")
    end = match.end()
    # The pattern backtracks over an incomplete fraction or exponent; Go's scanner stops there instead.
    if end < len(raw) and raw[end] == 0x2E and b"." not in match.group():  # "1." not followed by a digit
        raise _syntax_error(raw, end + 1, "after decimal point in numeric literal")
    if end < len(raw) and raw[end] in b"eE" and not any(char in match.group() for char in b"eE"):
        digit = end + 2 if end + 1 < len(raw) and raw[end + 1] in b"+-" else end + 1
        raise _syntax_error(raw, digit, "in exponent of numeric literal")
    return _add_scalar(tokens, NUMBER, pos, end)


def _scan_literal(tokens: Tokens, pos: int) -> int:
    raw = tokens.raw
    word, kind = _LITERALS[raw[pos]]
    for offset in range(1, len(word)):
        if pos + offset >= len(raw):
            raise GoJSONError(UNEXPECTED_END)
        if raw[pos + offset] != word[offset]:
            expected = chr(word[offset])
            raise _syntax_error(raw, pos + offset, f"in literal {word.decode()} (expecting '{expected}')")
    return _add_scalar(tokens, kind, pos, pos + len(word))


def is_valid(data: bytes) -> bool:
    """``json.Valid``: one value, optionally surrounded by white space."""
    try:
        tokenize(data)
    except GoJSONError:
        return False
    return True


# ---------------------------------------------------------------------------------------------------
# Scalars as Go decodes them.

_SHORT_ESCAPES: Final = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}

#: Said to ``string_value``'s ``note`` when Go's decoding replaced something by U+FFFD.
INVALID_UTF8: Final = "invalid UTF-8 replaced by U+FFFD"
LONE_SURROGATE: Final = "lone surrogate escape replaced by U+FFFD"


def _text(data: bytes, note: Callable[[str], None] | None) -> str:
    try:
        return data.decode("utf-8")  # the common case, at C speed
    except UnicodeDecodeError:
        if note is not None:
            note(INVALID_UTF8)
        return go_utf8(data)


def string_value(raw: bytes, start: int, end: int, note: Callable[[str], None] | None = None) -> str:
    """The string token ``raw[start:end]`` (quotes included, already scanned by ``tokenize``) as Go decodes it.
    ``note``, when given, hears ``INVALID_UTF8`` / ``LONE_SURROGATE`` when Go's decoding replaced bytes."""
    inner = raw[start + 1 : end - 1]
    if b"\\" not in inner:
        try:
            return inner.decode("utf-8")  # the common case, without a call into _text
        except UnicodeDecodeError:
            return _text(inner, note)
    parts: list[str] = []
    pos = 0
    size = len(inner)
    while True:
        backslash = inner.find(b"\\", pos)
        if backslash < 0:
            parts.append(_text(inner[pos:], note))
            return "".join(parts)
        parts.append(_text(inner[pos:backslash], note))
        escape = inner[backslash + 1]
        if escape != 0x75:  # the tokenizer allowed only the short escapes and \u
            parts.append(_SHORT_ESCAPES[escape])
            pos = backslash + 2
            continue
        code = int(inner[backslash + 2 : backslash + 6], 16)
        pos = backslash + 6
        if 0xD800 <= code <= 0xDFFF:
            # A surrogate pairs only with the escape right after it; otherwise it is U+FFFD and that next
            # escape is read on its own (REAL-SYSTEM.md addendum rule 13).
            if (
                code <= 0xDBFF
                and pos + 6 <= size
                and inner[pos : pos + 2] == b"\\u"
                and 0xDC00 <= (low := int(inner[pos + 2 : pos + 6], 16)) <= 0xDFFF
            ):
                parts.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                pos += 6
                continue
            if note is not None:
                note(LONE_SURROGATE)
            parts.append("\ufffd")
            continue
        parts.append(chr(code))


#: Digits of the longest integer any 64-bit type holds (``18446744073709551615``); a JSON number has no leading
#: zeros, so a longer one is out of range whatever its digits.
_MOST_INTEGER_DIGITS: Final = 20


def parse_go_integer(text: bytes, *, bits: int, signed: bool) -> int | None:
    """A number token as Go decodes it into an integer (``strconv.ParseInt``/``ParseUint``): None when Go
    refuses it (a fraction or exponent, even ``2.0`` or ``2e0``; any sign, even ``-0``, for an unsigned type;
    a value out of the type's range)."""
    if (not signed and text[:1] == b"-") or any(char in text for char in b".eE"):
        return None
    if len(text.lstrip(b"-")) > _MOST_INTEGER_DIGITS:
        # Out of any 64-bit range, and int() would refuse a number past 4,300 digits with a ValueError that
        # stopped a whole directory's listing; Go only says the number does not fit.
        return None
    value = int(text)
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return value if low <= value <= high else None


def fold_key(key: str) -> str | None:
    """``key`` in the spelling a field name has when ``strings.EqualFold`` matches them, or None when no field
    name can match it. Field names must be lowercase ASCII: then only ASCII case and the two non-ASCII runes
    that fold onto ASCII letters (U+017F long s onto ``s``, the Kelvin sign onto ``k``) matter."""
    if key.isascii():
        return key.lower()
    folded = []
    for char in key:
        if char.isascii():
            folded.append(char.lower())
        elif char == "\u017f":
            folded.append("s")
        elif char == "\u212a":
            folded.append("k")
        else:
            return None
    return "".join(folded)


# ---------------------------------------------------------------------------------------------------
# Base64 as Go's base64.StdEncoding.Decode reads a []byte field.

_B64_VALUES: Final = {
    char: value for value, char in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
_LINE_BREAKS: Final = (0x0A, 0x0D)


class Base64Error(Exception):
    """Go's ``CorruptInputError``: ``offset`` is the input byte it names."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def go_base64(source: bytes) -> bytes:
    """Padded standard base64 by Go's rules: ``\\r`` and ``\\n`` skipped anywhere, padding required, non-zero
    trailing bits accepted. Raises ``Base64Error`` with Go's offset on bad input."""
    output = bytearray()
    size = len(source)
    pos = 0
    while True:
        quantum = [0, 0, 0, 0]
        filled = 0
        while filled < 4:
            if pos == size:
                if filled == 0:
                    return bytes(output)
                raise Base64Error(pos - filled)
            char = source[pos]
            pos += 1
            value = _B64_VALUES.get(char)
            if value is not None:
                quantum[filled] = value
                filled += 1
                continue
            if char in _LINE_BREAKS:
                continue
            if char != 0x3D or filled < 2:  # '=' is padding only in the third or fourth place
                raise Base64Error(pos - 1)
            if filled == 2:
                while pos < size and source[pos] in _LINE_BREAKS:
                    pos += 1
                if pos == size:
                    raise Base64Error(size)
                if source[pos] != 0x3D:
                    raise Base64Error(pos - 1)
                pos += 1
            while pos < size and source[pos] in _LINE_BREAKS:
                pos += 1
            if pos < size:
                raise Base64Error(pos)
            bits = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
            output += bits.to_bytes(3, "big")[: filled - 1]
            return bytes(output)
        bits = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
        output += bits.to_bytes(3, "big")


__all__ = [
    "ARRAY",
    "FALSE",
    "INVALID_UTF8",
    "KIND_NAMES",
    "LONE_SURROGATE",
    "MAX_DEPTH",
    "NULL",
    "NUMBER",
    "OBJECT",
    "STRING",
    "TRUE",
    "UNEXPECTED_END",
    "Base64Error",
    "GoJSONError",
    "Tokens",
    "fold_key",
    "go_base64",
    "go_utf8",
    "is_valid",
    "parse_go_integer",
    "string_value",
    "tokenize",
]
