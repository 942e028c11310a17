"""The native canonical proof (``protocol.native``) held to the Python fast path it stands in for.

Soundness is what matters: a line the scanner proves must be one the Python fast path calls canonical, with the
same seq, protocol and optional flag; a journal it proves must read exactly as the Python reader reads it. The
scanner may leave a canonical journal to the Python path (it is conservative), so completeness is asked only
where the scanner promises it: every journal the runtime wrote, and every generated one.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.protocol import native
from journaltools.protocol.decode import DecodedLine, decode_line
from journaltools.protocol.generations import AUGUST, NEWEST
from journaltools.protocol.journal import ProvenRecords, journal_generation, read_file_journal, typed_records
from journaltools.protocol.kinds import NEWEST_ONLY, PROTOCOLS, Record
from journaltools.tables import load
from journaltools.tables.schema import TABLE_NAMES, with_plain_strings
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS
from tests.strategies import valid_runs


def envelopes(scan: native.CanonicalScan) -> list[tuple[int, int, bool]]:
    seqs = [int.from_bytes(scan.seqs[i : i + 8], sys.byteorder) for i in range(0, len(scan.seqs), 8)]
    return [(seq, code, bool(flag)) for seq, code, flag in zip(seqs, scan.protocols, scan.optional, strict=True)]


def expected_envelope(record: Record) -> tuple[int, int, bool]:
    code = native.PROTOCOL_IDS.index(record.protocol) if record.protocol in PROTOCOLS else native.OTHER_PROTOCOL
    return record.seq, code, record.optional


def python_decode(line: bytes) -> DecodedLine:
    """The Python path's reading of ``line``: ``decode_line`` with the scanner's proof out of the way."""
    with native.disabled():
        return decode_line(line)


def assert_sound(line: bytes) -> None:
    """If the scanner proves ``line``, the Python fast path calls it canonical and reads the same envelope, and
    ``decode_line`` (which trusts the proof) gives the Python path's record."""
    scan = native.scan_journal(line)
    assert native.proves_line(line) == (scan is not None and b"\n" not in line)
    if scan is None:
        return
    python = python_decode(line)
    assert python.noncanonical is None, (line, python.noncanonical)
    assert envelopes(scan) == [expected_envelope(python.record)]
    assert decode_line(line) == python


def corpus_journals() -> Iterator[Path]:
    """Both corpora's journals: the August build's and the newest line's, each with its mutations."""
    for root in (CORPUS, CORPUS / "newest"):
        for folder in ("file", "random", "broken"):
            yield from sorted((root / folder).glob("*.json"))


def test_the_project_install_builds_the_scanner() -> None:
    # `make setup` compiles it; without it every test below would only exercise the Python fallback.
    assert native.AVAILABLE


def test_disabled_leaves_the_python_path_and_restores_the_scanner_even_on_error() -> None:
    with pytest.raises(RuntimeError), native.disabled():
        assert native.scan_journal(META) is None
        assert not native.proves_line(META)
        raise RuntimeError("inside")
    assert native.scan_journal(META) is not None


# --- the model comes from the structs ------------------------------------------------------------------------


def test_the_model_is_the_record_structs_field_by_field() -> None:
    """The newest line's model, its added fields flagged (the August build's is the same less those)."""
    schemas = native.record_model()
    assert [name.decode() for name, _, _, _ in schemas[0]] == list(Record.__struct_fields__)
    by_name = {name: (kind, nested, newest) for name, kind, nested, newest in schemas[0]}
    assert by_name[b"seq"][0] == native.UINT64
    assert by_name[b"optional"][0] == native.BOOL_OMITTED_FALSE
    assert by_name[b"time"] == (native.TIME_OMITTED_ZERO, 0, True)
    assert not any(newest for name, (_, _, newest) in by_name.items() if name != b"time")
    meta = {name: (kind, newest) for name, kind, _, newest in schemas[by_name[b"meta"][1]]}
    assert by_name[b"meta"][0] == native.OBJECT_OMITTED_NIL
    assert meta[b"created"] == (native.TIME, False) and meta[b"agent"] == (native.STRING_OMITTED_EMPTY, True)
    terminal = {name: (kind, nested) for name, kind, nested, _ in schemas[by_name[b"terminal"][1]]}
    summary = {name: (kind, nested) for name, kind, nested, _ in schemas[terminal[b"summary"][1]]}
    counters = {name: kind for name, kind, _, _ in schemas[summary[b"counters"][1]]}
    assert counters[b"tool_calls_by_kind"] == native.INT_MAP_OMITTED_EMPTY
    flagged = {
        (struct, name.decode())
        for struct in NEWEST_ONLY
        for name, _, _, newest in native.record_model(struct)[0]
        if newest
    }
    assert flagged == {(struct, name) for struct, names in NEWEST_ONLY.items() for name in names}


