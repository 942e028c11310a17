"""A stored journal's bytes to its records, by the runtime backends' line rules. Pure: bytes in, no I/O.

The file backend (REAL-SYSTEM.md D, the ``read`` row; PROTOCOL.md 2) reads a journal as Go's
``readRecords`` does:

- split on ``\\n`` and drop one final empty element (a well-formed file ends in a newline);
- skip a line that is empty after ``bytes.TrimSpace`` (Unicode white space, not only ASCII), while
  still counting it in line numbers;
- a line that does not decode is a **torn tail** when it is the very last element (dropped: the only
  write a crash can tear on an append-only, fsynced file), and **interior corruption** otherwise; Go
  then refuses the whole journal with ``line N: <reason>`` of the first one. This reader goes on past a
  corrupt line, so a lenient caller still gets every record that decodes.

It also recognises what the Go backend leaves when it resumes after a torn tail without truncating it:
the torn bytes become an interior corrupt line, either on a line of their own or glued to the
resumer's first record (``resumed_after_torn_tail``).

JetStream bodies (``read_stream_bodies``) have neither blank lines nor a torn-tail rule: any body that
does not decode is corruption.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol, overload

import msgspec

from journaltools.errors import UndecodableLine
from journaltools.protocol import goreader, native
from journaltools.protocol.decode import decode_canonical_lines, decode_line, decode_proven_journal
from journaltools.protocol.generations import AUGUST, NEWEST, Generation, rules_for_version
from journaltools.protocol.kinds import Record
from journaltools.protocol.native import CanonicalScan

#: Go's ``bytes.TrimSpace`` ASCII set (which is also what ``bytes.strip`` strips by default).
_ASCII_SPACE: Final = b" \t\n\v\f\r"
_ASCII_SPACE_BYTES: Final = frozenset(_ASCII_SPACE)
#: ``unicode.IsSpace`` beyond ASCII. Python's ``str.isspace`` also counts U+001C-U+001F, which Go does not.
_UNICODE_SPACE: Final = frozenset(
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
#: Where a glued resume's complete record starts: the Go encoder always writes ``seq`` first.
_RECORD_START: Final = b'{"seq":'


class StoredRecord(msgspec.Struct, frozen=True, gc=False):
    """One decoded record as a store holds it; the backends return these (one object per record, made once).

    ``position``: the file line number (1-based, blank lines counted, as the runtime's error messages count
    them), the body's place among the bodies read, or (from a JetStream backend) the stream sequence.
    ``time``: the message's server time (UTC) for JetStream, the only per-record time that exists; None for
    files. ``noncanonical``: None for a line the Go encoder would have written byte for byte, else what
    differed."""

    record: Record
    #: The stored bytes, without a file line's ``\\n`` (a ``\\r`` of a CRLF file stays).
    raw: bytes
    position: int
    time: datetime | None = None
    noncanonical: str | None = None

    def __repr__(self) -> str:
        # A meta record's bytes may hold the conversation token, in any spelling the decoder accepts (escaped, under
        # a key matched case-insensitively, in a repeated key the record no longer shows): none of them is shown.
        raw = f"<meta record: {len(self.raw):,} bytes, not shown>" if self.record.meta is not None else repr(self.raw)
        return (
            f"StoredRecord(record={self.record!r}, raw={raw}, position={self.position!r}, time={self.time!r}, "
            f"noncanonical={self.noncanonical!r})"
        )


class ProvenRecords(Sequence[StoredRecord]):
    """The records of a journal the native scanner proved canonical, decoded only when first looked at.

    A load that only tables records (``fold=False``) reads ``data`` and ``scan`` and never decodes a record; a
    fold takes ``typed()``, every record decoded at once with no re-encoding (the proof is already made) and no
    line cut out; anything that looks at the stored records themselves gets them made then. Equal to the list
    of the same records."""

    __slots__ = ("_records", "_typed", "data", "scan")

    def __init__(self, data: bytes, scan: CanonicalScan) -> None:
        self.data = data
        self.scan = scan
        self._typed: list[Record] | None = None
        self._records: list[StoredRecord] | None = None

    def __len__(self) -> int:
        return self.scan.count

    @overload
    def __getitem__(self, index: int) -> StoredRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[StoredRecord]: ...
    def __getitem__(self, index: int | slice) -> StoredRecord | list[StoredRecord]:
        return self.decoded()[index]

    def __iter__(self) -> Iterator[StoredRecord]:
        return iter(self.decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProvenRecords | list):
            return self.decoded() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which do not hash either

    def __repr__(self) -> str:
        return f"ProvenRecords({self.scan.count} records, {len(self.data):,} bytes)"

    def typed(self) -> list[Record]:
        """The records alone (what a fold takes), without the stored records around them: no line is cut out."""
        if self._typed is None:
            self._typed = decode_proven_journal(self.data)
        return self._typed

    def decoded(self) -> list[StoredRecord]:
        if self._records is None:
            lines = self.data.split(b"\n")
            if not lines[-1]:
                lines.pop()
            self._records = [
                StoredRecord(record, line, number)
                for number, (record, line) in enumerate(zip(self.typed(), lines, strict=True), start=1)
            ]
        return self._records


class HoldsRecord(Protocol):
    """A stored record by its shape: whatever holds a decoded ``record``."""

    @property
    def record(self) -> Record: ...


def typed_records(records: Sequence[HoldsRecord]) -> list[Record]:
    """The records of ``records``, in order; for a proven journal they are decoded without the stored records
    around them being made."""
    if isinstance(records, ProvenRecords):
        return records.typed()
    return [stored.record for stored in records]


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line (or body) the Go decoder refuses."""

    line: int
    #: Go's error text for it.
    reason: str
    #: Its length in bytes.
    length: int

    @property
    def error(self) -> str:
        """As Go's file backend words it after ``corrupt record sequence: ``."""
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ResumedAfterTornTail:
    """A torn record the Go backend appended after instead of truncating (REAL-SYSTEM.md D)."""

    #: The line holding the torn bytes.
    line: int
    #: The seq of the record the resumer wrote after them (the torn record's own seq, reused).
    next_seq: int
    #: The resumer's record, decoded: the next line's, or the part of a glued line after the torn bytes.
    record: Record
    #: The resumer's record is on the torn line itself (the torn bytes had no newline).
    glued: bool
    #: The glued line is the journal's last: Go drops it as a torn tail, and the resumer's record with it.
    at_end: bool = False


