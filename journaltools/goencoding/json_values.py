"""Go's ``encoding/json`` above the tokens: documents parsed into trees (``Node``, ``parse_value``,
``parse_single``), trees decoded into Go structs with Go's rules for repeated and case-folded keys
(``go_struct``, ``go_slice``, ``go_pointer``, the field decoders), and the encoder's spellings: strings
(``go_string``), HTML escapes, ``compact``, ``indent`` and ``json.RawMessage``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from journaltools.goencoding.json import (
    _JSON_SPACE,
    _WHITESPACE,
    ARRAY,
    NUMBER,
    OBJECT,
    STRING,
    GoJSONError,
    Tokens,
    fold_key,
    parse_go_integer,
    string_value,
    tokenize,
)

# A parse tree, for the stores whose records are small: built from the tokens, so the syntax is the one above.

#: A token kind as a node names it (true and false apart).
_NODE_KINDS: Final = ("object", "array", "string", "number", "true", "false", "null")


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


def _tree(tokens: Tokens) -> Node:
    raw, kinds, starts, ends, after = tokens.raw, tokens.kinds, tokens.starts, tokens.ends, tokens.after
    root: Node | None = None
    # Open containers: the node, the index of the token after it, and its children.
    stack: list[tuple[Node, int, list[Any]]] = []
    key: str | None = None  # the key an object member's value is waiting for
    for index, kind in enumerate(kinds):
        while stack and stack[-1][1] == index:
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None and parent[0].kind == "object" and key is None:
            key = string_value(raw, starts[index], ends[index])
            continue
        node = Node(_NODE_KINDS[kind], starts[index], ends[index])
        if kind == STRING:
            node.value = string_value(raw, starts[index], ends[index])
        elif kind == NUMBER:
            node.value = raw[starts[index] : ends[index]].decode("ascii")
        if parent is None:
            root = node
        elif key is not None:
            parent[2].append((key, node))
            key = None
        else:
            parent[2].append(node)
        if kind in (OBJECT, ARRAY):
            children: list[Any] = []
            node.value = children
            stack.append((node, after[index], children))
    assert root is not None
    return root


def parse_value(data: bytes, position: int = 0) -> tuple[Node, int]:
    """One JSON value starting at ``position`` (white space first is skipped); its node and the position after it."""
    tokens = tokenize(data, position, whole=False)
    return _tree(tokens), tokens.end


def parse_single(data: bytes) -> Node:
    """Exactly one JSON value, as ``json.NewDecoder(r).Decode`` followed by a check for end of input reads it:
    white space around it is fine, a second value or anything else after it is refused."""
    if not data.strip(_WHITESPACE):
        raise GoJSONError("EOF (no JSON value)")
    node, position = parse_value(data)
    rest = len(data) - len(data[position:].lstrip(_WHITESPACE))
    if rest < len(data):
        try:
            tokenize(data, rest, whole=False)
        except GoJSONError as exc:
            raise GoJSONError(f"after the value: {exc.reason}") from None
        raise GoJSONError("trailing JSON value")
    return node


# Decoding a parse tree into Go structs: each decoder takes the document bytes, a node and the value decoded so
# far (Go decodes a repeated key into the same field again) and returns the new value.

Decoder = Callable[[bytes, Node, Any], Any]


def _field_for(key: str, fields: dict[str, Decoder], strict: bool) -> str | None:
    if key in fields:  # Go tries the exact name before folding
        return key
    folded = fold_key(key)
    if folded is not None and folded in fields:
        return folded
    if strict:
        raise GoJSONError(f"json: unknown field {key!r}")
    return None


def go_struct(fields: dict[str, Decoder], zero: Callable[[], dict[str, Any]], *, strict: bool = True) -> Decoder:
    """A Go struct: an object's keys matched to ``fields`` by ``strings.EqualFold`` (an exact match first),
    decoded into the values so far (a repeated key decodes again: objects merge, the last scalar wins); ``null``
    keeps them. ``strict``: an unknown key is refused (``DisallowUnknownFields``), else ignored."""
    assert all(fold_key(name) == name for name in fields), "fold_key matches lowercase ASCII field names only"

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
    """A pointer: ``null`` clears it, anything else decodes into what it points at."""

    def decode(data: bytes, node: Node, current: Any) -> Any:
        if node.kind == "null":
            return None
        return target(data, node, current)

    return decode


def go_slice(element: Decoder) -> Decoder:
    """A slice: ``null`` clears it; an array decodes element by element into the existing elements."""

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
        text = data[node.start : node.end]
        value = parse_go_integer(text, bits=bits, signed=False) if node.kind == "number" else None
        if value is None:
            raise GoJSONError(f"json: cannot unmarshal {node.kind} {text!r} into uint{bits}")
        return value

    return decode


def go_raw_field(data: bytes, node: Node, current: Any) -> Any:
    """A ``json.RawMessage``: the value's bytes as they stand (``null`` included)."""
    return data[node.start : node.end]


