"""A credential held in a value never reaches its ``repr``: a notebook cell showing a record, a fold result or an
error message built with ``!r`` shows ``<hidden>`` in its place. The stored bytes and the encoders keep it whole:
only the text meant for people is masked."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Final

import msgspec

#: What a repr shows for a credential that is set (an empty one is shown as it is: it hides nothing).
HIDDEN: Final = "<hidden>"


def masked_repr(value: Any, *credentials: str) -> str:
    """``value``'s repr as msgspec and dataclasses write it, ``Name(field=..., ...)``, with each field named in
    ``credentials`` shown as ``<hidden>`` when it is set."""
    if isinstance(value, msgspec.Struct):
        names = [field.name for field in msgspec.structs.fields(value)]
    else:
        names = [field.name for field in dataclasses.fields(value) if field.repr]
    shown = []
    for name in names:
        item = getattr(value, name)
        shown.append(f"{name}={HIDDEN if name in credentials and item else repr(item)}")
    return f"{type(value).__name__}({', '.join(shown)})"


def conversation_digest(token: str) -> str | None:
    """The first 12 hex characters of the conversation token's SHA-256, or None for no token: what a table or a
    view may show, and group runs by, in its place (enough to group runs of one conversation, never enough to use
    it). A lone surrogate, which no reader makes but a string built by hand may hold, is digested as it is."""
    if not token:
        return None
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:12]


__all__ = ["HIDDEN", "conversation_digest", "masked_repr"]
