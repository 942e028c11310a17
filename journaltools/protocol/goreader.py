"""The exact reader: one stored line decoded as fisk-ai's Go runtime decodes it into ``runstate.Record``.

This is the slow path for lines the Go encoder would not have written (``protocol.decode`` sends every
line that is not canonical here). It models Go's ``encoding/json`` as the runtime is built (Go 1.27,
REAL-SYSTEM.md A.8 and the addendum's rules 1-13), so that a line is accepted exactly when the runtime
accepts it and decodes to the value the runtime would hold:

- syntax first: the whole line must be one JSON value with only white space around it; at most 10,000
  nested containers, unknown fields and raw JSON fields included; raw control bytes in strings refused;
- a ``null`` line is the zero record; any other non-object top level is refused;
- keys match fields by Go's ``strings.EqualFold`` (U+017F long s matches ``s``, the Kelvin sign ``k``); a
  repeated key (in any spelling) decodes again into the same field: objects merge field by field, arrays
  decode into the existing elements, scalars are replaced; unknown keys are skipped;
- ``null`` keeps the earlier value of strings, numbers, bools, times and structs and clears pointers,
  slices and maps (a raw JSON field then holds ``null``);
- every type mismatch refuses the line (``1e3``, ``1.5`` or ``2.0`` for an integer, ``-0`` or a negative
  number for the unsigned ``seq``, a number out of range, a string for a bool, a bad base64 signature, a
  time ``time.Parse(time.RFC3339, ...)`` refuses);
- strings: each invalid UTF-8 byte becomes U+FFFD, a surrogate escape that is not part of a valid pair
  becomes U+FFFD; raw JSON fields keep their bytes verbatim, compacted as the Go encoder writes them back.

Times are stored as the text Go's ``MarshalJSON`` writes for the parsed value. The recursion in this
module follows the Record struct's shape only (a fixed, small depth); nesting in the line itself is
handled by an iterative tokenizer, so a 10,000-deep line cannot exhaust the interpreter's stack.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from journaltools.errors import UndecodableLine
from journaltools.protocol.blocks import (
    Block,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from journaltools.protocol.encode import compact_json, encode_record
from journaltools.protocol.kinds import (
    ZERO_TIME,
    Assistant,
    CallApproval,
    Claim,
    Decision,
    Deferred,
    Fingerprint,
    MemoryRevisions,
    Meta,
    Record,
    Terminal,
    ToolResult,
    User,
)

#: encoding/json's nesting limit: this many containers may be open at once, the record object included.
MAX_DEPTH: Final = 10_000
#: The reason Go gives for a line that stops in the middle of a value: what a cut-off record yields.
UNEXPECTED_END: Final = "unexpected end of JSON input"

# ---------------------------------------------------------------------------------------------------
# Strings: Go replaces each invalid UTF-8 byte by its own U+FFFD, where Python's "replace" handler
# would replace a whole truncated sequence by one.


def _replace_one_byte(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\ufffd", error.start + 1


_GO_REPLACE: Final = "journaltools-go-replace"
codecs.register_error(_GO_REPLACE, _replace_one_byte)


def go_utf8(data: bytes) -> str:
    """``data`` as Go's decoder reads string bytes: every byte that does not start a valid UTF-8
    sequence becomes its own U+FFFD."""
    return data.decode("utf-8", _GO_REPLACE)


_SHORT_ESCAPES: Final = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}

# ---------------------------------------------------------------------------------------------------
# Tokens. The tokenizer checks the whole line first (Go's decoder refuses a syntax error anywhere
# before it decodes a field), and records, for every container, the index just past its subtree, so
# the decoder skips an unknown or raw value in one step however deep it is.

_OBJECT: Final = 0
_ARRAY: Final = 1
_STRING: Final = 2
_NUMBER: Final = 3
_TRUE: Final = 4
_FALSE: Final = 5
_NULL: Final = 6
_KIND_NAMES: Final = ("object", "array", "string", "number", "bool", "bool", "null")

_STRING_TOKEN: Final = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
_NUMBER_TOKEN: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SPACES: Final = re.compile(rb"[ \t\n\r]+")
_JSON_SPACE: Final = frozenset(b" \t\n\r")
_LITERALS: Final = {ord("t"): (b"true", _TRUE), ord("f"): (b"false", _FALSE), ord("n"): (b"null", _NULL)}
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")

# What the tokenizer expects next.
_VALUE: Final = 0
_VALUE_OR_CLOSE: Final = 1  # just after "["
_KEY: Final = 2
_KEY_OR_CLOSE: Final = 3  # just after "{"
_COLON: Final = 4
_COMMA_OR_CLOSE: Final = 5
_DONE: Final = 6


def _quote_rune(raw: bytes, pos: int) -> str:
    """The character at ``pos`` quoted as Go's error messages quote it (``'x'``, ``'\\t'``, ``'\\ufeff'``)."""
    lead = raw[pos]
    width = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4
    try:
        char = raw[pos : pos + width].decode("utf-8")
    except UnicodeDecodeError:
        return f"'\\x{lead:02x}'"
    if len(char) != 1:
        return f"'\\x{lead:02x}'"
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    code = ord(char)
    if char in named:
        text = named[char]
    elif char in "'\\":
        text = "\\" + char
    elif char.isprintable():
        text = char
    elif code < 0x80:
        text = f"\\x{code:02x}"
    elif code < 0x10000:
        text = f"\\u{code:04x}"
    else:
        text = f"\\U{code:08x}"
    return f"'{text}'"