# Writing JSON as Go's encoder does.

_HTML_ESCAPES: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)

#: Every byte but ``<``, ``>``, ``&`` and the last bytes of U+2028 and U+2029 (for ``bytes.translate``).
_ALL_BUT_CANDIDATES: Final = bytes(byte for byte in range(256) if byte not in b"<>&\xa8\xa9")


def has_go_escaped_characters(text: bytes) -> bool:
    """Whether ``text`` holds a character Go's encoder escapes (``<``, ``>``, ``&``, U+2028, U+2029)."""
    present = text.translate(None, _ALL_BUT_CANDIDATES)
    if not present:
        return False
    return any(plain[-1] in present and plain in text for plain, _ in _HTML_ESCAPES)


def html_escape(data: bytes) -> bytes:
    """Go's HTML-safe escaping of JSON text that has none of those escapes yet: ``<``, ``>``, ``&``, U+2028 and
    U+2029 can only stand inside strings, so replacing them everywhere is exact.

    One ``translate`` keeps only the bytes that can start or end an escaped character, so a text is scanned
    once to learn which (if any) of the five are there (faster in CPython than a regular expression or five
    searches); a replace, which copies the text, runs only for those."""
    present = data.translate(None, _ALL_BUT_CANDIDATES)
    if not present:
        return data
    for plain, escaped in _HTML_ESCAPES:
        if plain[-1] in present:
            data = data.replace(plain, escaped)
    return data


def html_unescape(data: bytes) -> bytes:
    """The inverse of ``html_escape`` on compact JSON: what the bytes were before ``Marshal`` escaped them."""
    for plain, escaped in _HTML_ESCAPES:
        if escaped in data:
            data = data.replace(escaped, plain)
    return data


_STRING_OR_SPACE: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[ \t\n\r]+', re.DOTALL)


def _keep_strings(match: re.Match[bytes]) -> bytes:
    token = match.group()
    return token if token[:1] == b'"' else b""


def compact(data: bytes) -> bytes:
    """``json.Compact``: the white space between tokens removed, every other byte kept (strings untouched, number
    spellings and key order too). ``data`` must be valid JSON (``is_valid``)."""
    if any(space in data for space in (b" ", b"\t", b"\n", b"\r")):
        data = _STRING_OR_SPACE.sub(_keep_strings, data)
    return data


def marshal_raw(raw: bytes) -> bytes:
    """A ``json.RawMessage`` holding ``raw`` (valid JSON) as ``Marshal`` writes it: compacted, then HTML-escaped."""
    return html_escape(compact(raw))


_STRING_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')

_NEEDS_ESCAPE_PLAIN: Final = re.compile('[\x00-\x1f"\\\\\u2028\u2029\ud800-\udfff]')


def _escape_character(match: re.Match[str]) -> str:
    character = match.group()
    if character in _STRING_ESCAPES:
        return _STRING_ESCAPES[character]
    if "\ud800" <= character <= "\udfff":
        return "\ufffd"  # a lone surrogate: Go holds no such string, and writes invalid UTF-8 as U+FFFD
    return f"\\u{ord(character):04x}"


def go_string(text: str, *, escape_html: bool = True) -> bytes:
    """A string as Go's encoder writes it (Go 1.22+: ``\\b`` and ``\\f`` short escapes; HTML characters escaped
    unless ``escape_html`` is False, as an encoder with ``SetEscapeHTML(false)`` writes them; U+2028 and U+2029 are
    escaped either way, as Go always does in a string)."""
    pattern = _NEEDS_ESCAPE if escape_html else _NEEDS_ESCAPE_PLAIN
    return b'"' + pattern.sub(_escape_character, text).encode("utf-8") + b'"'


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
        if byte in _JSON_SPACE:
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
