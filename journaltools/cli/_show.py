"""``show``: the runtime's folded state as ``--json``, or a readable account of the run."""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Final

import msgspec

from journaltools.errors import CorruptJournal, FoldError
from journaltools.folding import FoldResult, Segment
from journaltools.folding.facts import time_ns, undated, wall_clock_ns
from journaltools.folding.phrases import approvals_text, reopening_text, shown_time
from journaltools.folding.run import fold_run
from journaltools.folding.state import COUNTER_NAMES
from journaltools.folding.texts import message_lines
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.findings import Finding
from journaltools.sources.liveness import SourceLocks, Writer, liveness_text, silent_for

if TYPE_CHECKING:
    from journaltools.sources.base import RunRead
from journaltools._base.readable import readable_json, shorten_end, shown_part
from journaltools.cli._output import (
    UsageError,
    _emit_json,
    _note,
    _say,
    finding_json,
    fitted_columns,
    human_duration,
    print_table,
)
from journaltools.cli._sources import _open, _source_and_optional_run, read_named

# -- show --------------------------------------------------------------------------------------------------------


def go_value(value: Any) -> msgspec.Raw:
    """A typed wire value as the exact JSON Go's encoder writes for it: the ``messages`` of ``show --json`` are
    the neutral messages exactly as the runtime serializes them. Raw JSON fields may hold bytes that are not
    UTF-8 (a tool input the runtime kept verbatim); those are shown as U+FFFD, as Go prints them."""
    return _utf8(encode_go_json(value))


def _utf8(encoded: bytes) -> msgspec.Raw:
    try:
        encoded.decode("utf-8")
    except UnicodeDecodeError:
        encoded = encoded.decode("utf-8", "replace").encode()
    return msgspec.Raw(encoded)


def show_document(
    result: FoldResult, read_findings: Sequence[Finding] = (), *, refused: bool = False
) -> dict[str, Any]:
    """The ``show --json`` document of one fold: the runtime's state in snake_case, plus what journaltools
    reads from it (status, segments, pending calls, findings). Never the conversation token.

    ``refused``: the reader refused the journal (lenient reads only), so the status is ``invalid`` whatever
    the fold of the lines that decoded says."""
    state = result.state
    pending = state.pending if state is not None else None
    ending = state.ending() if state is not None else None
    account = account_of(result, read_findings, refused=refused)
    return {
        "run": result.run,
        "status": account["status"],
        "generation": state.generation.name if state is not None else None,
        "agent": state.agent if state is not None else None,
        "prompt": state.prompt if state is not None else None,
        "interactive": state.interactive if state is not None else None,
        "caller": state.caller if state is not None else None,
        "fingerprint": go_value(state.fingerprint) if state is not None else None,
        "messages": go_value(state.messages) if state is not None else [],
        "message_seqs": result.message_seqs,
        "times": [_time_or_null(time) for time in state.times] if state is not None else [],
        "result_times": dict(state.result_times or {}) if state is not None else {},
        "ended": _time_or_null(state.ended) if state is not None else None,
        "turns": state.turns if state is not None else 0,
        "context_tokens": state.context_tokens if state is not None else 0,
        "reopened": state.reopened if state is not None else False,
        "ending": go_value(ending) if ending is not None else None,
        "pending": None
        if pending is None
        else {
            "assistant": go_value(pending.assistant),
            "iteration": pending.iteration,
            "stop_reason": pending.stop_reason,
            "seq": pending.seq,
            "time": _time_or_null(pending.time),
            "results": go_value(list(pending.results)),
            "answered": sorted(pending.answered, key=str.encode),
            "deferred": {call: go_value(deferred) for call, deferred in sorted(pending.deferred.items())},
        },
        "pending_calls": [
            {
                "id": call.id,
                "name": call.name,
                "input": _raw_json(call.input),
                "deferred": None
                if call.deferred is None
                else {"note": call.deferred.note, "handle": call.deferred.handle},
                "call_approved": call.call_approved,
            }
            for call in result.pending_calls
        ],
        "open_deferrals": [go_value(deferred) for deferred in pending.open_deferrals()] if pending is not None else [],
        "counters": account["counters"],
        "resume": account["resume"],
        "approvals": account["approvals"],
        "call_approvals": go_value(state.call_approvals) if state is not None else None,
        "memory_revisions": state.memory_revisions if state is not None else None,
        "terminal": go_value(state.terminal) if state is not None else None,
        "stale_terminal": account["stale_terminal"],
        "segments": account["segments"],
        "findings": account["findings"],
    }