@dataclass(frozen=True, slots=True)
class FileJournal:
    """What a file journal's bytes hold, by the Go file backend's rules."""

    records: Sequence[StoredRecord]
    #: The final line, dropped because it does not decode.
    torn_tail: BadLine | None
    #: Every interior line that does not decode, in line order. Non-empty: Go refuses the journal.
    corrupt: list[BadLine]
    resumed_after_torn_tail: list[ResumedAfterTornTail]
    #: The seq of the last decoded record (what a resuming Go writer continues from); 0 when none.
    last_seq: int
    #: Corrupt interior lines beyond the ``MAX_CORRUPT_KEPT`` kept in ``corrupt``.
    corrupt_more: int = 0

    def noncanonical_records(self) -> Iterator[StoredRecord]:
        """The records whose line is not what the Go encoder writes (none, and nothing decoded, for a proven one)."""
        if isinstance(self.records, ProvenRecords):
            return iter(())
        return (stored for stored in self.records if stored.noncanonical is not None)

    @property
    def readable(self) -> bool:
        """Whether Go's reader returns records for it (it may still fail to fold)."""
        return not self.corrupt

    @property
    def error(self) -> str | None:
        """Go's read error without its ``corrupt record sequence: `` prefix, or None when readable."""
        return self.corrupt[0].error if self.corrupt else None


_RECORDS: Final = msgspec.json.Decoder(list[Record])


def decode_records(lines: Sequence[bytes]) -> list[Record]:
    """Lines a scan proved canonical, each decoded into its record, in one decoder call."""
    return _RECORDS.decode(b"[" + b",".join(lines) + b"]")