def _syntax_error(raw: bytes, pos: int, context: str) -> UndecodableLine:
    if pos >= len(raw):
        return UndecodableLine(UNEXPECTED_END)
    return UndecodableLine(f"invalid character {_quote_rune(raw, pos)} {context}")


@dataclass(slots=True)
class _Tokens:
    raw: bytes
    kinds: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    #: For each token, the index of the first token after its whole value.
    after: list[int] = field(default_factory=list)
    whitespace: bool = False


def _tokenize(raw: bytes) -> _Tokens:
    tokens = _Tokens(raw)
    kinds, starts, ends, after = tokens.kinds, tokens.starts, tokens.ends, tokens.after
    open_containers: list[int] = []
    size = len(raw)
    pos = 0
    expect = _VALUE
    while True:
        if pos < size and raw[pos] in _JSON_SPACE:
            match = _SPACES.match(raw, pos)
            assert match is not None
            pos = match.end()
            tokens.whitespace = True
        if pos >= size:
            if expect == _DONE:
                return tokens
            raise UndecodableLine(UNEXPECTED_END)
        char = raw[pos]
        if expect == _DONE:
            raise _syntax_error(raw, pos, "after top-level value")
        if expect == _COLON:
            if char != 0x3A:  # ':'
                raise _syntax_error(raw, pos, "after object key")
            pos += 1
            expect = _VALUE
            continue
        if expect == _COMMA_OR_CLOSE:
            in_object = kinds[open_containers[-1]] == _OBJECT
            if char == 0x2C:  # ','
                pos += 1
                expect = _KEY if in_object else _VALUE
                continue
            if char != (0x7D if in_object else 0x5D):
                context = "after object key:value pair" if in_object else "after array element"
                raise _syntax_error(raw, pos, context)
            expect = _close(tokens, open_containers, pos)
            pos += 1
            continue
        if expect in (_KEY, _KEY_OR_CLOSE):
            if char == 0x7D and expect == _KEY_OR_CLOSE:  # '}'
                expect = _close(tokens, open_containers, pos)
                pos += 1
                continue
            if char != 0x22:
                raise _syntax_error(raw, pos, "looking for beginning of object key string")
            pos = _scan_string(tokens, pos)
            expect = _COLON
            continue
        # A value is expected.
        if char == 0x5D and expect == _VALUE_OR_CLOSE:  # ']'
            expect = _close(tokens, open_containers, pos)
            pos += 1
            continue
        if char == 0x7B or char == 0x5B:  # '{' or '['
            open_containers.append(len(kinds))
            if len(open_containers) > MAX_DEPTH:
                raise UndecodableLine("exceeded max depth")
            kinds.append(_OBJECT if char == 0x7B else _ARRAY)
            starts.append(pos)
            ends.append(-1)
            after.append(-1)
            pos += 1
            expect = _KEY_OR_CLOSE if char == 0x7B else _VALUE_OR_CLOSE
            continue
        if char == 0x22:
            pos = _scan_string(tokens, pos)
        elif char == 0x2D or 0x30 <= char <= 0x39:
            pos = _scan_number(tokens, pos)
        elif char in _LITERALS:
            pos = _scan_literal(tokens, pos)
        else:
            raise _syntax_error(raw, pos, "looking for beginning of value")
        expect = _COMMA_OR_CLOSE if open_containers else _DONE


def _close(tokens: _Tokens, open_containers: list[int], pos: int) -> int:
    index = open_containers.pop()
    tokens.ends[index] = pos + 1
    tokens.after[index] = len(tokens.kinds)
    return _COMMA_OR_CLOSE if open_containers else _DONE


def _add_scalar(tokens: _Tokens, kind: int, start: int, end: int) -> int:
    tokens.after.append(len(tokens.kinds) + 1)
    tokens.kinds.append(kind)
    tokens.starts.append(start)
    tokens.ends.append(end)
    return end


def _scan_string(tokens: _Tokens, pos: int) -> int:
    match = _STRING_TOKEN.match(tokens.raw, pos)
    if match is not None:
        return _add_scalar(tokens, _STRING, pos, match.end())
    raise _string_error(tokens.raw, pos)


def _string_error(raw: bytes, pos: int) -> UndecodableLine:
    """Why the string starting at ``pos`` does not scan (the regular expression only says that it does not)."""
    index = pos + 1
    size = len(raw)
    while index < size:
        char = raw[index]
        if char < 0x20:
            return _syntax_error(raw, index, "in string")
        if char == 0x5C:  # backslash
            if index + 1 >= size:
                break
            escape = raw[index + 1]
            if escape in b'"\\/bfnrt':
                index += 2
                continue
            if escape != 0x75:  # 'u'
                return _syntax_error(raw, index + 1, "in string escape code")
            for digit in range(index + 2, index + 6):
                if digit >= size:
                    return UndecodableLine(UNEXPECTED_END)
                if raw[digit] not in _HEX:
                    return _syntax_error(raw, digit, "in \\u hexadecimal character escape")
            index += 6
            continue
        index += 1
    return UndecodableLine(UNEXPECTED_END)