def account_of(result: FoldResult, read_findings: Sequence[Finding] = (), *, refused: bool = False) -> dict[str, Any]:
    """What the readable ``show`` says of a fold besides its messages, as ``show --json`` says it (its status,
    counters, resume point, approvals, process runs and findings): the JSON document's own fields, without the
    messages encoded as Go would (the readable account draws each message as it prints it)."""
    state = result.state
    counters: dict[str, Any] = state.counters.to_json() if state is not None else dict.fromkeys(COUNTER_NAMES, 0)
    counters["tool_calls_by_kind"] = state.counters.by_kind_tokens() if state is not None else {}
    return {
        "status": "invalid" if refused else result.status,
        "counters": counters,
        "resume": {
            "last_seq": result.last_seq,
            "next_iteration": state.next_iteration if state is not None else 0,
            "last_stop_reason": state.last_stop_reason if state is not None else "",
            "waiting_for": result.waiting_for,
        },
        "approvals": state.approvals if state is not None else None,
        "stale_terminal": result.stale_terminal,
        # A process run holds scalars only: a shallow dict is ``asdict``'s, at a fraction of its cost.
        "segments": [{name: getattr(segment, name) for name in SEGMENT_FIELDS} for segment in result.segments],
        "findings": [finding_json(finding) for finding in [*read_findings, *result.findings]],
    }


#: The fields of a process run, in order (the JSON's keys).
SEGMENT_FIELDS: Final = tuple(field.name for field in fields(Segment))


def _time_or_null(time: str) -> str | None:
    """A time as Go marshals it, or null for Go's zero time (an undated record)."""
    return None if undated(time) else time


def _raw_json(raw: bytes) -> msgspec.Raw:
    """A tool input as the journal holds it (Go's ``null`` for an empty one)."""
    return _utf8(raw) if raw else msgspec.Raw(b"null")


def _fold_read(read: RunRead, *, strict: bool) -> FoldResult:
    return fold_run(read, strict=strict).result


def cmd_show(args: argparse.Namespace) -> int:
    source, run = _source_and_optional_run(args.targets)
    strict = not args.lenient
    try:
        with _open(source, "show") as backend:
            read = read_named(backend, run, strict=strict)
            # Whether a process writes the run now: the kernel's lock table, never the runtime's lock itself.
            writer = SourceLocks.of(backend).writer(read.run)
        result = _fold_read(read, strict=strict)
    except (CorruptJournal, FoldError) as refused:
        # The runtime refuses the journal; a post-mortem still wants what can be read of it.
        _note("show", f"{refused} (--lenient shows what can be read of the run, its problems listed)")
        return 1
    if args.json:
        if args.tail is not None or args.from_seq is not None:
            raise UsageError("--tail and --from-seq shape the readable output; --json always holds the whole run")
        document = show_document(result, read.findings, refused=not read.complete)
        if args.anthropic:
            from journaltools.folding.conversation import anthropic_input

            document["messages"] = anthropic_input(result)
        _emit_json(document)
    else:
        # Written as it is drawn: the run's first lines are out before its last message is made.
        _print_run(
            account_of(result, read.findings, refused=not read.complete),
            result,
            first=_first_shown(result, args.tail, args.from_seq),
            times=_times_line(read, result, writer),
            record_times={record.seq: record.time for record in read.typed() if record.time},
        )
    return 0


def _first_shown(result: FoldResult, tail: int | None, from_seq: int | None) -> int:
    """The index of the first message ``--tail`` / ``--from-seq`` leave (both given: the later start)."""
    first = 0
    if tail is not None:
        first = max(0, len(result.messages) - tail)
    if from_seq is not None:
        # The message holding from_seq is the last one made from a record at or before it (a claim or a
        # terminal belongs with the message before it), as the widgets' "jump to a seq" finds it.
        seqs = result.message_seqs
        holding = max((index for index, seq in enumerate(seqs) if seq <= from_seq), default=0)
        first = max(first, holding)
    return first


