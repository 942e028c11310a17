"""What the OTLP and ATIF exports both read off a folded run: its calls and their outcomes, its times in
nanoseconds, and its messages as GenAI message parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import msgspec

from journaltools.errors import ExportError
from journaltools.folding.exchanges import Exchange, exchanges_of
from journaltools.folding.facts import CallFact, MetaFacts, RunFacts, time_ns
from journaltools.folding.run import FoldedRun

#: ``fisk.tool.outcome`` as the journal can tell it.
OUTCOMES: Final = ("dispatched", "not_dispatched", "answered", "error", "deferred", "unanswered")


@dataclass(slots=True)
class RunView:
    """One folded run with what both exports need: what its meta record says, its exchanges and its facts."""

    folded: FoldedRun
    meta: MetaFacts
    exchanges: list[Exchange]
    facts: RunFacts

    @property
    def run(self) -> str:
        return self.folded.run

    @property
    def dated(self) -> bool:
        return self.facts.dated

    @property
    def agent(self) -> str:
        return self.meta.agent


def prepare(folded: FoldedRun) -> RunView | str:
    """The run ready to export, or why it cannot be (a journal with no meta record has no run to describe)."""
    facts = folded.facts()
    if facts.meta is None or folded.state is None:
        return "the journal holds no meta record to describe a run by"
    return RunView(folded, facts.meta, exchanges_of(folded), facts)


def outcome(call: CallFact) -> str:
    """``fisk.tool.outcome`` of one call, from what its records say (one of ``OUTCOMES``)."""
    if call.answer is None:
        return "deferred" if call.deferral is not None else "unanswered"
    if call.is_error:
        return "error"
    if not call.says_dispatch:
        return "answered"
    return "dispatched" if call.dispatched else "not_dispatched"


def tool_kind(call: CallFact) -> str | None:
    if call.answer is not None:
        return call.kind
    if call.deferral is not None and call.deferral.kind:
        return call.deferral.kind
    return None


def moment_ns(text: str) -> int | None:
    """A record time in nanoseconds since 1970; None when undated or before 1970 (OTLP times are unsigned)."""
    moment = time_ns(text) if text else None
    return moment if moment is not None and moment >= 0 else None


def checked(folded: FoldedRun) -> RunView:
    prepared = prepare(folded)
    if isinstance(prepared, str):
        raise ExportError(f"run {folded.run}: cannot export: {prepared}")
    return prepared


def dumps(value: Any) -> str:
    # msgspec, not orjson: a tool input may hold an integer beyond 64 bits, which JSON allows and orjson refuses.
    return msgspec.json.encode(value).decode()
