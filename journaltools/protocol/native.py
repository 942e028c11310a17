"""The native proof that a whole file journal is canonical, checked against the record model of ``kinds``.

``_canonical`` (a C extension built with the package) reads a journal's bytes once and says whether every line
is exactly what the Go encoder writes for its record: keys in field order, zero values omitted where Go omits
them, strings escaped as Go escapes them, integers and times in their one spelling, raw JSON compact. For such a
journal it also gives each line's offset, seq, protocol and optional flag, so a load that only tables records
never builds a Python object per record. ``scan_batch`` does the same for journals read back to back into one
buffer, and moves the proven lines into place in it: the records table's body, with no second copy.

The C code holds no field names: ``configure`` hands it the model derived here from the msgspec structs, the
same declaration the fast path decodes into, so the two cannot drift. The model is the newest line's, with the
fields that line added (``kinds.NEWEST_ONLY``) flagged: a scan says whether a journal holds one, and a journal of
the August build that does is not proven (its encoder never writes them), so each generation is proven by its
own build's rules. The proof is conservative: a journal it
cannot prove (an escape in a map key, a surrogate escape or invalid UTF-8 inside raw JSON, a build without the
extension) answers None and takes the Python fast path, which gives the same records.
"""

from __future__ import annotations

import os
import stat
import sys
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import inspect

from journaltools.protocol.kinds import NEWEST_ONLY, PROTOCOLS, Record

if TYPE_CHECKING:  # only named in a signature: the command line's start never imports numpy
    import numpy as np

try:
    from journaltools.protocol import _canonical  # type: ignore[attr-defined]
except ImportError:  # a source tree used without building the extension: the Python fast path serves alone
    _canonical = None

# The field types of the C scanner (``enum field_type`` in _canonical.c).
STRING, STRING_OMITTED_EMPTY, INT64, INT64_OMITTED_ZERO, UINT64, BOOL_OMITTED_FALSE = 0, 1, 2, 3, 4, 5
TIME, BYTES_OMITTED_EMPTY, RAW, OBJECT, OBJECT_OMITTED_NIL, LIST_OR_NULL, UINT_MAP_OR_NULL = 6, 7, 8, 9, 10, 11, 12
TIME_OMITTED_ZERO, INT_MAP_OMITTED_EMPTY = 13, 14

_INT64_RANGE: Final = (-(1 << 63), (1 << 63) - 1)

#: The protocol ids a scan reports, by index; ``OTHER_PROTOCOL`` stands for any other id (the line holds it).
PROTOCOL_IDS: Final[tuple[str, ...]] = tuple(PROTOCOLS)
OTHER_PROTOCOL: Final = 255

#: A field of the scanner's model: its JSON name, its scanner type, its nested struct's index, and whether only the
#: newest line writes it.
Field = tuple[bytes, int, int, bool]


class UnsupportedField(TypeError):
    """A struct field the native scanner has no check for: the model changed beyond what it knows."""


