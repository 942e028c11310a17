"""The ten protocol ids as pydantic models, and the raw record every reader keeps.

A record is validated in two steps so a reader pays only for what it needs:

1. ``decode_record`` parses one line (``jsonline.parse_line``) and keeps its original bytes: enough for
   tables, digests and migration, which never re-encode.
2. ``validate_record`` checks the envelope (``envelope.check_envelope``), refuses a key that appears
   twice in one object, and checks the payload of a known type against its model; it returns either the
   model or the finding that says which field broke which rule. The result is cached on the record, so
   folding every prefix of a run validates each record once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from journaltools.protocol.envelope import SEQ_MAX, TIMESTAMP_PATTERN, check_envelope
from journaltools.protocol.findings import Finding
from journaltools.protocol.jsonline import LineNotJson as LineNotJson
from journaltools.protocol.jsonline import parse_line
from journaltools.protocol.runid import RUN_ID_PATTERN

PROTOCOL_VERSION: Final = 1

RECORD_TYPES: Final = (
    "meta",
    "user",
    "assistant",
    "tool_result",
    "deferral",
    "approval",
    "claim",
    "error",
    "cancel",
    "note",
)
#: Only these may carry ``"optional": true``: a reader that skips them is more conservative, never different.
OPTIONAL_ALLOWED: Final = frozenset({"approval", "claim", "note"})

SHA256_PATTERN: Final = r"^[0-9a-f]{64}$"


class _Open(BaseModel):
    """Unknown fields are allowed and ignored (a field added later folds as zero when absent)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class TextBlock(_Open):
    """A text block. Empty text is valid in a journal; the fold keeps it out of the messages (the Messages API
    refuses it) with an ``empty_content`` warning."""

    type: Literal["text"]
    text: str


class ToolUseBlock(_Open):
    type: Literal["tool_use"]
    id: Annotated[str, Field(min_length=1)]
    name: Annotated[str, Field(min_length=1)]
    input: dict[str, Any]


AssistantBlock = Annotated[TextBlock | ToolUseBlock, Field(discriminator="type")]
#: User and tool-result content: a string or text blocks (empty content is the fold's ``empty_content`` matter).
TextContent = str | list[TextBlock]


class Usage(_Open):
    input_tokens: Annotated[int, Field(ge=0)]
    output_tokens: Annotated[int, Field(ge=0)]
    cache_read_input_tokens: Annotated[int, Field(ge=0)] | None = None
    cache_creation_input_tokens: Annotated[int, Field(ge=0)] | None = None


class Budget(_Open):
    max_turns: Annotated[int, Field(ge=0)] | None = None
    max_tokens: Annotated[int, Field(ge=0)] | None = None
    max_cost_usd: Annotated[float, Field(ge=0)] | None = None


class Fingerprint(_Open):
    """The configuration a conversation was written under; extra fields are sampling fields (class blocking)."""

    model: Annotated[str, Field(min_length=1)]
    system_sha256: Annotated[str, Field(pattern=SHA256_PATTERN)]
    temperature: float | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    tools: dict[str, Annotated[str, Field(pattern=SHA256_PATTERN)]] = Field(default_factory=dict)
    budget: Budget | None = None


class _Envelope(_Open):
    run: Annotated[str, Field(pattern=RUN_ID_PATTERN)]
    seq: Annotated[int, Field(ge=1, le=SEQ_MAX)]
    ts: Annotated[str, Field(pattern=TIMESTAMP_PATTERN)]
    optional: bool = False


class MetaRecord(_Envelope):
    type: Literal["meta"]
    version: int
    fingerprint: Fingerprint
    task: str | None = None
    labels: dict[str, str] | None = None


class UserRecord(_Envelope):
    type: Literal["user"]
    content: TextContent


class AssistantRecord(_Envelope):
    type: Literal["assistant"]
    content: list[AssistantBlock]
    stop_reason: str
    usage: Usage
    model: str | None = None


class ToolResultRecord(_Envelope):
    type: Literal["tool_result"]
    call: Annotated[str, Field(min_length=1)]
    content: TextContent
    is_error: bool = False


class DeferralRecord(_Envelope):
    type: Literal["deferral"]
    call: Annotated[str, Field(min_length=1)]
    reason: Literal["approval", "external"]


class ApprovalRecord(_Envelope):
    type: Literal["approval"]
    call: Annotated[str, Field(min_length=1)]
    decision: Literal["approve", "deny"]
    by: str
    note: str | None = None


class ClaimRecord(_Envelope):
    type: Literal["claim"]
    worker: Annotated[str, Field(min_length=1)]
    host: str | None = None
    pid: int | None = None
    reason: str | None = None


