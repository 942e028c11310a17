"""The runtime's neutral message model (fisk-ai ``internal/llm``) as typed values.

A message is ``{"role", "content": [block...]}``; a block is an object with one of five keys set: ``text``,
``thinking``, ``tool_use``, ``tool_result`` or ``provider``. Field order, required fields and omitted zero
values follow the Go structs, so encoding a value (``protocol.encode``) gives the Go encoder's bytes.

Required fields are the ones Go always writes; a field Go omits when empty has a zero default. A canonical
line therefore decodes straight into these types, while a line with a missing field, a case-variant key
or a ``null`` goes to the exact reader (``protocol.goreader``), which builds the same values by Go's rules.

``tool_use.input`` and ``provider.raw`` are raw JSON: they keep the bytes the line held (compacted), so a
number written ``1.50e3`` or an integer beyond 64 bits is never respelled.
"""

from __future__ import annotations

from typing import Final

import msgspec

#: Roles the Go writers use; the fold never looks at a role except to merge user messages.
USER: Final = "user"
ASSISTANT: Final = "assistant"


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, frozen=True):
    """Base of every wire struct: Go's omitempty is ``omit_defaults``; an unknown key is not canonical."""


class TextBlock(_Wire, kw_only=True, frozen=True):
    text: str


class ThinkingBlock(_Wire, kw_only=True, frozen=True):
    text: str = ""
    #: The raw signature bytes (the JSON holds their padded standard base64).
    signature: bytes = b""


class ToolUseBlock(_Wire, kw_only=True, frozen=True):
    id: str
    name: str
    input: msgspec.Raw


class ToolResultBlock(_Wire, kw_only=True, frozen=True):
    tool_use_id: str
    content: str
    is_error: bool = False


class ProviderBlock(_Wire, kw_only=True, frozen=True):
    """Any other provider block, kept verbatim: ``kind`` is its ``type``, ``raw`` the provider's own JSON."""

    kind: str
    raw: msgspec.Raw


class Block(_Wire, kw_only=True, frozen=True):
    """One content block: exactly one field is set by the Go writers; a block with none is ``{}``."""

    text: TextBlock | None = None
    thinking: ThinkingBlock | None = None
    tool_use: ToolUseBlock | None = None
    tool_result: ToolResultBlock | None = None
    provider: ProviderBlock | None = None


class Message(_Wire, kw_only=True, frozen=True):
    role: str
    #: ``None`` is Go's nil slice, written as ``null``; ``[]`` is an empty list.
    content: list[Block] | None


def text_block(text: str) -> Block:
    return Block(text=TextBlock(text=text))


def user_text(text: str) -> Message:
    """The message the fold opens a conversation with: one text block holding the prompt."""
    return Message(role=USER, content=[text_block(text)])


def tool_uses(message: Message) -> list[ToolUseBlock]:
    """The calls a message makes, in message order."""
    return [block.tool_use for block in message.content or () if block.tool_use is not None]
