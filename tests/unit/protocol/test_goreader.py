"""The exact reader (``protocol.goreader``) against Go's decoding rules and the fast path.

What these tests prove:

- every canonical line the real Go code wrote (``real-corpus/file`` and ``random``) decodes to the
  fast path's value with no difference reported;
- each Go decoding rule of REAL-SYSTEM.md A.8 and its addendum, by value or by refusal (and Go's words);
- hypothesis: canonical lines of arbitrary records decode to the record; lines mutated in the ways Go's
  decoder tolerates (case-variant and escaped keys, whitespace, repeated keys, unknown keys, ``\\u00XX``
  escapes) still decode to the same record; damaged lines are accepted or refused alike by the fast
  path and the exact reader, with the same value, and never crash either.
"""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import UndecodableLine
from journaltools.protocol import decode, goreader
from journaltools.protocol.blocks import (
    Block,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from journaltools.protocol.encode import encode_go_json, encode_record, raw_json
from journaltools.protocol.kinds import (
    KINDS,
    PROTOCOLS,
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
    protocol_of,
)
from tests.runstate_corpus import CORPUS


def corpus_lines() -> list[bytes]:
    lines: list[bytes] = []
    for folder in ("file", "random"):
        for path in sorted((CORPUS / folder).glob("*.json")):
            lines.extend(line for line in path.read_bytes().split(b"\n") if line)
    return lines


def exact(line: bytes | str) -> Record:
    return goreader.read_exact(line.encode() if isinstance(line, str) else line)[0]


def refusal(line: bytes | str) -> str:
    with pytest.raises(UndecodableLine) as caught:
        goreader.read_exact(line.encode() if isinstance(line, str) else line)
    return caught.value.reason


# --- the corpus ------------------------------------------------------------------------------------


@pytest.mark.slow  # every corpus line through the exact reader: `make test` runs it
def test_every_canonical_corpus_line_reads_as_the_fast_path_does() -> None:
    lines = corpus_lines()
    assert len(lines) > 27_000
    for line in lines:
        record, differences = goreader.read_exact(line)
        assert record == msgspec.json.decode(line, type=Record), line[:120]
        assert differences == [], (differences, line[:120])


# --- envelope and top level ------------------------------------------------------------------------

CLAIM = '{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.claim","claim":{"by":"w","claimed":"2026-08-21T07:14:03Z"}}'


def test_null_line_is_the_zero_record() -> None:
    record, differences = goreader.read_exact(b" null ")
    assert record == Record(seq=0, protocol="")
    assert "whitespace" in differences


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("[1]", "json: cannot unmarshal array into Go value of type runstate.Record"),
        ("7", "json: cannot unmarshal number into Go value of type runstate.Record"),
        ('"x"', "json: cannot unmarshal string into Go value of type runstate.Record"),
        ("true", "json: cannot unmarshal bool into Go value of type runstate.Record"),
        ("", "unexpected end of JSON input"),
        ("   ", "unexpected end of JSON input"),
        ('{"seq":1', "unexpected end of JSON input"),
        ('{"seq":1}{}', "invalid character '{' after top-level value"),
        ('{"seq":1} x', "invalid character 'x' after top-level value"),
        ("\ufeff{}", "invalid character '\\ufeff' looking for beginning of value"),
        ("#", "invalid character '#' looking for beginning of value"),
        ("nul", "unexpected end of JSON input"),
        ("nOll", "invalid character 'O' in literal null (expecting 'u')"),
        ('{"seq":01}', "invalid character '1' after object key:value pair"),
        ('{"seq":1.}', "invalid character '}' after decimal point in numeric literal"),
        ('{"seq":-}', "invalid character '}' in numeric literal"),
        ('{"seq":1e}', "invalid character '}' in exponent of numeric literal"),
        ('{"seq" 1}', "invalid character '1' after object key"),
        ("{seq:1}", "invalid character 's' looking for beginning of object key string"),
        ('{"seq":1,}', "invalid character '}' looking for beginning of object key string"),
        ('{"a":[1,]}', "invalid character ']' looking for beginning of value"),
        ('{"a":[1 2]}', "invalid character '2' after array element"),
        ('{"a":"\x00"}', "invalid character '\\x00' in string"),
        ('{"a":"\t"}', "invalid character '\\t' in string"),
        ('{"a":"\\x"}', "invalid character 'x' in string escape code"),
        ('{"a":"\\u12G4"}', "invalid character 'G' in \\u hexadecimal character escape"),
        ("{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    ],
)
def test_syntax_and_top_level_refusals(line: str, reason: str) -> None:
    assert refusal(line) == reason


def test_syntax_errors_anywhere_win_over_type_errors() -> None:
    # Go checks the whole line before decoding a field.
    assert refusal('{"seq":"x","protocol":1,"a":[}') == "invalid character '}' looking for beginning of value"


def test_unknown_keys_are_ignored_but_must_be_valid_json() -> None:
    record, differences = goreader.read_exact(b'{"seq":4,"protocol":"p","zz":{"a":[1,{"b":null}]},"x_1":"\xff"}')
    assert record == Record(seq=4, protocol="p")
    assert "unknown key 'zz' ignored" in differences
    assert refusal('{"seq":4,"zz":[1,2') == "unexpected end of JSON input"


def test_nesting_limit_counts_the_record_and_unknown_fields() -> None:
    def line(depth: int) -> bytes:
        return b'{"seq":1,"protocol":"p","deep":' + b"[" * depth + b"]" * depth + b"}"

    assert exact(line(goreader.MAX_DEPTH - 1)).seq == 1
    assert refusal(line(goreader.MAX_DEPTH)) == "exceeded max depth"
    assert refusal(b"[" * 200_000) == "exceeded max depth"


def test_nesting_limit_counts_raw_fields() -> None:
    # record, assistant, message, content, block, tool_use: six containers before the input.
    def line(depth: int) -> bytes:
        return (
            b'{"seq":2,"protocol":"p","assistant":{"iteration":0,"message":{"role":"assistant","content":'
            b'[{"tool_use":{"id":"a","name":"b","input":'
            + b"[" * depth
            + b"]" * depth
            + b'}}]},"in_tokens":1,"out_tokens":1}}'
        )

    record = exact(line(goreader.MAX_DEPTH - 6))
    assert record.assistant is not None and record.assistant.message.content is not None
    tool_use = record.assistant.message.content[0].tool_use
    assert tool_use is not None and bytes(tool_use.input) == b"[" * 9994 + b"]" * 9994
    assert refusal(line(goreader.MAX_DEPTH - 5)) == "exceeded max depth"


# --- keys --------------------------------------------------------------------------------------------


def test_keys_match_case_insensitively_with_go_folding() -> None:
    record, differences = goreader.read_exact('{"SEQ":5,"PROTOCOL":"p","\u017feq":6}'.encode())
    assert record.seq == 6 and record.protocol == "p"
    assert "key 'SEQ' matched case-insensitively" in differences
    # The Kelvin sign folds with k; "_" and "-" must match exactly.
    record = exact(
        '{"seq":1,"protocol":"p","decision":{"tool":"x"},"call_approval":{"tool_use_id":"a","tool_name":"\u212a"}}'
    )
    assert record.call_approval == CallApproval(tool_use_id="a", tool_name="\u212a")
    kelvin = exact(
        '{"seq":1,"protocol":"p","terminal":{"reason":"x"},"claim":{"by":"a","claimed":"2026-01-01T00:00:00Z"},"\u212aind":1}'
    )
    assert kelvin.seq == 1
    assert exact('{"seq":1,"protocol":"p","tool-result":{"tool_use_id":"a"}}').tool_result is None
    assert exact('{"seq":1,"protocol":"p","TOOL_RESULT":{"TOOL_USE_ID":"a"}}').tool_result == ToolResult(
        tool_use_id="a", result=ToolResultBlock(tool_use_id="", content="")
    )
    # The dotless i and dotted capital I do not fold with ASCII letters.
    assert exact('{"seq":1,"protocol":"p","dec\u0131sion":{"tool":"x"}}').decision is None


def test_escaped_keys_match_after_unescaping() -> None:
    assert exact('{"\\u0073eq":9,"protocol":"p"}').seq == 9


def test_a_later_key_overrides_and_repeated_objects_merge() -> None:
    record, differences = goreader.read_exact(
        b'{"seq":1,"seq":2,"protocol":"p","terminal":{"reason":"a"},"Terminal":{"message":"m"}}'
    )
    assert record.seq == 2
    assert record.terminal == Terminal(reason="a", message="m")
    assert "repeated key 'seq'" in differences and "repeated key 'terminal'" in differences


# --- null --------------------------------------------------------------------------------------------


def test_null_keeps_values_and_clears_pointers_slices_and_maps() -> None:
    record = exact(
        '{"seq":5,"seq":null,"protocol":"p","protocol":null,"optional":true,"optional":null,'
        '"memory_revisions":{"revisions":{"a":1}},"memory_revisions":{"revisions":null},'
        '"claim":{"by":"x","claimed":"2026-01-01T00:00:00Z"},"claim":{"claimed":null},'
        '"meta":{"version":3},"meta":null}'
    )
    assert (record.seq, record.protocol, record.optional) == (5, "p", True)
    assert record.memory_revisions == MemoryRevisions(revisions=None)
    assert record.claim == Claim(by="x", claimed="2026-01-01T00:00:00Z")
    assert record.meta is None


def test_null_raw_field_holds_null_and_missing_raw_field_is_nil() -> None:
    line = (
        '{"seq":1,"protocol":"p","user":{"message":{"role":"user","content":'
        '[{"tool_use":{"id":"a","input":null}},{"provider":{"kind":"k"}}]}}}'
    )
    record = exact(line)
    assert record.user is not None
    assert record.user.message.content == [
        Block(tool_use=ToolUseBlock(id="a", name="", input=msgspec.Raw(b"null"))),
        Block(provider=ProviderBlock(kind="k", raw=msgspec.Raw(b"null"))),
    ]


def test_missing_fields_are_zero_values() -> None:
    record, differences = goreader.read_exact(b'{"seq":1,"protocol":"p","meta":{"version":3}}')
    assert record.meta == Meta(
        version=3,
        run_id="",
        created=ZERO_TIME,
        fingerprint=Fingerprint(
            provider="", model="", system_hash="", tools_hash="", thinking_mode="", max_tokens=0, max_iterations=0
        ),
        prompt="",
    )
    assert "key 'created' missing" in differences


# --- arrays ------------------------------------------------------------------------------------------

CONTENT = '{{"seq":2,"protocol":"p","user":{{"message":{{"role":"user","content":{0},"content":{1}{2}}}}}}}'


def _content(first: str, second: str, third: str = "") -> list[Block] | None:
    more = f',"content":{third}' if third else ""
    record = exact(CONTENT.format(first, second, more))
    assert record.user is not None
    return record.user.message.content


def test_a_repeated_array_decodes_into_the_existing_elements() -> None:
    a, b, c = ('{"text":{"text":"a"}}', '{"text":{"text":"b"}}', '{"text":{"text":"c"}}')
    merged = _content('[{"text":{"text":"t"}}]', '[{"thinking":{"text":"th"}}]')
    assert merged == [Block(text=TextBlock(text="t"), thinking=ThinkingBlock(text="th"))]
    assert _content(f"[{a},{b}]", "[null]") == [Block(text=TextBlock(text="a"))]
    # Elements beyond a shorter array come back when an even later array re-extends the slice.
    assert _content(f"[{a},{b},{c}]", "[{}]", "[{},{},{}]") == [Block(text=TextBlock(text=t)) for t in ("a", "b", "c")]
    # An empty array drops them for good.
    assert _content(f"[{a},{b}]", "[]", "[{},{}]") == [Block(), Block()]
    assert _content(f"[{a}]", "null") is None
    assert _content("null", "[]") == []


def test_content_elements_must_be_objects() -> None:
    reason = refusal(CONTENT.format("[1]", "[]", ""))
    assert (
        reason
        == "json: cannot unmarshal number into Go struct field Record.user.message.content.0 of type llm.ContentBlock"
    )


# --- types -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ('"seq":"2"', "json: cannot unmarshal string into Go struct field Record.seq of type uint64"),
        ('"seq":2.0', "json: cannot unmarshal number 2.0 into Go struct field Record.seq of type uint64"),
        ('"seq":2e0', "json: cannot unmarshal number 2e0 into Go struct field Record.seq of type uint64"),
        ('"seq":-2', "json: cannot unmarshal number -2 into Go struct field Record.seq of type uint64"),
        ('"seq":-0', "json: cannot unmarshal number -0 into Go struct field Record.seq of type uint64"),
        (
            '"seq":18446744073709551616',
            "json: cannot unmarshal number 18446744073709551616 into Go struct field Record.seq of type uint64",
        ),
        ('"optional":"yes"', "json: cannot unmarshal string into Go struct field Record.optional of type bool"),
        ('"optional":1', "json: cannot unmarshal number into Go struct field Record.optional of type bool"),
        (
            '"protocol":1',
            "json: cannot unmarshal number into Go struct field Record.protocol of type runstate.Protocol",
        ),
        ('"meta":[]', "json: cannot unmarshal array into Go struct field Record.meta of type runstate.MetaRecord"),
        (
            '"meta":{"version":"3"}',
            "json: cannot unmarshal string into Go struct field Record.meta.version of type int",
        ),
        (
            '"assistant":{"iteration":1.5}',
            "json: cannot unmarshal number 1.5 into Go struct field Record.assistant.iteration of type int64",
        ),
        (
            '"assistant":{"in_tokens":9223372036854775808}',
            "json: cannot unmarshal number 9223372036854775808 into Go struct field Record.assistant.in_tokens"
            " of type int64",
        ),
        (
            '"memory_revisions":{"revisions":{"k":-1}}',
            "json: cannot unmarshal number -1 into Go struct field Record.memory_revisions.revisions.k of type uint64",
        ),
        (
            '"memory_revisions":{"revisions":[]}',
            "json: cannot unmarshal array into Go struct field Record.memory_revisions.revisions"
            " of type map[string]uint64",
        ),
        (
            '"tool_result":{"result":{"is_error":"true"}}',
            "json: cannot unmarshal string into Go struct field Record.tool_result.result.is_error of type bool",
        ),
        (
            '"claim":{"claimed":5}',
            "json: cannot unmarshal number into Go struct field Record.claim.claimed of type time.Time",
        ),
    ],
)
def test_type_mismatches_refuse_the_line(member: str, reason: str) -> None:
    assert refusal('{"seq":1,"protocol":"p",' + member + "}") == reason


