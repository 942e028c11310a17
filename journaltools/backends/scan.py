"""A file journal's bytes as a ``RunRead``: reading the file safely, and what the runtime's line rule found.

The runtime's file backend reads a journal whole, splits it on ``\\n``, drops one final empty element, skips
lines that are blank after trimming whitespace, and decodes each other line; a line that does not decode is a
torn tail when it is the file's last element (dropped) and corruption anywhere else (``file.go:384-416``). The
rule itself lives only in ``journaltools.protocol.journal`` (``read_file_journal``); this module reads the bytes
(plain or compressed, never following a link or waiting on a FIFO) and turns the reader's verdict into the
findings and the ``RunRead`` (``run_read``, the one place they are worded), plus what journaltools' own writer
needs to repair a torn tail before it appends.
"""

from __future__ import annotations

import io
import os
from datetime import datetime
from typing import Final

from journaltools.backends.base import RunRead, StoredRecord
from journaltools.backends.oserrors import mapped, open_regular
from journaltools.errors import CorruptJournal
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import FileJournal

JOURNAL_SUFFIX: Final = ".json"
LOCK_SUFFIX: Final = ".lock"
#: Compressed journals, read-only: the suffix after ``.json``.
COMPRESSED_SUFFIXES: Final = (".gz", ".zst")
#: Every journal name: plain first (it wins when a run has both), then the read-only compressed ones.
JOURNAL_SUFFIXES: Final = (JOURNAL_SUFFIX, *(JOURNAL_SUFFIX + suffix for suffix in COMPRESSED_SUFFIXES))


def journal_name_parts(name: str) -> tuple[str, str] | None:
    """``"r1.json.gz"`` → ``("r1", ".json.gz")``; None for a name that is not a journal's."""
    for suffix in sorted(JOURNAL_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix
    return None


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return os.fsdecode(path).endswith(COMPRESSED_SUFFIXES)


class DamagedCompression(Exception):
    """Compressed data that does not decompress (the message says why)."""


def open_journal_file(path: str | os.PathLike[str]) -> io.FileIO:
    """``path`` opened for reading without blocking: a regular file, never a link, FIFO or device
    (``NotAJournalFile``), so a hostile directory can neither send a read outside it nor hang it."""
    return io.FileIO(open_regular(path, os.O_RDONLY, "read the journal"), "rb", closefd=True)


def read_journal_bytes(path: str | os.PathLike[str]) -> bytes:
    """The journal's bytes, decompressed for ``.json.gz`` / ``.json.zst``; ``DamagedCompression`` when the
    compressed data breaks off. Operating-system failures raise ``StorageError``."""
    where = os.fsdecode(path)
    with open_journal_file(path) as handle, mapped(path, "read the journal"):
        data = handle.readall()
    if where.endswith(".gz"):
        import gzip
        import zlib

        try:
            return gzip.decompress(data)
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise DamagedCompression(str(exc) or type(exc).__name__) from None
    if where.endswith(".zst"):
        import zstandard

        try:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as stream:
                return stream.read()
        except zstandard.ZstdError as exc:
            raise DamagedCompression(str(exc) or type(exc).__name__) from None
    return data


def torn_tail_offset(data: bytes, journal: FileJournal) -> int | None:
    """Where the torn tail starts in ``data``, so journaltools' own writer can cut it off before appending;
    None when there is none. The reader gives the torn line's length, not its offset: the torn line is the last
    element of the split, so it ends where the data does, less the one final newline the split drops."""
    torn = journal.torn_tail
    if torn is None:
        return None
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    return end - torn.length


def needs_newline(data: bytes, journal: FileJournal) -> bool:
    """The last line is whole but its ``\\n`` never made it: a writer must finish that line before appending,
    or its first record would be glued onto it."""
    return bool(data) and not data.endswith(b"\n") and journal.torn_tail is None


def stored_records(journal: FileJournal) -> list[StoredRecord]:
    """The decoded lines as the backend contract holds them (position: the line number; files have no time)."""
    return journal.records


def run_read(
    run: str, journal: FileJournal, *, source: str, where: str, strict: bool, updated: datetime | None
) -> RunRead:
    """The ``RunRead`` of one file journal, with every finding the line rule's verdict implies (the one place
    they are worded); strict raises ``CorruptJournal`` for a journal the runtime refuses."""
    findings: list[Finding] = []
    for read in journal.records:
        if read.noncanonical is not None:
            message = f"line {read.position} is not what the Go encoder writes: {read.noncanonical}"
            findings.append(Finding.of(run, read.record.seq, "noncanonical_line", message, source))
    resumed = {resume.line: resume for resume in journal.resumed_after_torn_tail}
    errors: list[CorruptJournal] = []
    for bad in journal.corrupt:
        resume = resumed.get(bad.line)
        if resume is not None:
            where_next = "on the same line" if resume.glued else "on the next line"
            why = (
                f"an earlier writer's torn record with seq {resume.next_seq} written again {where_next} "
                f"(the runtime resumes without cutting a torn tail): {bad.reason}"
            )
            error = CorruptJournal(run, bad.line, why, where)
            findings.append(Finding.of(run, resume.next_seq, "resumed_after_torn_tail", str(error), source))
        else:
            error = CorruptJournal(run, bad.line, f"line does not decode: {bad.reason}", where)
            findings.append(Finding.of(run, None, "corrupt_line", str(error), source))
        errors.append(error)
    if errors and strict:
        raise errors[0]
    torn = journal.torn_tail
    if torn is not None:
        message = (
            f"final line {torn.line} ({torn.length:,} bytes) of {where} does not decode and was dropped: {torn.reason}"
        )
        findings.append(Finding.of(run, None, "torn_tail", message, source))
        resume = resumed.get(torn.line)
        if resume is not None:
            # The runtime still reads this journal (the glued line is its torn tail), but the resumer's whole
            # record went down with the torn bytes: the journal lost a record someone was told was stored.
            message = (
                f"final line {torn.line} of {where} holds an earlier writer's torn record with the record seq "
                f"{resume.next_seq} glued after it (the runtime resumes without cutting a torn tail); "
                "the runtime drops both"
            )
            findings.append(Finding.of(run, resume.next_seq, "resumed_after_torn_tail", message, source))
    return RunRead(run, stored_records(journal), findings, source, not errors, updated, journal.last_seq)


def damaged_read(run: str, why: str, *, source: str, where: str, strict: bool, updated: datetime | None) -> RunRead:
    """A compressed journal whose data breaks off: refused like a corrupt one, nothing of it folded."""
    error = CorruptJournal(run, 0, f"compressed data is damaged: {why}", where)
    if strict:
        raise error
    return RunRead(run, [], [Finding.of(run, None, "corrupt_line", str(error), source)], source, False, updated, 0)
