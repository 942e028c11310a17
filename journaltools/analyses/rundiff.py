"""Two runs side by side (``journaltools diff``, ``jt.diff``): two runs of one source, one run in two sources (a file
journal and its JetStream copy), or two process runs (segments) of one run.

Each side is a scope of one folded journal: the whole journal, or one segment of it (from its claim to the record
before the next). The sides are aligned the way the runtime numbers its work:

- **turns** by iteration: the model response of iteration N on one side with iteration N on the other (a segment
  counts its iterations from its own first one, so the first turn of two resumes line up); a second response with
  one iteration (a journal the runtime would not write) pairs with the other side's second;
- **calls** within a pair of turns by ``tool_use_id`` first (a copy keeps every id), then the calls left on both
  sides by their place in the turn (two runs of one task get fresh ids from the provider); a call with no partner is
  a call only in one. A pair **diverges** when the tool's name, its input (the raw JSON bytes) or its result (the
  content and the error flag; a deferral or no answer yet is a result too) differ; the provider's ``kind`` and
  ``dispatched`` are compared as well but a newest journal says them where an August one cannot, so they never
  make a divergence.

Tokens are compared per turn and in total. Times only where both sides are dated (the newest line dates every
record; an August journal dates none), and the document says why when they are not: a turn's ``model_ns`` is
from the record before the model's response to the response, ``tools_ns`` the sum of its calls' durations
(``folding.facts``), ``elapsed_ns`` from the scope's first dated record to its last.

The fingerprints are compared field by field, and the resume gate (``ops.gate``) is asked what it would say of B's
fingerprint as the candidate configuration for A, as for a follow-up (a completed run is not refused for being
completed: the question is whether the configuration may carry the conversation on).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from journaltools.analyses.rundiff_values import (
    TOKENS,
    AlignedBy,
    CallPair,
    Delta,
    DiffSide,
    FieldChange,
    RunDiff,
    TurnPair,
    _raws,
    outcome_of,
)
from journaltools.errors import NoSuchSegment
from journaltools.folding.facts import CallFact, ResponseFact, time_ns
from journaltools.folding.fold import fold
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.ops.gate import FIELD_CLASSES, GateResult, resume_gate
from journaltools.protocol.journal import typed_records

if TYPE_CHECKING:
    from journaltools.sources.base import Backend


def side_of(folded: FoldedRun, source: str = "", segment: int | None = None) -> DiffSide:
    """The scope of ``folded`` a diff compares: segment ``segment`` (numbered from 0), or the whole journal."""
    stored = list(folded.read.records)
    records = typed_records(stored)
    first, last = (records[0].seq, records[-1].seq) if records else (0, 0)
    if segment is not None:
        segments = folded.result.segments
        if not 0 <= segment < len(segments):
            raise NoSuchSegment(folded.run, segment, len(segments))
        first, last = segments[segment].first_seq, segments[segment].last_seq
    inside = [index for index, record in enumerate(records) if first <= record.seq <= last]
    facts = folded.facts()
    responses = [response for response in facts.responses if first <= response.seq <= last]
    previous: dict[int, str] = {}
    for before, record in pairwise(records):
        if before.time:
            previous[record.seq] = before.time
    return DiffSide(
        source=source,
        folded=folded,
        segment=segment,
        first_seq=first,
        last_seq=last,
        record_times=[records[index].time for index in inside],
        response_texts={
            record.seq: "\n".join(block.text.text for block in record.assistant.message.content or () if block.text)
            for record in (records[index] for index in inside)
            if record.assistant is not None
        },
        raws=_raws([stored[index] for index in inside]),
        responses=responses,
        calls=[call for call in facts.calls if first <= call.made_seq <= last],
        base_iteration=responses[0].iteration if segment is not None and responses else 0,
        previous_time=previous,
    )


def _call_differences(a: CallFact, b: CallFact) -> tuple[str, ...]:
    differs: list[str] = []
    if a.tool != b.tool:
        differs.append("name")
    if bytes(a.input) != bytes(b.input):
        differs.append("input")
    if outcome_of(a) != outcome_of(b) or (a.deferral is None) != (b.deferral is None):
        differs.append("result")
    if a.kind != b.kind:
        differs.append("kind")
    if a.dispatched != b.dispatched:
        differs.append("dispatched")
    return tuple(differs)


def _pair_calls(turn: int, calls_a: list[CallFact], calls_b: list[CallFact]) -> list[CallPair]:
    """Pair by tool_use_id (in order of occurrence), then what is left by place; A's order, B's extras last."""
    partner: dict[int, tuple[int, AlignedBy]] = {}
    taken: set[int] = set()
    for index_a, call_a in enumerate(calls_a):
        for index_b, call_b in enumerate(calls_b):
            if index_b not in taken and call_b.tool_use_id == call_a.tool_use_id:
                partner[index_a] = (index_b, "tool_use_id")
                taken.add(index_b)
                break
    left_b = [index for index in range(len(calls_b)) if index not in taken]
    for index_a in range(len(calls_a)):
        if index_a not in partner and left_b:
            partner[index_a] = (left_b.pop(0), "position")
    pairs: list[CallPair] = []
    for index_a, call_a in enumerate(calls_a):
        found = partner.get(index_a)
        if found is None:
            pairs.append(CallPair(turn, call_a, None, None, ()))
            continue
        call_b = calls_b[found[0]]
        pairs.append(CallPair(turn, call_a, call_b, found[1], _call_differences(call_a, call_b)))
    paired_b = {index_b for index_b, _ in partner.values()}
    pairs.extend(CallPair(turn, None, call, None, ()) for index, call in enumerate(calls_b) if index not in paired_b)
    return pairs


def _turn_keys(side: DiffSide) -> list[tuple[int, int, ResponseFact]]:
    """(turn, occurrence, response): a turn is the iteration counted from the side's base."""
    seen: dict[int, int] = {}
    keys: list[tuple[int, int, ResponseFact]] = []
    for response in side.responses:
        turn = response.iteration - side.base_iteration
        seen[turn] = seen.get(turn, -1) + 1
        keys.append((turn, seen[turn], response))
    return keys


