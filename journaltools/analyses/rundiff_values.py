"""What a diff of two runs says, as values: each side (``DiffSide``), the pairs of turns and calls, the fields
whose change the resume gate weighs, the deltas of tokens and times (``RunDiff``), and its readable account."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from journaltools.folding.facts import CallFact, ResponseFact
from journaltools.folding.phrases import ending_text, why_stopped
from journaltools.folding.run import FoldedRun
from journaltools.ops.gate import FIELD_CLASSES, Candidate, GateResult
from journaltools.protocol.journal import StoredRecord

if TYPE_CHECKING:
    pass


AlignedBy = Literal["tool_use_id", "position"]


def outcome_of(call: CallFact) -> tuple[str, str | None, bool | None]:
    """(answered / deferred / waiting, the result's content or the deferral's note, the error flag)."""
    if call.answer is not None:
        return "answered", call.answer.result.content, call.answer.result.is_error
    if call.deferral is not None:
        return "deferred", call.deferral.note, None
    return "waiting", None, None


#: The token counts compared per turn and in total.
TOKENS: Final = ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens")

#: What makes a pair of calls diverge.
DIVERGING: Final = ("name", "input", "result")


@dataclass(frozen=True, slots=True)
class Delta:
    """One quantity on both sides and B minus A (None when either side has none)."""

    a: int | None
    b: int | None

    @property
    def delta(self) -> int | None:
        return None if self.a is None or self.b is None else self.b - self.a

    def to_json(self) -> dict[str, int | None]:
        return {"a": self.a, "b": self.b, "delta": self.delta}


@dataclass(slots=True)
class DiffSide:
    """One side: a folded journal, and the scope of it compared (a segment, or all of it)."""

    source: str
    folded: FoldedRun
    segment: int | None
    first_seq: int
    last_seq: int
    #: Each record's own time, in stored order (``""`` when undated).
    record_times: list[str]
    #: seq -> the text of each model response (its text blocks joined by newlines).
    response_texts: dict[int, str]
    raws: list[bytes]
    responses: list[ResponseFact]
    calls: list[CallFact]
    #: Iterations are counted from this one (a segment's first; 0 for a whole journal).
    base_iteration: int
    #: seq -> the time of the record before it (dated records only).
    previous_time: dict[int, str]

    @property
    def run(self) -> str:
        return self.folded.run

    @property
    def dated(self) -> bool:
        """Whether any record in scope carries its own time."""
        return any(self.record_times)

    @property
    def problems(self) -> dict[str, int]:
        """Warning and error findings in scope, by code (a segment's: those at its seqs): what went wrong on this
        side, which a diff of two runs lists when the sides differ in it."""
        counts: dict[str, int] = {}
        for finding in self.folded.findings:
            in_scope = self.segment is None or (
                finding.seq is not None and self.first_seq <= finding.seq <= self.last_seq
            )
            if finding.severity != "info" and in_scope:
                counts[finding.code] = counts.get(finding.code, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def tool_errors(self) -> int:
        """Calls in scope whose result says it failed."""
        return sum(1 for call in self.calls if call.answer is not None and call.answer.result.is_error)

    @property
    def fingerprint(self) -> dict[str, object] | None:
        """The fingerprint's fields the resume gate compares, by name (``ops.gate.FIELD_CLASSES``)."""
        state = self.folded.state
        if state is None:
            return None
        return {name: getattr(state.fingerprint, name) for name in FIELD_CLASSES}

    def as_candidate(self) -> Candidate | None:
        """This side's fingerprint and mode as a resume's candidate configuration (``ops.gate``)."""
        state = self.folded.state
        if state is None:
            return None
        fields = {name: getattr(state.fingerprint, name) for name in FIELD_CLASSES}
        return Candidate(**fields, interactive=state.interactive)

    @property
    def ending(self) -> str:
        """How the side ended, or what it waits for, in the words every face uses: a process run's ending, else
        the run's status and why (``folding.phrases.why_stopped``)."""
        if self.segment is not None:
            segments = self.folded.result.segments
            return ending_text(segments[self.segment].ending) if self.segment < len(segments) else "unknown"
        result = self.folded.as_fold_result()
        return f"{result.status}: {why_stopped(result)}"

    def to_json(self) -> dict[str, Any]:
        generation = self.folded.generation
        return {
            "source": self.source,
            "run": self.run,
            "segment": self.segment,
            "generation": generation.name if generation is not None else None,
            "status": self.folded.status,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "records": len(self.record_times),
            "dated": self.dated,
        }


def _raws(stored: Sequence[object]) -> list[bytes]:
    """The stored bytes of each record, or none when a read holds records without them."""
    raws = [item.raw for item in stored if isinstance(item, StoredRecord)]
    return raws if len(raws) == len(stored) else []


@dataclass(frozen=True, slots=True)
class CallPair:
    """A call on each side (either may be None: a call only in one), and what differs between them."""

    turn: int
    a: CallFact | None
    b: CallFact | None
    aligned_by: AlignedBy | None
    differs: tuple[str, ...]

    @property
    def diverges(self) -> bool:
        return self.a is None or self.b is None or any(name in DIVERGING for name in self.differs)

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "aligned_by": self.aligned_by,
            "differs": list(self.differs),
            "a": call_json(self.a),
            "b": call_json(self.b),
        }


