"""A turn record's and an owner index's bytes, as agent-harness-go's Go encoder writes them and its decoder reads
them: the exact JSON of each (``encode_record``, ``encode_index``), and the Go-faithful decoders
(``parse_record``, ``decode_record``, ``parse_index``) that refuse what the runtime refuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from journaltools.goencoding.json_values import (
    Node,
    go_pointer,
    go_raw_field,
    go_slice,
    go_string,
    go_string_field,
    go_struct,
    go_unsigned,
    indent,
    marshal_raw,
    parse_single,
)
from journaltools.goencoding.time import GoTime, go_time_field
from journaltools.stores.turns.records import (
    ExternalChildRef,
    HistoryMessageRef,
    ToolBatchCheckpoint,
    ToolCheckpoint,
    TurnRecord,
    validate,
)


def _ref_json(ref: HistoryMessageRef) -> bytes:
    return b"".join(
        [
            b'{"workspace_id":',
            go_string(ref.workspace_id),
            b',"session_id":',
            go_string(ref.session_id),
            b',"message_id":',
            go_string(ref.message_id),
            b',"digest":',
            go_string(ref.digest),
            b"}",
        ]
    )


def _call_json(call: ToolCheckpoint) -> bytes:
    parts = [
        b'{"invocation_id":',
        go_string(call.invocation_id),
        b',"name":',
        go_string(call.name),
        b',"args_digest":',
        go_string(call.args_digest),
        b',"outcome":',
        go_string(call.outcome),
    ]
    if call.external is not None:
        external = call.external
        parts += [
            b',"external":{"task_id":',
            go_string(external.task_id),
            b',"execution_id":',
            go_string(external.execution_id),
            b',"child_session_id":',
            go_string(external.child_session_id),
            b',"descriptor":',
            marshal_raw(external.descriptor) if external.descriptor else b"null",
            b',"descriptor_digest":',
            go_string(external.descriptor_digest),
            b"}",
        ]
    if call.result is not None:
        parts += [b',"result":', _ref_json(call.result)]
    parts.append(b"}")
    return b"".join(parts)


def _time_json(moment: GoTime) -> bytes:
    return go_string(moment.text())


def encode_record(record: TurnRecord) -> bytes:
    """The record as Go's ``json.Marshal`` writes it (the CAS store's blob): compact, no newline."""
    parts = [
        b'{"schema_revision":',
        str(record.schema_revision).encode(),
        b',"schema":',
        go_string(record.schema),
        b',"revision":',
        str(record.revision).encode(),
        b',"workspace_id":',
        go_string(record.workspace_id),
        b',"session_id":',
        go_string(record.session_id),
        b',"task_id":',
        go_string(record.task_id),
        b',"owner_identity":',
        go_string(record.owner_identity),
        b',"phase":',
        go_string(record.phase),
        b',"input":',
        _ref_json(record.input),
        b',"iteration":',
        str(record.iteration).encode(),
    ]
    if record.last_message_id:
        parts += [b',"last_message_id":', go_string(record.last_message_id)]
    if record.tool_batch is not None:
        batch = record.tool_batch
        calls = b"null" if batch.calls is None else b"[" + b",".join(_call_json(c) for c in batch.calls) + b"]"
        parts += [b',"tool_batch":{"assistant":', _ref_json(batch.assistant), b',"calls":', calls, b"}"]
    if record.failure_reason:
        parts += [b',"failure_reason":', go_string(record.failure_reason)]
    parts += [b',"created_at":', _time_json(record.created_at), b',"updated_at":', _time_json(record.updated_at)]
    if record.completed_at is not None:
        parts += [b',"completed_at":', _time_json(record.completed_at)]
    parts.append(b"}")
    return b"".join(parts)


def encode_record_indented(record: TurnRecord) -> bytes:
    """The record as the file store writes it: ``MarshalIndent`` with two spaces, then a newline."""
    return indent(encode_record(record)) + b"\n"


def _zero_ref() -> dict[str, Any]:
    return {"workspace_id": "", "session_id": "", "message_id": "", "digest": ""}


def _zero_external() -> dict[str, Any]:
    return {"task_id": "", "execution_id": "", "child_session_id": "", "descriptor": b"", "descriptor_digest": ""}


def _zero_call() -> dict[str, Any]:
    return {"invocation_id": "", "name": "", "args_digest": "", "outcome": "", "external": None, "result": None}


def _zero_batch() -> dict[str, Any]:
    return {"assistant": _zero_ref(), "calls": None}


def _zero_record() -> dict[str, Any]:
    return {
        "schema_revision": 0,
        "schema": "",
        "revision": 0,
        "workspace_id": "",
        "session_id": "",
        "task_id": "",
        "owner_identity": "",
        "phase": "",
        "input": _zero_ref(),
        "iteration": 0,
        "last_message_id": "",
        "tool_batch": None,
        "failure_reason": "",
        "created_at": GoTime.zero(),
        "updated_at": GoTime.zero(),
        "completed_at": None,
    }


_REF = go_struct({name: go_string_field for name in _zero_ref()}, _zero_ref)

_EXTERNAL = go_struct(
    {
        "task_id": go_string_field,
        "execution_id": go_string_field,
        "child_session_id": go_string_field,
        "descriptor": go_raw_field,
        "descriptor_digest": go_string_field,
    },
    _zero_external,
)

_CALL = go_struct(
    {
        "invocation_id": go_string_field,
        "name": go_string_field,
        "args_digest": go_string_field,
        "outcome": go_string_field,
        "external": go_pointer(_EXTERNAL),
        "result": go_pointer(_REF),
    },
    _zero_call,
)

_BATCH = go_struct({"assistant": _REF, "calls": go_slice(_CALL)}, _zero_batch)

_RECORD = go_struct(
    {
        "schema_revision": go_unsigned(32),
        "schema": go_string_field,
        "revision": go_unsigned(64),
        "workspace_id": go_string_field,
        "session_id": go_string_field,
        "task_id": go_string_field,
        "owner_identity": go_string_field,
        "phase": go_string_field,
        "input": _REF,
        "iteration": go_unsigned(32),
        "last_message_id": go_string_field,
        "tool_batch": go_pointer(_BATCH),
        "failure_reason": go_string_field,
        "created_at": go_time_field,
        "updated_at": go_time_field,
        "completed_at": go_pointer(go_time_field),
    },
    _zero_record,
)


def _ref_of(values: dict[str, Any]) -> HistoryMessageRef:
    return HistoryMessageRef(**values)


def _call_of(values: dict[str, Any]) -> ToolCheckpoint:
    external = values["external"]
    result = values["result"]
    return ToolCheckpoint(
        values["invocation_id"],
        values["name"],
        values["args_digest"],
        values["outcome"],
        ExternalChildRef(**external) if external is not None else None,
        _ref_of(result) if result is not None else None,
    )


def _record_of(values: dict[str, Any]) -> TurnRecord:
    batch = values["tool_batch"]
    tool_batch = None
    if batch is not None:
        calls = batch["calls"]
        tool_batch = ToolBatchCheckpoint(
            _ref_of(batch["assistant"]), tuple(_call_of(c) for c in calls) if calls is not None else None
        )
    return TurnRecord(**{**values, "input": _ref_of(values["input"]), "tool_batch": tool_batch})


def parse_record(data: bytes) -> TurnRecord:
    """The record in ``data`` as the runtime's strict decoder reads it, not yet validated; ``GoJSONError`` when
    that decoder refuses the bytes (unknown field, type mismatch, trailing value, bad syntax)."""
    return parse_record_node(data, parse_single(data))


def parse_record_node(data: bytes, node: Node) -> TurnRecord:
    """The record held by ``node`` (a value parsed out of ``data``, such as a field of a larger document)."""
    values = _RECORD(data, node, None)
    return _record_of(values if values is not None else _zero_record())


def decode_record(data: bytes) -> TurnRecord:
    """``decodeRecord``: strict decode, exactly one value, then ``validate``. ``GoJSONError`` or
    ``InvalidTurnRecord`` say why the runtime would refuse the bytes."""
    record = parse_record(data)
    validate(record)
    return record


INDEX_SCHEMA_VERSION: Final = 1


@dataclass(frozen=True, slots=True, order=True)
class IndexRef:
    """One entry of the CAS store's global index; ordered as the index keeps them: by workspace, then task."""

    workspace_id: str
    task_id: str
    owner_identity: str


