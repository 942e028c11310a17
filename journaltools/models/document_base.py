"""What every ``--json`` document's model shares: the base that keeps documents open to fields a later version adds,
and the finding as every document shows it."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["error", "warning", "info"]
#: The generations of fisk-ai's journals: the newest line (format version 1) and the August build (version 3).
Generation = Literal["newest", "august"]
#: What a JSON value from the journal may be, kept as the journal wrote it (a tool input, a provider block).
JsonValue = Annotated[Any, Field(description="any JSON value, exactly as the journal holds it")]


#: Whether the published models accept keys they do not describe (the promise of docs/interfaces.md). The test
#: that holds the command line to its schemas closes them itself, so an undescribed key still fails it.
OPEN_DOCUMENTS: Final = True


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow" if OPEN_DOCUMENTS else "forbid", frozen=True)


class FindingDocument(_Document):
    """One finding: an element of ``audit --json``, and of ``show --json``'s ``findings``."""

    run: str | None = Field(description="the run, or null for a finding about the source itself")
    seq: int | None = Field(description="the record's seq, or null when the finding is about no one record")
    code: str = Field(description="a finding code (docs/interfaces.md, Finding codes)")
    severity: Severity
    message: str = Field(description="one line saying what was found")
    source: str = Field(description='the source the run was read from ("" when not told)')