class ErrorRecord(_Envelope):
    type: Literal["error"]
    where: Literal["provider", "tool", "runner"]
    message: str
    fatal: bool


class CancelRecord(_Envelope):
    type: Literal["cancel"]
    by: str
    reason: str


class NoteRecord(_Envelope):
    type: Literal["note"]
    text: str
    tags: list[str] | None = None


class UnknownOptionalRecord(_Envelope):
    """A type this reader does not know, carrying ``"optional": true``: skipped by the fold, counted."""

    type: str


KnownRecord = (
    MetaRecord
    | UserRecord
    | AssistantRecord
    | ToolResultRecord
    | DeferralRecord
    | ApprovalRecord
    | ClaimRecord
    | ErrorRecord
    | CancelRecord
    | NoteRecord
)
AnyRecord = KnownRecord | UnknownOptionalRecord

RECORD_MODELS: Final[dict[str, type[_Envelope]]] = {
    "meta": MetaRecord,
    "user": UserRecord,
    "assistant": AssistantRecord,
    "tool_result": ToolResultRecord,
    "deferral": DeferralRecord,
    "approval": ApprovalRecord,
    "claim": ClaimRecord,
    "error": ErrorRecord,
    "cancel": CancelRecord,
    "note": NoteRecord,
}

_RECORD_UNION: TypeAdapter[KnownRecord] = TypeAdapter(Annotated[KnownRecord, Field(discriminator="type")])


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema of the ten record types (``journaltools schema``)."""
    schema = _RECORD_UNION.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"journaltools record, protocol version {PROTOCOL_VERSION}"
    return schema


@dataclass(slots=True, eq=False)
class RawRecord:
    """One record as stored: its original bytes (no trailing newline), its parsed body, and where it was read.

    ``position`` is the line number (file) or the stream sequence (JetStream). ``duplicate_key`` names the
    first key the bytes hold twice in one object (the body keeps the last value); validation refuses it.
    """

    raw: bytes
    body: dict[str, Any]
    position: int = 0
    duplicate_key: str | None = None
    envelope_checked: bool = False
    """Set by a loader that checked the envelope rule for many records at once, column-wise, and found that
    it holds: ``check_record`` then need not check it again."""
    _validated: AnyRecord | Finding | None = field(default=None, repr=False)

    @property
    def type(self) -> str | None:
        value = self.body.get("type")
        return value if isinstance(value, str) else None

    @property
    def run(self) -> str | None:
        value = self.body.get("run")
        return value if isinstance(value, str) else None

    @property
    def seq(self) -> int | None:
        value = self.body.get("seq")
        return value if type(value) is int else None

    @property
    def ts(self) -> str | None:
        value = self.body.get("ts")
        return value if isinstance(value, str) else None

    @property
    def optional(self) -> bool:
        return self.body.get("optional") is True


def decode_record(raw: bytes, position: int = 0) -> RawRecord:
    """Parse one stored record; raises ``LineNotJson`` when it is not one JSON object."""
    body, duplicate = parse_line(raw)
    return RawRecord(raw, body, position, duplicate)


def encode_record(body: dict[str, Any]) -> bytes:
    """The canonical bytes journaltools writes for a new record (compact, keys in insertion order)."""
    return orjson.dumps(body)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False)[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "record"
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _is_text_blocks(value: object) -> bool:
    if type(value) is not list:
        return False
    for block in value:  # a plain loop: this runs for nearly every record, a generator costs a third more
        if type(block) is not dict or block.get("type") != "text" or type(block.get("text")) is not str:
            return False
    return True


def _is_text_content(value: object) -> bool:
    return type(value) is str or _is_text_blocks(value)


def _is_assistant_block(block: object) -> bool:
    if type(block) is not dict:
        return False
    kind = block.get("type")
    if kind == "text":
        return type(block.get("text")) is str
    if kind == "tool_use":
        ident, name = block.get("id"), block.get("name")
        return (
            type(ident) is str and ident != "" and type(name) is str and name != "" and type(block.get("input")) is dict
        )
    return False


def _is_usage(usage: object) -> bool:
    if type(usage) is not dict:
        return False
    inputs, outputs = usage.get("input_tokens"), usage.get("output_tokens")
    if type(inputs) is not int or inputs < 0 or type(outputs) is not int or outputs < 0:
        return False
    read, creation = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
    return (read is None or (type(read) is int and read >= 0)) and (
        creation is None or (type(creation) is int and creation >= 0)
    )


def _fast_user(body: dict[str, Any]) -> bool:
    return _is_text_content(body.get("content"))


def _fast_assistant(body: dict[str, Any]) -> bool:
    content, model = body.get("content"), body.get("model")
    if type(content) is not list:
        return False
    for block in content:
        if not _is_assistant_block(block):
            return False
    return (
        type(body.get("stop_reason")) is str and _is_usage(body.get("usage")) and (model is None or type(model) is str)
    )


def _fast_tool_result(body: dict[str, Any]) -> bool:
    call = body.get("call")
    return (
        type(call) is str
        and bool(call)
        and _is_text_content(body.get("content"))
        and type(body.get("is_error", False)) is bool
    )


def _is_call(value: object) -> bool:
    return type(value) is str and bool(value)


def _is_optional_text(value: object) -> bool:
    return value is None or type(value) is str


def _fast_deferral(body: dict[str, Any]) -> bool:
    return _is_call(body.get("call")) and body.get("reason") in ("approval", "external")


def _fast_approval(body: dict[str, Any]) -> bool:
    return (
        _is_call(body.get("call"))
        and body.get("decision") in ("approve", "deny")
        and type(body.get("by")) is str
        and _is_optional_text(body.get("note"))
    )


def _fast_claim(body: dict[str, Any]) -> bool:
    pid = body.get("pid")
    return (
        _is_call(body.get("worker"))
        and _is_optional_text(body.get("host"))
        and (pid is None or type(pid) is int)
        and _is_optional_text(body.get("reason"))
    )


def _fast_error(body: dict[str, Any]) -> bool:
    return (
        body.get("where") in ("provider", "tool", "runner")
        and type(body.get("message")) is str
        and type(body.get("fatal")) is bool
    )


def _fast_cancel(body: dict[str, Any]) -> bool:
    return type(body.get("by")) is str and type(body.get("reason")) is str


def _fast_note(body: dict[str, Any]) -> bool:
    tags = body.get("tags")
    return type(body.get("text")) is str and (
        tags is None or (type(tags) is list and all(type(t) is str for t in tags))
    )


#: Hand-written twins of the models for every type but meta (one per journal). They accept exactly what
#: the models accept (a property test holds them to it); anything they reject goes to pydantic for the
#: precise message, so they only ever make the common case faster.
_FAST_CHECKS = {
    "user": _fast_user,
    "assistant": _fast_assistant,
    "tool_result": _fast_tool_result,
    "deferral": _fast_deferral,
    "approval": _fast_approval,
    "claim": _fast_claim,
    "error": _fast_error,
    "cancel": _fast_cancel,
    "note": _fast_note,
}


def check_record(record: RawRecord) -> Finding | None:
    """``None`` when the record is valid, else the finding; the fold's fast path (no model is built)."""
    cached = record._validated
    if cached is not None:
        return cached if isinstance(cached, Finding) else None
    body = record.body
    kind = body.get("type")
    fast = _FAST_CHECKS.get(kind)  # type: ignore[arg-type]
    optional = body.get("optional")
    if (
        fast is not None
        and (optional is None or optional is False or (optional is True and kind in OPTIONAL_ALLOWED))
        and record.duplicate_key is None
        and fast(body)
        and (record.envelope_checked or check_envelope(body) is None)
    ):
        return None
    validated = validate_record(record)
    return validated if isinstance(validated, Finding) else None