def test_int64_fields_accept_negative_zero_and_their_whole_range() -> None:
    record = exact(
        '{"seq":18446744073709551615,"protocol":"p","assistant":{"iteration":-0,"in_tokens":-9223372036854775808,'
        '"out_tokens":9223372036854775807}}'
    )
    assert record.seq == (1 << 64) - 1
    assert record.assistant is not None
    assert (record.assistant.iteration, record.assistant.in_tokens) == (0, -(1 << 63))
    assert record.assistant.out_tokens == (1 << 63) - 1


def test_raw_fields_accept_any_json_and_keep_it_compacted() -> None:
    line = (
        '{"seq":1,"protocol":"p","user":{"message":{"content":'
        '[{"tool_use":{"input":{ "a" : [1.50e3, "<x y>"] , "b":true }}}]}}}'
    )
    record = exact(line)
    assert record.user is not None and record.user.message.content is not None
    tool_use = record.user.message.content[0].tool_use
    assert tool_use is not None
    assert bytes(tool_use.input) == b'{"a":[1.50e3,"\\u003cx y\\u003e"],"b":true}'


def test_revisions_values_start_from_zero_and_maps_merge() -> None:
    record = exact(
        '{"seq":1,"protocol":"p","memory_revisions":{"revisions":{"a":5,"b":2},"revisions":{"a":null,"c":3}}}'
    )
    assert record.memory_revisions == MemoryRevisions(revisions={"a": 0, "b": 2, "c": 3})
    assert exact('{"seq":1,"protocol":"p","memory_revisions":{"revisions":{}}}').memory_revisions == MemoryRevisions(
        revisions={}
    )