@dataclass(frozen=True, slots=True)
class TurnPair:
    """A model response on each side (either may be None: a turn only in one)."""

    turn: int
    a: ResponseFact | None
    b: ResponseFact | None
    calls: Delta
    tokens: dict[str, Delta]
    model_ns: Delta
    tools_ns: Delta
    text_differs: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "iteration_a": self.a.iteration if self.a is not None else None,
            "iteration_b": self.b.iteration if self.b is not None else None,
            "seq_a": self.a.seq if self.a is not None else None,
            "seq_b": self.b.seq if self.b is not None else None,
            "stop_reason_a": self.a.stop_reason if self.a is not None else None,
            "stop_reason_b": self.b.stop_reason if self.b is not None else None,
            "text_differs": self.text_differs,
            "calls": self.calls.to_json(),
            "tokens": {name: delta.to_json() for name, delta in self.tokens.items()},
            "model_ns": self.model_ns.to_json(),
            "tools_ns": self.tools_ns.to_json(),
        }


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    field_class: str
    a: Any
    b: Any

    @property
    def changed(self) -> bool:
        return bool(self.a != self.b)

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "class": self.field_class, "a": self.a, "b": self.b, "changed": self.changed}


@dataclass(slots=True)
class RunDiff:
    """What differs between two sides (see the module doc). ``same_records``: both scopes hold the same records,
    byte for byte (a faithful copy); ``first_divergence``: the first pair of calls, in turn order, that diverges."""

    a: DiffSide
    b: DiffSide
    same_records: bool
    fingerprint: list[FieldChange]
    gate: GateResult | None
    turns: list[TurnPair]
    calls: list[CallPair]
    totals: dict[str, Delta]
    times_compared: bool
    times_note: str | None
    first_divergence: CallPair | None = field(default=None)

    @property
    def fingerprint_changes(self) -> list[FieldChange]:
        return [change for change in self.fingerprint if change.changed]

    @property
    def only_in_a(self) -> list[CallFact]:
        return [pair.a for pair in self.calls if pair.b is None and pair.a is not None]

    @property
    def only_in_b(self) -> list[CallFact]:
        return [pair.b for pair in self.calls if pair.a is None and pair.b is not None]

    @property
    def ending_differs(self) -> bool:
        return self.a.ending != self.b.ending

    @property
    def problems_differ(self) -> bool:
        return self.a.problems != self.b.problems

    @property
    def tool_errors_differ(self) -> bool:
        return self.a.tool_errors != self.b.tool_errors

    @property
    def identical(self) -> bool:
        """Nothing the diff compares differs (the records may still differ in what it does not compare)."""
        return (
            not self.ending_differs
            and not self.problems_differ
            and not self.tool_errors_differ
            and not self.fingerprint_changes
            and self.first_divergence is None
            and not any(pair.differs for pair in self.calls)
            and not any(turn.text_differs or _tokens_differ(turn) or None in (turn.a, turn.b) for turn in self.turns)
        )

    def to_json(self) -> dict[str, Any]:
        """The ``diff --json`` document."""
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "same_records": self.same_records,
            "identical": self.identical,
            "ending": {"a": self.a.ending, "b": self.b.ending, "changed": self.ending_differs},
            "findings": {"a": self.a.problems, "b": self.b.problems, "changed": self.problems_differ},
            "tool_errors": {"a": self.a.tool_errors, "b": self.b.tool_errors, "changed": self.tool_errors_differ},
            "fingerprint": {
                "changed": [change.field for change in self.fingerprint_changes],
                "fields": [change.to_json() for change in self.fingerprint],
                "gate": self.gate.to_json() if self.gate is not None else None,
            },
            "first_divergence": self.first_divergence.to_json() if self.first_divergence is not None else None,
            "turns": [turn.to_json() for turn in self.turns],
            "calls": [pair.to_json() for pair in self.calls],
            "only_in_a": [call_json(call) for call in self.only_in_a],
            "only_in_b": [call_json(call) for call in self.only_in_b],
            "totals": {name: delta.to_json() for name, delta in self.totals.items()},
            "times": {"compared": self.times_compared, "why_not": self.times_note},
        }

    def text_lines(self) -> list[str]:
        """The readable account ``diff`` prints (journal text in it is escaped by the printer)."""
        return _text_lines(self)


