"""One stored line to one record, accepting exactly the lines the runtime's Go decoder accepts.

Two readers give one answer (and a line the native scanner, ``protocol.native``, proves canonical skips the
re-encoding: it is decoded and returned as it is):

- **the fast path** decodes a line straight into the typed structs (msgspec: exact keys, exact types,
  unknown keys refused) and then proves the line canonical: re-encoding the record must give the line's
  own bytes, its times must be in the form Go writes, its raw JSON fields compact. Every line the Go
  encoder wrote passes, and its record is then exactly what Go would have decoded.
- **the exact reader** (``protocol.goreader``) takes every other line and reproduces the Go decoder's
  rules (keys matched case-insensitively, repeated keys, ``null`` keeping the earlier value, invalid UTF-8
  replaced, loose times, trailing data refused...). A line it accepts is reported non-canonical, saying
  what differed; a line it refuses raises ``UndecodableLine`` with the reason Go gives.

Whether an undecodable line is a torn tail or corruption is the journal reader's decision, not this one's.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Final

import msgspec

from journaltools.errors import UndecodableLine
from journaltools.goencoding.json_values import has_go_escaped_characters, html_escape
from journaltools.goencoding.time import valid_calendar_date
from journaltools.protocol import native
from journaltools.protocol.generations import NEWEST, Generation
from journaltools.protocol.kinds import UINT64_MAX, ZERO_TIME, Record, newest_fields_set

_DECODER: Final = msgspec.json.Decoder(Record)
#: The encoder ``protocol.encode`` uses, without Go's escapes: the fast path compares before escaping.
_ENCODER: Final = msgspec.json.Encoder(order="deterministic")
_compact_line: Final = msgspec.json.format

#: A time exactly as Go's ``time.Time.MarshalJSON`` writes it: no trailing fraction zeros, ``Z`` for a zero offset
#: (never ``+00:00`` or ``-00:00``, whatever the time's location).
_CANONICAL_TIME: Final = re.compile(
    r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{0,8}[1-9])?(Z|(?![+-]00:00)[+-](0[0-9]|1[0-9]|2[0-3]):[0-5][0-9])",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class DecodedLine:
    record: Record
    #: None for a canonical line; otherwise what made it differ from the Go encoder's bytes.
    noncanonical: str | None


def decode_line(raw: bytes, generation: Generation = NEWEST) -> DecodedLine:
    """The record one line holds (without its newline), as ``generation``'s build decodes it. Raises
    ``UndecodableLine`` where that build refuses it."""
    proof = native.line_proof(raw)
    if proof == native.PROVEN or (proof == native.PROVEN_NEWEST and generation.extended_records):
        # Proven against the newest model; a line holding its added fields is not what the August encoder writes.
        return DecodedLine(_DECODER.decode(raw), None)
    try:
        record = _DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        # RecursionError: msgspec nests about 1,000 deep, Go 10,000; the exact reader has no such limit.
        return _exact(raw, generation)
    encoded = _ENCODER.encode(record)
    if encoded == raw:
        # Identical before Go's HTML-safe escapes: canonical only if the line holds none of those characters.
        if has_go_escaped_characters(raw):
            return _exact(raw, generation)
    elif not has_go_escaped_characters(encoded) or html_escape(encoded) != raw:
        return _exact(raw, generation)
    if not _canonical_fields(record, raw, generation):
        return _exact(raw, generation)
    return DecodedLine(record, None)


_LIST_DECODER: Final = msgspec.json.Decoder(list[Record])


def decode_canonical_lines(lines: list[bytes], generation: Generation = NEWEST) -> list[Record] | None:
    """The records of ``lines`` when every line is canonical, found with one decode, one encode and one
    comparison for all of them (the per-line calls cost more than the decoding); None when any line is not,
    and the caller then decodes line by line to say which and why.

    Sound because a canonical encoding is unique: the re-encoded list equals ``[line,line,...]`` byte for byte
    only if each element re-encodes to its own line (the element count is checked, so a line holding two
    objects, or a stray comma, cannot shift the boundaries)."""
    joined = b"[" + b",".join(lines) + b"]"
    try:
        records = _LIST_DECODER.decode(joined)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(records) != len(lines) or html_escape(_ENCODER.encode(records)) != joined:
        return None
    if _compact_line(joined, indent=-1) != joined:  # whitespace in a raw field survives re-encoding
        return None
    for record in records:
        if record.seq > UINT64_MAX or not _canonical_fields_beyond_whitespace(record, generation):
            return None
    return records


def decode_proven_journal(journal: bytes) -> list[Record]:
    """The records of a journal already proven canonical for its generation (``protocol.native``): one decode,
    nothing re-encoded, since a canonical line decodes here to exactly the record Go decodes it to."""
    return _LIST_DECODER.decode(native.json_array(journal))


def _canonical_fields_beyond_whitespace(record: Record, generation: Generation) -> bool:
    if not generation.extended_records:
        if newest_fields_set(record):
            return False  # the August encoder never writes them; its decoder skips them as unknown keys
    elif not _canonical_newest_fields(record):
        return False
    if record.memory_revisions is not None and any(
        value > UINT64_MAX for value in (record.memory_revisions.revisions or {}).values()
    ):
        return False
    if record.meta is not None and not _canonical_time(record.meta.created):
        return False
    return record.claim is None or _canonical_time(record.claim.claimed)


def _canonical_newest_fields(record: Record) -> bool:
    """The newest fields re-encoding cannot judge: a time in Go's form (and never the zero time, which Go omits),
    summary counters keyed by kind numbers in plain decimal."""
    if record.time and (record.time == ZERO_TIME or not _canonical_time(record.time)):
        return False
    terminal = record.terminal
    if terminal is not None and terminal.summary is not None:
        for key in terminal.summary.counters.tool_calls_by_kind:
            if _DECIMAL_KEY.fullmatch(key) is None or not -(1 << 63) <= int(key) < (1 << 63):
                return False
    return True


_DECIMAL_KEY: Final = re.compile(r"0|-?[1-9][0-9]{0,18}", re.ASCII)


def _exact(raw: bytes, generation: Generation) -> DecodedLine:
    # The exact reader is loaded only when a line is not canonical: the runtime never writes one.
    from journaltools.protocol import goreader

    record, differences = goreader.read_exact(raw, generation)
    # No difference: the exact reader re-encoded the record to these very bytes. The fast path sends such lines
    # here when msgspec cannot nest as deep as Go (a tool input 1,000 to 10,000 levels deep): canonical all the same.
    # Interned: lines that differ alike (a journal of a million ``{}`` lines) share one note, not one each.
    return DecodedLine(record, sys.intern("; ".join(differences)) if differences else None)


def _canonical_fields(record: Record, raw: bytes, generation: Generation) -> bool:
    """What re-encoding cannot see: a time Go would respell, whitespace inside a raw JSON field (msgspec keeps
    a raw field's bytes verbatim), an impossible date (the encoder writes only real dates), an integer beyond
    uint64 (msgspec reads big integers exactly; Go refuses them)."""
    if record.seq > UINT64_MAX or not _canonical_fields_beyond_whitespace(record, generation):
        return False
    # Only messages hold raw JSON fields (tool inputs, provider blocks); a line of a message-carrying record is
    # canonical only without insignificant whitespace anywhere, and re-encoding proved it outside raw fields.
    return (record.assistant is None and record.user is None) or _compact_line(raw, indent=-1) == raw


def _canonical_time(text: str) -> bool:
    if _CANONICAL_TIME.fullmatch(text) is None:
        return False
    return valid_calendar_date(text)


__all__ = ["DecodedLine", "UndecodableLine", "decode_line"]