# --- strings -----------------------------------------------------------------------------------------


def test_each_invalid_utf8_byte_becomes_its_own_replacement_character() -> None:
    record, differences = goreader.read_exact(b'{"seq":1,"protocol":"a\xe2\x82b\xffc\xed\xa0\x80"}')
    assert record.protocol == "a\ufffd\ufffdb\ufffdc\ufffd\ufffd\ufffd"
    assert "invalid UTF-8 replaced by U+FFFD" in differences


def test_invalid_utf8_in_raw_fields_is_kept_verbatim() -> None:
    line = b'{"seq":1,"protocol":"p","user":{"message":{"content":[{"provider":{"kind":"k","raw":"\xff\xfe"}}]}}}'
    record = exact(line)
    assert record.user is not None and record.user.message.content is not None
    provider = record.user.message.content[0].provider
    assert provider is not None and bytes(provider.raw) == b'"\xff\xfe"'


@pytest.mark.parametrize(
    ("escaped", "text"),
    [
        ("\\ud800", "\ufffd"),
        ("\\udc00", "\ufffd"),
        ("\\ud83d\\ude00", "\U0001f600"),
        ("\\ud800\\ud800\\udc00", "\ufffd\U00010000"),
        ("\\ud800\\u0041", "\ufffdA"),
        ("\\ud800x", "\ufffdx"),
        ('\\u00e9\\n\\/\\b\\f\\t\\r\\"\\\\', 'é\n/\b\f\t\r"\\'),
        ("\\u0000", "\x00"),
    ],
)
def test_string_escapes(escaped: str, text: str) -> None:
    assert exact('{"seq":1,"protocol":"' + escaped + '"}').protocol == text