def _times_line(read: RunRead, result: FoldResult, writer: Writer = "unknown") -> str | None:
    """``created ... · last activity ...``: the journal's own creation time and its latest time (the newest line's
    last dated record), so a post-mortem dates what it reads; an undated journal says what stands in for it (the
    stream's last message time, else the file's modification time), never calling it activity. UTC, to the ms."""
    from journaltools.goencoding.time import go_time

    meta = read.records[0].record.meta if read.records and read.records[0].record.kind == "meta" else None
    created = meta.created if meta is not None else None
    records = read.typed()
    dated = [go_time(record.time) for record in records if record.time]
    latest = max((time for time in dated if time is not None), default=None)
    parts = [f"created {shown_time(created)}"] if created else []
    heard = latest
    if latest is not None:
        parts.append(f"last activity {shown_time(latest)}")
    else:
        # An undated journal (every August one): the store's own times stand in, each called what it is.
        stored = max((stored.time for stored in read.records if stored.time is not None), default=None)
        if stored is not None:
            parts.append(f"last stored {shown_time(stored)}")
        elif read.updated is not None:
            parts.append(f"file modified {shown_time(read.updated)}")
        heard = stored or read.updated
    # The runtime's own wall clock (creation to the last dated record): only a dated journal has one, and only one
    # whose record times run forwards measures anything (the runtime's number stays in --json and `stats --json`).
    backwards = [finding.seq for finding in result.findings if finding.code == "times_out_of_order"]
    wall = wall_clock_ns(records)
    if backwards:
        parts.append(f"wall clock unknown: record times run backwards at seq {', '.join(map(str, backwards))}")
    elif wall is not None:
        parts.append(f"wall clock {human_duration(wall)}")
    liveness = liveness_text(writer, silent_for(heard), lambda seconds: human_duration(int(seconds * 1e9)))
    return "\n".join(line for line in (" · ".join(parts), liveness) if line)


def _print_run(
    document: Mapping[str, Any],
    result: FoldResult,
    *,
    first: int = 0,
    times: str | None = None,
    record_times: dict[int, str] | None = None,
) -> None:
    """The readable account of a run (``run_lines``) at the terminal's width, each line printed as soon as it is
    drawn. Off a terminal (a pipe, a file) a line stays whole: one fact a line, for grep."""
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    for line in run_lines(document, result, first=first, times=times, record_times=record_times, width=width):
        _say(line)


#: The columns of the process-run table that step aside, in this order, when it is wider than the terminal.
SEGMENTS_DROPPABLE: Final = ("claimed_at", "ended", "tool_calls", "llm_calls", "started")


def _fitted(line: str, width: int | None) -> Iterator[str]:
    """A line of the account's head (it may hold several, one per newline), each wrapped at ``width`` (its
    continuations indented); whole when it fits or ``width`` is None."""
    for part in line.split("\n"):
        if width is None or len(part) <= width:
            yield part
        else:
            yield from textwrap.wrap(
                part, width, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
            )