def is_blank(line: bytes) -> bool:
    """Whether Go's ``bytes.TrimSpace`` leaves nothing of ``line``."""
    if line and line[0] < 0x80 and line[0] not in _ASCII_SPACE_BYTES:
        return False  # the common case: a record starts with "{"
    rest = line.strip(_ASCII_SPACE)
    if not rest:
        return True
    if rest[0] < 0x80:
        return False
    try:
        text = rest.decode("utf-8")
    except UnicodeDecodeError:
        return False  # an invalid byte is not white space, so it survives the trim
    return all(char in _UNICODE_SPACE for char in text)


#: Interior lines that do not decode kept per journal (each becomes a finding); past this many only the count grows,
#: so a journal of millions of garbage lines costs a few findings, not gigabytes of them.
MAX_CORRUPT_KEPT: Final = 100


def _lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """(index, line, is the final element) of ``data`` split on ``\n`` with one final empty element dropped, as Go
    splits it; one line at a time, so 64 MiB of newlines is never a list of 64 million lines."""
    if not data:
        return
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    start = index = 0
    while True:
        stop = data.find(b"\n", start, end)
        if stop < 0:
            yield index, data[start:end], True
            return
        yield index, data[start:stop], False
        start, index = stop + 1, index + 1


#: The shortest line the runtime writes is far longer; journals of shorter lines take the line-by-line path, which
#: never holds them as one list (64 MiB of two-byte lines would be 32 million objects at once).
_SHORTEST_RECORD: Final = 32


def journal_generation(first_line: bytes | None) -> Generation:
    """The generation whose rules read a journal, from its first record's line: the build that writes its
    ``meta.version`` (the newest line's for any other version, or when the line holds no meta record).

    The line is decoded by the newest rules first; a line they refuse (a malformed ``time`` the August decoder
    skips) is tried by the August rules, so an August journal is never judged by fields its build ignores."""
    if first_line is None:
        return NEWEST
    for rules in (NEWEST, AUGUST):
        try:
            record = decode_line(first_line, rules).record
        except UndecodableLine:
            continue
        return generation_of_first(record)
    return NEWEST


def generation_of_first(record: Record) -> Generation:
    """``journal_generation`` of a journal whose first line decodes to ``record``."""
    meta = record.meta if record.kind == "meta" else None
    return rules_for_version(meta.version if meta is not None else None)


def generation_of_proven(first_line: bytes | memoryview, decoded: Record | None) -> Generation:
    """``journal_generation`` of a journal the scanner proved, whose first line is ``first_line``: ``decoded`` that
    line already decoded (a proven line decodes alike by both builds' rules), None when it did not decode."""
    return generation_of_first(decoded) if decoded is not None else journal_generation(bytes(first_line))


def _first_line(data: bytes) -> bytes | None:
    for _, line, _ in _lines(data):
        if not is_blank(line):
            return line
    return None


def _whole_journal_fast_path(data: bytes) -> FileJournal | None:
    """The journal when it is exactly the runtime's bytes (every line canonical, no blank line), decoded with one
    call for all its lines; None for any other journal."""
    scan = native.scan_journal(data)
    if scan is not None and (not scan.newest or journal_generation(_first_line(data)).extended_records):
        return FileJournal(ProvenRecords(data, scan), None, [], [], scan.last_seq)
    if data[:1] != b"{" or b"\n\n" in data or len(data) < _SHORTEST_RECORD * data.count(b"\n"):
        return None
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    if not all(line[:1] == b"{" for line in lines):
        return None
    canonical = decode_canonical_lines(lines, journal_generation(lines[0]))
    if canonical is None:
        return None
    reads = [
        StoredRecord(record, line, number)
        for number, (record, line) in enumerate(zip(canonical, lines, strict=True), start=1)
    ]
    return FileJournal(reads, None, [], [], canonical[-1].seq)


