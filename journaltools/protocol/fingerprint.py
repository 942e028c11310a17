"""The resume gate: which configuration changes a stored conversation tolerates (PROTOCOL.md section 6).

Pure: it compares the stored ``meta.fingerprint`` with a candidate configuration and the fold's
view of which tools the conversation used. It never reads or writes a journal.

The system prompt and the resume reminder are separate inputs (``system`` and ``reminder`` in the
configuration). The prompt alone is hashed and compared with ``system_sha256``; the reminder is appended
to it only afterwards, in the prompt the gate hands back for the runner (``GateResult.system``), so no
reminder can change a verdict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from journaltools.fold import FoldResult
from journaltools.protocol.records import Fingerprint

FieldClass = Literal["hard", "blocking", "tools", "budget"]
Verdict = Literal["same", "refused", "overridden", "allowed", "exceeded"]

HARD_FIELDS = frozenset({"model", "system_sha256"})
#: Configuration keys that are not fingerprint fields: the prompt (compared through its digest) and the
#: resume reminder (never compared: it is appended after the fingerprint is computed).
NOT_COMPARED = frozenset({"system", "reminder"})


def system_sha256(system_prompt: str) -> str:
    """The system prompt is stored as this digest, never verbatim."""
    return hashlib.sha256(system_prompt.encode("utf-8")).hexdigest()


def field_class(name: str) -> FieldClass:
    if name in HARD_FIELDS:
        return "hard"
    if name == "tools":
        return "tools"
    if name == "budget":
        return "budget"
    return "blocking"


@dataclass(frozen=True, slots=True)
class FieldVerdict:
    field: str
    field_class: FieldClass
    stored: Any
    candidate: Any
    verdict: Verdict
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "class": self.field_class,
            "stored": self.stored,
            "candidate": self.candidate,
            "verdict": self.verdict,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class GateResult:
    resumable: bool
    fields: list[FieldVerdict]
    system: str | None = None
    """The system prompt for the runner: the candidate's prompt with the reminder appended (None when the
    configuration gives no prompt)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "resumable": self.resumable,
            "fields": [field.to_json() for field in self.fields],
            "system": self.system,
        }


def candidate_fingerprint(config: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate configuration as fingerprint fields: ``system`` (plain text) becomes ``system_sha256``;
    ``reminder`` is left out (it is appended to the prompt after the digest is taken)."""
    fields = {key: value for key, value in config.items() if key not in NOT_COMPARED}
    if "system" in config:
        fields["system_sha256"] = system_sha256(str(config["system"]))
    return fields


def runner_system_prompt(config: Mapping[str, Any]) -> str | None:
    """The prompt the runner resumes with: ``system`` then ``reminder``, joined as given (no separator is
    added: put any blank line at the start of the reminder). None without a ``system``."""
    if "system" not in config:
        return None
    return str(config["system"]) + str(config.get("reminder") or "")


def _tools_verdict(stored: dict[str, str], candidate: dict[str, str], used: set[str]) -> FieldVerdict:
    problems = []
    for name in sorted(used):
        if name not in candidate:
            problems.append(f"{name} is used by the conversation but missing")
        elif stored.get(name) is not None and candidate[name] != stored[name]:
            problems.append(f"{name} is used by the conversation and its schema changed")
    if problems:
        return FieldVerdict("tools", "tools", stored, candidate, "refused", "; ".join(problems))
    if stored == candidate:
        return FieldVerdict("tools", "tools", stored, candidate, "same")
    return FieldVerdict("tools", "tools", stored, candidate, "allowed", "changes touch no tool the conversation used")


def _budget_verdict(stored: Any, candidate: Any, folded: FoldResult) -> FieldVerdict:
    if candidate == stored:
        verdict: Verdict = "same"
        why = ""
    else:
        verdict, why = "allowed", "the new budget applies"
    budget = candidate if isinstance(candidate, Mapping) else {}
    over = []
    max_turns = budget.get("max_turns")
    if isinstance(max_turns, int) and folded.counters.turns > max_turns:
        over.append(f"{folded.counters.turns} turns already exceed max_turns {max_turns}")
    max_tokens = budget.get("max_tokens")
    used_tokens = folded.counters.input_tokens + folded.counters.output_tokens
    if isinstance(max_tokens, int) and used_tokens > max_tokens:
        over.append(f"{used_tokens} tokens already exceed max_tokens {max_tokens}")
    if over:
        verdict, why = "exceeded", "; ".join(over)
    return FieldVerdict("budget", "budget", stored, candidate, verdict, why)


def resume_gate(
    stored: Fingerprint, config: Mapping[str, Any], folded: FoldResult, *, override_blocking: bool = False
) -> GateResult:
    """Decide whether a run folded as ``folded`` may resume under ``config``.

    ``config`` holds the candidate's fingerprint fields, ``system`` (the prompt as text, compared by its
    digest) and optionally ``reminder`` (never compared). Hard fields refuse any change; blocking fields
    refuse unless ``override_blocking``; tools refuse only a missing or changed tool the conversation or
    pending batch used; budget never refuses but says when the counters already exceed it. The result's
    ``system`` is the prompt for the runner: prompt + reminder.
    """
    stored_fields = stored.model_dump(mode="json", exclude_none=True)
    candidate = candidate_fingerprint(config)
    used_tools = {trace.name for trace in folded.tool_calls}
    verdicts = []
    for name in sorted(set(stored_fields) | set(candidate)):
        kind = field_class(name)
        old, new = stored_fields.get(name), candidate.get(name)
        if kind == "tools":
            verdicts.append(_tools_verdict(old or {}, new or {}, used_tools))
        elif kind == "budget":
            verdicts.append(_budget_verdict(old, new, folded))
        elif old == new:
            verdicts.append(FieldVerdict(name, kind, old, new, "same"))
        elif kind == "hard":
            verdicts.append(FieldVerdict(name, kind, old, new, "refused", "a hard field may never change"))
        elif override_blocking:
            verdicts.append(FieldVerdict(name, kind, old, new, "overridden", "changed, explicitly overridden"))
        else:
            verdicts.append(FieldVerdict(name, kind, old, new, "refused", "changed; pass an override to accept it"))
    return GateResult(all(v.verdict != "refused" for v in verdicts), verdicts, runner_system_prompt(config))
