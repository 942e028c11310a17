"""Typed values to the exact bytes Go's ``encoding/json`` writes for them.

msgspec already writes what Go writes for these structs: fields in declaration order, omitted zero values,
``\\n \\r \\t \\b \\f`` short escapes, other control bytes as lowercase ``\\u00xx``, everything else raw
UTF-8, bytes as padded standard base64, raw JSON fields verbatim. Go additionally escapes ``<``, ``>``,
``&``, U+2028 and U+2029 everywhere, raw JSON included; those characters can only stand inside JSON
strings, so replacing them on the whole output is exact. Map keys are written sorted, as Go sorts them
(code point order equals UTF-8 byte order).

A raw JSON field must already be compact: the Go encoder compacts ``json.RawMessage`` when it writes one,
so a value built from outside (a tool input, a provider block) goes through ``compact_json`` first.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from journaltools.protocol.kinds import Record

_ENCODER: Final = msgspec.json.Encoder(order="deterministic")
_GO_ESCAPES: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def has_go_escaped_characters(text: bytes) -> bool:
    """Whether ``text`` holds a character Go's encoder escapes (``<``, ``>``, ``&``, U+2028, U+2029)."""
    present = text.translate(None, _ALL_BUT_CANDIDATES)
    if not present:
        return False
    return any(plain[-1] in present and plain in text for plain, _ in _GO_ESCAPES)


def go_escape(encoded: bytes) -> bytes:
    """Apply Go's HTML-safe escapes to JSON text that has none of them yet.

    One ``translate`` keeps only the bytes that can start or end an escaped character, so a text is scanned
    once to learn which (if any) of the five are there; a replace runs only for those."""
    present = encoded.translate(None, _ALL_BUT_CANDIDATES)
    if not present:
        return encoded
    for plain, escaped in _GO_ESCAPES:
        if plain[-1] in present:
            encoded = encoded.replace(plain, escaped)
    return encoded


#: Every byte but ``<``, ``>``, ``&`` and the last bytes of U+2028 and U+2029 (for ``bytes.translate``).
_ALL_BUT_CANDIDATES: Final = bytes(byte for byte in range(256) if byte not in b"<>&\xa8\xa9")


def encode_record(record: Record) -> bytes:
    """The record's bytes as the Go encoder writes them, without the file journal's ``\\n``."""
    return go_escape(_ENCODER.encode(record))


def encode_go_json(value: Any) -> bytes:
    """Any msgspec-encodable value (strings, lists, maps, structs) as Go's encoder writes it."""
    return go_escape(_ENCODER.encode(value))


_JSON_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[ \t\n\r]+', re.DOTALL)


def _keep_strings(match: re.Match[bytes]) -> bytes:
    token = match.group()
    return token if token[:1] == b'"' else b""


def compact_json(raw: bytes) -> bytes:
    """``raw`` (valid JSON) without insignificant whitespace and with Go's escapes: what Go writes for a
    ``json.RawMessage`` holding it. Number spelling and key order are kept."""
    if any(space in raw for space in (b" ", b"\t", b"\n", b"\r")):
        raw = _JSON_TOKEN.sub(_keep_strings, raw)
    return go_escape(raw)


def raw_json(value: Any) -> msgspec.Raw:
    """A raw JSON field holding ``value`` as Go would write it (for values built in Python)."""
    return msgspec.Raw(encode_go_json(value))