def test_a_field_the_scanner_cannot_check_is_refused_by_name() -> None:
    class Odd(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
        ratio: float

    with pytest.raises(native.UnsupportedField, match=r"Odd\.ratio"):
        native.record_model(Odd)


# --- the real corpus -------------------------------------------------------------------------------------------


def test_every_journal_the_runtime_wrote_is_proven_and_reads_as_the_python_path_reads_it() -> None:
    proven = newest = 0
    for path in corpus_journals():
        data = path.read_bytes()
        scan = native.scan_journal(data)
        if scan is not None and scan.newest and journal_generation(data[: data.find(b"\n")]) is AUGUST:
            scan = None  # proven for the newest line only: an August journal never holds those fields
        with native.disabled():
            python = read_file_journal(data)
        whole_and_canonical = (
            python.torn_tail is None
            and not python.corrupt
            and b"\n\n" not in data
            and all(stored.noncanonical is None for stored in python.records)
        )
        if scan is None:
            # Left to the Python path: only journals that are not canonical, or hold invalid UTF-8 inside raw JSON
            # (which the scanner does not follow and the Python fast path judges).
            assert not whole_and_canonical or path.parent.name == "broken", path
            continue
        newest += scan.newest
        proven += 1
        assert whole_and_canonical, path
        assert envelopes(scan) == [expected_envelope(stored.record) for stored in python.records], path
        journal = read_file_journal(data)
        assert isinstance(journal.records, ProvenRecords)
        assert journal.records == python.records
        assert journal.last_seq == python.last_seq
    assert proven > 500 and newest > 170  # every newest journal the runtime wrote is proven too


def test_unknown_protocols_are_proven_and_reported_as_other() -> None:
    line = b'{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.from_the_future","optional":true}'
    scan = native.scan_journal(line + b"\n")
    assert scan is not None
    assert envelopes(scan) == [(4, native.OTHER_PROTOCOL, True)]


# --- rule by rule: what the scanner must leave to the Python path ----------------------------------------------

META = (
    b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r1",'
    b'"created":"2026-08-21T07:14:03.5Z","fingerprint":{"provider":"p","model":"m","system_hash":"s",'
    b'"tools_hash":"t","thinking_mode":"off","max_tokens":100,"max_iterations":5},"prompt":"hi \\u003c there"}}'
)
ASSISTANT = (
    b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":1,"message":{"role":'
    b'"assistant","content":[{"text":{"text":"a\\nb"}},{"thinking":{"signature":"QQ=="}},{"tool_use":{"id":"c1",'
    b'"name":"ls","input":{"path":"/tmp","n":[1,-2.5e3,null,true]}}}]},"in_tokens":3,"out_tokens":4}}'
)
REVISIONS = (
    b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.memory_revisions","memory_revisions":'
    b'{"revisions":{"a":1,"b":0,"\xc3\xa9":18446744073709551615}}}'
)


@pytest.mark.parametrize("line", [META, ASSISTANT, REVISIONS])
def test_the_fixtures_are_canonical_and_proven(line: bytes) -> None:
    assert python_decode(line).noncanonical is None
    assert native.scan_journal(line) is not None
    assert native.proves_line(line)


RESPELLINGS = [
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \\u003C there"'),  # uppercase hex
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi < there"'),  # unescaped <
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \\/ there"'),  # an escape Go never writes
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \\u000a there"'),  # \n spelled long
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \xe2\x80\xa8 there"'),  # raw U+2028
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \xff there"'),  # invalid UTF-8
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi \xed\xa0\x80 there"'),  # an encoded surrogate
    (META, b'"max_tokens":100', b'"max_tokens":0100'),  # leading zero
    (META, b'"max_tokens":100', b'"max_tokens":1e2'),  # exponent
    (META, b'"max_tokens":100', b'"max_tokens":9223372036854775808'),  # beyond int64
    (META, b'"version":3', b'"version":-0'),  # re-encodes as 0
    (META, b'"seq":1', b'"seq":18446744073709551616'),  # beyond uint64
    (META, b'"seq":1', b'"seq":-1'),
    (META, b"07:14:03.5Z", b"07:14:03.50Z"),  # a trailing fraction zero
    (META, b"07:14:03.5Z", b"07:14:03.Z"),
    (META, b"07:14:03.5Z", b"07:14:03.1234567891Z"),  # ten fraction digits
    (META, b"07:14:03.5Z", b"07:14:03.5z"),
    (META, b"07:14:03.5Z", b"07:14:60.5Z"),
    (META, b"2026-08-21", b"2026-02-29"),  # not a leap year
    (META, b"2026-08-21", b"2026-04-31"),
    (META, b"07:14:03.5Z", b"07:14:03.5+24:00"),
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi","interactive":false'),  # a zero Go omits
    (META, b'"prompt":"hi \\u003c there"', b'"prompt":"hi","caller":""'),
    (META, b'"thinking_mode":"off",', b""),  # a field Go always writes
    (META, b'"run_id":"r1",', b'"run_id":"r1","run_id":"r1",'),  # repeated
    (META, b'"version":3,"run_id":"r1",', b'"run_id":"r1","version":3,'),  # out of order
    (META, b'"run_id":"r1",', b'"Run_id":"r1",'),  # a case variant
    (META, b'"run_id":"r1",', b'"run_id":"r1","extra":1,'),  # unknown
    (META, b'"seq":1,', b'"seq":1,"optional":false,'),
    (META, b'"seq":1,', b'"seq":1,"claim":null,'),  # a nil pointer Go omits
    (META, b'"seq":1,', b'"seq": 1,'),  # whitespace
    (ASSISTANT, b'"signature":"QQ=="', b'"signature":"QR=="'),  # padding bits set
    (ASSISTANT, b'"signature":"QQ=="', b'"signature":"QQ"'),  # unpadded
    (ASSISTANT, b'"signature":"QQ=="', b'"signature":""'),  # empty is omitted
    (ASSISTANT, b'"path":"/tmp"', b'"path": "/tmp"'),  # whitespace inside raw JSON
    (ASSISTANT, b'"path":"/tmp"', b'"path":"<tmp"'),  # Go escapes < even in raw JSON
    (ASSISTANT, b'"path":"/tmp"', b'"path":"\\ud800"'),  # a lone surrogate in raw JSON
    (ASSISTANT, b"-2.5e3", b"-2.5e"),
    (ASSISTANT, b"-2.5e3", b"01"),
    (ASSISTANT, b'"content":[', b'"content":null,"x":['),
    (REVISIONS, b'"a":1,"b":0', b'"b":0,"a":1'),  # unsorted keys
    (REVISIONS, b'"a":1,"b":0', b'"a":1,"a":0'),  # a repeated key
    (REVISIONS, b'"a":1,"b":0', b'"\\u0061":1,"b":0'),  # an escaped key (left to the Python path)
]


@pytest.mark.parametrize(("line", "old", "new"), RESPELLINGS)
def test_respelled_lines_are_left_to_the_python_path(line: bytes, old: bytes, new: bytes) -> None:
    assert old in line
    respelled = line.replace(old, new, 1)
    assert native.scan_journal(respelled) is None
    assert_sound(respelled)


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", META + b"\n\n" + ASSISTANT + b"\n", META + b"\r\n", META + b"\n " + ASSISTANT, META + b"x"],
)
def test_journal_shapes_the_runtime_never_writes_are_left_to_the_python_path(data: bytes) -> None:
    assert native.scan_journal(data) is None