def record_model(
    root: type[msgspec.Struct] = Record, *, leave_out: dict[type, frozenset[str]] | None = None
) -> list[list[Field]]:
    """The structs reachable from ``root`` as the scanner's schemas (``root`` first): per field its JSON name, its
    scanner type, the index of its nested struct (0 when it has none) and whether it is one of the fields only the
    newest line writes (``kinds.NEWEST_ONLY``). ``leave_out`` names fields, by struct, the model does not have at
    all (a line holding one is then never proven)."""
    left_out = leave_out or {}
    schemas: list[list[Field]] = []
    index: dict[type, int] = {}

    def schema_of(info: inspect.StructType) -> int:
        # ``info`` comes from one ``type_info`` of the root, walked down: a nested struct's is in it already.
        struct = info.cls
        if struct in index:
            return index[struct]
        position = index[struct] = len(schemas)
        schemas.append([])
        config = struct.__struct_config__
        if not (config.omit_defaults and config.forbid_unknown_fields) or info.array_like or info.tag_field:
            raise UnsupportedField(f"{struct.__name__}: only omit_defaults, forbid_unknown_fields object structs")
        absent = left_out.get(struct, frozenset())
        newest = NEWEST_ONLY.get(struct, frozenset())
        schemas[position] = [
            (*field_of(struct, field), field.name in newest) for field in info.fields if field.name not in absent
        ]
        return position

    def field_of(struct: type, field: inspect.Field) -> tuple[bytes, int, int]:
        name = field.encode_name.encode()
        kind, nested = type_of(field)
        if kind is None:
            raise UnsupportedField(f"no native check for {struct.__name__}.{field.name} ({field.type})")
        return name, kind, nested

    def type_of(field: inspect.Field) -> tuple[int | None, int]:
        value: Any = field.type
        time = False
        if isinstance(value, inspect.Metadata):
            time = bool((value.extra or {}).get("go_time"))
            value = value.type
        required, default = field.required, field.default
        if isinstance(value, inspect.StrType) and value == inspect.StrType():
            if time:
                return (TIME if required else TIME_OMITTED_ZERO if default == "" else None), 0
            if required:
                return STRING, 0
            return (STRING_OMITTED_EMPTY if default == "" else None), 0
        if isinstance(value, inspect.IntType):
            if (value.ge, value.le) == _INT64_RANGE and value.gt is None and value.lt is None:
                if required:
                    return INT64, 0
                return (INT64_OMITTED_ZERO if default == 0 else None), 0
            if value.ge == 0 and value.le is None and value.gt is None and value.lt is None and required:
                return UINT64, 0
            return None, 0
        if isinstance(value, inspect.BoolType):
            return (BOOL_OMITTED_FALSE if not required and default is False else None), 0
        if isinstance(value, inspect.BytesType):
            return (BYTES_OMITTED_EMPTY if not required and default == b"" else None), 0
        if isinstance(value, inspect.RawType):
            return (RAW if required else None), 0
        if isinstance(value, inspect.StructType):
            return (OBJECT if required else None), schema_of(value)
        if (
            isinstance(value, inspect.DictType)
            and value.key_type == inspect.StrType()
            and value.value_type == inspect.IntType(ge=_INT64_RANGE[0], le=_INT64_RANGE[1])
            and field.default_factory is dict
        ):
            # Go's map keyed by an integer kind: its keys are decimal integers, sorted as text; empty, omitted.
            return INT_MAP_OMITTED_EMPTY, 0
        if isinstance(value, inspect.UnionType) and len(value.types) == 2 and inspect.NoneType() in value.types:
            inner = next(member for member in value.types if member != inspect.NoneType())
            if isinstance(inner, inspect.StructType) and not required and default is None:
                return OBJECT_OMITTED_NIL, schema_of(inner)
            if isinstance(inner, inspect.ListType) and isinstance(inner.item_type, inspect.StructType) and required:
                return LIST_OR_NULL, schema_of(inner.item_type)
            if (
                isinstance(inner, inspect.DictType)
                and inner.key_type == inspect.StrType()
                and inner.value_type == inspect.IntType(ge=0)
                and required
            ):
                return UINT_MAP_OR_NULL, 0
        return None, 0

    root_info = inspect.type_info(root)
    assert isinstance(root_info, inspect.StructType)
    schema_of(root_info)
    return schemas


def _configure() -> None:
    if _canonical is None:
        return
    schemas = record_model()
    names = [name for name, _, _, _ in schemas[0]]
    fields = (names.index(b"seq"), names.index(b"protocol"), names.index(b"optional"))
    _canonical.configure(schemas, fields, [protocol.encode() for protocol in PROTOCOL_IDS])


_configure()

#: Whether this build has the native scanner.
AVAILABLE: Final = _canonical is not None


def active() -> bool:
    """Whether the scanner is in use now: built, and not set aside by ``disabled``."""
    return _canonical is not None


@dataclass(frozen=True, slots=True)
class CanonicalScan:
    """What the scanner proved of a journal: per line, in native byte order, its start offset in the journal
    (``int64``), its seq (``uint64``), the index of its protocol in ``PROTOCOL_IDS`` (``uint8``, ``OTHER_PROTOCOL``
    for an id the runtime does not know) and its optional flag (``uint8``)."""

    starts: bytes
    seqs: bytes
    protocols: bytes
    optional: bytes
    #: Whether a line holds a field only the newest line writes (such a journal is proven only as the newest's).
    newest: bool = False

    @property
    def count(self) -> int:
        return len(self.protocols)

    @property
    def last_seq(self) -> int:
        return int.from_bytes(self.seqs[-8:], sys.byteorder)


@dataclass(frozen=True, slots=True)
class BatchScan:
    """What ``scan_batch`` proved of journals held one after another in one buffer. ``proven``: per journal, its
    line count, or -1 for one not proven (its bytes were dropped). The lines of the proven ones now fill the
    buffer's first ``body_length`` bytes without their newlines; ``offsets`` holds each one's start there, then
    ``body_length`` (``int64``); ``seqs``, ``protocols``, ``optional`` as in ``CanonicalScan``."""

    body_length: int
    proven: bytes
    offsets: bytes
    seqs: bytes
    protocols: bytes
    optional: bytes
    #: Per journal (``uint8``): a proven one holds a field only the newest line writes.
    newest: bytes = b""


