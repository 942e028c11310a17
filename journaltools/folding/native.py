"""The native fold of clean canonical journals into table rows, and when a journal may take it.

A load spends most of its time folding and tabling journals record by record in Python. For a journal whose every
line is canonical (proven by the C scanner, ``ProvenRecords``, or found so record by record, as JetStream bodies are,
then joined one per line) and whose meta record is in order, the extension ``_native`` walks its bytes once,
folds them by the runtime's rules and appends its messages, tool_calls, responses and segments rows straight onto
the builder's column buffers (``columns.ColumnBuffer``: Arrow's layout, no Python object per value), answering what
the runs row needs (``NativeRun``). The Python fold (``journaltools.folding``) stays the reference: the extension
takes only journals the reference would fold without a finding, and gives every other one back untouched (None),
which the builder then folds in Python. A build without a C compiler folds every journal in Python, with the same
tables; the tests hold the two to one answer.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec

from journaltools.folding.facts import JournalGaps, degraded_finding
from journaltools.folding.fold import AfterTerminal
from journaltools.folding.phrases import ending_of_row, reopening_phrase, why_of
from journaltools.folding.schema import schema_problem
from journaltools.folding.warnings import run_id_mismatch, times_out_of_order, unanswered_call
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import Generation, generation_of_version
from journaltools.protocol.journal import ProvenRecords
from journaltools.protocol.kinds import KIND_TOKENS, KINDS, PROTOCOLS, TERMINAL_REASONS, Meta, Record
from journaltools.protocol.native import OTHER_PROTOCOL, PROTOCOL_IDS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from journaltools.folding.reads import RunReadLike, StoredRecordLike

try:
    from journaltools.folding import _native  # type: ignore[attr-defined]
except ImportError:  # a source tree used without building the extension: every journal folds in Python
    _native = None

#: Whether this build has the extension.
AVAILABLE: Final = _native is not None
#: Set to ``0`` to fold every journal in Python (the reference), e.g. to compare the two paths by hand.
NATIVE_ROWS_VARIABLE: Final = "JOURNALTOOLS_NATIVE_ROWS"

#: The columns the extension appends to, by table (messages, tool_calls, responses, segments), in its order: it
#: names them (``_native.COLUMNS``), and the builder hands it the buffers of the columns so named. None without it.
_NO_COLUMNS: Final[tuple[tuple[str, ...], ...]] = ((), (), (), ())
_COLUMNS: Final[tuple[tuple[str, ...], ...]] = _native.COLUMNS if _native is not None else _NO_COLUMNS
MESSAGE_COLUMNS, CALL_COLUMNS, RESPONSE_COLUMNS, SEGMENT_COLUMNS = _COLUMNS


class NativeRun(NamedTuple):
    """What the native walk of one journal answers for its runs row (times of columns in microseconds)."""

    messages: int
    calls: int
    records: int
    segments: int
    terminal_reason: str | None
    terminal_message: str | None
    reopened: bool
    ended: int | None
    turns: int
    context_tokens: int
    #: ``folding.state.COUNTER_NAMES`` order.
    counters: tuple[int, int, int, int, int, int, int, int, int]
    tool_calls_by_kind: list[tuple[str, int]]
    last_stop_reason: str | None
    next_iteration: int
    waiting_for: str | None
    pending_calls: int
    open_deferrals: int
    approvals: list[str]
    call_approvals: list[str]
    #: In journal order (the row sorts them).
    memory_keys: list[str]
    last_seq: int
    resumes: int
    stale_terminal: bool
    #: The last record's own time, and the last one Go does not call zero (``""`` when none).
    last_time: str
    last_dated_time: str
    undated: int
    ended_calls: int
    untimed_calls: int
    results: int
    kindless_results: int
    #: ``(seq, time, before_seq, before_time)`` for each record dated before the dated record before it.
    backsteps: list[tuple[int, str, int, str]]
    #: ``(turn_seq, call_id, tool, closed_by)`` for each call whose turn a later record closed unanswered.
    unanswered: list[tuple[int, str, str, int]]
    #: ``(terminal_seq, seq, kind, claimed_by)`` of the first record after the last terminal (``fold.AfterTerminal``).
    after_terminal: tuple[int, int, str, str | None] | None
    #: ``meta.created`` and the last record's own time in microseconds (None when not written), and the wall clock
    #: in nanoseconds (``facts.wall_clock_of``; None when it cannot be told): the run row's, as the columns hold them.
    created_us: int | None
    updated_us: int | None
    wall_clock: int | None

    def gaps(self) -> JournalGaps:
        return JournalGaps(
            records=self.records,
            undated=self.undated,
            ended_calls=self.ended_calls,
            untimed_calls=self.untimed_calls,
            results=self.results,
            kindless_results=self.kindless_results,
        )


#: The payload kinds the extension folds, in its order (each named as ``protocol.kinds.KINDS`` names it).
_WALKED_KINDS: Final[tuple[str, ...]] = _native.KINDS if _native is not None else KINDS
#: The int8 for a kind the record model holds and the walk does not fold (a newer generation's, until the walk learns
#: it): the walk gives its journal back.
_NOT_WALKED: Final = 254
#: A protocol id → its payload kind's number in the walk, matched by name (an id the runtime does not know is absent).
_KIND_OF_ID: Final = {
    protocol: _WALKED_KINDS.index(kind) if kind in _WALKED_KINDS else _NOT_WALKED
    for protocol, kind in PROTOCOLS.items()
}
#: A scan's protocol index → the same, as the int8 the extension reads (-1 for an id the runtime does not know),
#: for every index a scan can give.
_KIND_OF_PROTOCOL: Final = bytes(
    _KIND_OF_ID[PROTOCOL_IDS[index]] if index < len(PROTOCOL_IDS) else 255 for index in range(256)
)
_RECORD: Final = msgspec.json.Decoder(Record)
_disabled = False
if _native is not None:
    # The walk's rules name the runtime's terminal reasons and the provider kinds: the record model's, never its own.
    _native.configure(TERMINAL_REASONS, KIND_TOKENS)


def active() -> bool:
    """Whether journals may fold natively now: the extension is built and neither the environment
    (``JOURNALTOOLS_NATIVE_ROWS=0``) nor ``disabled`` sets it aside."""
    return _native is not None and not _disabled and os.environ.get(NATIVE_ROWS_VARIABLE, "1") != "0"


@contextmanager
def disabled() -> Iterator[None]:
    """Every journal folds in Python while inside: the reference, for the tests and benchmarks that compare the
    two; not thread-safe (it sets a module global)."""
    global _disabled
    saved, _disabled = _disabled, True
    try:
        yield
    finally:
        _disabled = saved


def extension_kinds() -> tuple[str, ...]:
    """The payload kinds the extension folds, in its order (each one of ``kinds.KINDS``, matched by name)."""
    assert _native is not None
    names: tuple[str, ...] = _native.KINDS
    return names


def usable_first(read: RunReadLike) -> Record | None:
    """The first record of a journal the native walk may take: a complete read with no finding, every line of it
    canonical (proven by the scanner, or each stored record found so: a JetStream body, a file read record by record),
    whose first line is a meta record the reference folds without a word but ``run_id_mismatch`` (a version a build
    writes, seq 1, a creation time, one payload). None for any other journal."""
    records = read.records
    if not records or not read.complete or read.findings:
        return None
    if isinstance(records, ProvenRecords):
        scan = records.scan
        end = int.from_bytes(scan.starts[8:16], sys.byteorder) if scan.count > 1 else len(records.data)
        return proven_first(decoded_line(records.data[:end]), scan.protocols[0], holds_newest=bool(scan.newest))
    if any(stored.noncanonical is not None for stored in records):
        # Canonical for the journal's own build: an August line holding a newest field is noncanonical.
        return None
    return _taken_first(records[0].record)


def decoded_line(line: bytes | memoryview) -> Record | None:
    """One proven line decoded alone, the meta record of its journal or any other (None when it does not decode as a
    record)."""
    try:
        return _RECORD.decode(line)
    except msgspec.DecodeError:
        return None


def proven_first(first: Record | None, protocol: int, *, holds_newest: bool) -> Record | None:
    """``usable_first`` of a journal the scanner proved: ``first`` its first line decoded (``decoded_line``),
    ``protocol`` that line's protocol index in the scan, ``holds_newest`` whether the journal holds a field only the
    newest line writes (never what the August build writes beside its meta record)."""
    if first is None or protocol == OTHER_PROTOCOL or PROTOCOLS[PROTOCOL_IDS[protocol]] != "meta":
        return None
    meta = first.meta
    if meta is None:
        return None
    generation = generation_of_version(meta.version)
    if generation is not None and not generation.extended_records and holds_newest:
        return None
    return _taken_first(first)


def _taken_first(first: Record) -> Record | None:
    """``first`` when it is a meta record the reference folds without a word but ``run_id_mismatch``."""
    meta = first.meta
    if meta is None or first.seq != 1 or schema_problem(first):
        return None
    return first if generation_of_version(meta.version) is not None else None


def warnings_of(run: str, meta: Meta, native: NativeRun, source: str = "") -> list[Finding]:
    """The warnings the native walk reports of a journal (``usable_first`` gave its ``meta``), worded, and in the
    order, of the reference's fold: the meta record's, then per record its time's, then the turn it closes; each
    with ``source`` (where the journal is)."""
    if not native.backsteps and not native.unanswered and meta.run_id == run:
        return []  # most journals: nothing to word (run_id_mismatch says nothing of a journal under its own name)
    found = [] if (renamed := run_id_mismatch(run, meta, 1, source)) is None else [renamed]  # usable_first: seq 1
    steps = [(step[0], 0, times_out_of_order(run, *step, source)) for step in native.backsteps]
    closes = [
        (closed_by, 1, unanswered_call(run, seq, call_id, tool, closed_by, source))
        for seq, call_id, tool, closed_by in native.unanswered
    ]
    if closes:  # both come in journal order: one merge, each record's time before the turn it closes
        found.extend(finding for _, _, finding in sorted([*steps, *closes], key=lambda item: item[:2]))
    else:
        found.extend(finding for _, _, finding in steps)
    return found


def status_of(native: NativeRun, generation: Generation) -> str:
    """The run's status (``fold.status_of``): the August build reads the last terminal, the newest line its
    ``Ending()``, none once reopened; ``open`` without one."""
    reopened = generation.reopens_after_terminal and native.reopened
    return (native.terminal_reason if not reopened else None) or "open"


def why_of_native(native: NativeRun, generation: Generation, status: str) -> str:
    """``phrases.why_of`` a run the walk took, from what it answered (``status``: ``status_of``)."""
    return _why(
        status,
        _reopening(native, generation.reopens_after_terminal),
        native.terminal_reason,
        native.terminal_message,
        native.stale_terminal,
        native.pending_calls,
        native.open_deferrals,
        native.waiting_for,
        native.last_stop_reason,
    )


@lru_cache(maxsize=4096)
def _why(
    status: str,
    reopening: str | None,
    terminal_reason: str | None,
    terminal_message: str | None,
    stale_terminal: bool,
    pending_calls: int,
    open_deferrals: int,
    waiting_for: str | None,
    last_stop_reason: str | None,
) -> str:
    # Runs end in few ways: most find their line worded already.
    row = {
        "status": status,
        "terminal_reason": terminal_reason,
        "terminal_message": terminal_message,
        "stale_terminal": stale_terminal,
        "pending_calls": pending_calls,
        "open_deferrals": open_deferrals,
        "waiting_for": waiting_for,
        "last_stop_reason": last_stop_reason,
    }
    return why_of(ending_of_row(row, reopening=reopening))


def _reopening(native: NativeRun, reopens: bool) -> str | None:
    """Who reopened a run the walk took, and where (``phrases.reopening_text`` of its fold)."""
    after = native.after_terminal
    if not (reopens and native.reopened and native.terminal_reason is not None and after is not None):
        return None
    return reopening_phrase(native.terminal_reason, AfterTerminal(*after))


def degraded_of(run: str, meta: Meta, native: NativeRun) -> Finding | None:
    """``facts.degraded_finding`` of a journal the walk took, without making its ``JournalGaps`` when it lacks none
    of what that finding names (a time on every record, ``meta.agent``, a provider kind on every result)."""
    if not native.undated and not native.kindless_results and meta.agent:
        return None
    return degraded_finding(run, meta, native.gaps())


def fold_rows(
    read: RunReadLike, meta: Meta, columns: Sequence[tuple[bytearray, bytearray, bytearray | None]]
) -> NativeRun | None:
    """Fold ``read`` (``usable_first`` gave its ``meta``) natively onto ``columns``: the buffers
    (``ColumnBuffer.native``) of the columns named by ``MESSAGE_COLUMNS``, ``CALL_COLUMNS``, ``RESPONSE_COLUMNS``
    and ``SEGMENT_COLUMNS``, in that order. None, with the buffers as they were, when the journal is not one the
    native walk takes."""
    records = read.records
    if isinstance(records, ProvenRecords):
        data, starts, kinds = records.data, records.scan.starts, kinds_of_protocols(records.scan.protocols)
    else:
        data, starts, kinds = _joined(records)
    return fold_lines(data, starts, kinds, meta, columns)


def fold_lines(
    data: bytes | memoryview,
    starts: bytes,
    kinds: bytes,
    meta: Meta,
    columns: Sequence[tuple[bytearray, bytearray, bytearray | None]],
) -> NativeRun | None:
    """``fold_rows`` of a journal's lines as the walk reads them: each line from its start in ``starts`` (int64,
    native order, offsets into ``data``) to the next one's, the last to the end of ``data``; ``kinds`` each one's
    payload kind (``kinds_of_protocols``). ``data`` may begin with other bytes, which no start points into."""
    assert _native is not None
    found = _native.fold_rows(data, starts, kinds, meta.prompt, tuple(columns))
    return None if found is None else NativeRun(*found)


def kinds_of_protocols(protocols: bytes) -> bytes:
    """A scan's protocol indexes as the payload kinds the walk reads."""
    return protocols.translate(_KIND_OF_PROTOCOL)


def _joined(records: Sequence[StoredRecordLike]) -> tuple[bytes, bytes, bytes]:
    """Canonical stored records as the walk reads a journal: their bytes one per line, each line's start (int64,
    native order) and each one's payload kind (int8, -1 for a protocol the runtime does not know)."""
    raws = [stored.raw for stored in records]
    starts = array("q", accumulate((len(raw) + 1 for raw in raws[:-1]), initial=0))
    kinds = bytes(_KIND_OF_ID.get(stored.record.protocol, 255) for stored in records)
    return b"\n".join(raws), starts.tobytes(), kinds


__all__ = [
    "AVAILABLE",
    "CALL_COLUMNS",
    "MESSAGE_COLUMNS",
    "NATIVE_ROWS_VARIABLE",
    "RESPONSE_COLUMNS",
    "SEGMENT_COLUMNS",
    "NativeRun",
    "active",
    "decoded_line",
    "degraded_of",
    "disabled",
    "extension_kinds",
    "fold_lines",
    "fold_rows",
    "kinds_of_protocols",
    "proven_first",
    "status_of",
    "usable_first",
    "warnings_of",
    "why_of_native",
]