def _model_ns(side: DiffSide, response: ResponseFact | None) -> int | None:
    if response is None or not response.time:
        return None
    end, start = time_ns(response.time), time_ns(side.previous_time.get(response.seq, ""))
    return None if end is None or start is None or end < start else end - start


def _tools_ns(calls: Sequence[CallFact]) -> int | None:
    timed = [call.duration_ns for call in calls if call.duration_ns is not None]
    return sum(timed) if timed else None


def _elapsed_ns(side: DiffSide) -> int | None:
    moments = [moment for moment in map(time_ns, side.record_times) if moment is not None]
    return max(moments) - min(moments) if moments else None


def diff_sides(a: DiffSide, b: DiffSide) -> RunDiff:
    """Compare two sides (I/O free: what ``diff`` does once the journals are read and folded)."""
    times = a.dated and b.dated
    note = None
    if not times:
        undated = [name for name, side in (("A", a), ("B", b)) if not side.dated]
        why = "carries no record times (an August journal dates none)" if len(undated) == 1 else "carry no times"
        note = f"{' and '.join(undated)} {why}: times are compared only where both journals are dated"
    keys_a, keys_b = _turn_keys(a), _turn_keys(b)
    index_a = {(turn, occurrence): response for turn, occurrence, response in keys_a}
    index_b = {(turn, occurrence): response for turn, occurrence, response in keys_b}
    texts_a, texts_b = a.response_texts, b.response_texts
    calls_by_seq_a = _calls_by_seq(a.calls)
    calls_by_seq_b = _calls_by_seq(b.calls)
    turns: list[TurnPair] = []
    pairs: list[CallPair] = []
    for key in sorted(index_a.keys() | index_b.keys()):
        response_a, response_b = index_a.get(key), index_b.get(key)
        calls_a = calls_by_seq_a.get(response_a.seq, []) if response_a is not None else []
        calls_b = calls_by_seq_b.get(response_b.seq, []) if response_b is not None else []
        pairs.extend(_pair_calls(key[0], calls_a, calls_b))
        tools_a, tools_b = _tools_ns(calls_a), _tools_ns(calls_b)
        turns.append(
            TurnPair(
                turn=key[0],
                a=response_a,
                b=response_b,
                calls=Delta(len(calls_a) if response_a else None, len(calls_b) if response_b else None),
                tokens={
                    name: Delta(
                        getattr(response_a, name) if response_a is not None else None,
                        getattr(response_b, name) if response_b is not None else None,
                    )
                    for name in TOKENS
                },
                model_ns=Delta(_model_ns(a, response_a), _model_ns(b, response_b)) if times else Delta(None, None),
                tools_ns=Delta(tools_a, tools_b) if times else Delta(None, None),
                text_differs=(response_a is None) != (response_b is None)
                or (
                    response_a is not None
                    and response_b is not None
                    and texts_a.get(response_a.seq) != texts_b.get(response_b.seq)
                ),
            )
        )
    totals = {name: Delta(_total(a, name), _total(b, name)) for name in TOKENS}
    totals["elapsed_ns"] = Delta(_elapsed_ns(a), _elapsed_ns(b)) if times else Delta(None, None)
    totals["model_ns"] = _sum_delta([turn.model_ns for turn in turns]) if times else Delta(None, None)
    totals["tools_ns"] = Delta(_tools_ns(a.calls), _tools_ns(b.calls)) if times else Delta(None, None)
    fingerprint = _fingerprint_changes(a, b)
    return RunDiff(
        a=a,
        b=b,
        same_records=bool(a.raws) and a.raws == b.raws,
        fingerprint=fingerprint,
        gate=_gate(a, b),
        turns=turns,
        calls=pairs,
        totals=totals,
        times_compared=times,
        times_note=note,
        first_divergence=next((pair for pair in pairs if pair.diverges), None),
    )


