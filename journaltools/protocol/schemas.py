"""JSON Schemas of the records journaltools reads and writes, derived from the typed structs themselves.

They describe the canonical form the runtime's encoder writes (required fields, types), so a tool that
validates with them agrees with journaltools' fast path. They are not the runtime's published schemas, which
have drifted from its structs (``thinking_tokens`` and ``reasoning_effort`` are missing from them).
"""

from __future__ import annotations

from typing import Any

import msgspec

from journaltools.protocol.kinds import Record


def record_schemas() -> dict[str, Any]:
    """One JSON Schema document for a journal record (the envelope and every payload and block)."""
    schema: dict[str, Any] = msgspec.json.schema(Record)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fisk-ai runstate version 3 record (as journaltools reads and writes it)"
    return schema
