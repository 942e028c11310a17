"""Issue 25, a hostile world round three: journals bounded in records and CPU, a scanner safe from its callers,
runs that vanish mid-listing, times Go never writes, a credential in a repr, a status that styles itself.

Each journal is real format (``tests.builders``); each test fails on the code path it guards as it was before
the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools import load
from journaltools.backends.file import FileBackend
from journaltools.cli import main
from journaltools.errors import CorruptJournal
from journaltools.generate import text
from tests.builders import journal

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
