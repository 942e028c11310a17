"""The fold's warnings that both folds report, worded once: the Python fold (``fold``) and the native walk's rows
(``native.warnings_of``) make each of these findings here, so a third generation or a new wording is one change,
and the differential tests compare two folds, not two spellings."""

from __future__ import annotations

from journaltools.folding.facts import time_ns
from journaltools.goencoding.json import go_quoted
from journaltools.protocol.findings import Finding
from journaltools.protocol.kinds import Meta


def run_id_mismatch(run: str, meta: Meta, seq: int, source: str = "") -> Finding | None:
    """The warning of a journal whose meta record (at ``seq``) names another run (a copied or renamed journal); None
    when the meta record names ``run``. ``source``: where the journal is, when the caller knows (each warning here
    takes it, so a finding is made once)."""
    if meta.run_id == run:
        return None
    return Finding.of(
        run,
        seq,
        "run_id_mismatch",
        f"meta.run_id is {go_quoted(meta.run_id)}, not the journal's name: the runtime lists the run by it",
        source,
    )


def unanswered_call(run: str, seq: int, call_id: str, tool: str, closed_by: int, source: str = "") -> Finding:
    """The warning of a call the turn at ``seq`` made and the record ``closed_by`` closed unanswered."""
    return Finding.of(
        run,
        seq,
        "unanswered_call",
        f"call {call_id!r} ({tool}) has no result; the turn was closed at seq {closed_by}",
        source,
    )


def times_out_of_order(run: str, seq: int, time: str, before_seq: int, before_time: str, source: str = "") -> Finding:
    """The warning of record ``seq``, dated before ``before_seq``, the dated record before it."""
    behind = (time_ns(before_time) or 0) - (time_ns(time) or 0)
    return Finding.of(
        run,
        seq,
        "times_out_of_order",
        f"seq {seq} is dated {behind / 1e9:.3f} s before seq {before_seq} ({time} after {before_time}): the "
        "records' clocks disagree, so no interval across them is a duration",
        source,
    )


__all__ = ["run_id_mismatch", "times_out_of_order", "unanswered_call"]
