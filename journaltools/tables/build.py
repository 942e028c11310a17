"""The pure table builder: journals read (``RunRead``) and folded (``FoldResult``) in, the seven tables out.

No I/O and no wire format: every row comes from a typed record or from the fold's typed result. A journal
whose read was refused (``complete=False``: a corrupt interior line, a torn tail glued into the interior) is
never folded; its ``runs`` row says ``invalid`` and carries what its meta record says, and its findings say why.

Per-call facts the fold does not keep (which seq called and answered a call, whether the answer was an error or
remote, the deferral's note), each model response, and the records' own times come from one walk over the run's
typed records (``RunFacts``), made once per journal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import pyarrow as pa

from journaltools.folding import FoldResult
from journaltools.folding import native as native_fold
from journaltools.folding.facts import RunFacts, degraded_analysis, undated, wall_clock_of
from journaltools.folding.phrases import Ending, ending_of, problem_text, why_of
from journaltools.folding.reads import RunReadLike
from journaltools.folding.run import fold_run
from journaltools.folding.state import COUNTER_NAMES
from journaltools.folding.summary import FirstRecord, RunSummary, dated_by_last_record, meta_columns, python_summary
from journaltools.folding.texts import message_columns
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import rules_for_version
from journaltools.protocol.journal import typed_records
from journaltools.sources.scan import updated_at
from journaltools.tables.columns import (
    TABLE_MEMORY_POOL,
    ValueFit,
    findings_table,
    with_source,
)
from journaltools.tables.per_run import PerRunTable
from journaltools.tables.records import records_table
from journaltools.tables.schema import (
    MESSAGES_SCHEMA,
    RESPONSES_SCHEMA,
    RUNS_SCHEMA,
    SEGMENTS_SCHEMA,
    TOOL_CALLS_SCHEMA,
    Tables,
    empty_table,
)


def _call_rows(facts: RunFacts, fit: ValueFit) -> list[dict[str, Any]]:
    """The ``tool_calls`` rows of one journal: its calls as the runtime's ``Calls`` pairs them (``RunFacts``)."""
    rows = []
    for call in facts.calls:
        answer, deferral = call.answer, call.deferral
        duration = fit.duration("tool_calls.duration", call.duration_ns, call.answered_seq or call.made_seq)
        rows.append(
            {
                "call_id": call.tool_use_id,
                "name": call.tool,
                "input": call.input.decode("utf-8", "replace"),
                "call_seq": call.made_seq,
                "result_seq": call.answered_seq,
                "is_error": answer.result.is_error if answer is not None else None,
                "remote": answer.remote if answer is not None else None,
                "kind": call.kind,
                "dispatched": call.dispatched,
                "made_at": fit.time("tool_calls.made_at", call.made_time, call.made_seq),
                "answered_at": fit.time("tool_calls.answered_at", call.answered_time, call.answered_seq),
                "duration": duration,
                "timed": duration is not None,
                "deferred": deferral is not None,
                "deferred_note": (deferral.note or None) if deferral is not None else None,
                "deferred_handle": (deferral.handle or None) if deferral is not None else None,
                "call_approved": call.approved_once,
                "result_chars": len(answer.result.content) if answer is not None else None,
            }
        )
    return rows


def _response_rows(facts: RunFacts, fit: ValueFit) -> dict[str, list[Any]]:
    """The ``responses`` columns (less ``run``) of one journal: a row per assistant record."""
    responses = facts.responses
    return {
        "seq": [response.seq for response in responses],
        "iteration": [response.iteration for response in responses],
        "time": [fit.time("responses.time", response.time, response.seq) for response in responses],
        "stop_reason": [response.stop_reason or None for response in responses],
        "in_tokens": [response.in_tokens for response in responses],
        "out_tokens": [response.out_tokens for response in responses],
        "cache_read_tokens": [response.cache_read_tokens for response in responses],
        "cache_create_tokens": [response.cache_create_tokens for response in responses],
        "thinking_tokens": [response.thinking_tokens for response in responses],
    }