def test_a_journal_without_its_final_newline_is_proven() -> None:
    scan = native.scan_journal(META + b"\n" + ASSISTANT)
    assert scan is not None
    assert envelopes(scan) == [(1, 0, False), (2, 1, False)]
    assert scan.starts == (0).to_bytes(8, sys.byteorder) + (len(META) + 1).to_bytes(8, sys.byteorder)


# --- properties --------------------------------------------------------------------------------------------------

_MUTATION_BYTES = [*b'"\\<>&/ ,:{}[]0-1e.uUnA=\x00\x1f\x7f', 0x80, 0xC3, 0xE2, 0xED, 0xFF]


@st.composite
def mutated_lines(draw: st.DrawFn) -> bytes:
    """A line of a generated run with one byte replaced, inserted or removed."""
    built = draw(valid_runs(max_records=6))
    line = draw(st.sampled_from(built.journal_bytes().split(b"\n")[:-1]))
    where = draw(st.integers(0, len(line) - 1))
    byte = bytes([draw(st.sampled_from(_MUTATION_BYTES))])
    how = draw(st.sampled_from(["replace", "insert", "delete"]))
    if how == "replace":
        return line[:where] + byte + line[where + 1 :]
    if how == "insert":
        return line[:where] + byte + line[where:]
    return line[:where] + line[where + 1 :]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_lines())
