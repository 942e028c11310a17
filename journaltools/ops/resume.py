"""Resuming a run the runtime's way: gate the candidate configuration, then claim the run before anything else.

A claim ``{by, claimed}`` is the first record a resuming process writes (``by`` defaults to
``<user>@<hostname> pid <pid>``, ``claimed`` is UTC to the nanosecond; in a journal of the newest line the record
is dated with that same moment, as ``PrepareRecord`` dates it). It moves the journal's tail, so a
process that still believes it holds the run is refused at its next append; the fold ignores it.
"""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass

from journaltools.errors import ClaimRefused, JournalError
from journaltools.folding import FoldResult, fold
from journaltools.goencoding.time import now_go_time
from journaltools.ops.gate import Candidate, GateResult, resume_gate
from journaltools.protocol.kinds import Claim, make_record
from journaltools.sources.base import Backend, JournalWriter


def default_claimant() -> str:
    """``<user>@<hostname> pid <pid>``, as the runtime names a claimant (``unknown-host`` without a name)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    host = socket.gethostname() or "unknown-host"
    return f"{user}@{host} pid {os.getpid()}"


@dataclass(slots=True)
class Resumed:
    """A claimed run: the writer (positioned after the claim), the claim's seq, the fold and the gate's verdict."""

    writer: JournalWriter
    claim_seq: int
    folded: FoldResult
    gate: GateResult | None


def claim_run(
    backend: Backend,
    run: str,
    *,
    by: str | None = None,
    claimed: str | None = None,
    candidate: Candidate | None = None,
    force: bool = False,
    follow_up: bool = False,
) -> Resumed:
    """Gate ``candidate`` (when given) against the folded run, then append the claim. Any failure to land the
    claim raises ``ClaimRefused``: the resume must not go on."""
    folded = fold(backend.read_run(run).typed(), run=run)
    gate = _gate(run, folded, candidate, force, follow_up)
    try:
        writer = backend.open_writer(run)
    except JournalError as exc:
        raise ClaimRefused(run, str(exc)) from exc
    now = now_go_time()
    claim = Claim(by=by if by is not None else default_claimant(), claimed=claimed or now)
    dated = folded.state is not None and folded.state.generation.dates_records
    try:
        writer.append(make_record(writer.last_seq + 1, claim, time=now if dated else ""))
        if folded.last_seq != writer.last_seq - 1:
            # Someone appended between the read and the claim: fold again (the claim is inert) and gate that view.
            folded = fold(backend.read_run(run).typed(), run=run)
            gate = _gate(run, folded, candidate, force, follow_up)
    except ClaimRefused:
        writer.close()
        raise
    except JournalError as exc:
        writer.close()
        raise ClaimRefused(run, str(exc)) from exc
    return Resumed(writer, writer.last_seq, folded, gate)


def _gate(run: str, folded: FoldResult, candidate: Candidate | None, force: bool, follow_up: bool) -> GateResult | None:
    if candidate is None or folded.state is None:
        return None
    gate = resume_gate(folded.state, candidate, force=force, follow_up=follow_up)
    if not gate.resumable:
        raise ClaimRefused(run, f"the resume gate refuses: {gate.refusal}")
    return gate
