"""The pure table builder: runs already read and folded in, one record batch per table out. No I/O.

Every table row comes from a record or a fold result, never from a second look at a source. A run the
reader refused (a corrupt interior line) is not folded: its ``runs`` row says ``invalid`` and carries what
its parseable records tell without folding (when it was created, its last seq, its model).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from journaltools.fold import FoldResult
from journaltools.listing import unfolded_facts
from journaltools.protocol.envelope import envelope_mask, is_timestamp
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import RawRecord
from journaltools.tables.columns import column, findings_table, int64s, strings_repeated, timestamps, with_source
from journaltools.tables.schema import (
    MESSAGES_SCHEMA,
    RECORDS_SCHEMA,
    RUNS_SCHEMA,
    TIMESTAMP,
    TOOL_CALLS_SCHEMA,
    Tables,
    empty_table,
)


@dataclass(slots=True)
class RecordColumns:
    """The ``records`` table of parsed records, built row by row (the exact path every reader shares)."""

    runs: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    seq: list[int | None] = field(default_factory=list)
    type: list[str | None] = field(default_factory=list)
    ts: list[str | None] = field(default_factory=list)
    optional: list[bool] = field(default_factory=list)
    body: list[bytes] = field(default_factory=list)
    position: list[int] = field(default_factory=list)

    def add(self, run: str, records: Sequence[RawRecord]) -> None:
        if not records:
            return
        self.runs.append(run)
        self.counts.append(len(records))
        bodies = [record.body for record in records]
        self.type.extend([kind if type(kind := body.get("type")) is str else None for body in bodies])
        self.seq.extend([seq if type(seq := body.get("seq")) is int else None for body in bodies])
        self.ts.extend([ts if type(ts := body.get("ts")) is str else None for body in bodies])
        self.optional.extend([body.get("optional") is True for body in bodies])
        self.body.extend([record.raw for record in records])
        self.position.extend([record.position for record in records])

    def check_envelopes(self, start: int, records: Sequence[RawRecord], expected_runs: Sequence[str]) -> None:
        """Check the envelope rule column-wise for the rows from ``start`` on (``records``, each read from the
        journal of its ``expected_runs`` entry), marking the records for which it holds."""
        if not records:
            return
        ok = envelope_mask(
            pa.array(self.type[start:], pa.string()),
            int64s(self.seq[start:]),
            pa.array(self.ts[start:], pa.string()),
            np.array(
                [
                    r.body.get("run") == run and type(r.body.get("optional", False)) is bool
                    for r, run in zip(records, expected_runs, strict=True)
                ],
                bool,
            ),
        )
        for record, holds in zip(records, ok.tolist(), strict=True):
            if holds:
                record.envelope_checked = True

    def batch(self, source: str) -> pa.RecordBatch:
        # Every raw line was decoded from UTF-8 by the parser, so viewing the bytes as text is safe.
        bodies = pa.array(self.body, pa.large_binary())
        return pa.RecordBatch.from_arrays(
            [
                strings_repeated(self.runs, self.counts) if self.runs else pa.array([], pa.string()),
                int64s(self.seq),
                pa.array(self.type, pa.string()),
                timestamps(self.ts),
                pa.array(self.optional, pa.bool_()),
                pc.binary_length(bodies),
                bodies.view(pa.large_string()),
                pa.repeat(pa.scalar(source, pa.string()), len(self.body)),
                pa.array(self.position, pa.int64()),
            ],
            schema=RECORDS_SCHEMA,
        )


def _message_row(content: Any) -> tuple[str, int, int]:
    """A message's text (its text blocks joined), and its numbers of tool_use and tool_result blocks."""
    if isinstance(content, str):
        return content, 0, 0
    texts: list[str] = []
    uses = results = 0
    for block in content:
        kind = block["type"]
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            uses += 1
        elif kind == "tool_result":
            results += 1
    return "\n".join(texts), uses, results


def _unfolded_summary(records: Sequence[RawRecord]) -> dict[str, Any]:
    """What the records of a refused journal say without folding them (``created``, ``last_seq`` and
    ``model`` by the listing's rule, so ``ls`` and the ``runs`` table agree)."""
    first = records[0].body if records else {}
    stamps = [ts for record in records if is_timestamp(ts := record.body.get("ts"))]
    facts = unfolded_facts(records)
    return {
        "created": facts.created,
        "last_seq": facts.last_seq,
        "last_ts": stamps[-1] if stamps else None,
        "model": facts.model,
        "task": first.get("task") if isinstance(first.get("task"), str) else None,
    }


