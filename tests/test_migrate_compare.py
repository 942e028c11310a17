"""Migration between backends (bytes unchanged, idempotent, refusing broken journals, verified) and the listing
comparison (exactly the documented case is documented), on the sample journals and a real nats-server."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from journaltools.backends.base import RunSummary
from journaltools.backends.file import FileBackend, scan_journal
from journaltools.backends.jetstream import JetStreamBackend
from journaltools.compare import (
    COMPARISON_SCHEMA,
    compare_listings,
    comparison_rows,
    findings_from_comparison,
)
from journaltools.ops.migrate import MigrationReport, migrate
from tests.builders import JournalBuilder
from tests.nats_fixtures import NatsAdmin

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
#: Samples that are broken on purpose, and the words their refusal must contain.
UNMIGRATABLE = {
    "corrupt-interior": "corrupt",
    "schema-violation": "schema_violation",
    "version-mismatch": "version_mismatch",
}


@pytest.fixture
def samples(samples_dir: Path) -> FileBackend:
    return FileBackend(samples_dir)


def clean_bytes(path: Path) -> bytes:
    """A journal's bytes without a torn tail (what any writer keeps of it)."""
    data = path.read_bytes()
    scanned = scan_journal(data, path.stem)
    return b"".join(record.raw + b"\n" for record in scanned.records)


def test_samples_round_trip_file_jetstream_file_byte_identical(
    samples: FileBackend, jetstream: JetStreamBackend, tmp_path: Path
) -> None:
    report = migrate(samples, jetstream)
    refused = dict(report.refused)
    assert sorted(refused) == sorted(run for run in UNMIGRATABLE if run in samples.list_runs())
    for run, words in UNMIGRATABLE.items():
        if run in refused:
            assert words in refused[run]
    migrated = [run for run in samples.list_runs() if run not in refused]
    assert report.verified and report.mismatches == []
    assert report.runs == len(migrated) == len(jetstream.list_runs())
    assert report.records == report.copied == sum(len(samples.read_run(run, strict=False).records) for run in migrated)
    for run in migrated:
        assert [r.raw for r in jetstream.read_run(run).records] == [r.raw for r in samples.read_run(run).records]

    back = FileBackend(tmp_path / "back", create=True)
    report_back = migrate(jetstream, back)
    assert report_back.refused == [] and report_back.verified and report_back.runs == len(migrated)
    for run in migrated:
        original = samples.path_of(run)
        assert back.path_of(run).read_bytes() == clean_bytes(original)
        if not any(finding.code == "torn_tail" for finding in samples.read_run(run).findings):
            assert back.path_of(run).read_bytes() == original.read_bytes()


def test_rerunning_a_migration_adds_nothing(
    samples: FileBackend, jetstream: JetStreamBackend, nats_admin: NatsAdmin, tmp_path: Path
) -> None:
    first = migrate(samples, jetstream)
    messages = nats_admin.stream_state(jetstream.stream)["messages"]
    again = migrate(samples, jetstream)
    assert again.copied == 0 and again.skipped == first.copied
    assert (again.runs, again.records, again.verified) == (first.runs, first.records, True)
    assert nats_admin.stream_state(jetstream.stream)["messages"] == messages

    back = FileBackend(tmp_path / "back", create=True)
    migrate(jetstream, back)
    before = {path.name: path.read_bytes() for path in back.root.glob("*.jsonl")}
    assert migrate(jetstream, back).copied == 0
    assert {path.name: path.read_bytes() for path in back.root.glob("*.jsonl")} == before


def test_migration_report_json(samples: FileBackend, jetstream: JetStreamBackend) -> None:
    shape = migrate(samples, jetstream).to_json()
    assert {"runs", "records", "verified"} <= shape.keys()
    assert all(set(item) == {"run", "reason"} for item in shape["refused"])


def test_a_destination_holding_a_different_run_is_refused_not_mixed(samples: FileBackend, tmp_path: Path) -> None:
    dest = FileBackend(tmp_path / "dest", create=True)
    journal = JournalBuilder("completed-with-tools").user("a different conversation")
    with dest.open_writer(journal.run) as writer:
        for body in journal.bodies:
            writer.append(body)
    before = dest.path_of(journal.run).read_bytes()
    report = migrate(samples, dest, runs=["completed-with-tools", "turn-in-flight"])
    assert [run for run, _ in report.refused] == ["completed-with-tools"]
    assert "different" in report.refused[0][1]
    assert report.runs == 1 and dest.path_of(journal.run).read_bytes() == before


def test_a_partial_copy_is_completed(samples: FileBackend, tmp_path: Path) -> None:
    dest = FileBackend(tmp_path / "dest", create=True)
    records = samples.read_run("completed-with-tools").records
    with dest.open_writer("completed-with-tools") as writer:
        for record in records[:3]:
            writer.append(record.raw)
    report = migrate(samples, dest, runs=["completed-with-tools"])
    assert (report.copied, report.skipped, report.verified) == (len(records) - 3, 3, True)
    assert dest.path_of("completed-with-tools").read_bytes() == samples.path_of("completed-with-tools").read_bytes()