def _scan_number(tokens: _Tokens, pos: int) -> int:
    raw = tokens.raw
    match = _NUMBER_TOKEN.match(raw, pos)
    if match is None:  # a lone "-"
        raise _syntax_error(raw, pos + 1, "in numeric literal")
    end = match.end()
    # The pattern backtracks over an incomplete fraction or exponent; Go's scanner stops there instead.
    if end < len(raw) and raw[end] == 0x2E and b"." not in match.group():  # "1." not followed by a digit
        raise _syntax_error(raw, end + 1, "after decimal point in numeric literal")
    if end < len(raw) and raw[end] in b"eE" and not any(char in match.group() for char in b"eE"):
        digit = end + 2 if end + 1 < len(raw) and raw[end + 1] in b"+-" else end + 1
        raise _syntax_error(raw, digit, "in exponent of numeric literal")
    return _add_scalar(tokens, _NUMBER, pos, end)


def _scan_literal(tokens: _Tokens, pos: int) -> int:
    raw = tokens.raw
    word, kind = _LITERALS[raw[pos]]
    for offset in range(1, len(word)):
        if pos + offset >= len(raw):
            raise UndecodableLine(UNEXPECTED_END)
        if raw[pos + offset] != word[offset]:
            expected = chr(word[offset])
            raise _syntax_error(raw, pos + offset, f"in literal {word.decode()} (expecting '{expected}')")
    return _add_scalar(tokens, kind, pos, pos + len(word))


# ---------------------------------------------------------------------------------------------------
# The Go structs being decoded into. Field kinds name the Go decoding rule that applies.

_STR: Final = "string"
_INT: Final = "int"
_UINT: Final = "uint"
_BOOL: Final = "bool"
_TIME: Final = "time"
_BYTES: Final = "bytes"
_RAW: Final = "raw"
_STRUCT: Final = "struct"  # a struct value: null keeps it, an object merges into it
_POINTER: Final = "pointer"  # a pointer to a struct: null clears it, an object merges into it or a new one
_BLOCKS: Final = "blocks"  # []llm.ContentBlock
_REVISIONS: Final = "revisions"  # map[string]uint64

_INT64_RANGE: Final = (-(1 << 63), (1 << 63) - 1)
_UINT64_RANGE: Final = (0, (1 << 64) - 1)


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kind: str
    go_type: str
    #: Go omits the field when it is zero (omitempty); a canonical line leaves such a zero value out.
    omitempty: bool = False
    struct: _Struct | None = None


@dataclass(frozen=True, slots=True)
class _Struct:
    go_type: str
    cls: type[msgspec.Struct]
    fields: dict[str, _Field]


def _struct(go_type: str, cls: type[msgspec.Struct], *fields: _Field) -> _Struct:
    return _Struct(go_type, cls, {item.name: item for item in fields})


def _f(name: str, kind: str, go_type: str, *, omitempty: bool = False, struct: _Struct | None = None) -> _Field:
    return _Field(name, kind, go_type, omitempty, struct)


