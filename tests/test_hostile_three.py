"""Issue 25, a hostile world round three: journals bounded in records and CPU, a scanner safe from its callers,
runs that vanish mid-listing, times Go never writes, a credential in a repr, a status that styles itself.

Each journal is real format (``tests.builders``); each test fails on the code path it guards as it was before
the fix.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from journaltools import fold, load, open_source
from journaltools.backends.file import FileBackend
from journaltools.cli import main
from journaltools.errors import CorruptJournal
from journaltools.generate import text
from journaltools.protocol import _canonical, native  # type: ignore[attr-defined]
from journaltools.protocol.credentials import HIDDEN
from journaltools.protocol.encode import encode_record
from journaltools.protocol.journal import read_file_journal
from tests.builders import CLAIMANT, CREATED, journal

#: 5,000 digits: past Python's 4,300-digit limit for int() of a string.
HUGE = b"9" * 5000


def _completed(run: str) -> bytes:
    built = journal(run)
    built.assistant(text("hi"))
    built.terminal("completed")
    return built.journal_bytes()


# -- 3: an integer of more than 4,300 digits ---------------------------------------------------------------------


@pytest.mark.parametrize(("field", "go_type"), [(b'"in_tokens":100', "int64"), (b'"seq":2', "uint64")])
def test_row3_a_5000_digit_integer_is_gos_refusal_for_its_run_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: bytes, go_type: str
) -> None:
    name = field.split(b":")[0]
    huge = _completed("huge").replace(field, name + b":" + HUGE)
    (tmp_path / "huge.json").write_bytes(huge)
    lines = _completed("tail").splitlines(keepends=True)
    (tmp_path / "tail.json").write_bytes(lines[0] + lines[1].replace(field, name + b":" + HUGE))
    (tmp_path / "good.json").write_bytes(_completed("good"))
    for argv in (["ls", str(tmp_path)], ["audit", str(tmp_path)], ["show", "--lenient", str(tmp_path), "huge"]):
        assert main(argv) in (0, 1), argv
        captured = capsys.readouterr()
        assert "unexpected error" not in captured.err and "ValueError" not in captured.err, captured.err[:300]
    tables = load(tmp_path, strict=False, workers=0)
    status = dict(zip(tables.runs.column("run").to_pylist(), tables.runs.column("status").to_pylist(), strict=True))
    assert status == {"good": "completed", "huge": "invalid", "tail": "open"}
    findings = {(row["run"], row["code"]): row["message"] for row in tables.findings.to_pylist()}
    refusal = findings[("huge", "corrupt_line")]
    assert "cannot unmarshal number 9999" in refusal and f"of type {go_type}" in refusal
    assert "cannot unmarshal number 9999" in findings[("tail", "torn_tail")]
    assert load(tmp_path, strict=False, workers=0, fold=False).findings.num_rows >= 2
    # A writer refuses the corrupt journal as the runtime does, and cuts the torn tail off the other.
    with pytest.raises(CorruptJournal, match="cannot unmarshal number"):
        FileBackend(tmp_path).open_writer("huge")
    FileBackend(tmp_path).open_writer("tail").close()
    assert (tmp_path / "tail.json").read_bytes() == lines[0]


# -- 7: a zero offset written +00:00 or -00:00 ----------------------------------------------------------------------


def _claimed_run(created: str, claimed: str) -> bytes:
    built = journal("zone")
    built.claim(CLAIMANT, claimed)
    built.terminal("completed")
    return built.journal_bytes().replace(CREATED.encode(), created.encode())


@pytest.mark.parametrize("native_scanner", [True, False])
@pytest.mark.parametrize(
    ("created", "claimed", "canonical"),
    [
        ("2026-11-29T10:00:00.5+00:00", "2026-11-29T09:15:00Z", False),
        ("2026-11-29T10:00:00-00:00", "2026-11-29T09:15:00Z", False),
        ("2026-11-29T10:00:00Z", "2026-11-29T09:15:00.25+00:00", False),
        ("2026-11-29T10:00:00Z", "2026-11-29T09:15:00-00:00", False),
        # Go writes a non-zero offset of a local zone as it is: canonical.
        ("2026-11-29T10:00:00+02:00", "2026-11-29T09:15:00Z", True),
        ("2026-11-29T10:00:00-00:30", "2026-11-29T09:15:00Z", True),
    ],
)
def test_row7_a_zero_offset_spelled_with_digits_is_noncanonical_on_both_paths(
    created: str, claimed: str, canonical: bool, native_scanner: bool
) -> None:
    data = _claimed_run(created, claimed)
    with contextlib.nullcontext() if native_scanner else native.disabled():
        read = read_file_journal(data)
        notes = [stored.noncanonical for stored in read.records]
        assert (native.scan_journal(data) is not None) == (canonical and native_scanner)
        for line in data.splitlines():
            zero_offset = b'+00:00"' in line or b'-00:00"' in line
            assert native.proves_line(line) == (native_scanner and not zero_offset)
    assert not read.corrupt and read.torn_tail is None
    if canonical:
        assert notes == [None, None, None]
        return
    zero_offset = [text.endswith(("+00:00", "-00:00")) for text in (created, claimed)]
    assert [note is not None for note in notes] == [*zero_offset, False]
    assert all(note is None or "time respelled" in note for note in notes)
    # The record holds the time as Go writes it back: Z.
    times = (read.records[0].record.meta.created, read.records[1].record.claim.claimed)  # type: ignore[union-attr]
    assert all(time.endswith("Z") for time in times), times


# -- 2 and 6: the scanner and a caller that changes its buffers --------------------------------------------------

#: Run in a fresh interpreter, so that a scanner writing past its arrays fails this test instead of killing pytest.
#: The buffer holds one long canonical record, a newline, then many records joined by spaces: two lines when the
#: scan counts them. While the scan checks the long first line (without the GIL), a second thread turns the spaces
#: into newlines, so the scan meets thousands of proven lines where it made room for two.
_MUTATING_PROBE = """
import sys, threading
import numpy as np
from journaltools.protocol import _canonical, native
from tests.builders import journal
from journaltools.generate import text

