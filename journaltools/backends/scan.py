"""Reading a file journal's bytes as records: the torn-tail and corruption rules (PROTOCOL.md section 5).

A journal is append-only and every record is fsynced, so only its final line can be torn: an unparsable
final line is a torn tail (dropped, reported as a warning); an unparsable line with anything after it is
corruption. A corrupt journal is refused (never folded, never appended to), but reading it leniently
still returns every line that parses, with one ``corrupt_line`` finding per line that does not: nothing
a user pointed at disappears without a finding.

A line longer than ``max_line_bytes`` is never held whole: it is reported as ``line_too_long`` (the
journal is then refused like a corrupt one) and skipped while reading.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from journaltools._perf import paused_gc
from journaltools.backends.oserrors import mapped, open_regular
from journaltools.errors import CorruptJournal
from journaltools.protocol.findings import Finding
from journaltools.protocol.jsonline import parse_line
from journaltools.protocol.records import LineNotJson, RawRecord, decode_record

#: The default cap on one record's size: generous for any real record, small enough to never exhaust memory.
DEFAULT_MAX_LINE_BYTES: Final = 64 << 20
_READ_BLOCK: Final = 8 << 20


@dataclass(slots=True)
class ScannedJournal:
    """A journal's records and findings. ``clean_length`` is where a torn tail starts (or the size);
    ``needs_newline`` says the last record is whole but its newline is missing; ``corrupt`` is set when
    the journal is refused (the first corrupt or over-long line)."""

    records: list[RawRecord]
    findings: list[Finding]
    clean_length: int
    needs_newline: bool
    corrupt: CorruptJournal | None = None


class _Scanner:
    """Feeds on lines in order and applies the rules; an unparsable line waits to see whether one follows.

    ``where`` (the journal's path) is named in the messages; a finding's ``source`` is left empty for the
    reader's caller to fill with the source's URL, like every other finding."""

    def __init__(self, run: str, where: str) -> None:
        self.run = run
        self.where = where
        self.records: list[RawRecord] = []
        self.findings: list[Finding] = []
        self.corrupt: CorruptJournal | None = None
        self._unparsable: tuple[int, int, int, str] | None = None  # number, offset, length, why
        self.clean_length = 0

    def _refuse(self, number: int, why: str, code: str) -> None:
        error = CorruptJournal(self.run, number, why, self.where)
        if self.corrupt is None:
            self.corrupt = error
        self.findings.append(Finding.of(self.run, None, code, str(error)))

    def _settle(self) -> None:
        """Something follows the waiting unparsable line: it was corruption, not a torn tail."""
        if self._unparsable is not None:
            number, _, _, why = self._unparsable
            self._unparsable = None
            self._refuse(number, f"line does not parse: {why}", "corrupt_line")

    def line(self, raw: bytes, number: int, offset: int) -> None:
        self._settle()
        try:
            self.records.append(decode_record(raw, number))
        except LineNotJson as exc:
            self._unparsable = (number, offset, len(raw), str(exc))
            return
        self.clean_length = offset + len(raw) + 1

    def too_long(self, length: int, number: int, offset: int, limit: int) -> None:
        self._settle()
        self._refuse(number, f"line of {length:,} bytes exceeds the {limit:,}-byte limit; not read", "line_too_long")
        self.clean_length = offset + length + 1

    def damaged(self, number: int, why: str) -> None:
        """The compressed data breaks off before line ``number``: what came before stands, the journal is refused.

        A waiting unparsable line was cut by the damage, so it is part of it, not a torn tail.
        """
        self._unparsable = None
        self._refuse(number, f"compressed data is damaged: {why}", "corrupt_line")

    def finish(self, size: int, terminated: bool) -> ScannedJournal:
        needs_newline = False
        if self._unparsable is not None:
            number, offset, length, why = self._unparsable
            place = f" of {self.where}" if self.where else ""
            self.findings.append(
                Finding.of(
                    self.run,
                    None,
                    "torn_tail",
                    f"final line {number} ({length:,} bytes){place} does not parse and was dropped: {why}",
                )
            )
            self.clean_length = offset
        else:
            self.clean_length = min(self.clean_length, size)
            needs_newline = bool(self.records) and not terminated and self.clean_length == size
        return ScannedJournal(self.records, self.findings, self.clean_length, needs_newline, self.corrupt)


def scan_lines(lines: Sequence[bytes], run: str, where: str = "") -> ScannedJournal:
    """Records of a journal's newline-free lines, in order (the last one is its final line).

    The loaders' path: every line is parsed in one tight loop; the first line that does not parse hands
    the rest to the rule-keeping scanner.
    """
    records: list[RawRecord] = []
    append = records.append
    index = 0
    with paused_gc():
        try:
            for index, raw in enumerate(lines):
                body, duplicate = parse_line(raw)
                append(RawRecord(raw, body, index + 1, duplicate))
        except LineNotJson:
            scanner = _Scanner(run, where)
            scanner.records = records
            offset = sum(len(raw) + 1 for raw in lines[:index])
            for number, raw in enumerate(lines[index:], index + 1):
                scanner.line(raw, number, offset)
                offset += len(raw) + 1
            return scanner.finish(offset, terminated=True)
    size = sum(map(len, lines)) + len(lines)
    return ScannedJournal(records, [], size, False)


def scan_journal(data: bytes, run: str, where: str = "", max_line_bytes: int | None = None) -> ScannedJournal:
    """Split a journal's bytes into records. Never raises: corruption comes back in ``corrupt``."""
    scanner = _Scanner(run, where)
    lines = data.split(b"\n")
    terminated = lines[-1] == b""
    if terminated:
        lines.pop()
    offset = 0
    with paused_gc():
        for number, raw in enumerate(lines, 1):
            if max_line_bytes is not None and len(raw) > max_line_bytes:
                scanner.too_long(len(raw), number, offset, max_line_bytes)
            else:
                scanner.line(raw, number, offset)
            offset += len(raw) + 1
    return scanner.finish(len(data), terminated)


#: Compressed journals, read-only: the suffix after ``.jsonl`` and how to open its decompressed stream.
COMPRESSED_SUFFIXES: Final = (".gz", ".zst")


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return os.fsdecode(path).endswith(COMPRESSED_SUFFIXES)


def open_journal_file(path: str | os.PathLike[str]) -> io.FileIO:
    """``path`` opened for reading, never blocking: a regular file, not a symbolic link (``open_regular``).

    Every reader of a journal file opens it through here, so a FIFO, socket, device or directory named like a
    journal is reported (``NotAJournalFile``) rather than read or waited on, and a link never leads a read
    out of its source.
    """
    fd = open_regular(path, os.O_RDONLY, "read the journal")
    return io.FileIO(fd, "rb", closefd=True)


def read_journal(
    path: str | os.PathLike[str], run: str, max_line_bytes: int, size: int | None = None
) -> ScannedJournal:
    """Read and scan a journal file, never holding a line longer than ``max_line_bytes``.

    ``size``: read only this many bytes (what the journal held when it was listed). A journal no larger
    than the limit is read in one piece; a larger one block by block. A ``.jsonl.gz`` or ``.jsonl.zst``
    journal is decompressed as it is read (``size`` is then ignored); damaged compressed data refuses the
    journal like a corrupt line, after the records before it. Operating-system failures raise
    ``StorageError`` (``NotAJournalFile`` for a path that is not a regular file).
    """
    where = os.fsdecode(path)
    with open_journal_file(path) as handle, mapped(path, "read the journal"):
        if is_compressed(where):
            return _scan_compressed(handle, run, where, max_line_bytes)
        total = os.fstat(handle.fileno()).st_size if size is None else size
        if total <= max_line_bytes:
            return scan_journal(_read_exactly(handle, total), run, where)
        return _scan_blocks(handle.read, total, run, where, max_line_bytes)


class _Damaged(Exception):
    """Compressed data that does not decompress (its cause says why)."""


def _scan_compressed(handle: io.FileIO, run: str, where: str, limit: int) -> ScannedJournal:
    if where.endswith(".gz"):
        import gzip
        import zlib

        stream: Any = gzip.GzipFile(fileobj=handle, mode="rb")
        damaged: tuple[type[BaseException], ...] = (gzip.BadGzipFile, EOFError, zlib.error)
    else:
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True, closefd=False)
        damaged = (zstandard.ZstdError,)

    def read(size: int) -> bytes:
        try:
            data: bytes = stream.read(size)
        except damaged as exc:
            raise _Damaged(str(exc) or type(exc).__name__) from exc
        return data

    try:
        return _scan_blocks(read, None, run, where, limit)
    finally:
        stream.close()


