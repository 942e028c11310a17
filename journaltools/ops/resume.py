"""Resuming a run: claim it first, then read where to continue (PROTOCOL.md section 8)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from journaltools.backends.base import Backend, JournalWriter
from journaltools.errors import ClaimRefused, JournalError
from journaltools.fold import FoldResult, fold
from journaltools.ops.clock import now_ts
from journaltools.protocol.fingerprint import GateResult, resume_gate


@dataclass(slots=True)
class Resumed:
    """A claimed run: the writer (positioned after the claim), the claim's seq and the fold before it."""

    writer: JournalWriter
    claim_seq: int
    folded: FoldResult
    gate: GateResult | None

    @property
    def system_prompt(self) -> str | None:
        """The prompt to resume with: the configuration's ``system`` with its ``reminder`` appended (None
        without a gated configuration)."""
        return self.gate.system if self.gate is not None else None


def claim_run(
    backend: Backend,
    run: str,
    worker: str,
    *,
    reason: str = "resume",
    ts: str | None = None,
    config: Mapping[str, Any] | None = None,
    override_blocking: bool = False,
    host: str | None = None,
    pid: int | None = None,
) -> Resumed:
    """Append a claim before anything else, then read the last seq.

    With ``config`` (fingerprint fields, ``system`` as text, optional ``reminder``) the resume gate runs
    first and a refusal raises ``ClaimRefused`` before anything is written; the reminder never changes the
    verdict, and ``Resumed.system_prompt`` is the prompt with the reminder appended, for the runner.

    The claim moves the journal's tail, so a worker that still believes it holds the run is refused
    at its next append. Reading the last seq *after* the claim keeps the runner's first record from
    colliding with the claim's seq. Any failure to land the claim is fatal to the resume.
    """
    folded = fold(backend.read_run(run).records, run=run)
    gate = _check_gate(run, folded, config, override_blocking)
    try:
        writer = backend.open_writer(run)
    except JournalError as exc:
        raise ClaimRefused(run, str(exc)) from exc
    claim_seq = writer.last_seq + 1
    claim = {
        "type": "claim",
        "run": run,
        "seq": claim_seq,
        "ts": ts or now_ts(),
        "worker": worker,
        "host": host if host is not None else socket.gethostname(),
        "pid": pid if pid is not None else os.getpid(),
        "reason": reason,
    }
    try:
        writer.append(claim)
        if folded.resume.last_seq != claim_seq - 1:
            # Someone appended between our read and our claim: fold again (the claim is inert, so folding
            # after it is safe) so the runner never acts on a stale view, and gate that view too.
            folded = fold(backend.read_run(run).records, run=run)
            gate = _check_gate(run, folded, config, override_blocking)
    except ClaimRefused:
        writer.close()
        raise
    except JournalError as exc:
        writer.close()
        raise ClaimRefused(run, str(exc)) from exc
    except OSError as exc:
        writer.close()
        raise ClaimRefused(run, f"the store is unreachable: {exc}") from exc
    return Resumed(writer, writer.last_seq, folded, gate)


def _check_gate(
    run: str, folded: FoldResult, config: Mapping[str, Any] | None, override_blocking: bool
) -> GateResult | None:
    if config is None or folded.meta is None:
        return None
    gate = resume_gate(folded.meta.fingerprint, config, folded, override_blocking=override_blocking)
    if not gate.resumable:
        refused = "; ".join(f"{v.field}: {v.why}" for v in gate.fields if v.verdict == "refused")
        raise ClaimRefused(run, f"the resume gate refuses the configuration ({refused})")
    return gate
