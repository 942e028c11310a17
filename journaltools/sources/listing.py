"""The runtime's two listing rules, as pure functions over typed records (PROTOCOL 6), for both generations.

- **File rule** (fisk-ai's file backend): fold every journal. The August build's status is the last terminal's
  reason, or ``open``, and its row is dated by the file's modification time. The newest line's status is the
  fold's ``Ending()`` (``open`` again when anything follows the last terminal), its ``ended`` and summary come
  from that terminal, and its row is dated by the last record's own time (the modification time only when that
  record is undated). The runtime drops a journal its fold refuses; journaltools lists it as ``invalid`` and
  says why.
- **JetStream rule** (fisk-ai's JetStream backend): read two records only, the ``_meta`` subject's and the
  last message of the run; the status is that last record's terminal reason when it carries a terminal
  payload (its protocol is not looked at), else ``open``. The newest line also dates the row by that record's
  own time when it has one, and takes ``ended`` and the summary from it when it is a terminal. A meta record
  that does not decode, is not meta or has a version neither build writes makes the runtime skip the run;
  journaltools lists it as ``invalid`` (and lists each generation by its own build's rule).

So the same records of an August journal can list differently, always in one direction: the file rule names the
last terminal's reason while the JetStream rule says ``open`` whenever a record follows that terminal. A newest
journal lists alike on both backends, since ``Ending()`` is exactly "the last record is a terminal". When the
record after an August terminal starts a new turn (a user or assistant record: the conversation's next turn is in
flight) it is the case the runtime's documentation names; any other trailing record (``memory_revisions`` after
every run that read memory, a claim, a decision...) is the two-record rule at work. ``journaltools.audits.listings``
tells them apart with what each row carries beyond the ``ls`` columns.

Rows are built from duck-typed reads (anything with ``record``, ``raw`` and ``time``), so this module knows
nothing of the backends that produce them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from journaltools.errors import InvalidPage
from journaltools.folding.native import NativeRun, status_of, warnings_of, why_of_native
from journaltools.folding.phrases import why_stopped
from journaltools.folding.run import fold_run
from journaltools.goencoding.json import go_quoted
from journaltools.goencoding.time import go_time, parse_go_time
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import Generation, generation_of_version, unsupported_version
from journaltools.protocol.kinds import PROTOCOLS, ZERO_TIME, Record, Summary

Rule = Literal["file", "jetstream"]
#: Kinds that start a turn: after a terminal, they mean the conversation's next turn is in flight.
TURN_KINDS = frozenset({"user", "assistant"})


class StoredLike(Protocol):
    """One stored record as a backend returns it (``sources.base.StoredRecord``)."""

    @property
    def record(self) -> Record: ...

    @property
    def raw(self) -> bytes: ...

    @property
    def time(self) -> datetime | None: ...


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One row of a listing (``ls --json`` shows the first eight fields)."""

    run: str
    status: str
    created: str | None
    updated: datetime | None
    model: str | None
    prompt: str | None
    last_seq: int
    #: None where the rule does not count records (JetStream reads two).
    records: int | None
    rule: Rule
    #: ``meta.run_id``, which the runtime's listings report and no reader compares with the store's id.
    meta_run_id: str | None = None
    #: The kind of the last record (its protocol id when unknown), and a digest of its bytes.
    last_kind: str | None = None
    last_sha256: str | None = None
    #: File rule only: the kinds of the records after the last terminal (None when unknown or no terminal).
    after_terminal: tuple[str, ...] | None = None
    #: Why the row is ``invalid``, in one line.
    problem: str | None = None
    findings: tuple[Finding, ...] = ()
    #: ``newest`` or ``august``: whose rule listed the row (None when the meta record gives no known version).
    generation: str | None = None
    agent: str | None = None
    caller: str | None = None
    #: When the ending terminal was journaled, as Go writes the time (None when open or undated).
    ended: str | None = None
    #: The ending terminal's summary (newest line only).
    summary: Summary | None = None
    #: ``updated`` to the nanosecond, as Go writes it, when it is a record's own time.
    updated_text: str | None = None
    #: JetStream rule, when the meta message is the run's last message although others exist: how many records
    #: the stream holds for the run and the highest seq among them.
    held_out_of_order: tuple[int, int] | None = None
    #: JetStream rule: the stream sequence of the run's meta message (what the runtime's pages go by).
    meta_position: int | None = None
    #: Why the run stopped or what it waits for, in one line (``ls`` shows it); None where the rule cannot say.
    why: str | None = None

    @property
    def updated_from(self) -> str | None:
        """What ``updated`` is: a record's own time (``record``, the newest line dates each), else the store's: the
        file's modification time (``file``: a copy of a directory moves it) or the last message's time (``message``)."""
        if self.updated_text:
            return "record"
        if self.updated is None:
            return None
        return "file" if self.rule == "file" else "message"

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "status": self.status,
            "created": self.created,
            "updated": self.updated_text or _iso(self.updated),
            "updated_from": self.updated_from,
            "model": self.model,
            "prompt": self.prompt,
            "last_seq": self.last_seq,
            "records": self.records,
            "agent": self.agent,
            "caller": self.caller,
            "ended": self.ended,
            "generation": self.generation,
            "run_id": self.meta_run_id,
        }