class TablesBuilder:
    """Accumulates runs (their records, fold and findings) and emits one record batch per table.

    ``add_run`` takes a run read leniently and, unless its journal was refused, folded leniently. With
    ``records=False`` the records table stays empty (an audit that does not write it).
    """

    def __init__(self, source: str, *, records: bool = True, task_states: dict[str, str] | None = None) -> None:
        self.source = source
        self.want_records = records
        self.task_states = task_states or {}
        self.records = RecordColumns()
        self._runs: dict[str, list[Any]] = {f.name: [] for f in RUNS_SCHEMA}
        self._messages: dict[str, list[Any]] = {f.name: [] for f in MESSAGES_SCHEMA}
        self._calls: dict[str, list[Any]] = {f.name: [] for f in TOOL_CALLS_SCHEMA}
        self.findings: list[Finding] = []
        self.bad_runs: list[tuple[str, Finding]] = []  # (run, its first error finding), in order

    def add_findings(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(with_source(finding, self.source) for finding in findings)

    def add_run(
        self,
        run: str,
        records: Sequence[RawRecord],
        reader_findings: Sequence[Finding],
        result: FoldResult | None,
        *,
        records_added: bool = False,
    ) -> bool:
        """Add one run; ``result`` is None when the journal was refused. Returns whether no error names it.

        ``records_added``: its records are in ``self.records`` already (a loader put them there first).
        """
        findings = [*reader_findings, *(result.findings if result is not None else ())]
        self.add_findings(findings)
        first_error = next((f for f in findings if f.severity == "error"), None)
        if first_error is not None:
            self.bad_runs.append((run, first_error))
        if self.want_records and not records_added:
            self.records.add(run, records)
        self._add_run_row(run, records, findings, result, good=first_error is None and result is not None)
        if result is not None:
            self._add_messages(run, result)
            self._add_calls(run, result)
        return first_error is None

    def _add_run_row(
        self,
        run: str,
        records: Sequence[RawRecord],
        findings: Sequence[Finding],
        result: FoldResult | None,
        good: bool,
    ) -> None:
        row = self._runs
        row["run"].append(run)
        row["records"].append(len(records))
        row["error_findings"].append(sum(1 for f in findings if f.severity == "error"))
        row["warning_findings"].append(sum(1 for f in findings if f.severity == "warning"))
        row["source"].append(self.source)
        if result is None:
            summary = _unfolded_summary(records)
            values: dict[str, Any] = {"status": "invalid", **summary}
        else:
            counters = result.counters
            # An invalid run's identity columns come from its records, by the listing's rule.
            facts = None if good else unfolded_facts(records)
            values = {
                "status": result.status if good else "invalid",
                "created": result.first_ts if facts is None else facts.created,
                "last_seq": result.resume.last_seq if facts is None else facts.last_seq,
                "last_ts": result.last_ts,
                "model": result.model if facts is None else result.model or facts.model,
                "turns": counters.turns,
                "tool_calls": counters.tool_calls,
                "input_tokens": counters.input_tokens,
                "output_tokens": counters.output_tokens,
                "pending_calls": len(result.pending),
                "deferred_calls": sum(1 for call in result.pending if call.deferred is not None),
                "claims": counters.claims,
                "errors": counters.errors,
                "stop_reason": result.stop_reason,
                "end_reason": result.ending.text if result.ending is not None else None,
                "tool_errors": counters.tool_errors,
                "deferrals": counters.deferrals,
                "skipped_optional": counters.skipped_optional,
                "waiting_for": result.resume.waiting_for,
                "task": result.task,
            }
        task = values.get("task")
        values["task_state"] = self.task_states.get(task) if task is not None else None
        for name, values_of_column in row.items():
            if name not in ("run", "records", "error_findings", "warning_findings", "source"):
                values_of_column.append(values.get(name))

    def _add_messages(self, run: str, result: FoldResult) -> None:
        columns = self._messages
        rows = [_message_row(message["content"]) for message in result.messages]
        count = len(rows)
        columns["run"].extend([run] * count)
        columns["index"].extend(range(count))
        columns["role"].extend([message["role"] for message in result.messages])
        columns["text"].extend([row[0] for row in rows])
        columns["tool_use_count"].extend([row[1] for row in rows])
        columns["tool_result_count"].extend([row[2] for row in rows])

    def _add_calls(self, run: str, result: FoldResult) -> None:
        columns = self._calls
        for trace in result.tool_calls:
            columns["run"].append(run)
            columns["call_id"].append(trace.call_id)
            columns["name"].append(trace.name)
            columns["input"].append(orjson.dumps(trace.input).decode())
            columns["call_seq"].append(trace.call_seq)
            columns["result_seq"].append(trace.result_seq)
            columns["is_error"].append(trace.is_error)
            columns["deferred"].append(trace.deferred)
            columns["approval"].append(trace.approval)
            columns["call_ts"].append(trace.call_ts)
            columns["result_ts"].append(trace.result_ts)
            columns["latency_s"].append(None)  # from the parsed timestamps, in finish()

    def finish(self) -> Tables:
        runs = self._runs
        run_arrays = [
            timestamps(runs[f.name]) if f.type == TIMESTAMP else column(runs[f.name], f.type) for f in RUNS_SCHEMA
        ]
        calls = self._calls
        call_ts, result_ts = timestamps(calls["call_ts"]), timestamps(calls["result_ts"])
        micros = pc.cast(pc.subtract(result_ts, call_ts), pa.int64())
        latency = pc.divide(pc.cast(micros, pa.float64()), pa.scalar(1_000_000.0))
        computed = {"call_ts": call_ts, "result_ts": result_ts, "latency_s": latency}
        call_arrays = [
            computed[f.name] if f.name in computed else column(calls[f.name], f.type) for f in TOOL_CALLS_SCHEMA
        ]
        message_arrays = [column(self._messages[f.name], f.type) for f in MESSAGES_SCHEMA]
        records = (
            pa.Table.from_batches([self.records.batch(self.source)], RECORDS_SCHEMA)
            if self.want_records
            else empty_table("records")
        )
        return Tables(
            records=records,
            runs=pa.Table.from_arrays(run_arrays, schema=RUNS_SCHEMA),
            messages=pa.Table.from_arrays(message_arrays, schema=MESSAGES_SCHEMA),
            tool_calls=pa.Table.from_arrays(call_arrays, schema=TOOL_CALLS_SCHEMA),
            findings=findings_table(self.findings),
        )


def tables_of_runs(
    runs: Iterable[tuple[str, Sequence[RawRecord], Sequence[Finding], FoldResult | None]],
    source: str,
    *,
    records: bool = True,
) -> Tables:
    """The five tables of runs already read and folded (leniently). Pure; handy for notebooks and tests."""
    builder = TablesBuilder(source, records=records)
    for run, run_records, findings, result in runs:
        builder.add_run(run, run_records, findings, result)
    return builder.finish()