def test_a_proven_mutated_line_is_canonical_by_the_python_path(line: bytes) -> None:
    assert_sound(line)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_runs())
def test_every_generated_journal_is_proven_and_reads_as_the_python_path_reads_it(built: object) -> None:
    data = built.journal_bytes()  # type: ignore[attr-defined]
    scan = native.scan_journal(data)
    assert scan is not None
    python = [python_decode(line) for line in data.split(b"\n")[:-1]]
    assert all(decoded.noncanonical is None for decoded in python)
    assert envelopes(scan) == [expected_envelope(decoded.record) for decoded in python]
    journal = read_file_journal(data)
    assert [stored.record for stored in journal.records] == [decoded.record for decoded in python]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_runs(generation=NEWEST))
def test_every_generated_newest_journal_is_proven_and_reads_as_the_python_path_reads_it(built: object) -> None:
    data = built.journal_bytes()  # type: ignore[attr-defined]
    scan = native.scan_journal(data)
    assert scan is not None and scan.newest
    with native.disabled():
        python = read_file_journal(data)
    assert all(stored.noncanonical is None for stored in python.records)
    journal = read_file_journal(data)
    assert isinstance(journal.records, ProvenRecords) and journal.records == python.records


def test_an_august_journal_holding_a_newest_field_is_not_proven_and_reads_without_it(tmp_path: Path) -> None:
    august = (CORPUS / "file" / "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json").read_bytes()
    assistant = b'"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant",'
    dated = august.replace(assistant, assistant + b'"time":"2026-08-21T07:00:00Z",')
    assert dated != august
    scan = native.scan_journal(dated)
    assert scan is not None and scan.newest  # canonical for the newest model...
    journal = read_file_journal(dated)  # ...but not for the August build, whose decoder skips the key
    assert not isinstance(journal.records, ProvenRecords)
    assert [stored.record for stored in journal.records] == [
        stored.record for stored in read_file_journal(august).records
    ]
    assert [stored.position for stored in journal.records if stored.noncanonical] == [2]
    (tmp_path / "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json").write_bytes(dated)
    (tmp_path / "3MtgePl8MTxhIQTqkgVj3k35VXw.json").write_bytes(
        (CORPUS / "newest" / "file" / "3MtgePl8MTxhIQTqkgVj3k35VXw.json").read_bytes()
    )
    scanned = load(tmp_path, fold=False, strict=False, progress=False)
    with native.disabled():
        python = load(tmp_path, fold=False, strict=False, progress=False)
    for name in TABLE_NAMES:
        assert with_plain_strings(scanned[name]).equals(with_plain_strings(python[name])), name
    codes = scanned.findings.column("code").to_pylist()
    assert codes.count("noncanonical_line") == 1


@given(st.lists(st.binary(max_size=30), max_size=6))
def test_join_lines_is_the_journals_without_their_newlines(journals: list[bytes]) -> None:
    assert native.join_lines(journals) == b"".join(data.replace(b"\n", b"") for data in journals)


# --- the tables do not depend on which path read a journal -------------------------------------------------------