def run_lines(
    document: Mapping[str, Any],
    result: FoldResult,
    *,
    first: int = 0,
    times: str | None = None,
    record_times: dict[int, str] | None = None,
    width: int | None = None,
) -> Iterator[str]:
    """The readable account of a run, line by line, each drawn only when the one before it was taken: the status,
    times, ending, resume point, counters and process runs, then the messages from index ``first``, the turn in
    flight, the pending calls and the findings. ``document`` is ``account_of`` the fold (or ``show_document``,
    which holds the same fields). A line may hold journal text: the caller escapes it for its terminal. With
    ``width``, the head's lines are wrapped and the process-run table fitted to it."""
    yield f"run {result.run}: {document['status']}"
    state = result.state
    if state is not None:
        agent = f" · agent {state.agent}" if state.agent else ""
        yield f"written by {state.generation.title}{agent}"
    if times:
        yield from _fitted(times, width)
    terminal = state.terminal if state is not None else None
    if terminal is not None:
        said = f": {shown_part(terminal.message)}" if terminal.message else ""
        at = f" at {shown_time(state.ended)}" if state is not None and not undated(state.ended) else ""
        yield from _fitted(f"ended: {terminal.reason}{said}{at}", width)
        reopened = reopening_text(result)
        if reopened is not None:
            # The August build lists the last terminal whatever follows it; the newest line reopens the run.
            yield from _fitted(f"reopened: {reopened}, so the runtime lists the run open again", width)
    if document["stale_terminal"]:
        yield "a new turn follows the last terminal: the status names the previous turn's ending"
    resume = document["resume"]
    resumed = (
        f"resume: last seq {resume['last_seq']}, next iteration {resume['next_iteration']}, "
        f"last stop reason {resume['last_stop_reason'] or '-'}, waiting for {resume['waiting_for'] or 'nothing'}"
    )
    yield from _fitted(resumed, width)
    counters = dict(document["counters"])
    by_kind = counters.pop("tool_calls_by_kind", {})
    yield from _fitted("counters: " + ", ".join(f"{key} {value}" for key, value in counters.items()), width)
    if by_kind:
        by_provider = "tool calls by provider: " + ", ".join(f"{kind} {count}" for kind, count in by_kind.items())
        yield from _fitted(by_provider, width)
    if len(document["segments"]) > 1:
        yield ""
        # A last process run with no terminal may have died long ago: the table does not call it "running"
        # (the JSON keeps the fold's word).
        dated = record_times or {}
        unended = [
            {
                **row,
                "ending": "no ending recorded" if row["ending"] == "running" else row["ending"],
                "claimed_at": shown_time(row["claimed_at"]),
                # A process run's span: the own times of its first and last record (newest line only).
                "started": shown_time(dated.get(row["first_seq"])),
                "ended": shown_time(dated.get(row["last_seq"])),
            }
            for row in document["segments"]
        ]
        spans = ["started", "ended"] if dated else []
        # The table is aligned over all its rows, so it is drawn whole (print_table escapes its cells, and a line
        # escaped twice reads the same), then given line by line.
        table = io.StringIO()
        columns = ["index", "first_seq", "last_seq", "claimed_by", "claimed_at", *spans, "ending", "llm_calls"]
        kept, cuts = fitted_columns(
            unended, [*columns, "tool_calls"], width, flexible={"claimed_by": 12}, droppable=SEGMENTS_DROPPABLE
        )
        fitted = [
            {**row, **{key: shorten_end(str(row[key] or ""), limit) for key, limit in cuts.items()}} for row in unended
        ]
        with contextlib.redirect_stdout(table):
            print_table(fitted, kept)
        yield from table.getvalue().splitlines()
    seqs = result.message_seqs
    if first > 0:
        yield f"\n({first:,} earlier messages not shown; --tail and --from-seq choose where to start)"
    message_times = state.times if state is not None else []
    for index, message in enumerate(result.messages[first:], first):
        # Labelled by the record's seq, the number every finding and ending names, when it was journaled, and how
        # long after the message before it (a long wait, such as a suspension, stands out).
        seq = seqs[index] if index < len(seqs) else "?"
        time = message_times[index] if index < len(message_times) else ""
        before = message_times[index - 1] if 0 < index <= len(message_times) else ""
        shown = f"  {shown_time(time)}{_gap_text(before, time)}" if not undated(time) else ""
        yield f"\n[seq {seq}] {message.role}{shown}"
        yield from message_lines(message)
    pending = result.state.pending if result.state is not None else None
    if pending is not None:
        # Nothing of a turn in flight is in the committed messages yet: show what the model said, thought and
        # asked for last (what a post-mortem of a stuck run opens it for), thinking in full.
        at = f", at {shown_time(pending.time)}" if not undated(pending.time) else ""
        yield (
            f"\n[seq {pending.seq}] assistant, turn in flight (not committed): iteration {pending.iteration}, "
            f"stop reason {pending.stop_reason or '-'}{at}"
        )
        yield from message_lines(pending.assistant, whole_thinking=True)
        for done in pending.results:
            flag = " (error)" if done.is_error else ""
            yield f"  <- {done.tool_use_id}{flag}: {shown_part(done.content)}"
    for call in result.pending_calls:
        deferred = call.deferred
        where = "not yet run" if deferred is None else "deferred"
        if deferred is not None and deferred.note:
            where += f" ({deferred.note})"
        if deferred is not None and deferred.handle:
            where += f" [handle {deferred.handle}]"
        if call.call_approved:
            where += ", approved once"
        shown = shown_part(readable_json(call.input.decode("utf-8", "replace")))
        yield f"\npending: {call.name}({shown}) [{call.id}]: {where}"
    if document["approvals"]:
        yield "\nstanding approvals: " + approvals_text(document["approvals"])
    if document["findings"]:
        yield ""
    for finding in document["findings"]:
        seq = "-" if finding["seq"] is None else finding["seq"]
        yield f"{finding['severity']}: seq {seq}: {finding['code']}: {shown_part(finding['message'])}"


#: A gap between two messages at least this long is called out as a wait (a suspension, an operator's answer).
LONG_WAIT_NS = 3_600_000_000_000


def _gap_text(before: str, time: str) -> str:
    """``  (+3.2s)`` after the previous message's time; nothing when either is undated. A message dated before the
    one before it says so (the clocks that dated them disagree): a backwards span is no duration."""
    if undated(before) or undated(time):
        return ""
    start, end = time_ns(before), time_ns(time)
    if start is None or end is None:
        return ""
    if end < start:
        return f"  (dated {human_duration(start - end)} before the message above it: the clocks disagree)"
    gap = end - start
    wait = ", a long wait" if gap >= LONG_WAIT_NS else ""
    return f"  (+{human_duration(gap)}{wait})"


def _compact(value: Any) -> str:
    return msgspec.json.encode(value).decode()