def _tokens_differ(turn: TurnPair) -> bool:
    return any(delta.delta not in (0, None) for delta in turn.tokens.values())


def call_json(call: CallFact | None) -> dict[str, Any] | None:
    """A call as the ``diff --json`` document shows it: the input as the journal holds it (raw JSON)."""
    if call is None:
        return None
    outcome, result, is_error = outcome_of(call)
    raw = call.input or b"null"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raw = raw.decode("utf-8", "replace").encode()
    return {
        "tool_use_id": call.tool_use_id,
        "name": call.tool,
        "iteration": call.iteration,
        "input": msgspec.Raw(raw),
        "made_seq": call.made_seq,
        "answered_seq": call.answered_seq,
        "outcome": outcome,
        "result": result,
        "is_error": is_error,
        "kind": call.kind,
        "dispatched": call.dispatched,
        "duration_ns": call.duration_ns,
    }


def _side_line(label: str, side: DiffSide) -> str:
    where = f" segment {side.segment}" if side.segment is not None else ""
    generation = side.folded.generation
    dated = "dated" if side.dated else "undated"
    return (
        f"{label}: {side.run}{where} in {side.source} ({generation.name if generation else 'unknown build'}, "
        f"{side.folded.status}, seq {side.first_seq}-{side.last_seq}, {len(side.record_times)} records, {dated})"
    )


def _duration(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e9:.3f}s"


def _signed(value: int | None, *, seconds: bool = False) -> str:
    if value is None:
        return "-"
    if seconds:
        return f"{value / 1e9:+.3f}s"
    return f"{value:+d}"


def _call_words(call: CallFact | None) -> str:
    if call is None:
        return "(none)"
    outcome, result, is_error = outcome_of(call)
    shown = (result or "").replace("\n", " ")
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    error = " (error)" if is_error else ""
    raw = bytes(call.input).decode("utf-8", "replace")
    raw = raw if len(raw) <= 80 else raw[:77] + "..."
    return f"{call.tool_use_id} {call.tool} {raw} -> {outcome}{error}: {shown}"


def _problems(counts: dict[str, int]) -> str:
    return ", ".join(f"{code} x{count}" if count > 1 else code for code, count in counts.items()) or "none"