def _zero_index_ref() -> dict[str, Any]:
    return {"workspace_id": "", "task_id": "", "owner_identity": ""}


def _zero_index() -> dict[str, Any]:
    return {"schema_version": 0, "refs": None}


_INDEX = go_struct(
    {
        "schema_version": go_unsigned(32),
        "refs": go_slice(go_struct({name: go_string_field for name in _zero_index_ref()}, _zero_index_ref)),
    },
    _zero_index,
)


def parse_index(data: bytes) -> tuple[int, list[IndexRef]]:
    """The index blob as the runtime's strict decoder reads it: its schema version and refs (``refs: null`` or
    no ``refs`` is an empty list); ``GoJSONError`` when the decoder refuses it. Not yet validated."""
    values = _INDEX(data, parse_single(data), None) or _zero_index()
    return values["schema_version"], [IndexRef(**ref) for ref in values["refs"] or []]


def encode_index(refs: list[IndexRef]) -> bytes:
    """The index as ``json.Marshal`` writes it."""
    entries = b",".join(
        b'{"workspace_id":'
        + go_string(ref.workspace_id)
        + b',"task_id":'
        + go_string(ref.task_id)
        + b',"owner_identity":'
        + go_string(ref.owner_identity)
        + b"}"
        for ref in refs
    )
    return b'{"schema_version":' + str(INDEX_SCHEMA_VERSION).encode() + b',"refs":[' + entries + b"]}"