def _record_time(record: Record | None) -> tuple[datetime | None, str] | None:
    """A dated record's time, as an instant (microseconds; None outside what a datetime holds, years 1 to 9999 in
    UTC, which Go reads) and as Go's text."""
    if record is None or not record.time:
        return None
    return go_time(record.time), record.time


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None


def _sha256(raw: bytes | None) -> str | None:
    return hashlib.sha256(raw).hexdigest() if raw is not None else None


def _kind_label(record: Record) -> str:
    return kind_label(record.protocol)


def kind_label(protocol: str) -> str:
    """What a listing calls a record by its protocol id: its payload kind, or the id itself when unknown."""
    return PROTOCOLS.get(protocol) or protocol


def _first_problem(findings: Sequence[Finding]) -> str | None:
    first = next((finding for finding in findings if finding.severity == "error"), None)
    if first is None:
        return None
    where = f"seq {first.seq}: " if first.seq is not None else ""
    return f"{where}{first.code}: {first.message}"


def summarize_file(
    run: str,
    stored: Sequence[StoredLike],
    *,
    updated: datetime | None,
    complete: bool = True,
    findings: Sequence[Finding] = (),
) -> RunSummary:
    """The file rule's row. ``complete`` is False for a journal the reader refused (a corrupt line):
    it is not folded, and ``findings`` (the reader's) say why."""
    records = [item.record for item in stored]
    last = stored[-1] if stored else None
    common, generation = _file_common(
        run,
        records[0] if records else None,
        last.record if last is not None else None,
        last.raw if last is not None else None,
        len(records),
        updated,
    )
    if not complete:
        problem = _first_problem(findings) or "the journal was refused: a line does not decode"
        return RunSummary(status="invalid", problem=problem, findings=tuple(findings), why=problem, **common)
    folded = fold_run(_Read(run, stored, findings, complete))
    result = folded.result
    every = tuple(folded.findings)
    state = result.state
    ending = state.ending() if state is not None and (generation is None or generation.reopens_after_terminal) else None
    return RunSummary(
        status=folded.status,
        ended=state.ended if state is not None and ending is not None and state.ended != ZERO_TIME else None,
        summary=ending.summary if ending is not None else None,
        after_terminal=_after_last_terminal(records),
        problem=_first_problem(every) if folded.status == "invalid" else None,
        findings=tuple(every),
        why=why_stopped(result),
        **common,
    )


def summarize_file_natively(
    run: str,
    first: Record,
    last: Record,
    last_raw: bytes,
    records: int,
    after_terminal: tuple[str, ...] | None,
    updated: datetime | None,
    native: NativeRun,
    ending_terminal: Callable[[], Record | None],
) -> RunSummary:
    """``summarize_file`` of a journal the native walk took (``folding.native``): ``first`` its meta record, ``last``
    and ``last_raw`` its last record and line, ``records`` how many it holds, ``after_terminal`` the kind labels
    (``kind_label``) of the records after its last terminal, ``native`` what the walk answered, ``ending_terminal``
    its last terminal record, decoded only when the row needs it (the newest line's ending). The same row as the
    fold's, the walk's warnings its only findings."""
    common, generation = _file_common(run, first, last, last_raw, records, updated)
    assert first.meta is not None and generation is not None  # the walk takes only such journals
    status = status_of(native, generation)
    ending = (
        ending_terminal()
        if generation.reopens_after_terminal and native.terminal_reason is not None and not native.reopened
        else None
    )
    ended = ending.time if ending is not None and ending.time and ending.time != ZERO_TIME else None
    return RunSummary(
        status=status,
        ended=ended,
        summary=ending.terminal.summary if ending is not None and ending.terminal is not None else None,
        after_terminal=after_terminal,
        findings=tuple(warnings_of(run, first.meta, native)),
        why=why_of_native(native, generation, status),
        **common,
    )