def read_file_journal(data: bytes) -> FileJournal:
    """The records of a file journal, with its torn tail, corrupt lines and torn-tail resumes. At most
    ``MAX_CORRUPT_KEPT`` corrupt lines are kept; ``corrupt_more`` counts the rest."""
    canonical = _whole_journal_fast_path(data)
    if canonical is not None:
        return canonical
    generation = journal_generation(_first_line(data))
    records: list[StoredRecord] = []
    corrupt: list[BadLine] = []
    corrupt_more = 0
    torn_tail: BadLine | None = None
    resumed: list[ResumedAfterTornTail] = []
    last_seq = 0
    # An interior cut-off line waiting for the record after it: (its line number, the seq before it).
    cut_off: tuple[int, int] | None = None
    for index, line, is_final in _lines(data):
        if is_blank(line):
            continue
        number = index + 1
        if len(corrupt) >= MAX_CORRUPT_KEPT and not is_final and never_a_record(line):
            # Past the corrupt lines kept, such a line is only counted: no reason is needed for it, and decoding
            # it costs tens of microseconds (a journal of junk lines at the byte bound took over an hour).
            corrupt_more += 1
            cut_off = None
            continue
        try:
            decoded = decode_line(line, generation)
        except UndecodableLine as refused:
            bad = BadLine(number, refused.reason, len(line))
            if is_final:
                torn_tail = bad
            elif len(corrupt) < MAX_CORRUPT_KEPT:
                corrupt.append(bad)
            else:
                corrupt_more += 1
            cut_off = None
            glued = _glued_resume(line, last_seq, generation) if len(resumed) < MAX_CORRUPT_KEPT else None
            if glued is not None:
                resumed.append(ResumedAfterTornTail(number, glued.seq, glued, glued=True, at_end=is_final))
            elif not is_final and refused.reason == goreader.UNEXPECTED_END:
                cut_off = (number, last_seq)
            continue
        record = decoded.record
        if cut_off is not None:
            torn_line, seq_before = cut_off
            if record.seq == seq_before + 1:
                resumed.append(ResumedAfterTornTail(torn_line, record.seq, record, glued=False))
            cut_off = None
        records.append(StoredRecord(record, line, number, None, decoded.noncanonical))
        last_seq = record.seq
    return FileJournal(records, torn_tail, corrupt, resumed, last_seq, corrupt_more)


#: What a line Go decodes can start with: an object, or ``null`` (the zero record).
_RECORD_FIRST_BYTES: Final = (b"{", b"n")


def never_a_record(line: bytes) -> bool:
    """Whether Go's decoder refuses ``line`` whatever follows its first byte: only an object or ``null`` decodes
    into a record, and a torn record (which the torn-tail rules look for) starts with ``{`` too."""
    return line.lstrip(_ASCII_SPACE)[:1] not in _RECORD_FIRST_BYTES


def _glued_resume(line: bytes, seq_before: int, generation: Generation) -> Record | None:
    """The resumer's record when ``line`` is a cut-off record with a complete one glued after it."""
    start = line.find(_RECORD_START, 1)
    while start > 0:
        try:
            goreader.read_exact(line[:start], generation)
        except UndecodableLine as refused:
            if refused.reason == goreader.UNEXPECTED_END:
                try:
                    record = decode_line(line[start:], generation).record
                except UndecodableLine:
                    record = None
                if record is not None and record.seq == seq_before + 1:
                    return record
        start = line.find(_RECORD_START, start + 1)
    return None


def read_stream_bodies(bodies: Iterable[bytes]) -> list[StoredRecord | BadLine]:
    """JetStream message bodies, each decoded on its own; ``line`` is the 1-based position. A body that
    does not decode is corruption wherever it is (the JetStream backend has no torn-tail rule), and an
    empty body is not skipped."""
    out: list[StoredRecord | BadLine] = []
    generation: Generation | None = None
    for position, body in enumerate(bodies, start=1):
        if generation is None:
            generation = journal_generation(body)
        try:
            decoded = decode_line(body, generation)
        except UndecodableLine as refused:
            out.append(BadLine(position, refused.reason, len(body)))
            continue
        out.append(StoredRecord(decoded.record, body, position, None, decoded.noncanonical))
    return out


__all__ = [
    "BadLine",
    "FileJournal",
    "ProvenRecords",
    "ResumedAfterTornTail",
    "decode_records",
    "generation_of_first",
    "generation_of_proven",
    "is_blank",
    "journal_generation",
    "read_file_journal",
    "read_stream_bodies",
    "typed_records",
]
