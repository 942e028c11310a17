"""Migration between backends (bytes unchanged, idempotent, verified, refusing only what it cannot copy
faithfully) and the listing comparison through real backends: the real corpus copied into a real nats-server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from journaltools.audits.listings import compare_runs
from journaltools.ops.migrate import INVALID_SOURCE_CODES, migrate
from journaltools.sources.jetstream import JetStreamBackend
from journaltools.sources.registry import open_source
from tests.nats_fixtures import NatsAdmin
from tests.runstate_corpus import CORPUS, jsonl

#: Where the runtime's own two listings of these journals differ (the corpus's listings).
FILE_ROWS = {row["RunID"]: row for row in jsonl("listing-file.jsonl")}
STREAM_ROWS = {row["RunID"]: row for row in jsonl("listing-jetstream.jsonl")}


def test_the_corpus_round_trips_file_jetstream_file_byte_identical(jetstream: JetStreamBackend, tmp_path: Path) -> None:
    with open_source(CORPUS / "file") as files:
        there = migrate(files, jetstream)
        assert there.verified and there.refused == [] and there.runs == 34 and there.copied == there.records
        again = migrate(files, jetstream)
        assert again.copied == 0 and again.skipped == there.records, "a re-run adds nothing"
    with open_source(tmp_path / "back", create=True) as back:
        home = migrate(jetstream, back)
        assert home.verified and home.runs == 34
    for path in sorted((CORPUS / "file").glob("*.json")):
        assert (tmp_path / "back" / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_two_listings_of_one_set_of_records_differ_only_by_their_rules(jetstream: JetStreamBackend) -> None:
    with open_source(CORPUS / "file") as files:
        migrate(files, jetstream)
        rows = compare_runs(files.listing(), jetstream.listing(), "file", "jetstream")
    verdicts = {row.run: row for row in rows}
    assert [row for row in rows if row.verdict == "discrepancy"] == []
    for run, file_row in FILE_ROWS.items():
        differs = STREAM_ROWS[run]["Terminal"] != file_row["Terminal"]
        assert verdicts[run].verdict == ("summary_rule" if differs else "agree"), (run, verdicts[run].explanation)
    for run in STREAM_ROWS.keys() - FILE_ROWS.keys():  # the runtime's file listing drops what its fold refuses
        assert verdicts[run].verdict == "summary_rule" and verdicts[run].status_a == "invalid"


def test_a_lost_last_record_is_a_discrepancy(jetstream: JetStreamBackend, tmp_path: Path) -> None:
    run = "3IDQ1OhDHSSoRIEpX5dNk2z1f6f"
    shutil.copy(CORPUS / "file" / f"{run}.json", tmp_path / f"{run}.json")
    with open_source(tmp_path) as files:
        migrate(files, jetstream)
        lines = (tmp_path / f"{run}.json").read_bytes().split(b"\n")
        (tmp_path / f"{run}.json").write_bytes(b"\n".join(lines[:-2]) + b"\n")  # the file lost its terminal
        row = compare_runs(files.listing(), jetstream.listing(), "file", "jetstream")[0]
    assert row.verdict == "discrepancy" and "last seq is 9 in file but 10 in jetstream" in row.explanation


def test_what_cannot_be_copied_faithfully_is_refused_and_the_rest_goes_on(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("m0-interior-garbage-ef718bc6", "m1-duplicate-line-45b670e1", "m1-dropped-line-7bbb862e"):
        shutil.copy(CORPUS / "broken" / f"{name}.json", source / f"{name}.json")
    shutil.copy(CORPUS / "file" / "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json", source)
    with open_source(source) as files, open_source(tmp_path / "dest", create=True) as dest:
        report = migrate(files, dest)
    refused = {refusal.run: refusal.code for refusal in report.refused}
    assert refused == {
        "m0-interior-garbage-ef718bc6": "corrupt_line",
        "m1-duplicate-line-45b670e1": "seq_not_increasing",
        "m1-dropped-line-7bbb862e": "seq_gap",  # the runtime's fold accepts a gap; its writer refuses one
    }
    assert all(code in INVALID_SOURCE_CODES for code in refused.values())
    assert report.runs == 1 and report.verified
    assert report.failed() and not report.failed(skip_invalid=True)


@pytest.mark.parametrize("name", ["m0-case-variant-keys-5fe298a3", "m0-invalid-utf8-48238b50"])
def test_noncanonical_lines_are_copied_as_they_are(name: str, tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(CORPUS / "broken" / f"{name}.json", source / f"{name}.json")
    with open_source(source) as files, open_source(tmp_path / "dest", create=True) as dest:
        report = migrate(files, dest)
    assert report.refused == [] and report.verified
    assert (tmp_path / "dest" / f"{name}.json").read_bytes() == (source / f"{name}.json").read_bytes()


def test_a_stream_copy_published_meta_last_is_the_summary_rule_and_says_the_run_cannot_be_appended(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin, tmp_path: Path
) -> None:
    """Every record is on the stream, but published in subject order (``<run>.10`` ... ``<run>.9``, ``_meta``
    last): the JetStream rule reads the meta record as the run's last message."""
    run = "3MtgePl8MTxhIQTqkgVj3k35VXw"
    source = CORPUS / "newest" / "file" / f"{run}.json"
    shutil.copy(source, tmp_path / source.name)
    lines = source.read_bytes().split(b"\n")[:-1]
    subjects = {jetstream.subject(run, seq): line for seq, line in enumerate(lines, start=1)}
    for subject in sorted(subjects):
        assert "error" not in nats_admin.publish(subject, subjects[subject])
    with open_source(tmp_path) as files:
        (row,) = compare_runs(files.listing(), jetstream.listing(), "file", "jetstream")
    assert row.verdict == "summary_rule" and (row.status_a, row.status_b) == ("completed", "open")
    assert "out of seq order" in row.explanation and "could not append" in row.explanation


def test_the_newest_corpus_round_trips_file_jetstream_file_byte_identical(
    jetstream: JetStreamBackend, tmp_path: Path
) -> None:
    newest = CORPUS / "newest" / "file"
    with open_source(newest) as files:
        there = migrate(files, jetstream)
        assert there.verified and there.copied == there.records
    with open_source(tmp_path / "back", create=True) as back:
        home = migrate(jetstream, back)
        assert home.verified and home.runs == there.runs
    copied = sorted(path.name for path in (tmp_path / "back").glob("*.json"))
    assert len(copied) == there.runs >= 28
    for name in copied:
        assert (tmp_path / "back" / name).read_bytes() == (newest / name).read_bytes(), name
