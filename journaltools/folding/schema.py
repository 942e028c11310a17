"""The runtime's published record schemas, as far as they say more than its decoder does.

fisk-ai ships JSON Schemas for its records but never validates with them, and they have drifted from the
structs (``assistant.thinking_tokens`` and ``fingerprint.reasoning_effort`` are missing from them): an audit
that validated real journals with them would report errors in what the runtime itself writes. journaltools
reports, as ``schema_violation`` warnings, only what the schemas forbid and the runtime's writers never
write, on records its decoder accepts:

- a ``seq`` below 1, or a meta record whose seq is not 1;
- a meta record without a creation time (the decoder leaves Go's zero time);
- a second payload beside the one the protocol names (the schemas allow only that one);
- memory revision keys outside 1-200 characters, or revisions below 1.

A key the decoder matched case-insensitively, or one it ignored, breaks the schemas too; the line is then not
what the encoder writes, and ``noncanonical_line`` says so. An unknown terminal reason has its own warning.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Final

from journaltools.protocol.kinds import KINDS, ZERO_TIME, Kind, Record

#: All ten payload fields of a record in one C call: this check runs on every record of every load.
_PAYLOADS: Final = attrgetter(*KINDS)


def schema_problem(record: Record, kind: Kind | None = None) -> str | None:
    """What the published schemas refuse in ``record`` (one line), or None; ``kind`` its ``record.kind`` where the
    caller has it already."""
    if kind is None:
        kind = record.kind
    if record.seq < 1:
        return f"seq {record.seq} is below 1"
    payloads = _PAYLOADS(record)
    if payloads.count(None) < len(KINDS) - 1:
        extra = [name for name, payload in zip(KINDS, payloads, strict=True) if payload is not None and name != kind]
        return f"more than one payload: {', '.join(extra)} beside the one the protocol names ({kind})"
    if kind == "meta" and record.meta is not None:
        if record.seq != 1:
            return f"a meta record at seq {record.seq}, not 1"
        if record.meta.created == ZERO_TIME:
            return "meta.created is missing (the decoder leaves Go's zero time)"
    if kind == "memory_revisions" and record.memory_revisions is not None:
        for key, revision in (record.memory_revisions.revisions or {}).items():
            if not 1 <= len(key) <= 200:
                return f"memory key of {len(key)} characters (the schema allows 1-200)"
            if revision < 1:
                return f"memory key {key!r} at revision {revision} (the schema wants at least 1)"
    return None
