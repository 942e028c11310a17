"""Migration between backends (moves what exists, bytes unchanged, idempotent, refusing only what it cannot copy
faithfully, verified) and the listing comparison (every difference classified by cause), on the sample journals
and on journals written to a real nats-server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.backends.base import Backend, RunRead, RunSummary
from journaltools.backends.file import FileBackend, scan_journal
from journaltools.backends.jetstream import JetStreamBackend
from journaltools.cli import main
from journaltools.compare import COMPARISON_SCHEMA, compare_listings, comparison_rows, findings_from_comparison
from journaltools.listing import summarize_by_fold, summarize_two_records
from journaltools.ops.migrate import INVALID_SOURCE_CODES, Refusal, migrate
from journaltools.protocol.records import decode_record
from tests.builders import JournalBuilder
from tests.nats_fixtures import NatsAdmin
from tests.strategies import valid_runs

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"

#: What ``compare data/samples <the samples migrated to JetStream>`` says of each sample. Every sample agrees
#: except the turn in flight (documented), the journals the file listing calls invalid although migrate copies
#: them (the file listing validates, the two-record summary does not: summary_rule), and the one journal whose
#: lines do not all parse (migrate refuses it, so JetStream has no copy).
SAMPLE_VERDICTS = {
    "answered-deferral": "agree",
    "approved-deferral": "agree",
    "cancelled-by-user": "agree",
    "completed-with-tools": "agree",
    "consecutive-users": "agree",
    "corrupt-interior": "missing_b",
    "failed-provider": "agree",
    "optional-unknown-record": "agree",
    "resumed-after-crash": "agree",
    "schema-violation": "summary_rule",
    "suspended-approval": "agree",
    "torn-tail": "agree",
    "turn-in-flight": "documented",
    "version-mismatch": "summary_rule",
}


@pytest.fixture
def samples(samples_dir: Path) -> FileBackend:
    return FileBackend(samples_dir)


def clean_bytes(path: Path) -> bytes:
    """A journal's bytes without a torn tail (what any writer keeps of it)."""
    data = path.read_bytes()
    scanned = scan_journal(data, path.stem)
    return b"".join(record.raw + b"\n" for record in scanned.records)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(backend: Backend, journal: JournalBuilder, upto: int | None = None) -> None:
    """Write the journal (its first ``upto`` records) through the backend's validating writer."""
    with backend.open_writer(journal.run) as writer:
        for body in journal.bodies[:upto]:
            writer.append(body)


# -- migrate: moves what exists ------------------------------------------------------------------------


def test_samples_round_trip_file_jetstream_file_byte_identical(
    samples: FileBackend, jetstream: JetStreamBackend, tmp_path: Path
) -> None:
    report = migrate(samples, jetstream)
    assert [(r.run, r.code) for r in report.refused] == [("corrupt-interior", "corrupt_line")]
    assert "line 3" in report.refused[0].message
    parseable = [run for run in samples.list_runs() if samples.read_run(run, strict=False).complete]
    assert {"schema-violation", "version-mismatch"} <= set(parseable)  # broken schema, but every line parses
    assert report.verified and report.mismatches == []
    assert report.runs == len(parseable) and jetstream.list_runs() == parseable
    assert report.records == report.copied == sum(len(samples.read_run(run).records) for run in parseable)
    for run in parseable:
        assert [r.raw for r in jetstream.read_run(run).records] == [r.raw for r in samples.read_run(run).records]

    back = FileBackend(tmp_path / "back", create=True)
    report_back = migrate(jetstream, back)
    assert report_back.refused == [] and report_back.verified and report_back.runs == len(parseable)
    for run in parseable:
        original = samples.path_of(run)
        assert back.path_of(run).read_bytes() == clean_bytes(original)
        if not any(finding.code == "torn_tail" for finding in samples.read_run(run).findings):
            assert back.path_of(run).read_bytes() == original.read_bytes()
    assert back.path_of("schema-violation").read_bytes() == samples.path_of("schema-violation").read_bytes()


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(journal=valid_runs("prop-run"), breakage=st.sampled_from(["none", "drop_usage", "version", "junk_type"]))
def test_any_parseable_journal_round_trips_byte_identical(
    tmp_path_factory: pytest.TempPathFactory, journal: JournalBuilder, breakage: str
) -> None:
    """Whatever a record holds, a journal whose lines parse and whose seqs run 1, 2, 3 is copied as it is."""
    bodies = [dict(body) for body in journal.bodies]
    if breakage == "drop_usage":
        for body in bodies:
            body.pop("usage", None)
    elif breakage == "version":
        bodies[0]["version"] = 7
    elif breakage == "junk_type":
        bodies[-1]["type"] = "not-a-protocol-type"
    content = b"".join(json.dumps(body, separators=(", ", ": ")).encode() + b"\n" for body in bodies)
    source = FileBackend(tmp_path_factory.mktemp("src"))
    source.path_of(journal.run).write_bytes(content)
    there = FileBackend(tmp_path_factory.mktemp("there"))
    back = FileBackend(tmp_path_factory.mktemp("back"))
    assert migrate(source, there).refused == []
    report = migrate(there, back)
    assert report.refused == [] and report.verified and report.records == len(bodies)
    assert back.path_of(journal.run).read_bytes() == content


