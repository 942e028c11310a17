"""Hypothesis strategies: valid runs generated as a sequence of protocol-respecting steps."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.builders import JournalBuilder

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
#: User content and text blocks must not be empty (the Messages API refuses them); tool results may be.
prose = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)


@st.composite
def valid_runs(draw: st.DrawFn, run: str = "gen-run") -> JournalBuilder:
    """A valid journal: meta, a user message, then turns whose calls are answered before the next turn.

    Claims and notes land anywhere (they are inert), calls may be deferred and approved, and the
    journal may stop with a turn in flight, a fatal error or a cancel.
    """
    journal = JournalBuilder(run)
    journal.user(draw(prose))
    call_number = 0
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            journal.add("user", content=[{"type": "text", "text": draw(prose)}])
        calls = [f"call_{call_number + i}" for i in range(draw(st.integers(0, 3)))]
        call_number += len(calls)
        journal.assistant(*calls, text=draw(prose), tokens=draw(st.integers(0, 1000)))
        order = draw(st.permutations(calls))
        for call in order:
            _maybe_inert(draw, journal)
            if draw(st.integers(0, 4)) == 0:
                journal.add("deferral", call=call, reason=draw(st.sampled_from(["approval", "external"])))
                if draw(st.booleans()):
                    journal.add("approval", call=call, decision=draw(st.sampled_from(["approve", "deny"])), by="op")
            journal.result(call, draw(texts), is_error=draw(st.booleans()))
        _maybe_inert(draw, journal)
        if draw(st.booleans()):
            journal.user(draw(prose))
    ending = draw(st.sampled_from(["none", "in_flight", "fatal", "cancel", "error"]))
    if ending == "in_flight":
        calls = [f"call_{call_number + i}" for i in range(draw(st.integers(1, 3)))]
        journal.assistant(*calls)
        answered = draw(st.integers(0, len(calls) - 1))
        for call in calls[:answered]:
            journal.result(call)
        if draw(st.booleans()):
            journal.add("deferral", call=calls[-1], reason="approval")
        _maybe_inert(draw, journal)
    elif ending == "fatal":
        journal.add("error", where="provider", message="boom", fatal=True)
    elif ending == "cancel":
        journal.add("cancel", by="op", reason="stop")
    elif ending == "error":
        journal.add("error", where="tool", message="retrying", fatal=False)
    return journal


def _maybe_inert(draw: st.DrawFn, journal: JournalBuilder) -> None:
    choice = draw(st.integers(0, 5))
    if choice == 0:
        journal.add("claim", worker="w2", reason="resume")
    elif choice == 1:
        journal.add("note", text="looked", optional=True)
    elif choice == 2:
        extra: dict[str, Any] = {"payload": "x"}
        journal.add("future_thing", optional=True, **extra)
