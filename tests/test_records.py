import re

import orjson
import pytest

from journaltools.protocol.findings import Finding
from journaltools.protocol.records import (
    RECORD_TYPES,
    LineNotJson,
    decode_record,
    record_json_schema,
    validate_record,
)
from journaltools.protocol.runid import validate_run_id
from tests.builders import JournalBuilder


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