def test_a_corrupt_jetstream_run_is_refused(jetstream: JetStreamBackend, nats_admin: NatsAdmin, tmp_path: Path) -> None:
    journal = JournalBuilder("damaged").user()
    with jetstream.open_writer("damaged") as writer:
        writer.append(journal.bodies[0])
    nats_admin.publish(jetstream.subject("damaged", 2), b"\x00not json")
    report = migrate(jetstream, FileBackend(tmp_path / "dest", create=True))
    assert [run for run, _ in report.refused] == ["damaged"] and "corrupt" in report.refused[0][1]
    assert report.runs == 0 and not (tmp_path / "dest" / "damaged.jsonl").exists()


def test_a_missing_run_is_refused_and_others_continue(samples: FileBackend, tmp_path: Path) -> None:
    report = migrate(samples, FileBackend(tmp_path / "dest", create=True), runs=["no-such-run", "turn-in-flight"])
    assert [run for run, _ in report.refused] == ["no-such-run"] and report.runs == 1


# -- compare --------------------------------------------------------------------------------------------


def test_compare_on_the_samples_flags_exactly_the_documented_case(
    samples: FileBackend, jetstream: JetStreamBackend
) -> None:
    report: MigrationReport = migrate(samples, jetstream)
    table = compare_listings(samples.listing(), jetstream.listing(), label_a="file", label_b="jetstream")
    assert table.schema.equals(COMPARISON_SCHEMA)
    rows = {row["run"]: row for row in comparison_rows(table)}
    verdicts = {run: row["verdict"] for run, row in rows.items()}
    assert [run for run, verdict in verdicts.items() if verdict == "documented"] == ["turn-in-flight"]
    assert [run for run, verdict in verdicts.items() if verdict == "discrepancy"] == []
    assert sorted(run for run, verdict in verdicts.items() if verdict == "missing_b") == sorted(dict(report.refused))
    documented = rows["turn-in-flight"]
    assert (documented["status_a"], documented["status_b"]) == ("open", "completed")
    assert "tool calls" in documented["explanation"] and "first and last record" in documented["explanation"]
    findings = findings_from_comparison(table)
    assert [(f.run, f.code, f.severity) for f in findings if f.code == "listing_documented"] == [
        ("turn-in-flight", "listing_documented", "info")
    ]


def summary(run: str, status: str, **fields: object) -> RunSummary:
    values: dict[str, object] = {
        "created": "2026-11-29T10:00:00Z",
        "last_seq": 3,
        "records": None,
        "model": "m",
        "last_type": "assistant",
        "last_has_calls": False,
    }
    values.update(fields)
    return RunSummary(run, status, **values)  # type: ignore[arg-type]


def test_compare_verdicts() -> None:
    a = [
        summary("same", "completed"),
        summary("in-flight", "open", last_has_calls=True, records=3),
        summary("in-flight-other-way", "completed"),
        summary("status-differs", "failed", last_type="error"),
        summary("seq-differs", "open", last_has_calls=True, records=3),
        summary("open-without-calls", "open", last_type="user"),
        summary("only-a", "open"),
    ]
    b = [
        summary("same", "completed"),
        summary("in-flight", "completed"),
        summary("in-flight-other-way", "open", last_has_calls=True),
        summary("status-differs", "open", last_type="note"),
        summary("seq-differs", "completed", last_seq=2),
        summary("open-without-calls", "completed"),
        summary("only-b", "completed"),
    ]
    table = compare_listings(a, b, "file", "jetstream")
    assert isinstance(table, pa.Table) and table.column_names == [
        "run",
        "status_a",
        "status_b",
        "verdict",
        "explanation",
    ]
    verdicts = {row["run"]: row["verdict"] for row in comparison_rows(table)}
    assert verdicts == {
        "in-flight": "documented",
        "in-flight-other-way": "documented",
        "only-a": "missing_b",
        "only-b": "missing_a",
        "open-without-calls": "discrepancy",
        "same": "agree",
        "seq-differs": "discrepancy",
        "status-differs": "discrepancy",
    }
    explanations = {row["run"]: row["explanation"] for row in comparison_rows(table)}
    assert "file says failed but jetstream says open" in explanations["status-differs"]
    assert "last seq is 3 in file but 2 in jetstream" in explanations["seq-differs"]
    codes = {finding.run: finding.code for finding in findings_from_comparison(table)}
    assert codes == {
        "in-flight": "listing_documented",
        "in-flight-other-way": "listing_documented",
        "only-a": "listing_discrepancy",
        "only-b": "listing_discrepancy",
        "open-without-calls": "listing_discrepancy",
        "seq-differs": "listing_discrepancy",
        "status-differs": "listing_discrepancy",
    }


def test_compare_empty_listings() -> None:
    table = compare_listings([], [])
    assert table.num_rows == 0 and table.schema.equals(COMPARISON_SCHEMA) and comparison_rows(table) == []