def _read_exactly(handle: io.FileIO, size: int) -> bytes:
    """``size`` bytes from the current position (fewer if the file is shorter)."""
    chunks = []
    left = size
    while left > 0:
        chunk = handle.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _scan_blocks(
    read: Callable[[int], bytes | None], total: int | None, run: str, where: str, limit: int
) -> ScannedJournal:
    """Scan ``total`` bytes (None: until the end) block by block; a line over ``limit`` is skipped unheld."""
    scanner = _Scanner(run, where)
    carry = bytearray()
    skipping = 0  # bytes of an over-long line seen so far (0: not inside one)
    number = 0
    offset = 0  # where the current line starts
    consumed = 0
    with paused_gc():
        while total is None or consumed < total:
            try:
                block = read(_READ_BLOCK if total is None else min(_READ_BLOCK, total - consumed))
            except _Damaged as exc:
                scanner.damaged(number + 1, str(exc))
                return scanner.finish(consumed, terminated=True)
            if not block:
                break
            consumed += len(block)
            start = 0
            while True:
                end = block.find(b"\n", start)
                if end < 0:
                    piece = len(block) - start
                    if skipping or len(carry) + piece > limit:
                        skipping = (skipping or len(carry)) + piece
                        carry.clear()
                    else:
                        carry += block[start:]
                    break
                number += 1
                if skipping or len(carry) + end - start > limit:
                    length = (skipping or len(carry)) + end - start
                    scanner.too_long(length, number, offset, limit)
                    skipping = 0
                else:
                    raw = bytes(carry) + block[start:end] if carry else block[start:end]
                    scanner.line(raw, number, offset)
                    length = len(raw)
                carry.clear()
                offset += length + 1
                start = end + 1
    if skipping:
        scanner.too_long(skipping, number + 1, offset, limit)
        return scanner.finish(consumed, terminated=False)
    if carry:
        scanner.line(bytes(carry), number + 1, offset)
    return scanner.finish(consumed, terminated=not carry)