# --- signatures --------------------------------------------------------------------------------------

SIGNATURE = '{{"seq":2,"protocol":"p","user":{{"message":{{"content":[{{"thinking":{{{0}}}}}]}}}}}}'


def _signature(members: str) -> bytes:
    record = exact(SIGNATURE.format(members))
    assert record.user is not None and record.user.message.content is not None
    thinking = record.user.message.content[0].thinking
    assert thinking is not None
    return thinking.signature


@pytest.mark.parametrize(
    ("members", "value"),
    [
        ('"signature":"aGk="', b"hi"),
        ('"signature":"aG\\nk\\r="', b"hi"),
        ('"signature":"QR=="', b"A"),  # non-zero trailing bits are accepted
        ('"signature":"aG=="', b"h"),
        ('"signature":""', b""),
        ('"signature":[104,105]', b"hi"),
        # A repeated base64 key keeps the later value only (journals the August build wrote say so).
        ('"signature":"AQID","signature":"BA=="', b"\x04"),
        ('"signature":"BA==","signature":"AQID"', b"\x01\x02\x03"),
        ('"signature":"AQID","signature":null,"signature":"BA=="', b"\x04"),
        ('"signature":[1,2,3],"signature":[null,9]', b"\x01\x09"),
        ('"signature":"\\u0061Gk="', b"hi"),
    ],
)
def test_signature_forms(members: str, value: bytes) -> None:
    assert _signature(members) == value


