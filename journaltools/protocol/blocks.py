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

from typing import Annotated, Any, ClassVar, Final

import msgspec

from journaltools._base.readable import readable_json

#: Roles the Go writers use; the fold never looks at a role except to merge user messages.
USER: Final = "user"
ASSISTANT: Final = "assistant"


def go_named(go_type: str) -> msgspec.Meta:
    """A field's Go type where it is not the one its Python type implies (``int`` for ``int64``, a named string
    type): the exact reader names it in Go's errors (``... of type llm.Role``)."""
    return msgspec.Meta(extra={"go": go_type})


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, frozen=True, gc=False):
    """Base of every wire struct: Go's omitempty is ``omit_defaults``; an unknown key is not canonical.

    ``GO_TYPE`` is the Go struct's name, as the runtime's decoder names it in its errors.

    ``gc=False``: a decoded record holds only text, numbers, bytes and other wire values, so it can never be
    part of a reference cycle, and the collector need not track millions of them (a load decodes every record;
    tracked, the collections they set off cost more than the decoding itself)."""

    GO_TYPE: ClassVar[str] = ""


class TextBlock(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "llm.TextBlock"
    text: str


class ThinkingBlock(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "llm.ThinkingBlock"
    text: str = ""
    #: The raw signature bytes (the JSON holds their padded standard base64).
    signature: bytes = b""


class ToolUseBlock(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "llm.ToolUseBlock"
    id: str
    name: str
    input: msgspec.Raw


class ToolResultBlock(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "llm.ToolResultBlock"
    tool_use_id: str
    content: str
    is_error: bool = False


class ProviderBlock(_Wire, kw_only=True, frozen=True):
    """Any other provider block, kept verbatim: ``kind`` is its ``type``, ``raw`` the provider's own JSON."""

    GO_TYPE: ClassVar[str] = "llm.ProviderBlock"

    kind: str
    raw: msgspec.Raw


class Block(_Wire, kw_only=True, frozen=True):
    """One content block: exactly one field is set by the Go writers; a block with none is ``{}``."""

    GO_TYPE: ClassVar[str] = "llm.ContentBlock"

    text: TextBlock | None = None
    thinking: ThinkingBlock | None = None
    tool_use: ToolUseBlock | None = None
    tool_result: ToolResultBlock | None = None
    provider: ProviderBlock | None = None


class Message(_Wire, kw_only=True, frozen=True):
    GO_TYPE: ClassVar[str] = "llm.Message"

    role: Annotated[str, go_named("llm.Role")]
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


def to_anthropic(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation as Anthropic Messages API input, valid by the API's rules: roles alternate starting
    with ``user`` (consecutive messages of one role are joined), no empty text block, no empty content.

    Provider blocks are the provider's own JSON, passed on as it was stored; a thinking block's signature is
    the signature text the runtime kept as bytes.
    """
    rendered: list[dict[str, Any]] = []
    for message in messages:
        content = [block for block in map(_anthropic_block, message.content or ()) if block is not None]
        if not content:
            continue
        if rendered and rendered[-1]["role"] == message.role:
            rendered[-1]["content"].extend(content)
        else:
            rendered.append({"role": message.role, "content": content})
    if rendered and rendered[0]["role"] != USER:
        rendered.insert(0, {"role": USER, "content": [{"type": "text", "text": "(conversation resumed)"}]})
    return rendered


def _anthropic_block(block: Block) -> dict[str, Any] | msgspec.Raw | None:
    if block.text is not None:
        return {"type": "text", "text": block.text.text} if block.text.text else None
    if block.thinking is not None:
        signature = block.thinking.signature.decode("utf-8", "replace")
        return {"type": "thinking", "thinking": block.thinking.text, "signature": signature}
    if block.tool_use is not None:
        call_input = _json_value(block.tool_use.input)
        return {"type": "tool_use", "id": block.tool_use.id, "name": block.tool_use.name, "input": call_input or {}}
    if block.tool_result is not None:
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_result.tool_use_id,
            "content": block.tool_result.content,
        }
        if block.tool_result.is_error:
            result["is_error"] = True
        return result
    if block.provider is not None:
        raw = _json_value(block.provider.raw)
        if isinstance(raw, msgspec.Raw):
            return raw if bytes(raw)[:1] == b"{" and bytes(raw) != b"{}" else None
        return raw if isinstance(raw, dict) and raw else None
    return None


def _json_value(raw: bytes | msgspec.Raw) -> Any:
    """A raw JSON field as Python values, or as the ``msgspec.Raw`` of its compact bytes when Python cannot hold it
    (nested deeper than its recursion allows, an integer beyond 64 bits): the runtime accepts both, and msgspec
    encodes the Raw back byte for byte."""
    from journaltools.goencoding.json_values import marshal_raw

    if not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except (msgspec.ValidationError, RecursionError):
        return msgspec.Raw(marshal_raw(bytes(raw)).decode("utf-8", "replace").encode())


def _as_is(text: str) -> str:
    return text


def block_line(block: Block, *, readable: bool = False) -> str:
    """One block as a line of plain text, the one way every face shows a block without markup: text verbatim, a
    call as ``-> name(input) [id]``, a result as ``<- id: content`` (``(error)`` marked), thinking by its length
    (its signature never), a provider block by its kind. Raw JSON keeps its bytes (invalid UTF-8 as U+FFFD);
    ``readable`` shows Go's ``\\u003e``-style escapes in it as the characters they stand for, for a person."""
    shown = readable_json if readable else _as_is
    if block.text is not None:
        return block.text.text
    if block.thinking is not None:
        return f"(thinking, {len(block.thinking.text):,} characters)"
    if block.tool_use is not None:
        call = block.tool_use
        return f"-> {call.name}({shown(bytes(call.input).decode('utf-8', 'replace'))}) [{call.id}]"
    if block.tool_result is not None:
        done = block.tool_result
        flag = " (error)" if done.is_error else ""
        return f"<- {done.tool_use_id}{flag}: {done.content}"
    if block.provider is not None:
        return f"({block.provider.kind} block) {shown(bytes(block.provider.raw).decode('utf-8', 'replace'))}"
    return "(empty block)"