def _file_common(
    run: str, first: Record | None, last: Record | None, last_raw: bytes | None, records: int, updated: datetime | None
) -> tuple[dict[str, Any], Generation | None]:
    """The file rule's row but what the fold decides, from the journal's first and last records, and its
    generation."""
    meta = first.meta if first is not None and first.kind == "meta" else None
    generation = generation_of_version(meta.version) if meta is not None else None
    dated = _record_time(last) if generation is None or generation.dates_records else None
    common: dict[str, Any] = {
        "run": run,
        "created": meta.created if meta is not None else None,
        "updated": dated[0] if dated is not None else updated,
        "updated_text": dated[1] if dated is not None else None,
        "generation": generation.name if generation is not None else None,
        "agent": meta.agent if meta is not None else None,
        "caller": meta.caller if meta is not None else None,
        "model": meta.fingerprint.model if meta is not None else None,
        "prompt": meta.prompt if meta is not None else None,
        "last_seq": last.seq if last is not None else 0,
        "records": records,
        "rule": "file",
        "meta_run_id": meta.run_id if meta is not None else None,
        "last_kind": _kind_label(last) if last is not None else None,
        "last_sha256": _sha256(last_raw),
    }
    return common, generation


@dataclass(frozen=True, slots=True)
class _Read:
    """What a file listing was handed, as a read (``folding.run.fold_run`` folds reads)."""

    run: str
    records: Sequence[StoredLike]
    findings: Sequence[Finding]
    complete: bool


def _after_last_terminal(records: Sequence[Record]) -> tuple[str, ...] | None:
    for index in range(len(records) - 1, -1, -1):
        if records[index].kind == "terminal":
            return tuple(_kind_label(record) for record in records[index + 1 :])
    return None


def status_from_last_record(last: Record | None) -> str:
    """The JetStream rule: the last record's terminal reason if it carries a terminal payload, else ``open``."""
    if last is None or last.terminal is None:
        return "open"
    return last.terminal.reason


def summarize_stream(
    run: str,
    meta: StoredLike | None,
    last: StoredLike | None,
    *,
    problem: str | None = None,
    findings: Sequence[Finding] = (),
    held: tuple[int, int] | None = None,
) -> RunSummary:
    """The JetStream rule's row from the run's ``_meta`` message and its last message. ``held`` is (records, highest
    seq) the stream holds for a run whose last message is its meta message although others exist.

    ``meta`` None (or ``problem`` set) means the meta message is missing or does not decode; ``last`` None
    means the last message could not be read or decoded, which the runtime lists as ``open``."""
    meta_payload = meta.record.meta if meta is not None else None
    if meta_payload is None and problem is None:
        problem = "the _meta subject holds no meta record"
    generation = generation_of_version(meta_payload.version) if meta_payload is not None else None
    if meta_payload is not None and generation is None:
        problem = f"{unsupported_version(meta_payload.version)}: the runtime's listing skips the run"
    updated = (last.time if last is not None else None) or (meta.time if meta is not None else None)
    tail = last if last is not None else meta
    last_seq = tail.record.seq if tail is not None else 0
    dated = _record_time(last.record if last is not None else None) if generation and generation.dates_records else None
    extended = generation is not None and generation.extended_records
    terminal = last.record.terminal if extended and last is not None else None
    return RunSummary(
        generation=generation.name if generation is not None else None,
        agent=meta_payload.agent if meta_payload is not None else None,
        caller=meta_payload.caller if meta_payload is not None else None,
        updated_text=dated[1] if dated is not None else None,
        ended=(last.record.time or None) if terminal is not None and last is not None else None,
        summary=terminal.summary if terminal is not None else None,
        run=run,
        status="invalid" if problem is not None else status_from_last_record(last.record if last else None),
        created=meta_payload.created if meta_payload is not None else None,
        updated=dated[0] if dated is not None else updated,
        model=meta_payload.fingerprint.model if meta_payload is not None else None,
        prompt=meta_payload.prompt if meta_payload is not None else None,
        last_seq=last_seq,
        records=None,
        rule="jetstream",
        meta_run_id=meta_payload.run_id if meta_payload is not None else None,
        last_kind=_kind_label(last.record) if last is not None else None,
        last_sha256=_sha256(last.raw) if last is not None else None,
        problem=problem,
        findings=tuple(findings),
        held_out_of_order=held,
        meta_position=getattr(meta, "position", None) if meta is not None else None,
        why=problem if problem is not None else _last_terminal_words(last.record if last else None),
    )