@pytest.mark.parametrize(
    ("signature", "offset"),
    [('"aGk"', 0), ('"aG="', 3), ('"a==="', 1), ('"aGk=x"', 4), ('"!!!!"', 0), ('"aGk=aGk="', 4), ('"a\\u00e9=="', 1)],
)
def test_bad_base64_refuses_the_line(signature: str, offset: int) -> None:
    reason = refusal(SIGNATURE.format('"signature":' + signature))
    assert reason.startswith(
        "json: cannot unmarshal string into Go struct field Record.user.message.content.0.thinking.signature"
        " of type []uint8: "
        "illegal base64 data at input byte "
    )
    assert reason.endswith(f"byte {offset}")


def test_signature_bytes_must_fit_uint8() -> None:
    assert "of type uint8" in refusal(SIGNATURE.format('"signature":[256]'))
    assert "of type uint8" in refusal(SIGNATURE.format('"signature":["a"]'))


def test_go_base64_matches_python_on_valid_padded_input() -> None:
    rng = random.Random(7)
    import base64

    for size in range(40):
        data = bytes(rng.randrange(256) for _ in range(size))
        assert goreader.go_base64(base64.b64encode(data)) == data


# --- times -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2026-08-21T09:14:03.512331907+02:00", "2026-08-21T09:14:03.512331907+02:00"),
        ("2026-08-21T09:14:03.500+02:00", "2026-08-21T09:14:03.5+02:00"),
        ("2026-08-21T09:14:03.000Z", "2026-08-21T09:14:03Z"),
        ("2026-08-21T9:14:03Z", "2026-08-21T09:14:03Z"),
        ("2026-08-21T09:14:03,25Z", "2026-08-21T09:14:03.25Z"),
        ("2026-08-21T09:14:03.1234567891234Z", "2026-08-21T09:14:03.123456789Z"),
        ("2026-08-21T09:14:03+00:00", "2026-08-21T09:14:03Z"),
        ("2026-08-21T09:14:03-00:00", "2026-08-21T09:14:03Z"),
        ("2026-08-21T09:14:03+24:00", "2026-08-21T09:14:03+24:00"),
        ("2026-08-21T09:14:03+23:60", "2026-08-21T09:14:03+24:00"),
        ("2026-08-21T09:14:03-05:30", "2026-08-21T09:14:03-05:30"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
        ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
        ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
        (ZERO_TIME, ZERO_TIME),
    ],
)
def test_times_go_accepts_and_their_canonical_text(text: str, canonical: str) -> None:
    assert goreader.parse_go_time(text) == canonical


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "21/08/2026 09:14",
            'parsing time "21/08/2026 09:14" as "2006-01-02T15:04:05Z07:00": cannot parse "21/08/2026 09:14" as "2006"',
        ),
        (
            "2026-08-21 09:14:03Z",
            'parsing time "2026-08-21 09:14:03Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 09:14:03Z" as "T"',
        ),
        (
            "2026-08-21T09:14:03z",
            'parsing time "2026-08-21T09:14:03z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"',
        ),
        ("2026-08-21T09:14:03+25:00", 'parsing time "2026-08-21T09:14:03+25:00": time zone offset hour out of range'),
        ("2026-08-21T09:14:03+02:61", 'parsing time "2026-08-21T09:14:03+02:61": time zone offset minute out of range'),
        ("2025-02-29T00:00:00Z", 'parsing time "2025-02-29T00:00:00Z": day out of range'),
        ("1900-02-29T00:00:00Z", 'parsing time "1900-02-29T00:00:00Z": day out of range'),
        ("2026-04-31T00:00:00Z", 'parsing time "2026-04-31T00:00:00Z": day out of range'),
        ("2026-13-01T00:00:00Z", 'parsing time "2026-13-01T00:00:00Z": month out of range'),
        ("2026-08-21T24:00:00Z", 'parsing time "2026-08-21T24:00:00Z": hour out of range'),
        ("2026-08-21T09:60:00Z", 'parsing time "2026-08-21T09:60:00Z": minute out of range'),
        ("2026-08-21T09:14:60Z", 'parsing time "2026-08-21T09:14:60Z": second out of range'),
        (
            "2026-08-21T09:14:03.Z",
            'parsing time "2026-08-21T09:14:03.Z" as "2006-01-02T15:04:05Z07:00": cannot parse ".Z" as "Z07:00"',
        ),
        ("2026-08-21T09:14:03Zx", 'parsing time "2026-08-21T09:14:03Zx": extra text: "x"'),
        (
            "2026-8-21T09:14:03Z",
            'parsing time "2026-8-21T09:14:03Z" as "2006-01-02T15:04:05Z07:00": cannot parse "8-21T09:14:03Z" as "01"',
        ),
        ("\u0662\u0660\u0662\u0666-08-21T09:14:03Z", None),
        ("2026-08-21T09:14:03\uff0b02:00", None),
        ("", 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'),
    ],
)
def test_times_go_refuses(text: str, reason: str | None) -> None:
    with pytest.raises(UndecodableLine) as caught:
        goreader.parse_go_time(text)
    if reason is not None:
        assert caught.value.reason == reason


