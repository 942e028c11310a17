"""The file backend's line rule (``protocol.journal``) against what the real Go load path returned.

What these tests prove:

- for every mutated journal of ``real-corpus/broken``: Go's read verdict and its exact error text
  (``line N: reason``), and when the read succeeded the record count, the last seq and whether a torn
  tail was dropped; journals that fail only in the fold read successfully;
- decoding rules by value, against Go's folded state (prompt, run id, fingerprint, counters, the
  assistant messages and tool results): case-variant and duplicate keys, invalid UTF-8, lone
  surrogates, null content, a missing ``created``...;
- every line of ``real-corpus/file`` and ``random`` takes the fast path (the fast path's canonical check
  accepts everything the Go encoder wrote), and the counts match ``expected/``;
- the torn-tail resume shapes the Go backend leaves, built from real journals;
- Go's Unicode white space rule for blank lines, and JetStream bodies (no torn tail, no blank lines).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.errors import UndecodableLine
from journaltools.goencoding.json import go_utf8
from journaltools.protocol import decode, journal
from journaltools.protocol.blocks import Message
from journaltools.protocol.encode import encode_go_json, encode_record
from journaltools.protocol.journal import BadLine, StoredRecord, read_file_journal, read_stream_bodies
from journaltools.protocol.kinds import ZERO_TIME, Claim, Record, Terminal, make_record
from tests.runstate_corpus import CORPUS
from tests.strategies import damaged_journals, valid_runs

GO_PREFIX = "corrupt record sequence: "


def expected(name: str) -> list[dict[str, Any]]:
    path = CORPUS / "expected" / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


BROKEN = expected("broken")


@pytest.mark.parametrize("entry", BROKEN, ids=[entry["path"].split("/")[-1] for entry in BROKEN])
def test_broken_journals_read_as_go_reads_them(entry: dict[str, Any]) -> None:
    read = read_file_journal((CORPUS / entry["path"]).read_bytes())
    if entry.get("read_error"):
        assert not read.readable
        assert read.error == entry["read_error"].removeprefix(GO_PREFIX)
        return
    # Either Go loaded it, or it failed in the fold (seq order, meta, version, no records): the read succeeded.
    assert read.readable, read.error
    assert len(read.records) == entry["records"]
    assert read.last_seq == entry["last_seq"]
    assert (read.torn_tail is not None) == entry["dropped_torn_tail"]
    if entry["ok"] and entry["state"] is not None:
        _compare_with_state([item.record for item in read.records], entry["state"])


def _go_json(value: Any) -> Any:
    """A value as Go's JSON would print it in ``expected/``: invalid UTF-8 in raw fields shows as U+FFFD."""
    return json.loads(go_utf8(encode_go_json(value)))


def _compare_with_state(records: list[Record], state: dict[str, Any]) -> None:
    meta = records[0].meta
    assert meta is not None
    assert state["Version"] == meta.version
    assert state["RunID"] == meta.run_id
    assert state["Prompt"] == meta.prompt
    assert state["Fingerprint"] == _go_json(meta.fingerprint)
    assert (state["Interactive"], state["ConversationToken"], state["Caller"]) == (
        meta.interactive,
        meta.conversation_token,
        meta.caller,
    )
    assistants = [r.assistant for r in records if r.kind == "assistant" and r.assistant is not None]
    results = [r.tool_result for r in records if r.kind == "tool_result" and r.tool_result is not None]
    counters = state["Counters"]
    assert counters["LlmCalls"] == len(assistants)
    assert counters["ToolCalls"] == len(results)
    assert counters["RemoteToolCalls"] == sum(result.remote for result in results)
    for go_name, field in [
        ("InTokens", "in_tokens"),
        ("OutTokens", "out_tokens"),
        ("CacheReadTokens", "cache_read_tokens"),
        ("CacheCreateTokens", "cache_create_tokens"),
        ("ThinkingTokens", "thinking_tokens"),
    ]:
        assert counters[go_name] == sum(getattr(assistant, field) for assistant in assistants)
    # Every assistant message is in the conversation (or is the pending turn's), in journal order.
    conversation = list(state["Messages"] or [])
    if state.get("Pending"):
        conversation.append(state["Pending"]["Assistant"]["message"])
    remaining = iter(conversation)
    for assistant in assistants:
        wanted = _go_json(assistant.message)
        assert any(message == wanted for message in remaining), wanted
    # Every tool result is in a results message (or among the pending turn's results).
    go_results = [
        block["tool_result"] for message in conversation for block in message["content"] or () if "tool_result" in block
    ]
    if state.get("Pending"):
        go_results.extend(state["Pending"]["Results"] or ())
    for result in results:
        assert _go_json(result.result) in go_results


