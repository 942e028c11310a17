"""The file rule over a directory of journals, batch by batch: what ``journaltools ls`` lists of a local source.

Each journal of the listing is read and folded (the runtime's file rule, ``listing.summarize_file``). Where the
journals are local plain files and the native walk is built, they are read a batch at a time into one buffer and
proven there (``sources.in_place``), and each journal the walk takes is folded natively, its row made from what the
walk answers and from its first, last and last terminal records, decoded alone (``summarize_file_natively``). Any
other journal (one the walk gives back, one not proven, a compressed one) is read and folded in Python, its row in
its place. Both rows are the same: the tests hold the two ways to one answer on both generations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Final, Protocol

from journaltools.folding import native as native_fold
from journaltools.protocol.kinds import Record, protocol_of
from journaltools.protocol.native import PROTOCOL_IDS
from journaltools.sources.base import LocalJournal, RunRead, is_vanished
from journaltools.sources.in_place import (
    BATCH_BYTES,
    BATCH_JOURNALS,
    InPlace,
    Proven,
    batched,
    in_place_available,
    read_ahead,
)
from journaltools.sources.listing import RunSummary, kind_label, summarize_file, summarize_file_natively
from journaltools.sources.scan import updated_at


class LocalSource(Protocol):
    """What the listing asks of a source of local journal files (``sources.file``)."""

    @property
    def url(self) -> str: ...

    def local_journals(self, runs: Sequence[str]) -> list[LocalJournal] | None: ...

    def read_listed(self, run: str, path: str | None = None) -> RunRead: ...


#: A terminal record among a journal's payload kinds, as the walk numbers them (``native_fold.kinds_of_protocols``).
_TERMINAL: Final = native_fold.kinds_of_protocols(bytes([PROTOCOL_IDS.index(protocol_of("terminal"))]))


def file_summaries(source: LocalSource, runs: Sequence[str]) -> Iterator[RunSummary]:
    """The file rule's row of each of ``runs`` in order; a journal gone since it was listed is left out, and its
    ``vanished`` finding kept by the source (``vanished_findings``). What is held at once is two batches' journals
    (the next one is read ahead, ``in_place.read_ahead``) and one batch's rows, however many runs the source lists."""
    with contextlib.closing(read_ahead(_parts(source, runs), _read_part, ahead=in_place_available())) as parts:
        for (chunk, batch), read in parts:
            if batch is not None and read is not None:
                yield from _batch_summaries(source, read)
                continue
            for run in chunk:
                summary = _read_and_summarized(source, run, None)
                if summary is not None:
                    yield summary


def _parts(source: LocalSource, runs: Sequence[str]) -> Iterator[tuple[Sequence[str], Sequence[LocalJournal] | None]]:
    """``runs`` a part at a time: a batch of local plain journals to read in place, or a chunk of runs (with no
    batch) to read the usual way."""
    in_place = in_place_available()
    for start in range(0, len(runs), BATCH_JOURNALS):
        chunk = runs[start : start + BATCH_JOURNALS]
        journals = source.local_journals(chunk) if in_place else None
        if journals is None:
            yield chunk, None
            continue
        for batch in batched(journals, BATCH_BYTES, BATCH_JOURNALS):
            yield chunk, batch


def _read_part(part: tuple[Sequence[str], Sequence[LocalJournal] | None]) -> InPlace | None:
    batch = part[1]
    if batch is None:
        return None
    return InPlace.read([(journal.run, journal.path) for journal in batch], sum(j.size for j in batch))


def _batch_summaries(source: LocalSource, read: InPlace) -> Iterator[RunSummary]:
    for journal in read.journals():
        if isinstance(journal, Proven):
            yield _natively(journal) or _summarized(journal.read(source.url))
        else:
            summary = _read_and_summarized(source, journal.run, journal.path)
            if summary is not None:
                yield summary


def _natively(journal: Proven) -> RunSummary | None:
    """The row of a proven journal the native walk takes, None when it gives the journal back."""
    first = journal.usable
    if first is None or first.meta is None:
        return None
    native = native_fold.fold_lines(journal.data, journal.starts, journal.kinds, first.meta, ())
    last_raw = bytes(journal.line(journal.lines - 1))
    last = native_fold.decoded_line(last_raw)
    if native is None or last is None:
        return None
    terminal = journal.kinds.rfind(_TERMINAL)
    after = None if terminal < 0 else tuple(_label(journal, line) for line in range(terminal + 1, journal.lines))

    def ending_terminal() -> Record | None:
        return native_fold.decoded_line(journal.line(terminal))

    return summarize_file_natively(
        journal.run,
        first,
        last,
        last_raw,
        journal.lines,
        after,
        updated_at(journal.modified_ns),
        native,
        ending_terminal,
    )


def _label(journal: Proven, line: int) -> str:
    """What the listing calls line ``line``'s record, by the protocol the scan matched: decoding it cost more than
    the row's every other field, as a proven journal often ends with records after its terminal one."""
    protocol = journal.protocol(line)
    if protocol is None:  # an id the scan does not know: the line holds it
        record = native_fold.decoded_line(journal.line(line))
        assert record is not None  # every line of a proven journal decodes
        protocol = record.protocol
    return kind_label(protocol)


def _read_and_summarized(backend: LocalSource, run: str, path: str | None) -> RunSummary | None:
    read = backend.read_listed(run, path)
    return None if is_vanished(read) else _summarized(read)


def _summarized(read: RunRead) -> RunSummary:
    return summarize_file(read.run, read.records, updated=read.updated, complete=read.complete, findings=read.findings)


__all__ = ["file_summaries"]