def test_time_fields_are_stored_in_canonical_text_and_escapes_are_decoded_first() -> None:
    record, differences = goreader.read_exact(
        b'{"seq":1,"protocol":"p","claim":{"by":"w","claimed":"2026-08-21\\u005409:14:03.100+00:00"}}'
    )
    assert record.claim == Claim(by="w", claimed="2026-08-21T09:14:03.1Z")
    assert "time respelled" in differences


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2024-02-29T00:00:00Z", True),
        ("2023-02-29T00:00:00Z", False),
        ("2100-02-29T00:00:00Z", False),
        ("2000-02-29T00:00:00Z", True),
        ("2026-06-31T00:00:00Z", False),
        ("2026-12-31T23:59:59.5-07:00", True),
        ("2026-00-10T00:00:00Z", False),
        ("\u0662\u0660\u0662\u0666-08-21T09:14:03Z", False),
    ],
)
def test_valid_calendar_date(text: str, valid: bool) -> None:
    assert goreader.valid_calendar_date(text) is valid


# --- what the fast path gets wrong (decode.py is not this module's; these pin the defects) ------------

META = (
    '{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{{"version":3,"run_id":"r","created":"{0}",'
    '"fingerprint":{{"provider":"p","model":"m","system_hash":"s","tools_hash":"t","thinking_mode":"off",'
    '"max_tokens":0,"max_iterations":1}},"prompt":"x"}}}}'
)


def test_fast_path_refuses_a_time_with_non_ascii_digits() -> None:
    line = META.format("\u0662\u0660\u0662\u0666-08-21T09:14:03Z").encode()
    assert refusal(line).startswith("parsing time")
    with pytest.raises(UndecodableLine):
        decode.decode_line(line)


def test_fast_path_compacts_raw_fields_in_every_payload() -> None:
    line = (
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":'
        b'{"role":"assistant","content":null},"in_tokens":1,"out_tokens":1},"user":{"message":{"role":"user",'
        b'"content":[{"tool_use":{"id":"a","name":"b","input":[1, 2]}}]}}}'
    )
    assert decode.decode_line(line).record == exact(line)


def test_fast_path_reads_a_deep_raw_field() -> None:
    line = (
        b'{"seq":2,"protocol":"p","assistant":{"iteration":0,"message":{"role":"assistant","content":'
        b'[{"tool_use":{"id":"a","name":"b","input":'
        + b"[" * 2000
        + b"]" * 2000
        + b'}}]},"in_tokens":1,"out_tokens":1}}'
    )
    assert decode.decode_line(line).record == exact(line)


# --- hypothesis: arbitrary records --------------------------------------------------------------------

SPECIAL = ["<", ">", "&", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", '"', "\\", "/", "é", "\U0001f600", "\ufffd"]
texts = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(SPECIAL)), max_size=10)
int64s = st.integers(-(1 << 63), (1 << 63) - 1)
uint64s = st.integers(0, (1 << 64) - 1)


