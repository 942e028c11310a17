"""Typed values to the exact bytes Go's ``encoding/json`` writes for them.

msgspec already writes what Go writes for these structs: fields in declaration order, omitted zero values,
``\\n \\r \\t \\b \\f`` short escapes, other control bytes as lowercase ``\\u00xx``, everything else raw
UTF-8, bytes as padded standard base64, raw JSON fields verbatim. Go additionally escapes ``<``, ``>``,
``&``, U+2028 and U+2029 everywhere, raw JSON included (``goencoding.json_values.html_escape``). Map keys are
written sorted, as Go sorts them (code point order equals UTF-8 byte order).

A raw JSON field must already be compact: the Go encoder compacts ``json.RawMessage`` when it writes one,
so a value built from outside (a tool input, a provider block) goes through ``goencoding.json_values.marshal_raw``
first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from journaltools.goencoding.json_values import html_escape
from journaltools.protocol.kinds import Record

_ENCODER: Final = msgspec.json.Encoder(order="deterministic")


def encode_record(record: Record) -> bytes:
    """The record's bytes as the Go encoder writes them, without the file journal's ``\\n``."""
    return html_escape(_ENCODER.encode(record))


def encode_go_json(value: Any) -> bytes:
    """Any msgspec-encodable value (strings, lists, maps, structs) as Go's encoder writes it."""
    return html_escape(_ENCODER.encode(value))


def raw_json(value: Any) -> msgspec.Raw:
    """A raw JSON field holding ``value`` as Go would write it (for values built in Python)."""
    return msgspec.Raw(encode_go_json(value))


def system_hash(system_blocks: Sequence[str]) -> str:
    """The fingerprint's ``system_hash`` of a system prompt given as its list of blocks: lowercase hex SHA-256 of
    the Go JSON encoding of that list of strings."""
    return hashlib.sha256(encode_go_json(list(system_blocks))).hexdigest()