@pytest.mark.parametrize(
    "source", [SAMPLES, CORPUS / "file", CORPUS / "newest" / "file"], ids=["samples", "corpus-file", "newest-file"]
)
@pytest.mark.parametrize("fold", [False, True], ids=["records", "folded"])
def test_load_gives_the_same_tables_with_and_without_the_scanner(source: Path, fold: bool) -> None:
    scanned = load(source, fold=fold, strict=False, progress=False)
    with native.disabled():
        python = load(source, fold=fold, strict=False, progress=False)
    assert scanned.records.num_rows > 100
    for name in TABLE_NAMES:
        assert scanned[name].schema == python[name].schema, name
        assert with_plain_strings(scanned[name]).equals(with_plain_strings(python[name])), name


def test_random_mutations_of_every_kind_of_corpus_line_are_never_proven_wrongly() -> None:
    """A deterministic sweep beside the hypothesis property: every line the runtime wrote, each mutated a few ways
    (a byte replaced, inserted or removed at random), held to the soundness rule."""
    import random

    chooser = random.Random(20261201)
    lines = [line for path in corpus_journals() for line in path.read_bytes().split(b"\n") if line]
    proven = 0
    for line in lines[::7]:
        for _ in range(3):
            where = chooser.randrange(len(line))
            byte = bytes([chooser.choice(_MUTATION_BYTES)])
            mutated = chooser.choice(
                [
                    line[:where] + byte + line[where + 1 :],
                    line[:where] + byte + line[where:],
                    line[:where] + line[where + 1 :],
                ]
            )
            assert_sound(mutated)
            proven += native.scan_journal(mutated) is not None
    assert proven > 0  # some mutations keep a line canonical (a digit for a digit, a letter for a letter)


# --- journals read into one buffer and proven in place ------------------------------------------------------------


def test_scan_batch_moves_the_proven_journals_lines_into_place_and_drops_the_others() -> None:
    journals = [META + b"\n" + ASSISTANT + b"\n", META + b"\n\n", REVISIONS, b"", META + b"\n"]
    buffer = bytearray(b"".join(journals))
    scan = native.scan_batch(buffer, [len(data) for data in journals])
    assert scan is not None
    counts = [int.from_bytes(scan.proven[i : i + 8], sys.byteorder, signed=True) for i in range(0, 40, 8)]
    assert counts == [2, -1, 1, -1, 1]
    lines = [META, ASSISTANT, REVISIONS, META]
    assert bytes(buffer[: scan.body_length]) == b"".join(lines)
    offsets = [int.from_bytes(scan.offsets[i : i + 8], sys.byteorder) for i in range(0, len(scan.offsets), 8)]
    assert offsets == [
        0,
        len(META),
        len(META) + len(ASSISTANT),
        len(META) + len(ASSISTANT) + len(REVISIONS),
        scan.body_length,
    ]
    assert list(scan.protocols) == [0, 1, 7, 0]


def test_scan_batch_refuses_lengths_beyond_the_buffer() -> None:
    with pytest.raises(ValueError, match="past the buffer"):
        native.scan_batch(bytearray(b"{}"), [3])


@pytest.mark.parametrize("in_c", [True, False], ids=["c-reader", "python-reader"])
def test_a_journal_that_will_not_read_whole_is_left_to_the_usual_read(tmp_path: Path, in_c: bool) -> None:
    from journaltools.sources.scan import read_journals_into

    plain = tmp_path / "a.json"
    plain.write_bytes(META + b"\n")
    grown = tmp_path / "b.json"
    grown.write_bytes(META + b"\n" + ASSISTANT + b"\n")
    link = tmp_path / "c.json"
    link.symlink_to(plain)
    fifo = tmp_path / "d.json"
    os.mkfifo(fifo)
    missing = tmp_path / "e.json"
    folder = tmp_path / "f.json"
    folder.mkdir()
    empty = tmp_path / "g.json"
    empty.write_bytes(b"")
    paths = [str(p) for p in (plain, grown, link, fifo, missing, folder, empty, plain)]
    # The capacity is what a listing said: b.json grew since, so it no longer fits and is read the usual way.
    with contextlib.nullcontext() if in_c else native.disabled():
        buffer, lengths = read_journals_into(paths, 2 * (len(META) + 1) + 10)
    assert lengths == [len(META) + 1, None, None, None, None, None, 0, len(META) + 1]
    assert bytes(buffer[: 2 * (len(META) + 1)]) == (META + b"\n") * 2