class TablesBuilder:
    """Accumulates journals (their read and lenient fold) and emits one table each at ``finish``.

    ``records=False`` leaves the records table empty (an audit that does not write it); ``folded=False`` builds
    only ``records`` and ``findings`` (a load with ``fold=False``). ``task_states``: run id -> task state.
    """

    def __init__(self, *, records: bool = True, folded: bool = True, task_states: dict[str, str] | None = None) -> None:
        self.want_records = records
        self.folded = folded
        self.task_states = task_states or {}
        self._reads: list[RunReadLike] = []
        #: The runs rows, each a tuple in ``RUNS_SCHEMA``'s order (one C call), made columns at ``finish``.
        self._run_rows: list[tuple[Any, ...]] = []
        self._segments = PerRunTable(SEGMENTS_SCHEMA)
        self._messages = PerRunTable(MESSAGES_SCHEMA)
        self._responses = PerRunTable(RESPONSES_SCHEMA)
        self._calls = PerRunTable(TOOL_CALLS_SCHEMA)
        self.findings: list[Finding] = []
        #: (run, its first error finding), in order: what a strict load raises for.
        self.bad_runs: list[tuple[str, Finding]] = []
        #: Whether journals may fold natively (asked once: the environment is read each time).
        self._native = native_fold.active()
        #: The buffers the native fold appends to (``folding.native``), in its order.
        self._native_columns = (
            *self._messages.native(native_fold.MESSAGE_COLUMNS),
            *self._calls.native(native_fold.CALL_COLUMNS),
            *self._responses.native(native_fold.RESPONSE_COLUMNS),
            *self._segments.native(native_fold.SEGMENT_COLUMNS),
        )

    def add_folding(self, read: RunReadLike) -> Finding | None:
        """Add one journal, folding it here (when the builder folds): natively when the journal is one the native
        fold takes (``folding.native``), else leniently in Python. Returns its first error finding, as ``add``."""
        if self.folded and self._native:
            first = native_fold.usable_first(read)
            if first is not None and first.meta is not None:
                native = native_fold.fold_rows(read, first.meta, self._native_columns)
                if native is not None:
                    if self.want_records:
                        self._reads.append(read)
                    self._add_native(read.run, read.source, read.updated, first, native)
                    return None
        return self.add(read, fold_read(read) if self.folded else None)

    def add_lines(
        self, run: str, source: str, modified_ns: int, first: FirstRecord, data: memoryview, starts: bytes, kinds: bytes
    ) -> bool:
        """Add one journal the scanner proved, natively, from its lines (``native_fold.fold_lines``) and its file's
        modification time; ``first`` is its meta record (``native_fold.proven_first``). False, with nothing added,
        when the walk gives it back (it then takes the usual way, ``add_folding`` of its read). Its records rows
        are the caller's, made from the scan."""
        assert first.meta is not None and not self.want_records
        native = native_fold.fold_lines(data, starts, kinds, first.meta, self._native_columns)
        if native is None:
            return False
        self._add_native(run, source, modified_ns, first, native)
        return True

    def add(self, read: RunReadLike, result: FoldResult | None) -> Finding | None:
        """Add one journal; ``result`` is its lenient fold, None when it was not folded. Returns its first
        error finding (None when nothing refuses it)."""
        if not read.records and any(finding.code == "vanished" for finding in read.findings):
            # Listed, then gone before it was read: no run to table, only the finding that says so.
            self.findings.extend(with_source(f, read.source) for f in read.findings)
            return None
        findings = [with_source(f, read.source) for f in (*read.findings, *(result.findings if result else ()))]
        self.findings.extend(findings)
        first_error = next((f for f in findings if f.severity == "error"), None)
        if first_error is not None:
            self.bad_runs.append((read.run, first_error))
        if self.want_records:
            self._reads.append(read)
        if self.folded:
            records = typed_records(read.records)
            fit = ValueFit(read.run)
            if result is not None:
                facts = RunFacts.of(records)
                # What the journal cannot tell, said beside what it tells (info: never a problem of the run's).
                degraded = degraded_analysis(read.run, records, facts)
                if degraded is not None:
                    self.findings.append(with_source(degraded, read.source))
                self._add_segments(read.run, result, facts, fit)
                self._add_messages(read.run, result)
                self._add_calls(read.run, facts, fit)
                self._add_responses(read.run, facts, fit)
            invalid = first_error is not None or not read.complete
            first = records[0] if records else None
            summary = python_summary(records, result, read.last_seq)
            self._add_run(read, first, summary, result, findings, fit, invalid=invalid)
        return first_error

    def _add_run(
        self,
        read: RunReadLike,
        first: FirstRecord | None,
        summary: RunSummary,
        result: FoldResult | None,
        findings: list[Finding],
        fit: ValueFit,
        invalid: bool,
    ) -> None:
        """The runs row of a journal the Python path tabled (``result``: its lenient fold, None when not folded)."""
        state = result.state if result is not None else None
        status = "invalid" if invalid or result is None else result.status
        ended = fit.time("runs.ended", state.ended) if state is not None and not undated(state.ended) else None
        self._put_run(
            read.run,
            read.source,
            status,
            why_of(_ending(status, result, findings)),
            first,
            summary,
            read.updated,
            ended,
            fit,
            errors=sum(1 for f in findings if f.severity == "error"),
            warnings=sum(1 for f in findings if f.severity == "warning"),
        )

    def _add_native(
        self, run: str, source: str, updated: datetime | int | None, first: FirstRecord, native: native_fold.NativeRun
    ) -> None:
        """A journal the native fold tabled (its other rows are in place): its runs row and what counts its rows;
        ``first`` is its meta record, ``updated`` when its store last changed it (a file's modification time in
        nanoseconds, made a time only when the row needs it)."""
        meta = first.meta
        assert meta is not None
        warnings = native_fold.warnings_of(run, meta, native, source)
        self.findings.extend(warnings)
        degraded = native_fold.degraded_of(run, meta, native)
        if degraded is not None:
            self.findings.append(with_source(degraded, source))
        self._segments.rows_of(run, native.segments, natively=True)
        self._messages.rows_of(run, native.messages, natively=True)
        self._calls.rows_of(run, native.calls, natively=True)
        self._responses.rows_of(run, native.counters[0], natively=True)  # a response per assistant record: llm_calls
        generation = rules_for_version(meta.version)
        status = native_fold.status_of(native, generation)
        # The walk gave back every journal with a record time or a call's duration no column holds; the creation
        # time and the wall clock are the run's own, checked in the row.
        why = native_fold.why_of_native(native, generation, status)
        self._put_run(
            run,
            source,
            status,
            why,
            first,
            native,
            updated,
            native.ended,
            ValueFit(run),
            0,
            len(warnings),
            walked=(native.created_us, native.updated_us, native.wall_clock),
        )

    def _put_run(
        self,
        run: str,
        source: str,
        status: str,
        why: str,
        first: FirstRecord | None,
        summary: RunSummary,
        store_updated: datetime | int | None,
        ended: datetime | int | None,
        fit: ValueFit,
        errors: int,
        warnings: int,
        walked: tuple[int | None, int | None, int | None] | None = None,
    ) -> None:
        """The one runs row, whichever fold made ``summary`` (``folding.summary``): a tuple in the schema's order
        (``_ROW_ORDER``), made at once, this row being made per journal. ``first`` is the journal's first record,
        ``store_updated`` when its store last changed it (a file's modification time in nanoseconds, made a time
        only when the row needs it), ``ended`` the ending's time as its column holds it. ``walked``: the creation
        time, the last record's time and the wall clock as the native walk read them (it leaves every journal whose
        values a column cannot hold to the Python fold), for the same rules said here over the journal's text."""
        meta, generation = meta_columns(first)
        created: datetime | int | None
        last_time: datetime | int | None
        if walked is not None:
            created, last_time, wall_clock = walked
            dated = last_time is not None
        else:
            created, dated = fit.time("runs.created", meta.created), bool(summary.last_time)
            last_time = fit.time("runs.updated", summary.last_time) if dated else None
            wall_clock = None
            if first is not None and first.meta is not None:
                start = wall_clock_of(first.meta, first.time, summary.last_dated_time)
                wall_clock = fit.duration("runs.wall_clock", start)
        # The newest line dates a run by its last record; an undated one (and every August one) by the store.
        updated: datetime | int | None
        if dated and dated_by_last_record(generation):
            updated = last_time
        else:
            updated = updated_at(store_updated) if isinstance(store_updated, int) else store_updated
        row = (
            run,
            status,
            meta.generation,
            created,
            updated,
            ended,
            wall_clock,
            *meta[2:],
            summary.last_seq,
            summary.records,
            summary.segments,
            summary.resumes,
            summary.stale_terminal,
            summary.reopened,
            summary.turns,
            summary.context_tokens,
            summary.terminal_reason,
            summary.terminal_message,
            summary.last_stop_reason,
            summary.next_iteration,
            summary.waiting_for,
            why,
            *summary.counters,
            summary.tool_calls_by_kind,
            summary.pending_calls,
            summary.open_deferrals,
            summary.approvals,
            summary.call_approvals,
            sorted(summary.memory_keys) if summary.memory_keys is not None else None,
            self.task_states.get(run),
            errors,
            warnings,
            source,
        )
        unfit = fit.finding()
        if unfit is not None:
            self.findings.append(with_source(unfit, source))
            row = (*row[:-2], warnings + 1, source)
        self._run_rows.append(row)

    def _add_segments(self, run: str, result: FoldResult, facts: RunFacts, fit: ValueFit) -> None:
        columns = self._segments.columns
        times = facts.times
        segments = result.segments
        columns["started_at"].extend(
            [fit.time("segments.started_at", times.get(s.first_seq), s.first_seq) for s in segments]
        )
        columns["ended_at"].extend([fit.time("segments.ended_at", times.get(s.last_seq), s.last_seq) for s in segments])
        columns["segment"].extend([segment.index for segment in segments])
        columns["first_seq"].extend([segment.first_seq for segment in segments])
        columns["last_seq"].extend([segment.last_seq for segment in segments])
        columns["claimed_by"].extend([segment.claimed_by for segment in segments])
        columns["claimed_at"].extend([fit.time("segments.claimed_at", s.claimed_at, s.first_seq) for s in segments])
        columns["ending"].extend([segment.ending for segment in segments])
        columns["terminal_message"].extend([segment.terminal_message for segment in segments])
        columns["llm_calls"].extend([segment.llm_calls for segment in segments])
        columns["tool_calls"].extend([segment.tool_calls for segment in segments])
        columns["in_tokens"].extend([segment.in_tokens for segment in segments])
        columns["out_tokens"].extend([segment.out_tokens for segment in segments])
        self._segments.rows_of(run, len(segments))

    def _add_messages(self, run: str, result: FoldResult) -> None:
        columns = self._messages.columns
        # The committed conversation exactly as the runtime folds it, then (flagged) the assistant message of
        # the turn in flight: a stuck run's last words, which the runtime keeps apart until its calls resolve.
        messages = list(result.messages)
        seqs = list(result.message_seqs)
        pending = result.state.pending if result.state is not None else None
        if pending is not None:
            messages.append(pending.assistant)
            seqs.append(pending.seq)
        rows = [message_columns(message) for message in messages]
        columns["index"].extend(range(len(rows)))
        columns["seq"].extend(seqs)
        columns["pending"].extend([False] * len(result.messages) + ([True] if pending is not None else []))
        columns["role"].extend([message.role for message in messages])
        columns["text"].extend([row[0] for row in rows])
        columns["thinking_chars"].extend([row[1] for row in rows])
        columns["tool_use_count"].extend([row[2] for row in rows])
        columns["tool_result_count"].extend([row[3] for row in rows])
        columns["provider_blocks"].extend([row[4] for row in rows])
        self._messages.rows_of(run, len(rows))

    def _add_responses(self, run: str, facts: RunFacts, fit: ValueFit) -> None:
        for name, values in _response_rows(facts, fit).items():
            self._responses.columns[name].extend(values)
        self._responses.rows_of(run, len(facts.responses))

    def _add_calls(self, run: str, facts: RunFacts, fit: ValueFit) -> None:
        calls = _call_rows(facts, fit)
        for name, column in self._calls.columns.items():
            column.extend([call[name] for call in calls])
        self._calls.rows_of(run, len(calls))

    def finish(self) -> Tables:
        findings = findings_table(self.findings)
        records = records_table(self._reads) if self.want_records else empty_table("records")
        if not self.folded:
            return Tables.of(records=records, findings=findings)
        tool_calls = self._calls.table()
        columns = _transposed(self._run_rows, len(_RUN_COLUMNS))
        columns.insert(_TOOL_ERRORS_AT, self._calls.tool_errors(tool_calls, columns[0], columns[_TOOL_CALLS_AT]))
        return Tables(
            records=records,
            runs=_table(columns, RUNS_SCHEMA),
            segments=self._segments.table(),
            messages=self._messages.table(),
            tool_calls=tool_calls,
            responses=self._responses.table(),
            findings=findings,
        )