def _broken(mutation: str, prefix: str = "m0") -> journal.FileJournal:
    path = next((CORPUS / "broken").glob(f"{prefix}-{mutation}-" + "[0-9a-f]" * 8 + ".json"))
    return read_file_journal(path.read_bytes())


def _clean(prefix: str) -> journal.FileJournal:
    # The unmutated journal each broken one came from.
    run = {
        "m0": "3IDQ1OhDHSSoRIEpX5dNk2z1f6f",
        "m1": "3f6d0c2b9a1e4f5d8c7b6a5948372615a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9",
    }
    return read_file_journal((CORPUS / "file" / f"{run[prefix]}.json").read_bytes())


@pytest.mark.parametrize("prefix", ["m0", "m1"])
def test_lenient_decoding_rules_by_value(prefix: str) -> None:
    clean = [item.record for item in _clean(prefix).records]
    # Case-variant keys and a duplicate seq decode to the original records.
    assert [item.record for item in _broken("case-variant-keys", prefix).records] == clean
    duplicate = _broken("duplicate-key", prefix)
    assert [item.record for item in duplicate.records] == clean
    assert duplicate.records[1].noncanonical == "repeated key 'seq'"
    # A missing created is Go's zero time; a null content is nil.
    created = _broken("created-missing", prefix).records[0].record.meta
    assert created is not None and created.created == ZERO_TIME
    content = _broken("content-null", prefix).records[1].record.assistant
    assert content is not None and content.message.content is None
    # A null line, an empty object, a null seq: the zero values Go folds (and then refuses).
    assert _broken("null-interior-line", prefix).records[2].record == Record(seq=0, protocol="")
    assert _broken("seq-null", prefix).records[1].record.seq == 0
    # The records Go reads from a journal with an interior garbage line are still all there for a lenient caller.
    garbage = _broken("interior-garbage", prefix)
    assert [item.position for item in garbage.records] == [1, 2, *range(4, len(clean) + 1)]


def test_invalid_utf8_in_a_raw_field_is_kept_and_elsewhere_replaced() -> None:
    raw_input = _broken("invalid-utf8-in-tool-input").records[1]
    assert raw_input.record.assistant is not None and raw_input.record.assistant.message.content is not None
    inputs = [bytes(b.tool_use.input) for b in raw_input.record.assistant.message.content if b.tool_use is not None]
    assert any(b"\xff" in data or not _is_utf8(data) for data in inputs)
    replaced = _broken("invalid-utf8").records[1]
    assert replaced.noncanonical == "invalid UTF-8 replaced by U+FFFD"
    assert "\ufffd" in encode_record(replaced.record).decode()


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --- the canonical corpus ----------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["file", "random"])
def test_every_corpus_line_takes_the_fast_path_and_counts_match(folder: str) -> None:
    entries = {entry["path"]: entry for entry in expected(folder)}
    paths = sorted((CORPUS / folder).glob("*.json"))
    assert paths
    for path in paths:
        data = path.read_bytes()
        for line in data.split(b"\n")[:-1]:
            assert decode.decode_line(line).noncanonical is None, line[:120]
        read = read_file_journal(data)
        assert read.readable and read.torn_tail is None and not read.resumed_after_torn_tail
        assert all(item.noncanonical is None and item.raw == encode_record(item.record) for item in read.records)
        entry = entries.get(f"{folder}/{path.name}")
        if entry is not None and "records" in entry:
            assert (len(read.records), read.last_seq) == (entry["records"], entry["last_seq"])


# --- torn tails and resumes --------------------------------------------------------------------------


def _journal_lines(name: str = "3IDQ1OhDHSSoRIEpX5dNk2z1f6f") -> list[bytes]:
    return (CORPUS / "file" / f"{name}.json").read_bytes().split(b"\n")[:-1]


