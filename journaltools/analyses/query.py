"""``session query``: a run's tool calls, each paired with its answer or deferral (NEWEST A1's pairing), filtered
by tool, by error and by Go regular expressions over inputs and outputs, with the same ``--json`` bytes."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from journaltools.analyses.runtime_bytes import (
    go_time_text,
    json_document,
    json_int,
    json_object,
    json_string,
)
from journaltools.errors import InvalidPattern
from journaltools.folding.facts import CallAnswer, CallDeferral, CallFact, RunFacts, undated
from journaltools.goencoding.json import go_utf8
from journaltools.goencoding.json_values import compact
from journaltools.goencoding.regexp import GoRegexp, GoRegexpError, compile_go
from journaltools.sources.registry import run_facts


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call paired with its answer (``session query``), by NEWEST A1's pairing."""

    iteration: int
    tool_use_id: str
    tool: str
    #: The input as journaled (raw JSON; ``b""`` when the call carried none).
    input: bytes
    #: When the assistant record that made it was journaled (``""`` when undated).
    time: str
    deferred: CallDeferral | None
    answer: CallAnswer | None
    answer_time: str
    #: By the runtime's timing rule (not in its document); None when untimed or not ended.
    duration_ns: int | None
    #: The seqs of the records that made, deferred and answered it (not in the runtime's document).
    made_seq: int
    deferred_seq: int | None
    answered_seq: int | None

    @property
    def is_error(self) -> bool:
        return self.answer is not None and self.answer.result.is_error

    @classmethod
    def of(cls, fact: CallFact) -> Call:
        return cls(
            iteration=fact.iteration,
            tool_use_id=fact.tool_use_id,
            tool=fact.tool,
            input=fact.input,
            time=fact.made_time,
            deferred=fact.deferral,
            answer=fact.answer,
            answer_time=fact.answered_time,
            duration_ns=fact.duration_ns,
            made_seq=fact.made_seq,
            deferred_seq=fact.deferred_seq,
            answered_seq=fact.answered_seq,
        )


def compile_pattern(flag: str, pattern: str | None) -> GoRegexp | None:
    """A ``--input-match`` / ``--output-match`` / ``--match`` pattern compiled by Go's rules; None for no pattern
    (an empty one is none, as the runtime reads it). ``InvalidPattern`` names the flag and why Go refuses it."""
    if not pattern:
        return None
    try:
        return compile_go(pattern)
    except GoRegexpError as exc:
        raise InvalidPattern(flag, pattern, str(exc)) from None


@dataclass(frozen=True, slots=True)
class CallFilter:
    """``runstate.CallFilter``: every criterion given must hold. ``errors`` and ``output`` select answered calls
    only. Patterns are Go regular expressions (``compile_pattern``)."""

    tools: tuple[str, ...] = ()
    iteration: int | None = None
    answered: bool = False
    errors: bool = False
    input: GoRegexp | None = None
    output: GoRegexp | None = None

    def matches(self, call: Call) -> bool:
        if self.tools and call.tool not in self.tools:
            return False
        if self.iteration is not None and call.iteration != self.iteration:
            return False
        answer = call.answer
        if (self.answered or self.errors or self.output is not None) and answer is None:
            return False
        if self.errors and answer is not None and not answer.result.is_error:
            return False
        # Go matches the raw input bytes: a byte that is not UTF-8 reads as U+FFFD, as go_utf8 decodes it.
        if self.input is not None and not self.input.search(go_utf8(call.input)):
            return False
        return not (self.output is not None and answer is not None and not self.output.search(answer.result.content))

    def select(self, calls: Iterable[Call]) -> list[Call]:
        return [call for call in calls if self.matches(call)]


def run_calls(facts: RunFacts) -> list[Call]:
    """``runstate.Calls`` of a journal, from the facts of its records: every call in the order made, each with its
    answer."""
    return [Call.of(fact) for fact in facts.calls]


def _deferred_json(deferred: CallDeferral) -> bytes:
    pairs = [("tool_use_id", json_string(deferred.tool_use_id)), ("tool_name", json_string(deferred.tool_name))]
    for key, text in (("note", deferred.note), ("handle", deferred.handle), ("kind", deferred.kind)):
        if text:
            pairs.append((key, json_string(text)))
    if deferred.dispatched:
        pairs.append(("dispatched", b"true"))
    return json_object(pairs)


def _answer_json(answer: CallAnswer) -> bytes:
    result = answer.result
    inner = [("tool_use_id", json_string(result.tool_use_id)), ("content", json_string(result.content))]
    if result.is_error:
        inner.append(("is_error", b"true"))
    pairs = [("tool_use_id", json_string(answer.tool_use_id)), ("result", json_object(inner))]
    if answer.remote:
        pairs.append(("remote", b"true"))
    if answer.kind:
        pairs.append(("kind", json_string(answer.kind)))
    if answer.dispatched:
        pairs.append(("dispatched", b"true"))
    return json_object(pairs)


def _call_json(call: Call, *, calls_only: bool, results_only: bool) -> bytes:
    pairs = [
        ("iteration", json_int(call.iteration)),
        ("tool_use_id", json_string(call.tool_use_id)),
        ("tool", json_string(call.tool)),
    ]
    if call.input and not results_only:
        # A json.RawMessage: compacted, and not HTML-escaped by this encoder (escapes the journal holds stay).
        pairs.append(("input", compact(call.input)))
    if not undated(call.time):
        pairs.append(("time", json_string(go_time_text(call.time))))
    if call.deferred is not None:
        pairs.append(("deferred", _deferred_json(call.deferred)))
    if call.answer is not None and not calls_only:
        pairs.append(("answer", _answer_json(call.answer)))
        if not undated(call.answer_time):
            pairs.append(("answer_time", json_string(go_time_text(call.answer_time))))
    return json_object(pairs)


def query_json(run_id: str, calls: Sequence[Call], *, calls_only: bool = False, results_only: bool = False) -> bytes:
    """The exact bytes ``session query RUN --json`` prints for the selected ``calls`` (``calls_only`` leaves out
    each answer, ``results_only`` each input)."""
    listed = b",".join(_call_json(call, calls_only=calls_only, results_only=results_only) for call in calls)
    return json_document(json_object([("run_id", json_string(run_id)), ("calls", b"[" + listed + b"]")]))


def calls(
    source: str | os.PathLike[str] | None,
    run: str,
    *,
    tools: Sequence[str] = (),
    iteration: int | None = None,
    answered: bool = False,
    errors: bool = False,
    input_match: str | None = None,
    output_match: str | None = None,
) -> list[Call]:
    """``session query``: the tool calls of ``run`` that every criterion given selects, each with its answer.
    ``input_match`` / ``output_match`` are Go regular expressions (``InvalidPattern`` when Go would refuse one)."""
    call_filter = CallFilter(
        tools=tuple(tools),
        iteration=iteration,
        answered=answered,
        errors=errors,
        input=compile_pattern("input-match", input_match),
        output=compile_pattern("output-match", output_match),
    )
    return call_filter.select(run_calls(run_facts(source, run)))
