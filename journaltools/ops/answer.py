"""Answering a deferred call: one ordinary tool_result, so the next resume is an ordinary resume."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from journaltools.backends.base import Backend
from journaltools.errors import AlreadyAnswered, AnswerRefused
from journaltools.fold import fold
from journaltools.ops.clock import now_ts


@dataclass(frozen=True, slots=True)
class Answered:
    run: str
    call: str
    seq: int

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "call": self.call, "seq": self.seq}


def answer_call(
    backend: Backend, run: str, call: str, result: str, *, is_error: bool = False, ts: str | None = None
) -> Answered:
    """Write the result of deferred call ``call`` of ``run``.

    Loads and folds (validating) before opening the journal, so a refusal takes no lock. The
    committed conversation is checked first: a call that was already answered is reported with the
    seq of its result rather than as "not deferred", so someone answering twice learns that their
    first answer landed.
    """
    read = backend.read_run(run)
    folded = fold(read.records, run=run)
    for trace in folded.tool_calls:
        if trace.call_id == call and trace.result_seq is not None:
            raise AlreadyAnswered(run, call, trace.result_seq)
    pending = {item.id: item for item in folded.pending}
    if call not in pending:
        raise AnswerRefused(run, call, "no such call is waiting in the pending batch")
    if pending[call].deferred is None:
        raise AnswerRefused(run, call, "the call was not deferred; the runner executes it on resume")
    with backend.open_writer(run) as writer:
        if writer.last_seq != folded.resume.last_seq:
            raise AnswerRefused(
                run, call, f"the journal moved from seq {folded.resume.last_seq} to {writer.last_seq} while answering"
            )
        record: dict[str, Any] = {
            "type": "tool_result",
            "run": run,
            "seq": writer.last_seq + 1,
            "ts": ts or now_ts(),
            "call": call,
            "content": result,
        }
        if is_error:
            record["is_error"] = True
        stored = writer.append(record)
    return Answered(run, call, stored.seq)