_TEXT_BLOCK: Final = _struct("llm.TextBlock", TextBlock, _f("text", _STR, "string"))
_THINKING_BLOCK: Final = _struct(
    "llm.ThinkingBlock",
    ThinkingBlock,
    _f("text", _STR, "string", omitempty=True),
    _f("signature", _BYTES, "[]uint8", omitempty=True),
)
_TOOL_USE_BLOCK: Final = _struct(
    "llm.ToolUseBlock",
    ToolUseBlock,
    _f("id", _STR, "string"),
    _f("name", _STR, "string"),
    _f("input", _RAW, "json.RawMessage"),
)
_TOOL_RESULT_BLOCK: Final = _struct(
    "llm.ToolResultBlock",
    ToolResultBlock,
    _f("tool_use_id", _STR, "string"),
    _f("content", _STR, "string"),
    _f("is_error", _BOOL, "bool", omitempty=True),
)
_PROVIDER_BLOCK: Final = _struct(
    "llm.ProviderBlock", ProviderBlock, _f("kind", _STR, "string"), _f("raw", _RAW, "json.RawMessage")
)
_BLOCK: Final = _struct(
    "llm.ContentBlock",
    Block,
    _f("text", _POINTER, "llm.TextBlock", omitempty=True, struct=_TEXT_BLOCK),
    _f("thinking", _POINTER, "llm.ThinkingBlock", omitempty=True, struct=_THINKING_BLOCK),
    _f("tool_use", _POINTER, "llm.ToolUseBlock", omitempty=True, struct=_TOOL_USE_BLOCK),
    _f("tool_result", _POINTER, "llm.ToolResultBlock", omitempty=True, struct=_TOOL_RESULT_BLOCK),
    _f("provider", _POINTER, "llm.ProviderBlock", omitempty=True, struct=_PROVIDER_BLOCK),
)
_MESSAGE: Final = _struct(
    "llm.Message",
    Message,
    _f("role", _STR, "llm.Role"),
    _f("content", _BLOCKS, "[]llm.ContentBlock", struct=_BLOCK),
)
_FINGERPRINT: Final = _struct(
    "runstate.Fingerprint",
    Fingerprint,
    _f("provider", _STR, "string"),
    _f("model", _STR, "string"),
    _f("system_hash", _STR, "string"),
    _f("tools_hash", _STR, "string"),
    _f("thinking_mode", _STR, "string"),
    _f("reasoning_effort", _STR, "string", omitempty=True),
    _f("max_tokens", _INT, "int64"),
    _f("max_iterations", _INT, "int64"),
)
_META: Final = _struct(
    "runstate.MetaRecord",
    Meta,
    _f("version", _INT, "int"),
    _f("run_id", _STR, "string"),
    _f("created", _TIME, "time.Time"),
    _f("fingerprint", _STRUCT, "runstate.Fingerprint", struct=_FINGERPRINT),
    _f("prompt", _STR, "string"),
    _f("interactive", _BOOL, "bool", omitempty=True),
    _f("conversation_token", _STR, "string", omitempty=True),
    _f("caller", _STR, "string", omitempty=True),
)
_ASSISTANT: Final = _struct(
    "runstate.AssistantRecord",
    Assistant,
    _f("iteration", _INT, "int64"),
    _f("message", _STRUCT, "llm.Message", struct=_MESSAGE),
    _f("stop_reason", _STR, "string", omitempty=True),
    _f("in_tokens", _INT, "int64"),
    _f("out_tokens", _INT, "int64"),
    _f("cache_read_tokens", _INT, "int64", omitempty=True),
    _f("cache_create_tokens", _INT, "int64", omitempty=True),
    _f("thinking_tokens", _INT, "int64", omitempty=True),
)
_USER: Final = _struct("runstate.UserRecord", User, _f("message", _STRUCT, "llm.Message", struct=_MESSAGE))
_TOOL_RESULT: Final = _struct(
    "runstate.ToolResultRecord",
    ToolResult,
    _f("tool_use_id", _STR, "string"),
    _f("result", _STRUCT, "llm.ToolResultBlock", struct=_TOOL_RESULT_BLOCK),
    _f("remote", _BOOL, "bool", omitempty=True),
)
_DEFERRED: Final = _struct(
    "runstate.DeferredRecord",
    Deferred,
    _f("tool_use_id", _STR, "string"),
    _f("tool_name", _STR, "string"),
    _f("note", _STR, "string", omitempty=True),
    _f("handle", _STR, "string", omitempty=True),
)
_DECISION: Final = _struct("runstate.DecisionRecord", Decision, _f("tool", _STR, "string"))
_CALL_APPROVAL: Final = _struct(
    "runstate.CallApprovalRecord", CallApproval, _f("tool_use_id", _STR, "string"), _f("tool_name", _STR, "string")
)
_MEMORY_REVISIONS: Final = _struct(
    "runstate.MemoryRevisionsRecord", MemoryRevisions, _f("revisions", _REVISIONS, "map[string]uint64")
)
_TERMINAL: Final = _struct(
    "runstate.TerminalRecord",
    Terminal,
    _f("reason", _STR, "runstate.TerminalReason"),
    _f("message", _STR, "string", omitempty=True),
)
_CLAIM: Final = _struct("runstate.ClaimRecord", Claim, _f("by", _STR, "string"), _f("claimed", _TIME, "time.Time"))
_RECORD: Final = _struct(
    "runstate.Record",
    Record,
    _f("seq", _UINT, "uint64"),
    _f("protocol", _STR, "runstate.Protocol"),
    _f("optional", _BOOL, "bool", omitempty=True),
    _f("meta", _POINTER, "runstate.MetaRecord", omitempty=True, struct=_META),
    _f("assistant", _POINTER, "runstate.AssistantRecord", omitempty=True, struct=_ASSISTANT),
    _f("user", _POINTER, "runstate.UserRecord", omitempty=True, struct=_USER),
    _f("tool_result", _POINTER, "runstate.ToolResultRecord", omitempty=True, struct=_TOOL_RESULT),
    _f("deferred", _POINTER, "runstate.DeferredRecord", omitempty=True, struct=_DEFERRED),
    _f("decision", _POINTER, "runstate.DecisionRecord", omitempty=True, struct=_DECISION),
    _f("call_approval", _POINTER, "runstate.CallApprovalRecord", omitempty=True, struct=_CALL_APPROVAL),
    _f("memory_revisions", _POINTER, "runstate.MemoryRevisionsRecord", omitempty=True, struct=_MEMORY_REVISIONS),
    _f("terminal", _POINTER, "runstate.TerminalRecord", omitempty=True, struct=_TERMINAL),
    _f("claim", _POINTER, "runstate.ClaimRecord", omitempty=True, struct=_CLAIM),
)


def _fold_key(key: str) -> str | None:
    """``key`` in the spelling a field name has when ``strings.EqualFold`` matches them, or None when
    no field name (all are lowercase ASCII letters and ``_``) can match it."""
    if key.isascii():
        return key.lower()
    folded = []
    for char in key:
        if char.isascii():
            folded.append(char.lower())
        elif char == "\u017f":  # LATIN SMALL LETTER LONG S folds with s
            folded.append("s")
        elif char == "\u212a":  # KELVIN SIGN folds with k
            folded.append("k")
        else:
            return None
    return "".join(folded)


# ---------------------------------------------------------------------------------------------------
# Decoding state: a struct is a dict of the fields seen so far (absent = Go's zero value), a slice
# keeps its whole backing array, because Go decodes a later, longer array into elements an earlier
# array left beyond the slice's length (addendum rule 4).


@dataclass(slots=True)
class _Slice:
    backing: list[Any]
    length: int


_MAX_NOTES: Final = 12


