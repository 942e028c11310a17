"""What the runtime's three inspection commands share: Go's zero time and instants, and the pieces of their
``--json`` documents written byte for byte as the runtime's Go encoder writes them."""

from __future__ import annotations

import json
from collections.abc import Iterable

from journaltools.folding.facts import undated
from journaltools.goencoding.json_values import go_string, indent
from journaltools.goencoding.time import GoTime, canonical_go_time, parse_go_time


def go_time_text(time: str) -> str:
    """A time as Go marshals it; ``""`` for none or Go's zero time."""
    if undated(time):
        return ""
    try:
        return canonical_go_time(time)
    except ValueError:
        return time


def instant_ns(time: str) -> int:
    """A time's instant in nanoseconds (Go's zero time for none, which sorts before every other)."""
    return GoTime.zero().unix_ns if undated(time) else parse_go_time(time).unix_ns


def json_document(compact_json: bytes) -> bytes:
    """A compact document as the runtime's encoder writes it: indented by two spaces, a newline after it."""
    return indent(compact_json) + b"\n"


def json_string(text: str) -> bytes:
    return go_string(text, escape_html=False)


def json_object(pairs: Iterable[tuple[str, bytes]]) -> bytes:
    return b"{" + b",".join(json_string(key) + b":" + value for key, value in pairs) + b"}"


def json_int(value: int) -> bytes:
    return str(value).encode()


def json_bool(value: bool) -> bytes:
    return b"true" if value else b"false"


def json_number(value: float | None) -> bytes:
    return b"null" if value is None else json.dumps(value).encode()
