"""The one line parser: what is a record, duplicate keys, deep nesting, numbers."""

from __future__ import annotations

import pytest

from journaltools.protocol.jsonline import LineNotJson, parse_line
from journaltools.protocol.records import decode_record, validate_record


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"[1]",
        b"3",
        b"{",
        b'{"a":1} x',
        b'{"a":NaN}',
        b'{"a":"\\ud800"}',
        b'{"a":"\xff"}',
        b'{"a":"\x01"}',
        b"\xef\xbb\xbf{}",
        b'{"a":1,}',
    ],
)
def test_what_is_not_one_object(line: bytes) -> None:
    with pytest.raises(LineNotJson):
        parse_line(line)


def test_whitespace_around_an_object_and_exact_integers() -> None:
    body, duplicate = parse_line(b' {"seq":100000000000000000000000000000,"x":1e400} ')
    assert duplicate is None and body["seq"] == 10**29 and body["x"] == float("inf")


def test_a_duplicated_key_is_named_and_the_last_value_kept() -> None:
    assert parse_line(b'{"type":"user","type":"note"}') == ({"type": "note"}, "type")
    assert parse_line(b'{"x":{"a":1,"a":2}}') == ({"x": {"a": 2}}, "a")
    record = decode_record(b'{"type":"note","run":"r","seq":2,"ts":"2026-11-29T10:00:00Z","text":"a","text":"b"}')
    finding = validate_record(record)
    assert getattr(finding, "code", None) == "schema_violation" and "duplicate key 'text'" in finding.message  # type: ignore[union-attr]


@pytest.mark.parametrize("depth", [10, 300, 900])
def test_deep_nesting_is_read_past_the_fast_parser_limit(depth: int) -> None:
    body, duplicate = parse_line(b'{"x":' + b"[" * depth + b'{"a":1,"a":2}' + b"]" * depth + b"}")
    inner = body["x"]
    for _ in range(depth):
        inner = inner[0]
    assert inner == {"a": 2} and duplicate == "a"


def test_too_deep_or_unpaired_surrogates_deep_down_are_not_records() -> None:
    with pytest.raises(LineNotJson):
        parse_line(b'{"x":' + b"[" * 5000 + b"]" * 5000 + b"}")
    with pytest.raises(LineNotJson, match="surrogate"):
        parse_line(b'{"x":' + b"[" * 300 + b'"\\udc00"' + b"]" * 300 + b"}")