def _last_terminal_words(last: Record | None) -> str | None:
    """The JetStream rule sees one record: its terminal's reason and message, when it is a terminal."""
    if last is None or last.terminal is None:
        return None
    terminal = last.terminal
    return f"{terminal.reason}: {terminal.message}" if terminal.message else terminal.reason


# -- the newest runtime's filters and pages (ListFilter, ListPage, Describe) ----------------------------------------


def matches_agent(row: RunSummary, agent: str) -> bool:
    """``ListFilter.MatchesAgent``: any run when no agent is asked for, and a run that names none matches any."""
    return not agent or not row.agent or row.agent == agent


def _listed(rows: Iterable[RunSummary], agent: str, prefix: str) -> list[RunSummary]:
    """The rows the runtime's listing returns: it leaves out a run it cannot read or fold, and filters."""
    return [row for row in rows if row.status != "invalid" and matches_agent(row, agent) and row.run.startswith(prefix)]


def _file_position(row: RunSummary) -> tuple[int, str]:
    created = parse_go_time(row.created).unix_ns if row.created else 0
    return created, row.run


def _file_cursor(row: RunSummary) -> str:
    """``RFC3339Nano(created in UTC) | id``, base64url without padding: the file backend's cursor."""
    created = parse_go_time(row.created).utc().text() if row.created else ""
    return base64.urlsafe_b64encode(f"{created}|{row.run}".encode()).decode().rstrip("=")


def list_page(
    rows: Iterable[RunSummary], *, limit: int, cursor: str = "", agent: str = "", prefix: str = ""
) -> tuple[list[RunSummary], str]:
    """``Store.ListPage``: up to ``limit`` runs after ``cursor``, and the cursor of the next page (``""`` when the
    page was not full). A file listing pages by ``meta.created`` then run id; a JetStream one by the stream sequence
    of each run's meta message. Raises ``InvalidPage`` for a limit below 1 or a cursor this rule did not mint."""
    if limit <= 0:
        raise InvalidPage(f"invalid page limit: {limit}, a page holds at least one run")
    listed = _listed(rows, agent, prefix)
    stream = any(row.rule == "jetstream" for row in listed)
    if stream:
        listed.sort(key=lambda row: row.meta_position or 0)
        keys = [str(row.meta_position) for row in listed]
    else:
        listed.sort(key=_file_position)
        keys = [_file_cursor(row) for row in listed]
    start = 0
    if cursor:
        after = _cursor_position(cursor, stream)
        if after is None:
            what = "stream sequence" if stream else "position"
            raise InvalidPage(f"invalid list cursor: {go_quoted(cursor)} is not a {what} this store minted")
        positions = [(row.meta_position or 0) if stream else _file_position(row) for row in listed]
        start = next((index for index, position in enumerate(positions) if position > after), len(listed))  # type: ignore[operator]
    page = listed[start : start + limit]
    return page, (keys[start + len(page) - 1] if len(page) == limit else "")


def _cursor_position(cursor: str, stream: bool) -> int | tuple[int, str] | None:
    if stream:
        return int(cursor) if cursor.isascii() and cursor.isdigit() else None
    try:
        created, _, run = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().partition("|")
        return (parse_go_time(created).unix_ns, run) if run else None
    except (ValueError, UnicodeDecodeError):
        return None


def describe(rows: Iterable[RunSummary], ids: Sequence[str], *, agent: str = "", prefix: str = "") -> list[RunSummary]:
    """``Store.Describe``: the rows of ``ids``, in the order named, each once; an id that is not a valid run id, that
    the filter excludes, or whose run is missing or cannot be read or folded gives no row."""
    by_id = {row.run: row for row in _listed(rows, agent, prefix)}
    seen: set[str] = set()
    described = []
    for run in ids:
        if run in by_id and run not in seen:
            seen.add(run)
            described.append(by_id[run])
    return described