@st.composite
def go_times(draw: st.DrawFn) -> str:
    day = draw(st.dates())
    hour, minute, second = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    nanos = draw(st.sampled_from([0, 0, 500_000_000, 123_456_789, 1]) | st.integers(0, 999_999_999))
    offset = draw(st.sampled_from([0, 0, 120, -300, 330]) | st.integers(-(23 * 60 + 59), 23 * 60 + 59))
    text = f"{day.year:04d}-{day.month:02d}-{day.day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    if offset == 0:
        return text + "Z"
    sign = "-" if offset < 0 else "+"
    return f"{text}{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"


json_values = st.recursive(
    st.none() | st.booleans() | int64s | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
raw_values = json_values.map(raw_json)

blocks = st.one_of(
    st.builds(lambda t: Block(text=TextBlock(text=t)), texts),
    st.builds(lambda t, s: Block(thinking=ThinkingBlock(text=t, signature=s)), texts, st.binary(max_size=8)),
    st.builds(lambda i, n, r: Block(tool_use=ToolUseBlock(id=i, name=n, input=r)), texts, texts, raw_values),
    st.builds(
        lambda i, c, e: Block(tool_result=ToolResultBlock(tool_use_id=i, content=c, is_error=e)),
        texts,
        texts,
        st.booleans(),
    ),
    st.builds(lambda k, r: Block(provider=ProviderBlock(kind=k, raw=r)), texts, raw_values),
    st.just(Block()),
)
messages = st.builds(
    lambda role, content: Message(role=role, content=content),
    st.sampled_from(["user", "assistant"]) | texts,
    st.none() | st.lists(blocks, max_size=4),
)
fingerprints = st.builds(
    Fingerprint,
    provider=texts,
    model=texts,
    system_hash=texts,
    tools_hash=texts,
    thinking_mode=texts,
    reasoning_effort=texts,
    max_tokens=int64s,
    max_iterations=int64s,
)
payloads: dict[str, st.SearchStrategy[Any]] = {
    "meta": st.builds(
        Meta,
        version=int64s,
        run_id=texts,
        created=go_times(),
        fingerprint=fingerprints,
        prompt=texts,
        interactive=st.booleans(),
        conversation_token=texts,
        caller=texts,
    ),
    "assistant": st.builds(
        Assistant,
        iteration=int64s,
        message=messages,
        stop_reason=texts,
        in_tokens=int64s,
        out_tokens=int64s,
        cache_read_tokens=int64s,
        cache_create_tokens=int64s,
        thinking_tokens=int64s,
    ),
    "user": st.builds(User, message=messages),
    "tool_result": st.builds(
        ToolResult,
        tool_use_id=texts,
        result=st.builds(ToolResultBlock, tool_use_id=texts, content=texts, is_error=st.booleans()),
        remote=st.booleans(),
    ),
    "deferred": st.builds(Deferred, tool_use_id=texts, tool_name=texts, note=texts, handle=texts),
    "decision": st.builds(Decision, tool=texts),
    "call_approval": st.builds(CallApproval, tool_use_id=texts, tool_name=texts),
    "memory_revisions": st.builds(MemoryRevisions, revisions=st.none() | st.dictionaries(texts, uint64s, max_size=4)),
    "terminal": st.builds(Terminal, reason=texts, message=texts),
    "claim": st.builds(Claim, by=texts, claimed=go_times()),
}


@st.composite
def records(draw: st.DrawFn) -> Record:
    kind = draw(st.sampled_from(KINDS))
    fields: dict[str, Any] = {kind: draw(payloads[kind])}
    if draw(st.integers(0, 9)) == 0:  # now and then a second payload, as a hand-edited line may carry
        other = draw(st.sampled_from(KINDS))
        fields[other] = draw(payloads[other])
    protocol = draw(st.sampled_from([protocol_of(kind), *PROTOCOLS]) | texts)
    return Record(seq=draw(uint64s), protocol=protocol, optional=draw(st.booleans()), **fields)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(records())
def test_canonical_lines_read_the_same_on_both_paths(record: Record) -> None:
    line = encode_record(record)
    assert goreader.read_exact(line) == (record, [])
    assert msgspec.json.decode(line, type=Record) == record
    assert decode.decode_line(line).noncanonical is None


# --- hypothesis: lines mutated the ways Go tolerates ------------------------------------------------

#: Fields whose string must stay valid as a time or as base64, so a decoy value of another string would
#: refuse the line (null is a harmless decoy everywhere).
_STRICT_STRINGS = {"created", "claimed", "signature"}
_RAW_FIELDS = {("tool_use", "input"), ("provider", "raw")}


class _Mutator:
    """Writes a parsed canonical line back with the liberties Go's decoder accepts."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def space(self) -> str:
        return self.rng.choice(["", "", "", " ", "\t", "\r\n", "  "])

    def string(self, text: str) -> str:
        out = []
        for char in text:
            if " " <= char < "\x7f" and self.rng.random() < 0.15:
                out.append(f"\\u{ord(char):04x}" if self.rng.random() < 0.5 else f"\\u{ord(char):04X}")
            else:
                out.append(json.dumps(char, ensure_ascii=False)[1:-1])
        return '"' + "".join(out) + '"'

    def key(self, name: str) -> str:
        if self.rng.random() < 0.3:
            name = "".join(c.upper() if self.rng.random() < 0.5 else c for c in name)
            name = name.replace("s", "\u017f", 1) if self.rng.random() < 0.2 else name
            name = name.replace("k", "\u212a", 1) if self.rng.random() < 0.2 else name
        return self.string(name)

    def decoy(self, name: str, value: Any) -> str:
        # A null value may stand for a map or a list: only null is a decoy of every such type.
        if value is None or name in _STRICT_STRINGS or self.rng.random() < 0.5:
            return "null"
        if isinstance(value, bool):
            return "true"
        if isinstance(value, int):
            return "7"
        if isinstance(value, str):
            return '"decoy"'
        if isinstance(value, dict):
            return "{}"
        return "[]"

    def value(self, value: Any, parent: str = "", name: str = "", in_map: bool = False) -> str:
        if (parent, name) in _RAW_FIELDS:
            return encode_go_json(value).decode()
        if isinstance(value, dict):
            members = []
            for key, item in value.items():
                if not in_map and self.rng.random() < 0.15:
                    members.append(
                        f'"x_unknown_{len(members)}":'
                        + encode_go_json(self.rng.choice([None, 1, "u", [1, {}]])).decode()
                    )
                if self.rng.random() < 0.15:
                    members.append(f"{self.key(key) if not in_map else self.string(key)}:{self.decoy(key, item)}")
                written_key = self.string(key) if in_map else self.key(key)
                written = self.value(item, name, key, in_map=key == "revisions")
                members.append(f"{self.space()}{written_key}{self.space()}:{self.space()}{written}{self.space()}")
            return "{" + ",".join(members) + "}"
        if isinstance(value, list):
            return "[" + ",".join(self.space() + self.value(item, name, "") + self.space() for item in value) + "]"
        if isinstance(value, str):
            return self.string(value)
        return json.dumps(value)


@FAST
@given(records(), st.integers(0, 2**32))
def test_lines_go_tolerates_decode_to_the_same_record(record: Record, seed: int) -> None:
    line = encode_record(record)
    mutated = _Mutator(random.Random(seed)).value(json.loads(line)).encode()
    assert goreader.read_exact(mutated)[0] == record, mutated
    assert decode.decode_line(mutated).record == record


# --- hypothesis: damaged lines ------------------------------------------------------------------------


def _damage(line: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    position = rng.randrange(len(line) + 1)
    if choice == 0:
        return line[:position]
    if choice == 1:
        return line[:position] + bytes([rng.randrange(256)]) + line[position:]
    if choice == 2:
        return line[:position] + line[position + 1 :]
    replacement = rng.choice([b"\\", b'"', b"{", b"}", b"[", b"]", b",", b":", b"-", b"0", b"e", b"n", b"\xff", b" "])
    return line[:position] + replacement + line[position + 1 :]


def _outcome(read: Any, line: bytes) -> Record | None:
    try:
        return read(line)  # type: ignore[no-any-return]
    except UndecodableLine:
        return None


@FAST
@given(records(), st.integers(0, 2**32), st.integers(1, 3))
def test_damaged_lines_are_judged_alike_by_both_readers(record: Record, seed: int, damages: int) -> None:
    rng = random.Random(seed)
    line = encode_record(record)
    for _ in range(damages):
        line = _damage(line, rng)
    fast = _outcome(lambda raw: decode.decode_line(raw).record, line)
    slow = _outcome(lambda raw: goreader.read_exact(raw)[0], line)
    assert fast == slow, line


def test_damaged_corpus_lines_are_judged_alike_by_both_readers() -> None:
    rng = random.Random(11)
    lines = corpus_lines()
    for _ in range(3000):
        line = _damage(rng.choice(lines), rng)
        fast = _outcome(lambda raw: decode.decode_line(raw).record, line)
        slow = _outcome(lambda raw: goreader.read_exact(raw)[0], line)
        assert fast == slow, line[:200]