class _Notes:
    """The differences from canonical form noticed while decoding, each said once, in line order."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._seen: set[str] = set()

    def add(self, note: str) -> None:
        if note in self._seen:
            return
        self._seen.add(note)
        if len(self.items) < _MAX_NOTES:
            self.items.append(note)
        elif len(self.items) == _MAX_NOTES:
            self.items.append("and more")


class _Decoder:
    def __init__(self, tokens: _Tokens, notes: _Notes) -> None:
        self.tokens = tokens
        self.raw = tokens.raw
        self.notes = notes

    # -- scalars ------------------------------------------------------------------------------------

    def string(self, index: int) -> str:
        """The string token's value as Go decodes it."""
        inner = self.raw[self.tokens.starts[index] + 1 : self.tokens.ends[index] - 1]
        if b"\\" not in inner:
            return self._text(inner)
        parts: list[str] = []
        pos = 0
        size = len(inner)
        while True:
            backslash = inner.find(b"\\", pos)
            if backslash < 0:
                parts.append(self._text(inner[pos:]))
                return "".join(parts)
            parts.append(self._text(inner[pos:backslash]))
            escape = inner[backslash + 1]
            if escape != 0x75:  # the tokenizer allowed only the short escapes and \u
                parts.append(_SHORT_ESCAPES[escape])
                pos = backslash + 2
                continue
            code = int(inner[backslash + 2 : backslash + 6], 16)
            pos = backslash + 6
            if 0xD800 <= code <= 0xDFFF:
                # A surrogate pairs only with the escape right after it; otherwise it is U+FFFD and
                # that next escape is read on its own (addendum rule 13).
                if (
                    code <= 0xDBFF
                    and pos + 6 <= size
                    and inner[pos : pos + 2] == b"\\u"
                    and 0xDC00 <= (low := int(inner[pos + 2 : pos + 6], 16)) <= 0xDFFF
                ):
                    parts.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                    pos += 6
                    continue
                self.notes.add("lone surrogate escape replaced by U+FFFD")
                parts.append("\ufffd")
                continue
            parts.append(chr(code))

    def _text(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.notes.add("invalid UTF-8 replaced by U+FFFD")
            return go_utf8(data)

    def _type_error(self, index: int, path: str, go_type: str, literal: bool = False) -> UndecodableLine:
        kind = self.tokens.kinds[index]
        what = _KIND_NAMES[kind]
        if literal and kind == _NUMBER:
            what = "number " + self._token_text(index)
        return UndecodableLine(f"json: cannot unmarshal {what} into Go struct field {path} of type {go_type}")

    def _token_text(self, index: int) -> str:
        return self.raw[self.tokens.starts[index] : self.tokens.ends[index]].decode("ascii")

    def integer(self, index: int, path: str, go_type: str, unsigned: bool) -> int:
        if self.tokens.kinds[index] != _NUMBER:
            raise self._type_error(index, path, go_type)
        text = self.raw[self.tokens.starts[index] : self.tokens.ends[index]]
        low, high = _UINT64_RANGE if unsigned else _INT64_RANGE
        # Go parses with ParseUint/ParseInt: no fraction or exponent, and no sign at all when unsigned.
        if (unsigned and text[:1] == b"-") or any(char in text for char in b".eE"):
            raise self._type_error(index, path, go_type, literal=True)
        value = int(text)
        if not low <= value <= high:
            raise self._type_error(index, path, go_type, literal=True)
        return value

    # -- structs ------------------------------------------------------------------------------------

    def object(self, struct: _Struct, values: dict[str, Any], index: int, path: str) -> None:
        """Decode the object token ``index`` into ``values`` (merging into what is there)."""
        tokens = self.tokens
        end = tokens.after[index]
        member = index + 1
        seen: set[str] = set()
        order = list(struct.fields)
        last_position = -1
        while member < end:
            key = self.string(member)
            value = member + 1
            found = struct.fields.get(key)
            if found is None:
                folded = _fold_key(key)
                found = struct.fields.get(folded) if folded is not None else None
                if found is not None:
                    self.notes.add(f"key {key!r} matched case-insensitively")
            if found is None:
                self.notes.add(f"unknown key {key!r} ignored")
            else:
                if found.name in seen:
                    self.notes.add(f"repeated key {found.name!r}")
                seen.add(found.name)
                position = order.index(found.name)
                if position < last_position:
                    self.notes.add("keys out of the Go struct's field order")
                last_position = position
                self.field(found, values, value, f"{path}.{found.name}")
            member = tokens.after[value]
        for name, item in struct.fields.items():
            if not item.omitempty and name not in seen:
                self.notes.add(f"key {name!r} missing")

    def field(self, item: _Field, values: dict[str, Any], index: int, path: str) -> None:
        kind = self.tokens.kinds[index]
        rule = item.kind
        if kind == _NULL:
            if rule in (_POINTER, _BLOCKS, _BYTES, _REVISIONS):
                values[item.name] = None
                if item.omitempty:  # Go writes a nil slice or map as null, but omits a nil pointer
                    self.notes.add(f"null for {item.name!r}")
            elif rule == _RAW:
                values[item.name] = b"null"
            else:
                self.notes.add(f"null for {item.name!r} kept the earlier value")
            return
        if rule == _STR:
            if kind != _STRING:
                raise self._type_error(index, path, item.go_type)
            values[item.name] = self.string(index)
        elif rule in (_INT, _UINT):
            values[item.name] = self.integer(index, path, item.go_type, unsigned=rule == _UINT)
        elif rule == _BOOL:
            if kind != _TRUE and kind != _FALSE:
                raise self._type_error(index, path, item.go_type)
            values[item.name] = kind == _TRUE
        elif rule == _TIME:
            values[item.name] = self.time(index, path)
        elif rule == _RAW:
            values[item.name] = self.raw_json(index)
        elif rule in (_STRUCT, _POINTER):
            if kind != _OBJECT:
                raise self._type_error(index, path, item.go_type)
            assert item.struct is not None
            nested = values.get(item.name)
            if nested is None:
                nested = values[item.name] = {}
            self.object(item.struct, nested, index, path)
        elif rule == _BLOCKS:
            self.blocks(item, values, index, path)
        elif rule == _BYTES:
            self.signature(item, values, index, path)
        else:
            self.revisions(item, values, index, path)
        if item.omitempty and values.get(item.name) in ("", 0, False, b""):
            self.notes.add(f"zero value written for {item.name!r}")

    def _elements(self, index: int) -> list[int]:
        after = self.tokens.after
        elements = []
        element = index + 1
        end = after[index]
        while element < end:
            elements.append(element)
            element = after[element]
        return elements

    def _into_slice(self, item: _Field, values: dict[str, Any], index: int) -> tuple[_Slice, list[int]]:
        """The slice an array decodes into and the array's elements; Go grows the existing slice."""
        current = values.get(item.name)
        if current is None:
            current = values[item.name] = _Slice([], 0)
        elif current.length or current.backing:
            self.notes.add(f"repeated array {item.name!r} decoded into the earlier elements")
        return current, self._elements(index)

    @staticmethod
    def _set_length(target: _Slice, length: int) -> None:
        if length == 0:
            # Go replaces the slice by a new empty one: the old elements are gone for good.
            target.backing = []
        target.length = length

    def blocks(self, item: _Field, values: dict[str, Any], index: int, path: str) -> None:
        if self.tokens.kinds[index] != _ARRAY:
            raise self._type_error(index, path, item.go_type)
        assert item.struct is not None
        target, elements = self._into_slice(item, values, index)
        for position, element in enumerate(elements):
            if position >= len(target.backing):
                target.backing.append({})
            kind = self.tokens.kinds[element]
            if kind == _NULL:
                self.notes.add("null content block kept the earlier block")
            elif kind != _OBJECT:
                raise self._type_error(element, f"{path}.{position}", item.struct.go_type)
            else:
                self.object(item.struct, target.backing[position], element, f"{path}.{position}")
        self._set_length(target, len(elements))

    def signature(self, item: _Field, values: dict[str, Any], index: int, path: str) -> None:
        kind = self.tokens.kinds[index]
        if kind == _ARRAY:
            self.notes.add(f"{item.name!r} written as an array of numbers")
            target, elements = self._into_slice(item, values, index)
            for position, element in enumerate(elements):
                if position >= len(target.backing):
                    target.backing.append(0)
                if self.tokens.kinds[element] == _NULL:
                    continue
                byte = self.integer(element, f"{path}.{position}", "uint8", unsigned=True)
                if byte > 0xFF:
                    raise self._type_error(element, f"{path}.{position}", "uint8", literal=True)
                target.backing[position] = byte
            self._set_length(target, len(elements))
            return
        if kind != _STRING:
            raise self._type_error(index, path, item.go_type)
        text = self.string(index)
        try:
            decoded = go_base64(text.encode("utf-8"))
        except _Base64Error as error:
            message = self._type_error(index, path, item.go_type)
            raise UndecodableLine(f"{message.reason}: illegal base64 data at input byte {error.offset}") from None
        if "\r" in text or "\n" in text:
            self.notes.add(f"line breaks inside base64 {item.name!r}")
        previous: _Slice | None = values.get(item.name)
        if previous is not None and previous.length > len(decoded):
            # Go 1.27 decodes into the existing buffer and keeps its tail (addendum rule 5).
            self.notes.add(f"repeated {item.name!r} kept the earlier bytes beyond the later ones")
            kept = previous.backing[len(decoded) : previous.length]
            values[item.name] = _Slice([*decoded, *kept], previous.length)
        else:
            values[item.name] = _Slice(list(decoded), len(decoded))

    def revisions(self, item: _Field, values: dict[str, Any], index: int, path: str) -> None:
        if self.tokens.kinds[index] != _OBJECT:
            raise self._type_error(index, path, item.go_type)
        current: dict[str, int] | None = values.get(item.name)
        if current is None:
            current = values[item.name] = {}
        elif current:
            self.notes.add(f"repeated map {item.name!r} merged")
        tokens = self.tokens
        member = index + 1
        end = tokens.after[index]
        previous_key: str | None = None
        while member < end:
            key = self.string(member)
            value = member + 1
            if key in current:
                self.notes.add(f"repeated key {key!r} in {item.name!r}")
            if previous_key is not None and key.encode() <= previous_key.encode():
                self.notes.add(f"map {item.name!r} keys not sorted")
            previous_key = key
            if tokens.kinds[value] == _NULL:
                # A map element starts from zero, so null stores 0 (addendum rule 7).
                self.notes.add(f"null value in map {item.name!r} stored as 0")
                current[key] = 0
            else:
                current[key] = self.integer(value, f"{path}.{key}", "uint64", unsigned=True)
            member = tokens.after[value]

    def raw_json(self, index: int) -> bytes:
        data = self.raw[self.tokens.starts[index] : self.tokens.ends[index]]
        compacted = compact_json(data)
        if compacted != data:
            self.notes.add("raw JSON re-spaced or escaped")
        return compacted

    def time(self, index: int, path: str) -> str:
        if self.tokens.kinds[index] != _STRING:
            raise self._type_error(index, path, "time.Time")
        text = self.string(index)
        canonical = parse_go_time(text)
        written = self.raw[self.tokens.starts[index] + 1 : self.tokens.ends[index] - 1]
        if written != canonical.encode():
            self.notes.add("time respelled")
        return canonical


# ---------------------------------------------------------------------------------------------------
# Building the typed values from the decoded fields.


def _zero(item: _Field) -> Any:
    rule = item.kind
    if rule == _STR:
        return ""
    if rule in (_INT, _UINT):
        return 0
    if rule == _BOOL:
        return False
    if rule == _TIME:
        return ZERO_TIME
    if rule == _BYTES:
        return b""
    if rule == _RAW:
        return msgspec.Raw(b"null")
    if rule == _STRUCT:
        assert item.struct is not None
        return _build(item.struct, {})
    return None


def _build(struct: _Struct, values: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {}
    for name, item in struct.fields.items():
        if name not in values:
            arguments[name] = _zero(item)
            continue
        value = values[name]
        rule = item.kind
        if rule == _STRUCT:
            assert item.struct is not None
            arguments[name] = _build(item.struct, value)
        elif rule == _POINTER:
            assert item.struct is not None
            arguments[name] = None if value is None else _build(item.struct, value)
        elif rule == _BLOCKS:
            assert item.struct is not None
            block = item.struct
            arguments[name] = None if value is None else [_build(block, v) for v in value.backing[: value.length]]
        elif rule == _BYTES:
            arguments[name] = b"" if value is None else bytes(value.backing[: value.length])
        elif rule == _RAW:
            arguments[name] = msgspec.Raw(value)
        else:
            arguments[name] = value
    return struct.cls(**arguments)


# ---------------------------------------------------------------------------------------------------
# Base64 as Go's base64.StdEncoding.Decode reads it.

_B64_VALUES: Final = {
    char: value for value, char in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
_LINE_BREAKS: Final = (0x0A, 0x0D)


class _Base64Error(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def go_base64(source: bytes) -> bytes:
    """Padded standard base64 by Go's rules: ``\\r`` and ``\\n`` skipped anywhere, padding required,
    non-zero trailing bits accepted. Raises ``_Base64Error`` with Go's offset on bad input."""
    output = bytearray()
    size = len(source)
    pos = 0
    while True:
        quantum = [0, 0, 0, 0]
        filled = 0
        while filled < 4:
            if pos == size:
                if filled == 0:
                    return bytes(output)
                raise _Base64Error(pos - filled)
            char = source[pos]
            pos += 1
            value = _B64_VALUES.get(char)
            if value is not None:
                quantum[filled] = value
                filled += 1
                continue
            if char in _LINE_BREAKS:
                continue
            if char != 0x3D or filled < 2:  # '=' is padding only in the third or fourth place
                raise _Base64Error(pos - 1)
            if filled == 2:
                while pos < size and source[pos] in _LINE_BREAKS:
                    pos += 1
                if pos == size:
                    raise _Base64Error(size)
                if source[pos] != 0x3D:
                    raise _Base64Error(pos - 1)
                pos += 1
            while pos < size and source[pos] in _LINE_BREAKS:
                pos += 1
            if pos < size:
                raise _Base64Error(pos)
            bits = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
            output += bits.to_bytes(3, "big")[: filled - 1]
            return bytes(output)
        bits = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
        output += bits.to_bytes(3, "big")


# ---------------------------------------------------------------------------------------------------
# Times: time.Parse(time.RFC3339, ...) as Go implements it, then the text MarshalJSON writes back.

_RFC3339_LAYOUT: Final = "2006-01-02T15:04:05Z07:00"
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in(month: int, year: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _DAYS_IN_MONTH[month - 1]


def valid_calendar_date(text: str) -> bool:
    """For a time already in canonical RFC 3339 form, whether its date exists (Go's parser refuses
    February 29 outside leap years and a day beyond the month's last)."""
    digits = text[0:4] + text[5:7] + text[8:10]
    if len(digits) != 8 or not (digits.isascii() and digits.isdigit()):
        return False  # int() would also read non-ASCII digits, which Go's parser refuses
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    return 1 <= month <= 12 and 1 <= day <= _days_in(month, year)


def _go_quote(text: str) -> str:
    """Go's time package quoting for error messages: non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for char in text:
        if char >= "\x80" or char < " ":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


class _TimeText:
    """A cursor over the time text, raising Go's ``ParseError`` wording."""

    def __init__(self, text: str) -> None:
        self.whole = text
        self.rest = text

    def cannot_parse(self, value_element: str, layout_element: str) -> UndecodableLine:
        return UndecodableLine(
            f"parsing time {_go_quote(self.whole)} as {_go_quote(_RFC3339_LAYOUT)}: "
            f"cannot parse {_go_quote(value_element)} as {_go_quote(layout_element)}"
        )

    def out_of_range(self, what: str) -> UndecodableLine:
        return UndecodableLine(f"parsing time {_go_quote(self.whole)}: {what} out of range")

    def literal(self, char: str) -> None:
        if not self.rest.startswith(char):
            raise self.cannot_parse(self.rest, char)
        self.rest = self.rest[1:]

    def number(self, layout_element: str, *, fixed: bool) -> int:
        """Go's getnum: two digits, or one when the layout element allows it."""
        rest = self.rest
        if not (rest[:1].isascii() and rest[:1].isdigit()):
            raise self.cannot_parse(rest, layout_element)
        if not (rest[1:2].isascii() and rest[1:2].isdigit()):
            if fixed:
                raise self.cannot_parse(rest, layout_element)
            self.rest = rest[1:]
            return int(rest[0])
        self.rest = rest[2:]
        return int(rest[:2])


def _two_digits(text: str) -> int | None:
    return int(text) if len(text) == 2 and text.isascii() and text.isdigit() else None


def parse_go_time(text: str) -> str:
    """``text`` parsed as ``time.Parse(time.RFC3339, text)`` parses it (addendum rule 8), returned as
    ``time.Time.MarshalJSON`` writes the result. Raises ``UndecodableLine`` with Go's error text."""
    cursor = _TimeText(text)
    rest = cursor.rest
    if len(rest) < 4 or not (rest[:4].isascii() and rest[:4].isdigit()):
        raise cursor.cannot_parse(rest, "2006")
    year = int(rest[:4])
    cursor.rest = rest[4:]
    cursor.literal("-")
    month = cursor.number("01", fixed=True)
    if not 1 <= month <= 12:
        raise cursor.out_of_range("month")
    cursor.literal("-")
    day = cursor.number("02", fixed=True)
    cursor.literal("T")
    hour = cursor.number("15", fixed=False)
    if hour >= 24:
        raise cursor.out_of_range("hour")
    cursor.literal(":")
    minute = cursor.number("04", fixed=True)
    if minute >= 60:
        raise cursor.out_of_range("minute")
    cursor.literal(":")
    second = cursor.number("05", fixed=True)
    if second >= 60:
        raise cursor.out_of_range("second")
    nanos = 0
    rest = cursor.rest
    if len(rest) >= 2 and rest[0] in ".," and rest[1].isascii() and rest[1].isdigit():
        digits = 1
        while digits < len(rest) and rest[digits].isascii() and rest[digits].isdigit():
            digits += 1
        # Go reads at most nine fraction digits and ignores the rest.
        fraction = rest[1:digits][:9]
        nanos = int(fraction.ljust(9, "0"))
        cursor.rest = rest[digits:]
    rest = cursor.rest
    offset_minutes = 0
    if rest[:1] == "Z":
        cursor.rest = rest[1:]
    else:
        if len(rest) < 6 or rest[3] != ":":
            raise cursor.cannot_parse(rest, "Z07:00")
        hours, minutes = _two_digits(rest[1:3]), _two_digits(rest[4:6])
        if hours is None or minutes is None:
            raise cursor.cannot_parse(rest, "Z07:00")
        # Go compares with > here, so +24:00 and minute 60 are accepted.
        if hours > 24:
            raise cursor.out_of_range("time zone offset hour")
        if minutes > 60:
            raise cursor.out_of_range("time zone offset minute")
        if rest[0] not in "+-":
            raise cursor.cannot_parse(rest, "Z07:00")
        offset_minutes = (hours * 60 + minutes) * (-1 if rest[0] == "-" else 1)
        cursor.rest = rest[6:]
    if cursor.rest:
        raise UndecodableLine(f"parsing time {_go_quote(text)}: extra text: {_go_quote(cursor.rest)}")
    if not 1 <= day <= _days_in(month, year):
        raise cursor.out_of_range("day")
    written = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if nanos:
        written += "." + f"{nanos:09d}".rstrip("0")
    if offset_minutes == 0:
        return written + "Z"
    sign = "-" if offset_minutes < 0 else "+"
    magnitude = abs(offset_minutes)
    return f"{written}{sign}{magnitude // 60:02d}:{magnitude % 60:02d}"


# ---------------------------------------------------------------------------------------------------


def read_exact(raw: bytes) -> tuple[Record, list[str]]:
    """The record Go decodes from ``raw`` (one line, without its newline) and the differences from
    the Go encoder's form that were noticed on the way (empty for a canonical line).

    Raises ``UndecodableLine`` exactly when Go's ``json.Unmarshal`` into ``runstate.Record`` fails;
    its reason is Go's error text (Go 1.27 wording where known)."""
    tokens = _tokenize(raw)
    notes = _Notes()
    if tokens.whitespace:
        notes.add("whitespace")
    top = tokens.kinds[0]
    if top == _NULL:
        notes.add("null line (the zero record)")
        return Record(seq=0, protocol=""), notes.items
    if top != _OBJECT:
        raise UndecodableLine(f"json: cannot unmarshal {_KIND_NAMES[top]} into Go value of type {_RECORD.go_type}")
    values: dict[str, Any] = {}
    decoder = _Decoder(tokens, notes)
    decoder.object(_RECORD, values, 0, "Record")
    record: Record = _build(_RECORD, values)
    if not notes.items and encode_record(record) != raw:
        notes.add("string escapes differ from the Go encoder's")
    return record, notes.items


__all__ = ["MAX_DEPTH", "UNEXPECTED_END", "go_base64", "go_utf8", "parse_go_time", "read_exact", "valid_calendar_date"]
