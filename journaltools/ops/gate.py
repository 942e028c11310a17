"""The resume gate: the runtime's decision whether a folded run may resume under a candidate configuration.

Pure: it compares the stored fingerprint (``meta.fingerprint``) with a candidate and reads the folded state; it
never reads or writes a journal. The runtime decides in this order, and the first refusal stands:

1. a ``completed`` run with no follow-up is refused (there is nothing left to do);
2. an interactive flag that differs, either way, is refused;
3. a different ``provider`` is refused, and ``force`` cannot cross it (a stored thinking signature or provider
   block belongs to the provider that produced it);
4. a different ``model``, ``system_hash``, ``thinking_mode`` or ``reasoning_effort`` is refused unless forced
   (an absent effort and ``""`` are the same);
5. a different ``tools_hash`` is allowed, with a warning that standing and one-shot approvals are dropped (a
   forced blocking change drops them too);
6. ``max_tokens`` (the cumulative token budget) and ``max_iterations`` changes are reported only.

The candidate gives its system prompt as the list of system blocks (``system``), or its hash
(``system_hash``). The hash is lowercase hex SHA-256 of the Go JSON encoding of that list of strings; the resume
reminder the runtime appends afterwards is never part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from journaltools.errors import InvalidConfig
from journaltools.folding.state import RunState
from journaltools.protocol.encode import system_hash
from journaltools.protocol.kinds import Fingerprint

FieldClass = Literal["hard", "blocking", "tools", "budget"]
Verdict = Literal["same", "refused", "forced", "allowed", "reported"]

#: The eight fields in the fingerprint's order, with the class of each.
FIELD_CLASSES: dict[str, FieldClass] = {
    "provider": "hard",
    "model": "blocking",
    "system_hash": "blocking",
    "tools_hash": "tools",
    "thinking_mode": "blocking",
    "reasoning_effort": "blocking",
    "max_tokens": "budget",
    "max_iterations": "budget",
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """The configuration a resume would run with. ``None`` leaves a field as stored (not compared)."""

    provider: str | None = None
    model: str | None = None
    system_hash: str | None = None
    tools_hash: str | None = None
    thinking_mode: str | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = None
    max_iterations: int | None = None
    interactive: bool | None = None

    @classmethod
    def from_config(cls, config: Any) -> Candidate:
        """A candidate from a parsed configuration file (``gate --config``): the fingerprint fields, and
        ``system`` as a list of strings in place of ``system_hash``. Checked by its model
        (``journaltools.models.inputs.GateConfig``, ``journaltools schema --input gate-config``); raises
        ``InvalidConfig`` naming the key and the reason."""
        # pydantic is imported here, at the edge, so folding and listing never load it.
        from journaltools.models.inputs import GateConfig, validated

        checked = validated(GateConfig, config, InvalidConfig)
        values = checked.model_dump(exclude_none=True, exclude={"system", "schema_url"})
        if checked.system is not None:
            values["system_hash"] = system_hash(checked.system)
        return cls(**values)


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
    warnings: list[str] = field(default_factory=list)
    #: The first refusal in the runtime's order, in one line (None when resumable).
    refusal: str | None = None
    #: Whether resuming drops the standing and one-shot approvals (tools drift, or forced blocking drift).
    drops_approvals: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "resumable": self.resumable,
            "fields": [verdict.to_json() for verdict in self.fields],
            "warnings": self.warnings,
            "refusal": self.refusal,
        }


def resume_gate(state: RunState, candidate: Candidate, *, force: bool = False, follow_up: bool = False) -> GateResult:
    """The runtime's resume decision for ``state`` under ``candidate`` (see the module doc for the order)."""
    stored = state.fingerprint
    verdicts = [_field_verdict(name, stored, candidate, force) for name in FIELD_CLASSES]
    warnings: list[str] = []
    refusal: str | None = None
    if state.completed() and not follow_up:
        refusal = "the run completed; a resume needs a follow-up"
    elif candidate.interactive is not None and candidate.interactive != state.interactive:
        stored_mode, new_mode = _mode(state.interactive), _mode(candidate.interactive)
        refusal = f"the run is {stored_mode}; it cannot resume as {new_mode}"
    else:
        first_refused = next((verdict for verdict in verdicts if verdict.verdict == "refused"), None)
        if first_refused is not None:
            refusal = f"{first_refused.field} changed: {first_refused.why}"
    forced = any(verdict.verdict == "forced" for verdict in verdicts)
    tools_changed = any(verdict.field == "tools_hash" and verdict.verdict == "allowed" for verdict in verdicts)
    drops = tools_changed or forced
    if tools_changed:
        warnings.append("the tool set changed: standing and one-shot approvals are dropped")
    elif forced:
        warnings.append("forced across a blocking change: standing and one-shot approvals are dropped")
    for verdict in verdicts:
        if verdict.verdict == "reported":
            warnings.append(f"{verdict.field} changes from {verdict.stored} to {verdict.candidate}")
    if state.pending is None and state.last_stop_reason == "pause_turn":
        warnings.append("the last turn paused (pause_turn): server-side state it relied on may have expired")
    return GateResult(refusal is None, verdicts, warnings, refusal, drops)


def _mode(interactive: bool) -> str:
    return "interactive (chat)" if interactive else "one-shot"


def _field_verdict(name: str, stored: Fingerprint, candidate: Candidate, force: bool) -> FieldVerdict:
    kind = FIELD_CLASSES[name]
    old: Any = getattr(stored, name)
    new: Any = getattr(candidate, name)
    if new is None or new == old:
        return FieldVerdict(name, kind, old, new if new is not None else old, "same")
    if kind == "hard":
        return FieldVerdict(name, kind, old, new, "refused", "the provider can never change, even when forced")
    if kind == "blocking":
        if force:
            return FieldVerdict(name, kind, old, new, "forced", "changed, crossed by force")
        return FieldVerdict(name, kind, old, new, "refused", "a blocking change needs force")
    if kind == "tools":
        return FieldVerdict(name, kind, old, new, "allowed", "the tool set changed; approvals are dropped")
    return FieldVerdict(name, kind, old, new, "reported", "a budget change is reported, never refused")