def _journal_file(root: Path, run: str, lines: list[bytes]) -> None:
    (root / f"{run}.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


@pytest.mark.parametrize(
    ("lines", "code", "words"),
    [
        ([1, 2, 2, 3], "seq_not_increasing", "seq 2 follows seq 2"),
        ([1, 3], "seq_gap", "seq 3 follows seq 1"),
        ([2, 3], "seq_gap", "seq 2 follows seq 0"),
        ([1, None], "seq_missing", "not an integer"),
        ([1, "other"], "run_mismatch", "names run 'someone-else'"),
        ([], "empty_journal", "no records"),
    ],
)
def test_what_cannot_be_copied_faithfully_is_refused_with_its_reason(
    tmp_path: Path, lines: list[object], code: str, words: str
) -> None:
    source = FileBackend(tmp_path / "src", create=True)
    raw = []
    for item in lines:
        if item == "other":
            raw.append(b'{"type":"note","run":"someone-else","seq":2,"ts":"t","text":"x"}')
        elif item is None:
            raw.append(b'{"type":"note","run":"bad","ts":"t","text":"no seq"}')
        else:
            raw.append(f'{{"type":"note","run":"bad","seq":{item},"ts":"t","text":"x"}}'.encode())
    _journal_file(source.root, "bad", raw)
    _journal_file(source.root, "good", [record.raw for record in JournalBuilder("good").user().raw()])
    dest = FileBackend(tmp_path / "dest", create=True)
    report = migrate(source, dest)
    assert [(r.run, r.code) for r in report.refused] == [("bad", code)]
    assert words in report.refused[0].message and report.refused[0].invalid_source
    assert report.runs == 1 and dest.list_runs() == ["good"]
    assert report.failed() and not report.failed(skip_invalid=True)


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
    assert {"runs", "records", "verified", "refused"} <= shape.keys()
    assert shape["refused"] and all(set(item) == {"run", "code", "message"} for item in shape["refused"])
    assert shape["refused"][0]["run"] == "corrupt-interior" and shape["refused"][0]["code"] == "corrupt_line"


def test_a_destination_holding_a_different_run_is_refused_not_mixed(samples: FileBackend, tmp_path: Path) -> None:
    dest = FileBackend(tmp_path / "dest", create=True)
    journal = JournalBuilder("completed-with-tools").user("a different conversation")
    write(dest, journal)
    before = dest.path_of(journal.run).read_bytes()
    report = migrate(samples, dest, runs=["completed-with-tools", "turn-in-flight"])
    assert [(r.run, r.code) for r in report.refused] == [("completed-with-tools", "destination_differs")]
    assert "different" in report.refused[0].message and not report.refused[0].invalid_source
    assert report.failed(skip_invalid=True)  # a conflict is never an invalid journal to skip
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
    write(jetstream, journal, upto=1)
    nats_admin.publish(jetstream.subject("damaged", 2), b"\x00not json")
    report = migrate(jetstream, FileBackend(tmp_path / "dest", create=True))
    assert [(r.run, r.code) for r in report.refused] == [("damaged", "corrupt_line")]
    assert "does not parse" in report.refused[0].message
    assert report.runs == 0 and not (tmp_path / "dest" / "damaged.jsonl").exists()


def test_a_missing_run_is_refused_and_others_continue(samples: FileBackend, tmp_path: Path) -> None:
    report = migrate(samples, FileBackend(tmp_path / "dest", create=True), runs=["no-such-run", "turn-in-flight"])
    assert report.refused == [Refusal("no-such-run", "run_not_found", report.refused[0].message)]
    assert "no-such-run" in report.refused[0].message and report.runs == 1
    assert "run_not_found" not in INVALID_SOURCE_CODES


class AlteringBackend(FileBackend):
    """A destination that hands back other bytes than it was given: what verification exists to catch."""

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        read = self.read_run_now(run, strict=strict)
        last = read.records[-1]
        altered = decode_record(last.raw.replace(b'"ts":"', b'"ts": "'), last.position)
        return RunRead(run, [*read.records[:-1], altered], read.findings, read.source, read.complete)


def test_a_failed_verification_fails_even_with_skip_invalid(samples: FileBackend, tmp_path: Path) -> None:
    report = migrate(samples, AlteringBackend(tmp_path / "dest", create=True), runs=["completed-with-tools"])
    assert not report.verified and [run for run, _ in report.mismatches] == ["completed-with-tools"]
    assert "seq 6: digest" in report.mismatches[0][1]
    assert report.failed() and report.failed(skip_invalid=True)


# -- migrate: the command ---------------------------------------------------------------------------------


def test_migrate_exit_status_with_and_without_skip_invalid(
    samples: FileBackend, jetstream_url: str, jetstream: JetStreamBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "migrate", str(samples.root), jetstream_url, "--json")
    document = json.loads(out)  # stdout is the one document, refusals or not
    assert code == 1
    assert document["refused"] == [
        {"run": "corrupt-interior", "code": "corrupt_line", "message": document["refused"][0]["message"]}
    ]
    assert document["verified"] is True and document["runs"] == 13
    assert "refused corrupt-interior: corrupt_line" in err and "line 3" in err

    code, out, err = run_cli(capsys, "migrate", str(samples.root), jetstream_url, "--skip-invalid")
    assert code == 0 and "migrated 13 runs" in out and "verified: yes" in out
    assert "skipped corrupt-interior: corrupt_line" in err

    (samples.root / "corrupt-interior.jsonl").unlink()
    code, out, err = run_cli(capsys, "migrate", str(samples.root), jetstream_url)
    assert (code, err) == (0, "") and "0 copied, 55 already there" in out


def test_migrate_exits_1_for_a_conflict_even_with_skip_invalid(
    samples: FileBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = FileBackend(tmp_path / "dest", create=True)
    write(dest, JournalBuilder("turn-in-flight").user("another conversation"))
    code, _, err = run_cli(capsys, "migrate", str(samples.root), str(dest.root), "--skip-invalid")
    assert code == 1 and "refused turn-in-flight: destination_differs" in err


# -- compare: every difference classified by cause, on journals written to both backends --------------------


def _trailing(kind: str, **payload: object) -> JournalBuilder:
    return JournalBuilder(f"ends-{kind}").user().assistant().add(kind, **payload)


#: (journal, file listing status, JetStream listing status, verdict, words the explanation must hold)
CAUSES = [
    (JournalBuilder("completed").user().assistant(), "completed", "completed", "agree", "Both listings say"),
    (
        JournalBuilder("turn-in-flight").user().assistant("c1", "c2"),
        "open",
        "completed",
        "documented",
        "tool calls whose results have not been written yet",
    ),
    (
        _trailing("note", text="looked at it", optional=True),
        "completed",
        "open",
        "summary_rule",
        "a trailing note is inert",
    ),
    (
        _trailing("claim", worker="w2", reason="resume"),
        "completed",
        "open",
        "summary_rule",
        "a trailing claim is inert",
    ),
    (
        _trailing("error", where="tool", message="retrying", fatal=False),
        "completed",
        "open",
        "summary_rule",
        "a non-fatal error does not end a run",
    ),
    (
        JournalBuilder("failed-then-note")
        .user()
        .add("error", where="provider", message="overloaded", fatal=True)
        .add("note", text="post-mortem done", optional=True),
        "failed",
        "open",
        "summary_rule",
        "a trailing note is inert",
    ),
]


@pytest.fixture
def both_backends(jetstream: JetStreamBackend, tmp_path: Path) -> Iterator[tuple[FileBackend, JetStreamBackend]]:
    yield FileBackend(tmp_path / "files", create=True), jetstream


def test_each_difference_written_to_both_backends_gets_its_verdict(
    both_backends: tuple[FileBackend, JetStreamBackend],
) -> None:
    files, jetstream = both_backends
    for journal, *_ in CAUSES:
        write(files, journal)
        write(jetstream, journal)
    rows = {row["run"]: row for row in comparison_rows(compare_listings(files.listing(), jetstream.listing()))}
    for journal, status_file, status_js, verdict, words in CAUSES:
        row = rows[journal.run]
        assert (row["status_a"], row["status_b"], row["verdict"]) == (status_file, status_js, verdict), journal.run
        assert words in row["explanation"], row["explanation"]
        if verdict == "summary_rule":
            assert "same records" in row["explanation"] and "byte-identical" in row["explanation"]
            assert "not an error" in row["explanation"]


def test_a_jetstream_copy_that_lost_its_last_record_is_a_discrepancy(
    both_backends: tuple[FileBackend, JetStreamBackend],
) -> None:
    files, jetstream = both_backends
    for journal, *_ in CAUSES:
        write(files, journal)
        write(jetstream, journal, upto=len(journal.bodies) - 1)
    rows = {row["run"]: row for row in comparison_rows(compare_listings(files.listing(), jetstream.listing()))}
    for journal, *_ in CAUSES:
        row = rows[journal.run]
        assert row["verdict"] == "discrepancy", (journal.run, row)
        assert "different records" in row["explanation"]
        assert f"the last seq is {journal.seq} in a but {journal.seq - 1} in b" in row["explanation"]


def test_a_different_last_record_at_the_same_seq_is_a_discrepancy(
    both_backends: tuple[FileBackend, JetStreamBackend],
) -> None:
    files, jetstream = both_backends
    write(files, _trailing("note", text="one text", optional=True))
    write(jetstream, _trailing("note", text="another text", optional=True))
    [row] = comparison_rows(compare_listings(files.listing(), jetstream.listing(), "file", "jetstream"))
    assert (row["status_a"], row["status_b"], row["verdict"]) == ("completed", "open", "discrepancy")
    assert "the last record (seq 4) has different bytes in file and jetstream" in row["explanation"]


def test_compare_command_fails_on_a_discrepancy_only_when_asked(
    both_backends: tuple[FileBackend, JetStreamBackend], jetstream_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    files, jetstream = both_backends
    for journal, *_ in CAUSES:
        write(files, journal)
        write(jetstream, journal)
    source = str(files.root)
    code, out, err = run_cli(capsys, "compare", source, jetstream_url, "--json", "--fail-on", "discrepancy")
    rows = json.loads(out)
    assert (code, err) == (0, "")
    assert all(set(row) == {"run", "status_a", "status_b", "verdict", "explanation"} for row in rows)
    assert {row["verdict"] for row in rows} == {"agree", "documented", "summary_rule"}

    lost = JournalBuilder("lost-last").user().assistant()
    write(files, lost)
    write(jetstream, lost, upto=2)
    assert run_cli(capsys, "compare", source, jetstream_url)[0] == 0  # a verdict, not a failure, unless asked
    code, out, err = run_cli(capsys, "compare", source, jetstream_url, "--fail-on", "discrepancy")
    assert code == 1 and "lost-last" in err
    assert "discrepancy" in next(line for line in out.splitlines() if line.startswith("lost-last"))


def test_compare_fail_on_missing_counts_runs_on_one_side_only(
    samples: FileBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = FileBackend(tmp_path / "dest", create=True)
    migrate(samples, dest, runs=["turn-in-flight"])
    args = ("compare", str(dest.root), str(samples.root))
    assert run_cli(capsys, *args, "--fail-on", "discrepancy")[0] == 0
    code, _, err = run_cli(capsys, *args, "--fail-on", "missing")
    assert code == 1 and "completed-with-tools" in err


def test_compare_on_the_samples_migrated_to_jetstream(samples: FileBackend, jetstream: JetStreamBackend) -> None:
    report = migrate(samples, jetstream)
    file_listing = samples.listing()
    table = compare_listings(file_listing, jetstream.listing(), label_a="file", label_b="jetstream")
    assert table.schema.equals(COMPARISON_SCHEMA)
    rows = {row["run"]: row for row in comparison_rows(table)}
    assert {run: row["verdict"] for run, row in rows.items()} == SAMPLE_VERDICTS
    # The summary_rule runs are exactly those the file listing calls invalid and migrate copied anyway.
    refused = {refusal.run for refusal in report.refused}
    invalid_but_migrated = {row.run for row in file_listing if row.status == "invalid" and row.run not in refused}
    assert {run for run, verdict in SAMPLE_VERDICTS.items() if verdict == "summary_rule"} == invalid_but_migrated
    assert refused == {run for run, verdict in SAMPLE_VERDICTS.items() if verdict == "missing_b"}
    for run in invalid_but_migrated:
        explanation = rows[run]["explanation"]
        assert "The file listing validates every record and says invalid" in explanation
        assert "the two-record summary does not validate" in explanation
    assert "seq 3: schema_violation" in rows["schema-violation"]["explanation"]
    assert "version_mismatch" in rows["version-mismatch"]["explanation"]
    documented = rows["turn-in-flight"]
    assert (documented["status_a"], documented["status_b"]) == ("open", "completed")
    assert "tool calls" in documented["explanation"] and "first and last record" in documented["explanation"]
    assert "corrupt_line" in rows["corrupt-interior"]["explanation"]
    assert "migrate refuses" in rows["corrupt-interior"]["explanation"]
    findings = {(f.run, f.code, f.severity) for f in findings_from_comparison(table)}
    assert findings == {
        ("turn-in-flight", "listing_documented", "info"),
        ("schema-violation", "listing_summary_rule", "info"),
        ("version-mismatch", "listing_summary_rule", "info"),
        ("corrupt-interior", "listing_discrepancy", "error"),
    }


@settings(max_examples=150)
@given(journal=valid_runs("same-records"))
def test_the_same_records_never_make_a_discrepancy_and_a_lost_record_always_does(journal: JournalBuilder) -> None:
    """Both listing rules over one valid journal differ only by cause; drop the last record on one side and
    the comparison sees that the records differ."""
    records = journal.raw()
    folded = summarize_by_fold(journal.run, records)
    summarized = summarize_two_records(journal.run, records[0], records[-1])
    [row] = compare_listings([folded], [summarized]).to_pylist()
    expected = {"agree"} if folded.status == summarized.status else {"documented", "summary_rule"}
    assert row["verdict"] in expected, row["explanation"]
    if len(records) > 1:
        shorter = summarize_two_records(journal.run, records[0], records[-2])
        [lost] = compare_listings([folded], [shorter]).to_pylist()
        assert lost["verdict"] == "discrepancy" and "different records" in lost["explanation"]


# -- compare: the verdict rules on hand-made rows ------------------------------------------------------------


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
    digests = {"first_sha256": "f" * 64, "last_sha256": "a" * 64}
    a = [
        summary("same", "completed"),
        summary("in-flight", "open", last_has_calls=True, records=3),
        summary("in-flight-other-way", "completed"),
        summary("status-differs", "failed", last_type="error"),
        summary("seq-differs", "open", last_has_calls=True, records=3),
        summary("open-without-calls", "open", last_type="user"),
        summary("note-last", "completed", last_type="note", two_record_status="open", **digests),
        summary("note-last-no-digest", "completed", last_type="note", two_record_status="open"),
        summary("note-last-other-bytes", "completed", last_type="note", two_record_status="open", **digests),
        summary("corrupt", "invalid", problem="corrupt_line: line 3", first_sha256="f" * 64),
        summary("only-a", "open"),
    ]
    b = [
        summary("same", "completed"),
        summary("in-flight", "completed"),
        summary("in-flight-other-way", "open", last_has_calls=True),
        summary("status-differs", "open", last_type="note"),
        summary("seq-differs", "completed", last_seq=2),
        summary("open-without-calls", "completed"),
        summary("note-last", "open", last_type="note", two_record_status="open", **digests),
        summary("note-last-no-digest", "open", last_type="note", two_record_status="open"),
        summary("note-last-other-bytes", "open", last_type="note", first_sha256="f" * 64, last_sha256="b" * 64),
        summary("corrupt", "completed", two_record_status="completed", **digests),
        summary("only-b", "completed"),
    ]
    table = compare_listings(a, b, "file", "jetstream")
    assert isinstance(table, pa.Table) and table.column_names == list(COMPARISON_SCHEMA.names)
    verdicts = {row["run"]: row["verdict"] for row in comparison_rows(table)}
    assert verdicts == {
        "corrupt": "discrepancy",
        "in-flight": "documented",
        "in-flight-other-way": "documented",
        "note-last": "summary_rule",
        "note-last-no-digest": "discrepancy",
        "note-last-other-bytes": "discrepancy",
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
    assert "jetstream did not read its last record" in explanations["note-last-no-digest"]
    assert "has different bytes in file and jetstream" in explanations["note-last-other-bytes"]
    assert "file could not read the journal whole: corrupt_line: line 3" in explanations["corrupt"]
    codes = {finding.run: finding.code for finding in findings_from_comparison(table)}
    assert codes == {run: code for run, code in {
        "corrupt": "listing_discrepancy",
        "in-flight": "listing_documented",
        "in-flight-other-way": "listing_documented",
        "note-last": "listing_summary_rule",
        "note-last-no-digest": "listing_discrepancy",
        "note-last-other-bytes": "listing_discrepancy",
        "only-a": "listing_discrepancy",
        "only-b": "listing_discrepancy",
        "open-without-calls": "listing_discrepancy",
        "seq-differs": "listing_discrepancy",
        "status-differs": "listing_discrepancy",
    }.items()}  # fmt: skip


def test_a_run_on_one_side_only_says_why_when_its_journal_is_invalid(tmp_path: Path) -> None:
    files = FileBackend(tmp_path, create=True)
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "fine.jsonl").write_bytes(JournalBuilder("fine").user().bytes())
    rows = {row["run"]: row for row in comparison_rows(compare_listings(files.listing(), [], "file", "jetstream"))}
    assert {run: row["verdict"] for run, row in rows.items()} == {"empty": "missing_b", "fine": "missing_b"}
    assert "empty_journal" in rows["empty"]["explanation"] and "migrate refuses" in rows["empty"]["explanation"]
    assert rows["fine"]["explanation"] == "fine is listed by file (open) but jetstream has no journal for it."


def test_compare_empty_listings() -> None:
    table = compare_listings([], [])
    assert table.num_rows == 0 and table.schema.equals(COMPARISON_SCHEMA) and comparison_rows(table) == []


def test_the_samples_through_an_embedded_store_two_commands(tmp_path: Path) -> None:
    """The issue's scenario as a user types it: migrate into embedded:DIR, then compare in a second process."""
    store = f"embedded:{tmp_path / 'store'}"

    def journaltools(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "journaltools", *argv], capture_output=True, text=True, timeout=120, cwd=ROOT
        )

    migrated = journaltools("migrate", str(SAMPLES), store, "--skip-invalid")
    assert migrated.returncode == 0, migrated.stderr
    assert "skipped corrupt-interior: corrupt_line" in migrated.stderr and "line 3" in migrated.stderr
    compared = journaltools("compare", str(SAMPLES), store, "--json", "--fail-on", "discrepancy")
    assert compared.returncode == 0, compared.stderr
    assert {row["run"]: row["verdict"] for row in json.loads(compared.stdout)} == SAMPLE_VERDICTS
    assert journaltools("migrate", str(SAMPLES), store).returncode == 1  # without --skip-invalid the refusal fails