#: A run row's columns but ``tool_errors``, which ``finish`` counts from the tool_calls table for either fold.
_RUN_COLUMNS: Final = tuple(name for name in RUNS_SCHEMA.names if name != "tool_errors")
#: The order ``_put_run`` makes a run row in, name by name: ``_RUN_COLUMNS`` (a test holds them equal).
_ROW_ORDER: Final = (
    *("run", "status", "generation", "created", "updated", "ended", "wall_clock", "model", "provider", "prompt"),
    *("interactive", "agent", "caller", "conversation", "last_seq", "records", "segments", "resumes"),
    *("stale_terminal", "reopened", "turns", "context_tokens", "terminal_reason", "terminal_message"),
    *("last_stop_reason", "next_iteration", "waiting_for", "why", *COUNTER_NAMES, "tool_calls_by_kind"),
    *("pending_calls", "open_deferrals", "approvals", "call_approvals", "memory_keys", "task_state"),
    *("error_findings", "warning_findings", "source"),
)
_TOOL_ERRORS_AT: Final = RUNS_SCHEMA.names.index("tool_errors")
_TOOL_CALLS_AT: Final = _RUN_COLUMNS.index("tool_calls")


def _transposed(rows: list[tuple[Any, ...]], width: int) -> list[Sequence[Any]]:
    """Rows of ``width`` values as that many columns."""
    return list(zip(*rows, strict=True)) if rows else [()] * width


