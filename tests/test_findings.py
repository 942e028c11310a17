"""One journal per finding code the fold and the file reader produce, triggering exactly that code."""

from pathlib import Path

import pytest

from journaltools.audit import audit_sources
from journaltools.fold import fold
from journaltools.protocol.findings import FINDING_SEVERITY
from tests.builders import JournalBuilder


def lenient_codes(journal: JournalBuilder, run: str | None = None) -> list[str]:
    return [finding.code for finding in fold(journal.raw(), strict=False, run=run).findings]


FOLD_CASES = {
    "empty_journal": JournalBuilder(meta=False),
    "not_meta_first": JournalBuilder(meta=False).user(),
    "version_mismatch": JournalBuilder(meta=False).add(
        "meta", version=0, fingerprint={"model": "m", "system_sha256": "0" * 64}
    ),
    "seq_not_increasing": JournalBuilder().user().add("note", seq=2, text="again"),
    "seq_gap": JournalBuilder().user().add("note", seq=9, text="later"),
    "schema_violation": JournalBuilder().user().add("assistant", content="not a list", stop_reason="x", usage={}),
    "unknown_type": JournalBuilder().user().add("telemetry", value=1),
    "optional_not_allowed": JournalBuilder()
    .user()
    .assistant("t1")
    .add("deferral", call="t1", reason="approval", optional=True),
    "unknown_call": JournalBuilder().user().assistant("t1").result("t2"),
    "duplicate_result": JournalBuilder().user().assistant("t1").result("t1").result("t1"),
    "unanswered_calls": JournalBuilder().user().assistant("t1").assistant(),
    "approval_without_deferral": JournalBuilder()
    .user()
    .assistant("t1")
    .add("approval", call="t1", decision="approve", by="op"),
    "duplicate_call_id": JournalBuilder().user().assistant("t1").result("t1").assistant("t1"),
    "duplicate_deferral": JournalBuilder()
    .user()
    .assistant("t1")
    .add("deferral", call="t1", reason="approval")
    .add("deferral", call="t1", reason="external"),
    "assistant_first": JournalBuilder().assistant(),
}


@pytest.mark.parametrize("code", sorted(FOLD_CASES))
def test_fold_finding_codes(code: str) -> None:
    assert lenient_codes(FOLD_CASES[code]) == [code]
    assert code in FINDING_SEVERITY


def test_run_mismatch_against_the_journal_name() -> None:
    assert lenient_codes(JournalBuilder("other").user(), run="expected") == ["run_mismatch"]


def test_run_mismatch_inside_a_journal() -> None:
    journal = JournalBuilder("a").user()
    journal.bodies.append({**journal.bodies[-1], "run": "b", "seq": 3})
    assert lenient_codes(journal) == ["run_mismatch"]


def test_unknown_optional_record_is_skipped_and_counted_not_reported() -> None:
    result = fold(JournalBuilder().user().add("telemetry", optional=True).raw())
    assert result.findings == []
    assert result.counters.skipped_optional == 1


def write(tmp_path: Path, run: str, data: bytes) -> str:
    (tmp_path / f"{run}.jsonl").write_bytes(data)
    return str(tmp_path)


def test_torn_tail_finding(tmp_path: Path) -> None:
    source = write(tmp_path, "r", JournalBuilder("r").user().bytes() + b'{"type":"us')
    assert [f.code for f in audit_sources([source]).findings] == ["torn_tail"]


def test_corrupt_line_finding(tmp_path: Path) -> None:
    lines = JournalBuilder("r").user().assistant().bytes().split(b"\n")
    lines.insert(1, b"not json")
    findings = audit_sources([write(tmp_path, "r", b"\n".join(lines))]).findings
    assert [f.code for f in findings] == ["corrupt_line"]
    assert "line 2" in findings[0].message


def test_invalid_run_id_finding(tmp_path: Path) -> None:
    source = write(tmp_path, "has space", JournalBuilder("r").user().bytes())
    assert [f.code for f in audit_sources([source]).findings] == ["invalid_run_id"]


def test_run_mismatch_against_file_name(tmp_path: Path) -> None:
    source = write(tmp_path, "named", JournalBuilder("other").user().bytes())
    assert [f.code for f in audit_sources([source]).findings] == ["run_mismatch"]