def _calls_by_seq(calls: Sequence[CallFact]) -> dict[int, list[CallFact]]:
    grouped: dict[int, list[CallFact]] = {}
    for call in calls:
        grouped.setdefault(call.made_seq, []).append(call)
    return grouped


def _total(side: DiffSide, name: str) -> int:
    return sum(int(getattr(response, name)) for response in side.responses)


def _sum_delta(deltas: Sequence[Delta]) -> Delta:
    a = [delta.a for delta in deltas if delta.a is not None]
    b = [delta.b for delta in deltas if delta.b is not None]
    return Delta(sum(a) if a else None, sum(b) if b else None)


def _fingerprint_changes(a: DiffSide, b: DiffSide) -> list[FieldChange]:
    fingerprint_a, fingerprint_b = a.fingerprint, b.fingerprint
    changes = [
        FieldChange(
            name,
            kind,
            fingerprint_a[name] if fingerprint_a is not None else None,
            fingerprint_b[name] if fingerprint_b is not None else None,
        )
        for name, kind in FIELD_CLASSES.items()
    ]
    state_a, state_b = a.folded.state, b.folded.state
    changes.append(
        FieldChange(
            "interactive",
            "mode",
            state_a.interactive if state_a is not None else None,
            state_b.interactive if state_b is not None else None,
        )
    )
    return changes


def _gate(a: DiffSide, b: DiffSide) -> GateResult | None:
    """The resume gate's word on B's fingerprint as the candidate for A (A's state as of its scope's end)."""
    candidate = b.as_candidate()
    if candidate is None or a.fingerprint is None:
        return None
    state = a.folded.state
    if a.segment is not None:
        prefix = [record for record in typed_records(a.folded.read.records) if record.seq <= a.last_seq]
        state = fold(prefix, run=a.run, strict=False).state
    if state is None:
        return None
    return resume_gate(state, candidate, follow_up=True)


def diff(
    source: str,
    run_a: str,
    run_b: str | None = None,
    *,
    source_b: str | None = None,
    segments: tuple[int, int] | None = None,
    strict: bool = True,
) -> RunDiff:
    """Compare ``run_a`` of ``source`` with ``run_b`` (default: the same run) of ``source_b`` (default: the same
    source); with ``segments=(i, j)``, process run i of the first with process run j of the second. Strict by
    default, as ``show``: a journal the runtime would refuse raises; ``strict=False`` folds past it (its status is
    then ``invalid``)."""
    from journaltools.sources.registry import open_source

    other_source = source if source_b is None else source_b
    other_run = run_a if run_b is None else run_b
    with open_source(source) as backend:
        folded_a = _folded(backend, run_a, strict)
        if other_source == source:
            folded_b = folded_a if other_run == run_a else _folded(backend, other_run, strict)
            url_b = backend.url
        else:
            with open_source(other_source) as other:
                folded_b = _folded(other, other_run, strict)
                url_b = other.url
        url_a = backend.url
    segment_a, segment_b = segments if segments is not None else (None, None)
    return diff_sides(side_of(folded_a, url_a, segment_a), side_of(folded_b, url_b, segment_b))


def _folded(backend: Backend, run: str, strict: bool) -> FoldedRun:
    return fold_run(backend.read_run(run, strict=strict), strict=strict)


# -- the readable account ----------------------------------------------------------------------------------------


__all__ = ["CallPair", "Delta", "DiffSide", "FieldChange", "RunDiff", "TurnPair", "diff", "diff_sides", "side_of"]
