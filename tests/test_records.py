import copy
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.protocol.findings import Finding
from journaltools.protocol.records import (
    RECORD_TYPES,
    LineNotJson,
    check_record,
    decode_record,
    record_json_schema,
    validate_record,
)
from journaltools.protocol.runid import validate_run_id
from tests.builders import JournalBuilder
from tests.strategies import valid_runs


def test_raw_bytes_are_kept_exactly() -> None:
    raw = b'{"seq":1, "type":"meta" ,"run":"r","ts":"2026-11-29T10:00:00Z","version":1,"x":1.50}'
    record = decode_record(raw, 7)
    assert record.raw is raw and record.position == 7 and record.body["x"] == 1.5


def test_non_objects_are_not_records() -> None:
    for raw in (b"[1]", b"3", b"", b"{"):
        with pytest.raises(LineNotJson):
            decode_record(raw)


def test_unknown_fields_are_tolerated() -> None:
    body = {**JournalBuilder("r").user().bodies[1], "added_later": {"x": 1}}
    assert not isinstance(validate_record(decode_record(orjson.dumps(body))), Finding)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"seq": "2"}, "seq"),
        ({"seq": 0}, "seq"),
        ({"ts": "yesterday"}, "ts"),
        ({"run": "no spaces"}, "run"),
        ({"content": 3}, "content"),
        ({"optional": "yes"}, "optional"),
    ],
)
def test_shape_errors_name_the_field(change: dict[str, object], field: str) -> None:
    body = {**JournalBuilder("r").user().bodies[1], **change}
    finding = validate_record(decode_record(orjson.dumps(body)))
    assert isinstance(finding, Finding) and finding.code == "schema_violation"
    assert re.search(rf"(^|: ){field}\b", finding.message), finding.message


def test_optional_flag_rules() -> None:
    for kind, allowed in (("note", True), ("claim", True), ("approval", True), ("deferral", False), ("user", False)):
        payloads = {
            "note": {"text": "n"},
            "claim": {"worker": "w"},
            "approval": {"call": "c", "decision": "deny", "by": "o"},
            "deferral": {"call": "c", "reason": "external"},
            "user": {"content": "u"},
        }
        body = {"type": kind, "run": "r", "seq": 2, "ts": "2026-11-29T10:00:00Z", "optional": True, **payloads[kind]}
        result = validate_record(decode_record(orjson.dumps(body)))
        if allowed:
            assert not isinstance(result, Finding), kind
        else:
            assert isinstance(result, Finding) and result.code == "optional_not_allowed", kind


def test_schema_covers_the_ten_types() -> None:
    schema = record_json_schema()
    titles = {definition.get("properties", {}).get("type", {}).get("const") for definition in schema["$defs"].values()}
    assert set(RECORD_TYPES) <= titles


def test_run_id_rules() -> None:
    assert validate_run_id("a" * 128) == "a" * 128
    assert validate_run_id("0-run_X") == "0-run_X"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "text", "id"]), inner, max_size=2)
    ),
    max_leaves=4,
)


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


@settings(max_examples=400, deadline=None)
@given(valid_runs(), st.data())
def test_fast_checks_accept_exactly_what_the_models_accept(journal: JournalBuilder, data: st.DataObject) -> None:
    """The fold's hand-written checks for user/assistant/tool_result never disagree with pydantic."""
    body = copy.deepcopy(data.draw(st.sampled_from(journal.bodies)))
    paths = [p for p in _paths(body) if p[0] not in ("run", "seq", "ts", "type")]
    if paths:
        path = data.draw(st.sampled_from(paths))
        parent: Any = body
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(json_values)
    raw = orjson.dumps(body)
    fast = check_record(decode_record(raw))
    model = validate_record(decode_record(raw))
    assert (fast is None) == (not isinstance(model, Finding)), (body, fast, model)