built = journal("mut")
built.user("w" * (4 << 20))
head, long_line = built.journal_bytes().splitlines()[:2]
record = head.replace(b'"seq":1', b'"seq":3')
tail_spaces = b" ".join([record] * 20000)
tail_lines = tail_spaces.replace(b"} {", b"}\\n{")
start = len(long_line) + 1
initial = long_line + b"\\n" + tail_spaces
go, done = threading.Event(), threading.Event()
target = [bytearray()]

def mutate():
    while True:
        go.wait()
        go.clear()
        if done.is_set():
            return
        target[0][start:] = tail_lines

thread = threading.Thread(target=mutate)
thread.start()
for attempt in range(int(sys.argv[1])):
    for kind in ("journal", "batch", "numpy"):
        buffer = bytearray(initial) if kind != "numpy" else np.frombuffer(bytearray(initial), np.uint8)
        target[0] = buffer if kind != "numpy" else memoryview(buffer)
        go.set()
        if kind == "journal":
            found = _canonical.scan_journal(buffer)
            # Two lines when the scan counted first, every line when the thread was quicker: never more.
            assert found is None or len(found[2]) in (2, 20001), len(found[2])
        else:
            scan = native.scan_batch(buffer, [len(initial)])
            assert scan is not None and len(scan.protocols) in (0, 2, 20001), len(scan.protocols)
done.set()
go.set()
thread.join()
print("clean")
"""


def test_row2_a_buffer_changed_during_the_scan_is_never_written_past() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MUTATING_PROBE, "20"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0 and done.stdout.strip() == "clean", (done.returncode, done.stderr[-2000:])


def test_row6_scan_batch_copies_its_lengths_so_any_alignment_reads_the_same() -> None:
    data = _completed("a") + _completed("b")
    lengths = array("q", [len(_completed("a")), len(_completed("b"))]).tobytes()
    expected = _canonical.scan_batch(bytearray(data), lengths)
    for shift in range(1, 8):
        misaligned = memoryview(bytearray(shift) + lengths)[shift:]
        assert _canonical.scan_batch(bytearray(data), misaligned) == expected
    # Lengths that are not whole int64 values are refused, not read short.
    with pytest.raises(ValueError, match="multiple of 8"):
        _canonical.scan_batch(bytearray(data), lengths + b"\0")


# -- 8: the conversation token in a repr ---------------------------------------------------------------------------

TOKEN = "ct_live_Sup3rS3cret"


@pytest.mark.parametrize("canonical", [True, False])
def test_row8_no_repr_shows_the_conversation_token_and_the_bytes_keep_it(tmp_path: Path, canonical: bool) -> None:
    built = journal("tok", interactive=True, conversation_token=TOKEN)
    built.assistant(text("hi"))
    built.terminal("completed")
    data = built.journal_bytes()
    if not canonical:  # the exact reader's records, each a StoredRecord in a list
        data = data.replace(b'"seq":1,"protocol"', b'"SEQ":1,"protocol"')
    (tmp_path / "tok.json").write_bytes(data)
    with open_source(tmp_path) as source:
        read = source.read_run("tok")
    records = read.typed()
    result = fold(records, run="tok")
    assert result.state is not None and result.state.conversation_token == TOKEN
    shown = [
        repr(read),
        repr(list(read.records)),
        repr(read.records[0]),
        repr(records[0]),
        repr(records[0].meta),
        str(records[0]),
        repr(result),
        repr(result.state),
        f"{result.state!r}",
        repr(tuple(records)),
    ]
    for text_shown in shown:
        assert TOKEN not in text_shown, text_shown
    assert f"conversation_token={HIDDEN}" in repr(records[0]) and "prompt='hello'" in repr(records[0])
    assert "conversation_token=''" in repr(journal("none").meta), "an empty token hides nothing"
    # The bytes and the value itself keep it: the journal is written back byte for byte.
    assert TOKEN.encode() in read.records[0].raw
    assert records[0].meta is not None and records[0].meta.conversation_token == TOKEN
    assert encode_record(records[0]) == data.splitlines()[0] or not canonical