def _claim(seq: int) -> bytes:
    return encode_record(make_record(seq, Claim(by="worker@host pid 1", claimed="2026-08-21T10:00:00.5Z")))


def _terminal(seq: int) -> bytes:
    return encode_record(make_record(seq, Terminal(reason="completed")))


def test_a_torn_tail_is_dropped_and_the_writer_resumes_from_the_record_before() -> None:
    lines = _journal_lines()
    cut = lines[-1][: len(lines[-1]) // 2]
    for data in (b"\n".join([*lines[:-1], cut]), b"\n".join([*lines[:-1], cut]) + b"\n"):
        read = read_file_journal(data)
        assert read.readable
        assert read.torn_tail == BadLine(len(lines), "unexpected end of JSON input", len(cut))
        assert read.last_seq == read.records[-1].record.seq == len(lines) - 1
        assert read.resumed_after_torn_tail == []


def test_resume_after_a_torn_tail_with_its_newline() -> None:
    lines = _journal_lines()
    torn_seq = len(lines)
    cut = lines[-1][: len(lines[-1]) // 2]
    data = b"\n".join([*lines[:-1], cut, _claim(torn_seq), _terminal(torn_seq + 1)]) + b"\n"
    read = read_file_journal(data)
    assert not read.readable
    assert read.error == f"line {torn_seq}: unexpected end of JSON input"
    [resumed] = read.resumed_after_torn_tail
    assert (resumed.line, resumed.next_seq, resumed.glued, resumed.at_end) == (torn_seq, torn_seq, False, False)
    assert resumed.record.claim is not None
    assert [item.record.seq for item in read.records][-2:] == [torn_seq, torn_seq + 1]


def test_resume_after_a_torn_tail_glued_onto_it() -> None:
    lines = _journal_lines()
    torn_seq = len(lines)
    cut = lines[-1][: len(lines[-1]) // 3]
    data = b"\n".join([*lines[:-1], cut + _claim(torn_seq), _terminal(torn_seq + 1)]) + b"\n"
    read = read_file_journal(data)
    assert not read.readable
    assert read.corrupt[0].line == torn_seq
    [resumed] = read.resumed_after_torn_tail
    assert (resumed.line, resumed.next_seq, resumed.glued, resumed.at_end) == (torn_seq, torn_seq, True, False)
    assert resumed.record == decode.decode_line(_claim(torn_seq)).record
    # The same glued line at the very end is a torn tail to Go: dropped, and the resumer's claim with it.
    at_end = read_file_journal(b"\n".join([*lines[:-1], cut + _claim(torn_seq)]) + b"\n")
    assert at_end.readable and at_end.torn_tail is not None and at_end.last_seq == torn_seq - 1
    assert [(r.line, r.glued, r.at_end) for r in at_end.resumed_after_torn_tail] == [(torn_seq, True, True)]


def test_interior_corruption_that_is_not_a_resume() -> None:
    lines = _journal_lines()
    # A cut-off line followed by a record whose seq does not follow the one before it.
    cut = lines[3][:40]
    read = read_file_journal(b"\n".join([*lines[:3], cut, *lines[4:]]) + b"\n")
    assert read.error == "line 4: unexpected end of JSON input"
    assert read.resumed_after_torn_tail == []
    # Garbage, not a cut-off record.
    read = read_file_journal(b"\n".join([*lines[:3], b"#", lines[3], *lines[4:]]) + b"\n")
    assert read.error is not None and "'#'" in read.error
    assert read.resumed_after_torn_tail == []


def test_deep_lines_do_not_crash_the_reader() -> None:
    deep = (
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":'
        b'[{"tool_use":{"id":"a","name":"b","input":' + b"[" * 3000 + b"]" * 3000 + b"}}]}}}"
    )
    lines = _journal_lines()
    read = read_file_journal(b"\n".join([lines[0], deep]) + b"\n")
    assert read.readable and read.last_seq == 2
    too_deep = deep.replace(b"[" * 3000, b"[" * 10_000).replace(b"]" * 3000, b"]" * 10_000)
    read = read_file_journal(b"\n".join([lines[0], too_deep, lines[1]]) + b"\n")
    assert read.error == "line 2: exceeded max depth"


# --- blank lines -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "blank",
    [
        b"",
        b" ",
        b"\t\r",
        b"\v\f",
        "\x85".encode(),
        "\xa0 \u3000".encode(),
        "\u2028\u2029\u202f\u205f\u1680".encode(),
        "\u2000\u2005\u200a".encode(),
    ],
)
def test_unicode_white_space_lines_are_blank(blank: bytes) -> None:
    assert journal.is_blank(blank)
    lines = _journal_lines()
    read = read_file_journal(b"\n".join([lines[0], blank, *lines[1:]]) + b"\n")
    assert read.readable and len(read.records) == len(lines)
    assert [item.position for item in read.records][1] == 3


@pytest.mark.parametrize(
    "not_blank", [b"\x1c", b"\x1f", b" \x1e ", "\u200b".encode(), b"\xa0", b"\xc2", "\ufeff".encode()]
)
def test_other_characters_are_not_blank(not_blank: bytes) -> None:
    assert not journal.is_blank(not_blank)
    lines = _journal_lines()
    read = read_file_journal(b"\n".join([lines[0], not_blank, *lines[1:]]) + b"\n")
    assert not read.readable and read.corrupt[0].line == 2


def test_a_blank_final_line_makes_a_torn_line_before_it_interior() -> None:
    lines = _journal_lines()
    for blank in (b"", " \u00a0".encode()):
        read = read_file_journal(b"\n".join([*lines[:-1], lines[-1][:30], blank]) + b"\n")
        assert read.torn_tail is None
        assert read.error == f"line {len(lines)}: unexpected end of JSON input"


def test_empty_and_newline_only_files_have_no_records() -> None:
    for data in (b"", b"\n\n\n", b"\n"):
        read = read_file_journal(data)
        assert read.readable and read.records == [] and read.last_seq == 0 and read.torn_tail is None


def test_crlf_lines_keep_their_carriage_return() -> None:
    lines = _journal_lines()
    read = read_file_journal(b"".join(line + b"\r\n" for line in lines))
    assert read.readable and len(read.records) == len(lines)
    assert read.records[0].raw.endswith(b"\r") and read.records[0].noncanonical == "whitespace"


# --- JetStream bodies --------------------------------------------------------------------------------


def test_stream_bodies_from_the_real_stream_are_canonical() -> None:
    bodies = []
    for line in (CORPUS / "nats-dump.jsonl").read_text().splitlines():
        message = json.loads(line)
        if message.get("kind") == "msg":
            bodies.append(message["data"].encode())
    assert bodies
    read = read_stream_bodies(bodies)
    assert all(isinstance(item, StoredRecord) and item.noncanonical is None for item in read)


def test_stream_bodies_have_no_torn_tail_and_no_blank_skipping() -> None:
    lines = _journal_lines()
    read = read_stream_bodies([lines[0], b"", lines[1], lines[2][:20]])
    assert [type(item) for item in read] == [StoredRecord, BadLine, StoredRecord, BadLine]
    assert read[1] == BadLine(2, "unexpected end of JSON input", 0)
    assert isinstance(read[3], BadLine) and read[3].line == 4


def test_messages_round_trip_through_go_json() -> None:
    # A sanity check of the comparison helper used against Go's states.
    message = Message(role="user", content=None)
    assert _go_json(message) == {"role": "user", "content": None}


def _line_by_line(data: bytes) -> list[tuple[int, bytes, object, str | None]]:
    """What the line rule gives when every line is decoded on its own (the reference for the batch path)."""
    from journaltools.protocol.decode import decode_line

    out = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            decoded = decode_line(line)
        except UndecodableLine:
            continue
        out.append((number, line, decoded.record, decoded.noncanonical))
    return out


@settings(max_examples=120, deadline=None)
@given(st.one_of(valid_runs().map(lambda built: built.journal_bytes()), damaged_journals().map(lambda d: d.data)))
def test_the_whole_journal_fast_path_equals_decoding_line_by_line(data: bytes) -> None:
    """One decode and one comparison for a clean journal must give exactly what line-by-line decoding gives,
    and a journal with any odd line must fall back to it (so its noncanonical lines are still named)."""
    journal = read_file_journal(data)
    got = [(read.position, read.raw, read.record, read.noncanonical) for read in journal.records]
    want = _line_by_line(data)
    if journal.torn_tail is not None:
        want = [entry for entry in want if entry[0] != journal.torn_tail.line]
    assert got == want
