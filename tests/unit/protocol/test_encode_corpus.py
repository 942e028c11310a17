"""The writer: every record the runtime wrote re-encodes, from its typed value, to the runtime's bytes."""

from __future__ import annotations

import msgspec

from journaltools.goencoding.json_values import marshal_raw as compact_json
from journaltools.protocol.encode import encode_go_json, encode_record
from journaltools.protocol.kinds import Record
from tests.runstate_corpus import canonical_lines


def test_every_corpus_record_reencodes_to_its_bytes() -> None:
    decoder = msgspec.json.Decoder(Record)
    count = 0
    for name, line in canonical_lines():
        assert encode_record(decoder.decode(line)) == line, name
        count += 1
    assert count > 27_000  # file/ and random/: every line, not a sample


def test_go_escapes_html_characters_and_line_separators() -> None:
    assert encode_go_json(["a & b <c> \u2028\u2029"]) == b'["a \\u0026 b \\u003cc\\u003e \\u2028\\u2029"]'
    assert encode_go_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'
    assert encode_go_json("\x08\x0c\x01\x7f/") == b'"\\b\\f\\u0001\x7f/"'


def test_raw_json_is_compacted_keeping_number_spelling_and_key_order() -> None:
    assert compact_json(b'{ "z" : 1.50e3, "a": [ 1 , "x y" ] }') == b'{"z":1.50e3,"a":[1,"x y"]}'
    assert compact_json(b'"<&>"') == b'"\\u003c\\u0026\\u003e"'


def test_a_line_with_other_punctuation_of_the_u2028_block_is_canonical() -> None:
    """U+2026 shares its first two UTF-8 bytes with U+2028: it is written raw and takes the fast path."""
    from journaltools.protocol.blocks import user_text
    from journaltools.protocol.decode import decode_line
    from journaltools.protocol.kinds import User, make_record

    line = encode_record(make_record(2, User(message=user_text("wait… then \u2028"))))
    assert "…".encode() in line and b"\\u2028" in line
    assert decode_line(line).noncanonical is None
    plain = encode_record(make_record(2, User(message=user_text("wait…"))))
    assert decode_line(plain).noncanonical is None
    assert decode_line(plain.replace("…".encode(), "\u2028".encode())).noncanonical is not None