def _table(columns: Sequence[Sequence[Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays(
        [
            column if isinstance(column, pa.Array) else pa.array(column, field.type, memory_pool=TABLE_MEMORY_POOL)
            for field, column in zip(schema, columns, strict=True)
        ],
        schema=schema,
    )


@dataclass(slots=True)
class Folded:
    """One journal for ``tables_of``: its read and its lenient fold (None when it must not be folded)."""

    read: RunReadLike
    result: FoldResult | None = field(default=None)


def tables_of(journals: Iterable[Folded], *, records: bool = True) -> Tables:
    """The seven tables of journals already read and folded (leniently). Pure; for notebooks and tests."""
    builder = TablesBuilder(records=records)
    for journal in journals:
        builder.add(journal.read, journal.result)
    return builder.finish()


def fold_read(read: RunReadLike) -> FoldResult | None:
    """The lenient fold of a read, or None for a refused read (the runtime never folds one)."""
    if not read.complete:
        return None
    return fold_run(read).result


def tables_of_reads(reads: Sequence[RunReadLike], *, records: bool = True, fold: bool = True) -> Tables:
    """The seven tables of reads, each folded leniently here (``fold=False``: records and findings only)."""
    builder = TablesBuilder(records=records, folded=fold)
    for read in reads:
        builder.add_folding(read)
    return builder.finish()


def _ending(status: str, result: FoldResult | None, findings: Sequence[Finding]) -> Ending:
    """What the ``why`` column says of a run the Python path tabled: the fold's ending, under the row's status, with
    the first error of the reader's and the fold's findings (what makes an ``invalid`` row so)."""
    error = next((finding for finding in findings if finding.severity == "error"), None)
    problem = problem_text(error.seq, error.code, error.message) if error is not None else None
    if result is None:
        return Ending(status, problem=problem)
    return dataclasses.replace(ending_of(result), status=status, problem=problem)
