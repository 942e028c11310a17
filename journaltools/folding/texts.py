"""Typed journal values as display text, shared by the views. Nothing here is HTML: the views escape it.

Two values never reach a screen: ``meta.conversation_token`` (a credential; a 12-hex SHA-256 digest stands
in for it) and the bytes of a thinking block's signature (opaque provider data, and long). Raw JSON
(``tool_use.input``, ``provider.raw``) keeps its own spelling: it is reindented at most, never decoded and
encoded again, so a number like ``1.50e3`` or a 20-digit integer is shown as the journal holds it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import msgspec

from journaltools._base.readable import shown_part
from journaltools.protocol.blocks import Block, Message, ThinkingBlock, block_line
from journaltools.protocol.credentials import conversation_digest as conversation_digest
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.kinds import Assistant, Meta, Payload, Record, User

if TYPE_CHECKING:
    from journaltools.folding.fold import FoldResult

#: What stands where a hidden value was (the token's digest follows it).
HIDDEN = "hidden"

#: A text ``grep`` searches: where it sits in its record, the call it belongs to (a tool input or result), the text.
SearchableText = tuple[str, str | None, str]


def raw_json_text(raw: bytes | msgspec.Raw, *, indent: bool = True) -> str:
    """Raw JSON as text. ``indent`` reindents whitespace only (``msgspec.json.format`` never parses numbers or
    strings into Python values); JSON that does not parse, or nests deeper than msgspec's formatter recurses (the
    runtime accepts 10,000 levels), is shown as it is."""
    data = bytes(raw)
    if indent:
        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            data = msgspec.json.format(data, indent=2)
    return data.decode("utf-8", errors="replace")


def block_text(block: Block) -> str:
    """One block as a line of plain text (TimeTravel, findings): ``protocol.blocks.block_line``."""
    return block_line(block)


def message_text(message: Message) -> str:
    """A message's blocks as text, one per line."""
    return "\n".join(block_text(block) for block in message.content or ())


def message_columns(message: Message) -> tuple[str, int, int, int, int]:
    """A message as the messages table holds it: its text (its text blocks joined), its thinking characters, and
    its tool_use, tool_result and provider block counts."""
    texts: list[str] = []
    thinking = uses = results = providers = 0
    for block in message.content or ():
        if block.text is not None:
            texts.append(block.text.text)
        elif block.thinking is not None:
            thinking += len(block.thinking.text)
        elif block.tool_use is not None:
            uses += 1
        elif block.tool_result is not None:
            results += 1
        elif block.provider is not None:
            providers += 1
    return "\n".join(texts), thinking, uses, results, providers


def message_lines(message: Message, *, whole_thinking: bool = False) -> list[str]:
    """A message's blocks for a person reading a terminal: a line each, indented two spaces, Go's escapes in raw
    JSON shown as the characters they stand for, each cut to what a face shows of one value (``show``, the
    followed run). ``whole_thinking`` shows a thinking block's text (a turn in flight's, what a post-mortem of a
    stuck run opens it for) instead of its length."""
    lines = []
    for block in message.content or ():
        if whole_thinking and block.thinking is not None and block.thinking.text:
            lines.append("  thinking: " + shown_part(block.thinking.text).replace("\n", "\n    "))
        else:
            lines.append("  " + shown_part(block_line(block, readable=True)))
    return lines


def _unsigned(message: Message) -> Message:
    """``message`` with every thinking signature emptied (the shown record never carries signature bytes)."""
    if not any(block.thinking is not None and block.thinking.signature for block in message.content or ()):
        return message
    content = [
        msgspec.structs.replace(block, thinking=ThinkingBlock(text=block.thinking.text))
        if block.thinking is not None
        else block
        for block in message.content or ()
    ]
    return msgspec.structs.replace(message, content=content)


def shown_payload(payload: Payload) -> Payload:
    """The payload as a view may show it: the conversation token replaced by its digest, signatures dropped."""
    if isinstance(payload, Meta) and payload.conversation_token:
        digest = conversation_digest(payload.conversation_token)
        return msgspec.structs.replace(payload, conversation_token=f"{HIDDEN} (sha256 {digest})")
    if isinstance(payload, Assistant):
        return msgspec.structs.replace(payload, message=_unsigned(payload.message))
    if isinstance(payload, User):
        return msgspec.structs.replace(payload, message=_unsigned(payload.message))
    return payload


def record_text(record: Record) -> str:
    """A record as indented JSON for TimeTravel: its seq, protocol and payload, with nothing secret in it
    (never the stored bytes, which hold the token of a meta record)."""
    payload = record.payload()
    head = f"seq {record.seq} · {record.protocol}" + (" · optional" if record.optional else "")
    if payload is None:
        return f"{head}\n(no payload this reader knows)"
    return f"{head}\n{raw_json_text(encode_go_json(shown_payload(payload)))}"


def searchable_words(result: FoldResult) -> list[str]:
    """What a search of a folded run looks through: prompt, caller, agent, generation, model, and in every message
    (the pending one too) its text, thinking, tool names, tool inputs and results (the places ``grep`` reads; a
    thinking block's signature never), and the note and handle of each deferral it waits on."""
    state = result.state
    if state is None:
        return []
    messages: list[Message] = list(state.messages)
    if state.pending is not None:
        messages.append(state.pending.assistant)
    words: list[str] = [state.prompt, state.caller, state.agent, state.generation.name, state.fingerprint.model]
    for message in messages:
        for block in message.content or ():
            if block.text is not None:
                words.append(block.text.text)
            elif block.thinking is not None:
                words.append(block.thinking.text)
            elif block.tool_use is not None:
                words.extend((block.tool_use.name, bytes(block.tool_use.input).decode("utf-8", "replace")))
            elif block.tool_result is not None:
                words.append(block.tool_result.content)
    # What the run waits on, as its deferrals say it (a person searches for "security approval", not a call id).
    for call in result.pending_calls:
        if call.deferred is not None:
            words.extend((call.deferred.note, call.deferred.handle))
    return words


def texts_of(record: Record) -> list[SearchableText]:
    """Every searchable text of one record (what ``grep`` matches): (where, call id, text), where is one of
    prompt, user, assistant, thinking, tool_input, tool_result."""
    found: list[SearchableText] = []
    kind = record.kind
    if kind == "meta" and record.meta is not None:
        if record.meta.prompt:
            found.append(("prompt", None, record.meta.prompt))
        return found
    if kind == "tool_result" and record.tool_result is not None:
        found.append(("tool_result", record.tool_result.tool_use_id, record.tool_result.result.content))
        return found
    if kind == "assistant" and record.assistant is not None:
        message, said = record.assistant.message, "assistant"
    elif kind == "user" and record.user is not None:
        message, said = record.user.message, "user"
    else:
        return found
    for block in message.content or ():
        if block.text is not None:
            found.append((said, None, block.text.text))
        elif block.thinking is not None:
            found.append(("thinking", None, block.thinking.text))
        elif block.tool_use is not None:
            found.append(("tool_input", block.tool_use.id, bytes(block.tool_use.input).decode("utf-8", "replace")))
        elif block.tool_result is not None:
            found.append(("tool_result", block.tool_result.tool_use_id, block.tool_result.content))
    return found
