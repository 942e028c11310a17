"""The exact reader: one stored line decoded as fisk-ai's Go runtime decodes it into ``runstate.Record``.

This is the slow path for lines the Go encoder would not have written (``protocol.decode`` sends every
line that is not canonical here). It models Go's ``encoding/json`` as the runtime is built (Go 1.27,
REAL-SYSTEM.md A.8 and the addendum's rules 1-13), so that a line is accepted exactly when the runtime
accepts it and decodes to the value the runtime would hold:

- syntax first: the whole line must be one JSON value with only white space around it; at most 10,000
  nested containers, unknown fields and raw JSON fields included; raw control bytes in strings refused;
- a ``null`` line is the zero record; any other non-object top level is refused;
- keys match fields by Go's ``strings.EqualFold`` (U+017F long s matches ``s``, the Kelvin sign ``k``); a
  repeated key (in any spelling) decodes again into the same field: objects merge field by field, arrays
  decode into the existing elements, scalars are replaced; unknown keys are skipped;
- ``null`` keeps the earlier value of strings, numbers, bools, times and structs and clears pointers,
  slices and maps (a raw JSON field then holds ``null``);
- every type mismatch refuses the line (``1e3``, ``1.5`` or ``2.0`` for an integer, ``-0`` or a negative
  number for the unsigned ``seq``, a number out of range, a string for a bool, a bad base64 signature, a
  time ``time.Parse(time.RFC3339, ...)`` refuses);
- strings: each invalid UTF-8 byte becomes U+FFFD, a surrogate escape that is not part of a valid pair
  becomes U+FFFD; raw JSON fields keep their bytes verbatim, compacted as the Go encoder writes them back.

Times are stored as the text Go's ``MarshalJSON`` writes for the parsed value. The recursion in this
module follows the Record struct's shape only (a fixed, small depth); nesting in the line itself is
handled by an iterative tokenizer, so a 10,000-deep line cannot exhaust the interpreter's stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from journaltools.errors import UndecodableLine
from journaltools.goencoding.json import (
    ARRAY,
    FALSE,
    KIND_NAMES,
    MAX_DEPTH,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
    TRUE,
    UNEXPECTED_END,
    Base64Error,
    GoJSONError,
    Tokens,
    fold_key,
    go_base64,
    go_utf8,
    parse_go_integer,
    string_value,
    tokenize,
)
from journaltools.goencoding.json_values import marshal_raw
from journaltools.goencoding.time import canonical_go_time, valid_calendar_date
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import NEWEST, Generation
from journaltools.protocol.gostructs import (
    BLOCKS,
    BOOL,
    BYTES,
    INT,
    KIND_COUNTS,
    POINTER,
    RAW,
    REVISIONS,
    STR,
    STRUCT,
    TIME,
    TIME_OMITZERO,
    UINT,
    GoField,
    GoStruct,
    record_structs,
)
from journaltools.protocol.kinds import (
    ZERO_TIME,
    Record,
)

# ---------------------------------------------------------------------------------------------------
# The Go structs being decoded into. Field kinds name the Go decoding rule that applies.


# ---------------------------------------------------------------------------------------------------
# Decoding state: a struct is a dict of the fields seen so far (absent = Go's zero value), a slice
# keeps its whole backing array, because Go decodes a later, longer array into elements an earlier
# array left beyond the slice's length (addendum rule 4).


@dataclass(slots=True)
class _Slice:
    backing: list[Any]
    length: int


_MAX_NOTES: Final = 12


class _Notes:
    """The differences from canonical form noticed while decoding, each said once, in line order."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._seen: set[str] = set()

    def add(self, note: str) -> None:
        if note in self._seen:
            return
        self._seen.add(note)
        if len(self.items) < _MAX_NOTES:
            self.items.append(note)
        elif len(self.items) == _MAX_NOTES:
            self.items.append("and more")


