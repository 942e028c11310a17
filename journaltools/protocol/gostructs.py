"""The Go structs a journal line decodes into, as the Go-faithful reader sees them: each record kind's fields with
the Go decoding rule that applies to each (string, integer, time, raw JSON, a nested struct, a pointer...),
derived from the msgspec structs of ``protocol.kinds`` so that a field added to a generation is added once. The
August build's structs are the newest line's without the fields only the newest line writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import inspect

from journaltools.protocol.generations import AUGUST, NEWEST, Generation
from journaltools.protocol.kinds import (
    NEWEST_ONLY,
    Record,
)

#: Set by ``record_structs`` at the first exact read.
_records_derived: dict[Generation, GoStruct] | None = None


STR: Final = "string"

INT: Final = "int"

UINT: Final = "uint"

BOOL: Final = "bool"

TIME: Final = "time"

TIME_OMITZERO: Final = "time omitzero"  # a record's time: the zero time is never written, and reads as ""

BYTES: Final = "bytes"

RAW: Final = "raw"

STRUCT: Final = "struct"  # a struct value: null keeps it, an object merges into it

POINTER: Final = "pointer"  # a pointer to a struct: null clears it, an object merges into it or a new one

BLOCKS: Final = "blocks"  # []llm.ContentBlock

REVISIONS: Final = "revisions"  # map[string]uint64

KIND_COUNTS: Final = "kind counts"  # map[toolkit.Kind]int: integer keys written in decimal


@dataclass(frozen=True, slots=True)
class GoField:
    name: str
    kind: str
    go_type: str
    #: Go omits the field when it is zero (omitempty); a canonical line leaves such a zero value out.
    omitempty: bool = False
    struct: GoStruct | None = None


@dataclass(frozen=True, slots=True)
class GoStruct:
    go_type: str
    cls: type[msgspec.Struct]
    fields: dict[str, GoField]


def _struct(go_type: str, cls: type[msgspec.Struct], *fields: GoField) -> GoStruct:
    return GoStruct(go_type, cls, {item.name: item for item in fields})


def _f(name: str, kind: str, go_type: str, *, omitempty: bool = False, struct: GoStruct | None = None) -> GoField:
    return GoField(name, kind, go_type, omitempty, struct)


def _struct_of(info: inspect.StructType, known: dict[type, GoStruct] | None = None) -> GoStruct:
    """The Go struct ``info`` declares, as the decoder walks it: derived from the msgspec struct itself (the one
    declaration of the record model), each field's decoding rule from its type, omitempty from its default, its
    Go type from the type or the name the model gives it (``blocks.go_named``, a struct's ``GO_TYPE``). ``info``
    is one ``inspect.type_info`` of the root, walked down (each nested struct is in it already)."""
    known = {} if known is None else known
    if info.cls in known:
        return known[info.cls]
    fields = [_field_of(field, known) for field in info.fields]
    struct = known[info.cls] = _struct(info.cls.GO_TYPE, info.cls, *fields)  # type: ignore[attr-defined]
    return struct


def _field_of(field: inspect.Field, known: dict[type, GoStruct]) -> GoField:
    value: Any = field.type
    extra: dict[str, Any] = {}
    if isinstance(value, inspect.Metadata):
        extra = dict(value.extra or {})
        value = value.type
    omitempty = not field.required
    rule, go_type, nested = _rule_of(value, bool(extra.get("go_time")), omitempty, known)
    return _f(field.encode_name, rule, extra.get("go", go_type), omitempty=omitempty, struct=nested)


def _rule_of(value: Any, time: bool, omitempty: bool, known: dict[type, GoStruct]) -> tuple[str, str, GoStruct | None]:
    if isinstance(value, inspect.StrType):
        if time:
            return (TIME_OMITZERO if omitempty else TIME), "time.Time", None
        return STR, "string", None
    if isinstance(value, inspect.IntType):
        unsigned = value.ge == 0 and value.le is None
        return (UINT, "uint64", None) if unsigned else (INT, "int64", None)
    if isinstance(value, inspect.BoolType):
        return BOOL, "bool", None
    if isinstance(value, inspect.BytesType):
        return BYTES, "[]uint8", None
    if isinstance(value, inspect.RawType):
        return RAW, "json.RawMessage", None
    if isinstance(value, inspect.StructType):
        nested = _struct_of(value, known)
        return STRUCT, nested.go_type, nested
    if isinstance(value, inspect.DictType):
        return KIND_COUNTS, "map[int]int", None
    if isinstance(value, inspect.UnionType):
        inner = next(member for member in value.types if not isinstance(member, inspect.NoneType))
        if isinstance(inner, inspect.StructType):
            nested = _struct_of(inner, known)
            return POINTER, nested.go_type, nested
        if isinstance(inner, inspect.ListType) and isinstance(inner.item_type, inspect.StructType):
            nested = _struct_of(inner.item_type, known)
            return BLOCKS, f"[]{nested.go_type}", nested
        if isinstance(inner, inspect.DictType):
            return REVISIONS, "map[string]uint64", None
    raise TypeError(f"the exact reader has no Go decoding rule for {value}")


def _without_newest_fields(struct: GoStruct) -> GoStruct:
    """``struct`` as the August build declares it: the fields ``kinds.NEWEST_ONLY`` names left out, all the way
    down (its decoder skips them as unknown keys)."""
    absent = NEWEST_ONLY.get(struct.cls, frozenset())
    fields = []
    for item in struct.fields.values():
        if item.name in absent:
            continue
        nested = item.struct
        fields.append(
            item
            if nested is None
            else _f(item.name, item.kind, item.go_type, omitempty=item.omitempty, struct=_without_newest_fields(nested))
        )
    return _struct(struct.go_type, struct.cls, *fields)


def record_structs() -> dict[Generation, GoStruct]:
    """The root struct each generation's decoder fills: the record as the newest line's decoder reads it (every
    struct derived from ``kinds.Record``), and the August build's. Derived at the first exact read, not on import:
    a journal the native scanner proves never needs it, and deriving it costs a command's start some 15 ms. (Two
    threads reading at once may both derive it; each derives the same table, set whole.)"""
    global _records_derived
    if _records_derived is None:
        info = inspect.type_info(Record)
        assert isinstance(info, inspect.StructType)
        record = _struct_of(info)
        _records_derived = {NEWEST: record, AUGUST: _without_newest_fields(record)}
    return _records_derived