def validate_record(record: RawRecord) -> AnyRecord | Finding:
    """The record as its model, or the one finding that refuses it (cached on the record)."""
    cached = record._validated
    if cached is not None:
        return cached
    result: AnyRecord | Finding
    envelope = check_envelope(record.body)
    if envelope is not None:
        result = envelope
    elif record.duplicate_key is not None:
        result = Finding.of(
            record.run,
            record.seq,
            "schema_violation",
            f"duplicate key {record.duplicate_key!r}: an object holds it twice, so its value is ambiguous",
        )
    else:
        kind = record.body["type"]
        model = RECORD_MODELS.get(kind)
        if model is None:
            if record.optional:
                result = UnknownOptionalRecord.model_validate(record.body)
            else:
                result = Finding.of(
                    record.run,
                    record.seq,
                    "unknown_type",
                    f"unknown record type {kind!r} without the optional flag",
                )
        elif record.optional and kind not in OPTIONAL_ALLOWED:
            result = Finding.of(
                record.run,
                record.seq,
                "optional_not_allowed",
                f"a {kind} record may not carry the optional flag (only approval, claim and note may)",
            )
        else:
            try:
                result = model.model_validate(record.body)  # type: ignore[assignment]
            except ValidationError as exc:
                result = Finding.of(record.run, record.seq, "schema_violation", f"{kind}: {_describe(exc)}")
    record._validated = result
    return result