class _Decoder:
    def __init__(self, tokens: Tokens, notes: _Notes) -> None:
        self.tokens = tokens
        self.raw = tokens.raw
        self.notes = notes
        self._note = notes.add  # bound once: string() runs for every key and string

    # -- scalars ------------------------------------------------------------------------------------

    def string(self, index: int) -> str:
        """The string token's value as Go decodes it."""
        return string_value(self.raw, self.tokens.starts[index], self.tokens.ends[index], self._note)

    def _type_error(self, index: int, path: str, go_type: str, literal: bool = False) -> UndecodableLine:
        kind = self.tokens.kinds[index]
        what = KIND_NAMES[kind]
        if literal and kind == NUMBER:
            what = "number " + self._token_text(index)
        return UndecodableLine(f"json: cannot unmarshal {what} into Go struct field {path} of type {go_type}")

    def _token_text(self, index: int) -> str:
        return self.raw[self.tokens.starts[index] : self.tokens.ends[index]].decode("ascii")

    def integer(self, index: int, path: str, go_type: str, unsigned: bool) -> int:
        if self.tokens.kinds[index] != NUMBER:
            raise self._type_error(index, path, go_type)
        text = self.raw[self.tokens.starts[index] : self.tokens.ends[index]]
        value = parse_go_integer(text, bits=64, signed=not unsigned)
        if value is None:
            raise self._type_error(index, path, go_type, literal=True)
        return value

    # -- structs ------------------------------------------------------------------------------------

    def object(self, struct: GoStruct, values: dict[str, Any], index: int, path: str) -> None:
        """Decode the object token ``index`` into ``values`` (merging into what is there)."""
        tokens = self.tokens
        raw, starts, ends, note = self.raw, tokens.starts, tokens.ends, self._note
        end = tokens.after[index]
        member = index + 1
        seen: set[str] = set()
        order = list(struct.fields)
        last_position = -1
        while member < end:
            key = string_value(raw, starts[member], ends[member], note)  # self.string, one call less per key
            value = member + 1
            found = struct.fields.get(key)
            if found is None:
                folded = fold_key(key)
                found = struct.fields.get(folded) if folded is not None else None
                if found is not None:
                    self.notes.add(f"key {key!r} matched case-insensitively")
            if found is None:
                self.notes.add(f"unknown key {key!r} ignored")
            else:
                if found.name in seen:
                    self.notes.add(f"repeated key {found.name!r}")
                seen.add(found.name)
                position = order.index(found.name)
                if position < last_position:
                    self.notes.add("keys out of the Go struct's field order")
                last_position = position
                self.field(found, values, value, f"{path}.{found.name}")
            member = tokens.after[value]
        for name, item in struct.fields.items():
            if not item.omitempty and name not in seen:
                self.notes.add(f"key {name!r} missing")

    def field(self, item: GoField, values: dict[str, Any], index: int, path: str) -> None:
        kind = self.tokens.kinds[index]
        rule = item.kind
        if kind == NULL:
            if rule in (POINTER, BLOCKS, BYTES, REVISIONS, KIND_COUNTS):
                values[item.name] = None
                if item.omitempty:  # Go writes a nil slice or map as null, but omits a nil pointer
                    self.notes.add(f"null for {item.name!r}")
            elif rule == RAW:
                values[item.name] = b"null"
            else:
                self.notes.add(f"null for {item.name!r} kept the earlier value")
            return
        if rule == STR:
            if kind != STRING:
                raise self._type_error(index, path, item.go_type)
            values[item.name] = string_value(self.raw, self.tokens.starts[index], self.tokens.ends[index], self._note)
        elif rule in (INT, UINT):
            values[item.name] = self.integer(index, path, item.go_type, unsigned=rule == UINT)
        elif rule == BOOL:
            if kind != TRUE and kind != FALSE:
                raise self._type_error(index, path, item.go_type)
            values[item.name] = kind == TRUE
        elif rule == TIME:
            values[item.name] = self.time(index, path)
        elif rule == TIME_OMITZERO:
            # Go parses the zero time like any other and then omits it: it reads as an undated record.
            parsed = self.time(index, path)
            values[item.name] = "" if parsed == ZERO_TIME else parsed
        elif rule == RAW:
            values[item.name] = self.raw_json(index)
        elif rule in (STRUCT, POINTER):
            if kind != OBJECT:
                raise self._type_error(index, path, item.go_type)
            assert item.struct is not None
            nested = values.get(item.name)
            if nested is None:
                nested = values[item.name] = {}
            self.object(item.struct, nested, index, path)
        elif rule == BLOCKS:
            self.blocks(item, values, index, path)
        elif rule == BYTES:
            self.signature(item, values, index, path)
        elif rule == KIND_COUNTS:
            self.kind_counts(item, values, index, path)
        else:
            self.revisions(item, values, index, path)
        if item.omitempty and values.get(item.name) in ("", 0, False, b""):
            self.notes.add(f"zero value written for {item.name!r}")

    def _elements(self, index: int) -> list[int]:
        after = self.tokens.after
        elements = []
        element = index + 1
        end = after[index]
        while element < end:
            elements.append(element)
            element = after[element]
        return elements

    def _into_slice(self, item: GoField, values: dict[str, Any], index: int) -> tuple[_Slice, list[int]]:
        """The slice an array decodes into and the array's elements; Go grows the existing slice."""
        current = values.get(item.name)
        if current is None:
            current = values[item.name] = _Slice([], 0)
        elif current.length or current.backing:
            self.notes.add(f"repeated array {item.name!r} decoded into the earlier elements")
        return current, self._elements(index)

    @staticmethod
    def _set_length(target: _Slice, length: int) -> None:
        if length == 0:
            # Go replaces the slice by a new empty one: the old elements are gone for good.
            target.backing = []
        target.length = length

    def blocks(self, item: GoField, values: dict[str, Any], index: int, path: str) -> None:
        if self.tokens.kinds[index] != ARRAY:
            raise self._type_error(index, path, item.go_type)
        assert item.struct is not None
        target, elements = self._into_slice(item, values, index)
        for position, element in enumerate(elements):
            if position >= len(target.backing):
                target.backing.append({})
            kind = self.tokens.kinds[element]
            if kind == NULL:
                self.notes.add("null content block kept the earlier block")
            elif kind != OBJECT:
                raise self._type_error(element, f"{path}.{position}", item.struct.go_type)
            else:
                self.object(item.struct, target.backing[position], element, f"{path}.{position}")
        self._set_length(target, len(elements))

    def signature(self, item: GoField, values: dict[str, Any], index: int, path: str) -> None:
        kind = self.tokens.kinds[index]
        if kind == ARRAY:
            self.notes.add(f"{item.name!r} written as an array of numbers")
            target, elements = self._into_slice(item, values, index)
            for position, element in enumerate(elements):
                if position >= len(target.backing):
                    target.backing.append(0)
                if self.tokens.kinds[element] == NULL:
                    continue
                byte = self.integer(element, f"{path}.{position}", "uint8", unsigned=True)
                if byte > 0xFF:
                    raise self._type_error(element, f"{path}.{position}", "uint8", literal=True)
                target.backing[position] = byte
            self._set_length(target, len(elements))
            return
        if kind != STRING:
            raise self._type_error(index, path, item.go_type)
        text = self.string(index)
        try:
            decoded = go_base64(text.encode("utf-8"))
        except Base64Error as error:
            message = self._type_error(index, path, item.go_type)
            raise UndecodableLine(f"{message.reason}: illegal base64 data at input byte {error.offset}") from None
        if "\r" in text or "\n" in text:
            self.notes.add(f"line breaks inside base64 {item.name!r}")
        # Go decodes a base64 string into a new slice: a repeated key keeps the later value only, never the earlier
        # one's bytes beyond it (the object walk has already noted the repetition).
        values[item.name] = _Slice(list(decoded), len(decoded))

    def revisions(self, item: GoField, values: dict[str, Any], index: int, path: str) -> None:
        """A ``map[string]uint64``."""
        self._integer_map(item, values, index, path, key_of=lambda written: written, unsigned=True)

    def kind_counts(self, item: GoField, values: dict[str, Any], index: int, path: str) -> None:
        """A ``map[toolkit.Kind]int``: each key a decimal integer (Go's ``strconv.ParseInt``), kept in the decimal
        Go writes back."""

        def key_of(written: str) -> str:
            number = _parse_int_key(written)
            if number is None:
                raise UndecodableLine(
                    f"json: cannot unmarshal number {written} into Go struct field {path} of type toolkit.Kind"
                )
            if str(number) != written:
                self.notes.add(f"map {item.name!r} key {written!r} respelled")
            return str(number)

        self._integer_map(item, values, index, path, key_of=key_of, unsigned=False)

    def _integer_map(
        self,
        item: GoField,
        values: dict[str, Any],
        index: int,
        path: str,
        *,
        key_of: Callable[[str], str],
        unsigned: bool,
    ) -> None:
        """A map of integers: a repeated map merges into the earlier one, a repeated key replaces its value, and a
        ``null`` value stores 0 (a map element starts from zero, addendum rule 7)."""
        if self.tokens.kinds[index] != OBJECT:
            raise self._type_error(index, path, item.go_type)
        current: dict[str, int] | None = values.get(item.name)
        if current is None:
            current = values[item.name] = {}
        elif current:
            self.notes.add(f"repeated map {item.name!r} merged")
        tokens = self.tokens
        member = index + 1
        end = tokens.after[index]
        previous_key: str | None = None
        while member < end:
            key = key_of(self.string(member))
            value = member + 1
            if key in current:
                self.notes.add(f"repeated key {key!r} in {item.name!r}")
            if previous_key is not None and key.encode() <= previous_key.encode():
                self.notes.add(f"map {item.name!r} keys not sorted")
            previous_key = key
            if tokens.kinds[value] == NULL:
                self.notes.add(f"null value in map {item.name!r} stored as 0")
                current[key] = 0
            else:
                go_type = "uint64" if unsigned else "int"
                current[key] = self.integer(value, f"{path}.{key}", go_type, unsigned=unsigned)
            member = tokens.after[value]

    def raw_json(self, index: int) -> bytes:
        data = self.raw[self.tokens.starts[index] : self.tokens.ends[index]]
        compacted = marshal_raw(data)
        if compacted != data:
            self.notes.add("raw JSON re-spaced or escaped")
        return compacted

    def time(self, index: int, path: str) -> str:
        if self.tokens.kinds[index] != STRING:
            raise self._type_error(index, path, "time.Time")
        text = self.string(index)
        canonical = canonical_go_time(text)
        written = self.raw[self.tokens.starts[index] + 1 : self.tokens.ends[index] - 1]
        if written != canonical.encode():
            self.notes.add("time respelled")
        return canonical