def _text_lines(result: RunDiff) -> list[str]:
    lines = [_side_line("A", result.a), _side_line("B", result.b)]
    if result.same_records:
        lines.append("records: the same, byte for byte")
    elif result.identical:
        lines.append("records: differ, but nothing compared differs")
    if result.ending_differs:
        lines.append(f"ending: A {result.a.ending}")
        lines.append(f"        B {result.b.ending}")
    else:
        lines.append(f"ending: the same ({result.a.ending})")
    if result.problems_differ:
        lines.append(f"findings: A {_problems(result.a.problems)}")
        lines.append(f"          B {_problems(result.b.problems)}")
    if result.tool_errors_differ:
        lines.append(f"tool errors: A {result.a.tool_errors}, B {result.b.tool_errors}")
    changes = result.fingerprint_changes
    if not changes:
        lines.append("fingerprint: the same")
    for change in changes:
        lines.append(f"fingerprint: {change.field} ({change.field_class}) {change.a!r} -> {change.b!r}")
    if result.gate is not None:
        verdict = "resumable" if result.gate.resumable else f"NOT resumable: {result.gate.refusal}"
        lines.append(f"resume gate, B's fingerprint as the candidate for A: {verdict}")
        lines.extend(f"  warning: {warning}" for warning in result.gate.warnings)
    first = result.first_divergence
    if first is None:
        lines.append("calls: no divergence")
    else:
        what = ", ".join(name for name in first.differs if name in DIVERGING) or "only in one"
        lines.append(f"first divergence: turn {first.turn}: {what}")
        lines.append(f"  A: {_call_words(first.a)}")
        lines.append(f"  B: {_call_words(first.b)}")
    lines.append("")
    lines.append("turn  calls A/B  in A/B (delta)  out A/B (delta)  model time A/B (delta)  tools A/B  text")
    for turn in result.turns:
        tokens_in, tokens_out = turn.tokens["in_tokens"], turn.tokens["out_tokens"]
        lines.append(
            f"{turn.turn:>4}  {_n(turn.calls.a)}/{_n(turn.calls.b)}  "
            f"{_n(tokens_in.a)}/{_n(tokens_in.b)} ({_signed(tokens_in.delta)})  "
            f"{_n(tokens_out.a)}/{_n(tokens_out.b)} ({_signed(tokens_out.delta)})  "
            f"{_duration(turn.model_ns.a)}/{_duration(turn.model_ns.b)} "
            f"({_signed(turn.model_ns.delta, seconds=True)})  "
            f"{_duration(turn.tools_ns.a)}/{_duration(turn.tools_ns.b)}  "
            f"{'differs' if turn.text_differs else 'same'}"
        )
    totals = result.totals
    lines.append(
        "total: "
        + ", ".join(
            f"{name} {_n(totals[name].a)}/{_n(totals[name].b)} ({_signed(totals[name].delta)})" for name in TOKENS
        )
    )
    if result.times_compared:
        lines.append(
            "time: "
            + ", ".join(
                f"{name[:-3]} {_duration(totals[name].a)}/{_duration(totals[name].b)} "
                f"({_signed(totals[name].delta, seconds=True)})"
                for name in ("elapsed_ns", "model_ns", "tools_ns")
            )
        )
    else:
        lines.append(f"time: not compared: {result.times_note}")
    for pair in result.calls:
        if pair.b is None:
            lines.append(f"only in A: turn {pair.turn}: {_call_words(pair.a)}")
        elif pair.a is None:
            lines.append(f"only in B: turn {pair.turn}: {_call_words(pair.b)}")
    differing = [pair for pair in result.calls if pair.a is not None and pair.b is not None and pair.differs]
    for pair in differing:
        assert pair.a is not None
        lines.append(f"differs: turn {pair.turn} {pair.a.tool_use_id} {pair.a.tool}: {', '.join(pair.differs)}")
    return lines


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)