def scan_batch(buffer: bytearray | memoryview | np.ndarray, lengths: Sequence[int]) -> BatchScan | None:
    """Scan the journals ``buffer`` holds back to back (their ``lengths``) and move the lines of each proven one,
    newlines dropped, to the front of ``buffer``: the body of a ``records`` table made in place, with no copy of a
    journal kept. None when this build has no scanner. The lengths are copied before the scan (any alignment will
    do); a buffer another thread changes during the scan gives a meaningless answer for the journals it changed,
    but never a write beyond what the scan allocated."""
    if _canonical is None:
        return None
    return BatchScan(*_canonical.scan_batch(buffer, array("q", lengths).tobytes()))


def read_files_into(
    paths: Sequence[str], buffer: np.ndarray, byte_limit: int, record_limit: int, times: np.ndarray | None = None
) -> list[int | None] | None:
    """Plain journal files read one after another into ``buffer`` in C, without the GIL: each one's length, or None
    for one to read the usual way (not a regular file, looked at before opening and never through a link; not
    readable; past either bound, lines counted by newlines; changed while read; not fitting). ``times`` (``int64``,
    one per path) gets each file's modification time in nanoseconds, from the descriptor read. None when this
    build has no scanner."""
    if _canonical is None:
        return None
    encoded = tuple(os.fsencode(path) for path in paths)
    if times is None:
        found = _canonical.read_files_into(encoded, buffer, byte_limit, record_limit)
    else:
        found = _canonical.read_files_into(encoded, buffer, byte_limit, record_limit, times)
    return [None if length < 0 else length for length in array("q", found)]


def stat_files(paths: Sequence[str], *, readable: bool) -> list[int]:
    """Each path's size when it is a regular file, looked at without following a link (and, when ``readable``, one
    this process may read by ``os.access``), else -1. In C where it is built, in one call without the GIL: a Python
    ``lstat`` costs twice its system call in the objects it makes for one number."""
    if _canonical is not None:
        return array("q", _canonical.stat_files(tuple(os.fsencode(path) for path in paths), readable)).tolist()
    sizes = []
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            sizes.append(-1)
            continue
        plain = stat.S_ISREG(info.st_mode) and (not readable or os.access(path, os.R_OK))
        sizes.append(info.st_size if plain else -1)
    return sizes


def scan_journal(data: bytes) -> CanonicalScan | None:
    """The scan of ``data`` when every line of it is proven canonical (no blank line; the final newline may be
    missing); None when a line is not, or cannot be proven here, or the build has no scanner."""
    if _canonical is None:
        return None
    found = _canonical.scan_journal(data)
    return None if found is None else CanonicalScan(*found)


@contextmanager
def disabled() -> Iterator[None]:
    """The Python fast path alone while inside: what a build without the extension does. For the benchmarks and
    the tests that hold the two paths to one answer; not thread-safe (it swaps a module global)."""
    global _canonical
    saved, _canonical = _canonical, None
    try:
        yield
    finally:
        _canonical = saved


#: What ``line_proof`` answers.
NOT_PROVEN, PROVEN, PROVEN_NEWEST = 0, 1, 2


def line_proof(line: bytes) -> int:
    """``PROVEN`` when one record's bytes (a line without its newline, or a JetStream body) are proven canonical,
    ``PROVEN_NEWEST`` when they are and hold a field only the newest line writes (canonical for that generation
    alone), ``NOT_PROVEN`` otherwise, and when this build has no scanner."""
    if _canonical is None:
        return NOT_PROVEN
    proof: int = _canonical.proves_line(line)
    return proof


def proves_line(line: bytes) -> bool:
    """Whether one record's bytes are proven canonical for the newest line (``line_proof`` says which)."""
    return line_proof(line) != NOT_PROVEN


def json_array(journal: bytes) -> bytes:
    """A journal's lines (no blank one) as one JSON array, ``[line,line,...]``: one copy, no object per line."""
    if _canonical is None:
        return b"[" + journal.removesuffix(b"\n").replace(b"\n", b",") + b"]"
    array: bytes = _canonical.json_array(journal)
    return array


def join_lines(journals: Sequence[bytes]) -> bytes:
    """The journals' bytes one after another without their newlines: what the ``records`` table's ``body`` holds."""
    if _canonical is None:
        return b"".join(data.replace(b"\n", b"") for data in journals)
    joined: bytes = _canonical.join_lines(journals)
    return joined


__all__ = [
    "AVAILABLE",
    "OTHER_PROTOCOL",
    "PROTOCOL_IDS",
    "BatchScan",
    "CanonicalScan",
    "UnsupportedField",
    "active",
    "disabled",
    "join_lines",
    "json_array",
    "line_proof",
    "proves_line",
    "record_model",
    "scan_batch",
    "scan_journal",
]