def _parse_int_key(text: str) -> int | None:
    """An integer map key as Go's ``strconv.ParseInt(key, 10, 64)`` reads it: an optional sign, decimal digits
    (leading zeros allowed), within int64; None when it refuses the key."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    if len(digits.lstrip("0")) > 19:  # beyond int64 whatever the digits; never converted (Python bounds int())
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


# ---------------------------------------------------------------------------------------------------
# Building the typed values from the decoded fields.


def _zero(item: GoField) -> Any:
    rule = item.kind
    if rule == STR:
        return ""
    if rule in (INT, UINT):
        return 0
    if rule == BOOL:
        return False
    if rule == TIME:
        return ZERO_TIME
    if rule == TIME_OMITZERO:
        return ""
    if rule == KIND_COUNTS:
        return {}
    if rule == BYTES:
        return b""
    if rule == RAW:
        return msgspec.Raw(b"null")
    if rule == STRUCT:
        assert item.struct is not None
        return _build(item.struct, {})
    return None


def _build(struct: GoStruct, values: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {}
    for name, item in struct.fields.items():
        if name not in values:
            arguments[name] = _zero(item)
            continue
        value = values[name]
        rule = item.kind
        if rule == STRUCT:
            assert item.struct is not None
            arguments[name] = _build(item.struct, value)
        elif rule == POINTER:
            assert item.struct is not None
            arguments[name] = None if value is None else _build(item.struct, value)
        elif rule == BLOCKS:
            assert item.struct is not None
            block = item.struct
            arguments[name] = None if value is None else [_build(block, v) for v in value.backing[: value.length]]
        elif rule == BYTES:
            arguments[name] = b"" if value is None else bytes(value.backing[: value.length])
        elif rule == RAW:
            arguments[name] = msgspec.Raw(value)
        elif rule == KIND_COUNTS:
            # Go's encoder writes int keys sorted as text, which msgspec's deterministic order also does.
            arguments[name] = {} if value is None else dict(sorted(value.items()))
        else:
            arguments[name] = value
    return struct.cls(**arguments)


# ---------------------------------------------------------------------------------------------------


def read_exact(raw: bytes, generation: Generation = NEWEST) -> tuple[Record, list[str]]:
    """The record ``generation``'s Go build decodes from ``raw`` (one line, without its newline) and the
    differences from its encoder's form that were noticed on the way (empty for a canonical line).

    Raises ``UndecodableLine`` exactly when Go's ``json.Unmarshal`` into ``runstate.Record`` fails;
    its reason is Go's error text (Go 1.27 wording where known)."""
    try:
        return _read(raw, record_structs()[generation])
    except GoJSONError as refused:
        raise UndecodableLine(refused.reason) from None


