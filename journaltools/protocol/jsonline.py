"""One stored line, one JSON object: the parser every reader of journals shares.

A line is a record when it is exactly one JSON object (RFC 8259) encoded as UTF-8: no ``NaN`` or
``Infinity`` literals, no unpaired surrogate escapes, whitespace allowed around the object. Integers
are read exactly, whatever their size; other numbers as IEEE doubles (one beyond their range reads as
infinity, while the stored bytes keep what was written).

A key that appears twice in one object does not make the line unreadable: the last value wins, as in
every JSON reader, and the line comes back with the first duplicated key named, so validation can
refuse the record instead of silently keeping one of the two values.

jiter parses and spots duplicates in one pass. It refuses objects nested deeper than about 250
levels; such a line is read again by the standard library's decoder under the same rules (its own
limit is the interpreter's recursion limit, near 1,000 levels, where msgspec stops too).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import jiter

#: jiter's message for a duplicated key: ``Detected duplicate key "name" at line 1 column 9``.
_DUPLICATE: Final = re.compile(r'^Detected duplicate key "(.*)" at line \d+ column \d+$', re.DOTALL)
_TOO_DEEP: Final = "recursion limit exceeded"


class LineNotJson(ValueError):
    """A line that is not one JSON object; readers decide whether it is a torn tail or corruption."""


def parse_line(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """The object a stored line holds, and the first key found twice in one of its objects (or None).

    Raises ``LineNotJson`` for anything that is not exactly one JSON object.
    """
    try:
        body = jiter.from_json(raw, allow_inf_nan=False, cache_mode="keys", catch_duplicate_keys=True)
    except ValueError as exc:
        message = str(exc)
        duplicate = _DUPLICATE.match(message)
        if duplicate is not None:
            # Read it again last-wins, as any other reader would, and say which key was doubled.
            return _object(jiter.from_json(raw, allow_inf_nan=False, cache_mode="keys")), duplicate.group(1)
        if _TOO_DEEP in message:
            return _parse_deep(raw)
        raise LineNotJson(message) from None
    return _object(body), None


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LineNotJson(f"a JSON {_json_kind(value)}, not an object")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def _refuse_constant(name: str) -> Any:
    raise LineNotJson(f"{name} is not a JSON number")


def _parse_deep(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """The standard library's decoder, held to jiter's rules, for lines nested beyond jiter's limit."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(items)
        if len(result) != len(items) and not duplicates:
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    duplicates.append(key)
                    break
                seen.add(key)
        return result

    try:
        text = raw.decode("utf-8")
        body = json.loads(text, object_pairs_hook=pairs, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise LineNotJson(str(exc) if not isinstance(exc, RecursionError) else "nested too deeply") from None
    _refuse_lone_surrogates(body)
    return _object(body), duplicates[0] if duplicates else None


def _refuse_lone_surrogates(value: Any) -> None:
    """The standard library accepts ``"\\ud800"``; jiter and UTF-8 do not."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise LineNotJson("an unpaired surrogate escape in a string") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