@pytest.mark.parametrize("in_c", [True, False], ids=["c-reader", "python-reader"])
def test_a_journal_past_either_bound_is_left_to_the_usual_read(
    tmp_path: Path, in_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from journaltools.sources.scan import MAX_JOURNAL_BYTES_VARIABLE, MAX_JOURNAL_RECORDS_VARIABLE, read_journals_into

    monkeypatch.setenv(MAX_JOURNAL_BYTES_VARIABLE, str(len(META) * 3))
    monkeypatch.setenv(MAX_JOURNAL_RECORDS_VARIABLE, "3")
    fits = tmp_path / "a.json"
    fits.write_bytes(META + b"\n")
    too_long = tmp_path / "b.json"
    too_long.write_bytes((META + b"\n") * 4)
    too_many = tmp_path / "c.json"
    too_many.write_bytes(b"{}\n" * 4)
    paths = [str(p) for p in (fits, too_long, too_many)]
    with contextlib.nullcontext() if in_c else native.disabled():
        _, lengths = read_journals_into(paths, 10 * len(META))
    assert lengths == [len(META) + 1, None, None]


def test_the_c_reader_is_the_python_readers_answer_or_sends_more_to_the_usual_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines counted by newlines (in C) are never fewer than the records among them (in Python): a journal near the
    record bound with blank lines may go to the usual read, which then counts exactly."""
    from journaltools.sources.scan import MAX_JOURNAL_RECORDS_VARIABLE, read_journals_into

    blank_heavy = tmp_path / "a.json"
    blank_heavy.write_bytes(b"{}\n\n\n\n\n")
    monkeypatch.setenv(MAX_JOURNAL_RECORDS_VARIABLE, "2")
    _, in_c = read_journals_into([str(blank_heavy)], 64)
    with native.disabled():
        _, in_python = read_journals_into([str(blank_heavy)], 64)
    assert in_python == [len(blank_heavy.read_bytes())]
    assert in_c == [None]


def test_a_batch_whose_journals_hold_no_record_gives_an_empty_records_table(tmp_path: Path) -> None:
    (tmp_path / "r1.json").write_bytes(b'{"seq":1,"prot')  # a torn tail and nothing else
    (tmp_path / "r2.json").write_bytes(b"")
    tables = load(tmp_path, fold=False, strict=False, progress=False)
    assert tables.records.num_rows == 0
    assert tables.records.schema.names == load(SAMPLES, fold=False, strict=False, progress=False).records.schema.names
    assert set(tables.findings.column("code").to_pylist()) >= {"torn_tail"}


def test_a_sparse_terabyte_journal_beside_real_ones_is_too_large_and_allocates_nothing(tmp_path: Path) -> None:
    (tmp_path / "r1.json").write_bytes(META + b"\n")
    with open(tmp_path / "r2.json", "wb") as huge:
        huge.truncate(1 << 40)  # a hole: nothing on disk, a terabyte by its size
    tables = load(tmp_path, fold=False, strict=False, progress=False)
    assert tables.records.column("run").to_pylist() == ["r1"]
    assert "journal_too_large" in tables.findings.column("code").to_pylist()


@given(
    st.lists(st.binary(min_size=1, max_size=20).filter(lambda line: b"\n" not in line), min_size=1, max_size=6),
    st.booleans(),
)
def test_json_array_is_the_lines_as_one_array(lines: list[bytes], final_newline: bool) -> None:
    journal = b"\n".join(lines) + (b"\n" if final_newline else b"")
    assert native.json_array(journal) == b"[" + b",".join(lines) + b"]"
    with native.disabled():
        assert native.json_array(journal) == b"[" + b",".join(lines) + b"]"


def test_a_fold_takes_a_proven_journals_records_without_making_its_stored_records() -> None:
    data = (CORPUS / "file").glob("*.json").__next__().read_bytes()
    journal = read_file_journal(data)
    assert isinstance(journal.records, ProvenRecords)
    typed = typed_records(journal.records)
    assert journal.records._records is None  # no line cut out, no stored record made
    with native.disabled():
        python = read_file_journal(data)
    assert typed == [stored.record for stored in python.records]
    assert [stored.record for stored in journal.records] == typed  # the stored records, made on demand, agree