def parse_go_time(text: str) -> str:
    """A record's time field: ``text`` parsed as ``time.Parse(time.RFC3339, text)`` parses it, returned as
    ``time.Time.MarshalJSON`` writes the result. Raises ``UndecodableLine`` with Go's error text."""
    try:
        return canonical_go_time(text)
    except GoJSONError as refused:
        raise UndecodableLine(refused.reason) from None


def _read(raw: bytes, root: GoStruct) -> tuple[Record, list[str]]:
    tokens = tokenize(raw)
    notes = _Notes()
    if tokens.whitespace:
        notes.add("whitespace")
    top = tokens.kinds[0]
    if top == NULL:
        notes.add("null line (the zero record)")
        return Record(seq=0, protocol=""), notes.items
    if top != OBJECT:
        raise UndecodableLine(f"json: cannot unmarshal {KIND_NAMES[top]} into Go value of type {root.go_type}")
    values: dict[str, Any] = {}
    decoder = _Decoder(tokens, notes)
    decoder.object(root, values, 0, "Record")
    record: Record = _build(root, values)
    if not notes.items and encode_record(record) != raw:
        notes.add("string escapes differ from the Go encoder's")
    return record, notes.items


__all__ = ["MAX_DEPTH", "UNEXPECTED_END", "go_base64", "go_utf8", "parse_go_time", "read_exact", "valid_calendar_date"]
