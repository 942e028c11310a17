"""Both backends on what the real runtime wrote: its file journals, and its JetStream stream replayed message for
message into a real nats-server (tests/corpus/runstate/MANIFEST.md)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from journaltools.errors import FoldError
from journaltools.folding import FoldResult, fold
from journaltools.folding import native as native_fold
from journaltools.protocol.kinds import Record
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.file import FileBackend
from journaltools.sources.jetstream import JetStreamBackend, open_jetstream_source
from journaltools.sources.listing import RunSummary
from journaltools.tables import load
from tests.nats_fixtures import TEST_OPTIONS, NatsAdmin, unique_stream
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS, expected, jsonl
from tests.table_checks import same_tables

#: The columns both listings share with the runtime's ``Store.List`` (``Updated`` differs by construction).
Row = tuple[str, str | None, str | None, str | None, str]


def listing_rows(rows: list[RunSummary]) -> dict[str, Row]:
    """run id → (run_id, created, model, prompt, terminal) as the runtime prints them ("" for open); a run the
    runtime omits is kept under its id with the terminal ``invalid``."""
    out: dict[str, Row] = {}
    for row in rows:
        terminal = "" if row.status == "open" else row.status
        out[row.run] = (row.meta_run_id or row.run, row.created, row.model, row.prompt, terminal)
    return out


def runtime_rows(name: str) -> dict[str, Row]:
    return {
        row["RunID"]: (row["RunID"], row["Created"], row["Model"], row["Prompt"], row["Terminal"])
        for row in jsonl(name)
    }


def test_file_listing_equals_the_runtimes() -> None:
    """The file rule over file/: the runtime's 31 rows, plus ``invalid`` rows for the three journals it omits
    because they do not fold."""
    got = listing_rows(FileBackend(CORPUS / "file").listing())
    want = runtime_rows("listing-file.jsonl")
    assert {run: row for run, row in got.items() if row[4] != "invalid"} == want
    omitted = {entry["store_id"] for entry in expected("file") if not entry["ok"]}
    assert {run for run, row in got.items() if row[4] == "invalid"} == omitted


def test_file_source_reports_nothing_but_journals_and_locks() -> None:
    """file/ holds only ``<id>.json`` and ``<id>.lock``: nothing to report about the source."""
    assert FileBackend(CORPUS / "file").source_findings() == []


def test_file_reads_give_the_runtimes_last_seq_and_records() -> None:
    backend = FileBackend(CORPUS / "file")
    for entry in expected("file"):
        read = backend.read_run(entry["store_id"])
        assert read.complete
        assert read.last_seq == entry["last_seq"], entry["path"]
        assert [stored.position for stored in read.records] == list(range(1, len(read.records) + 1))
        assert read.updated is not None


def test_broken_journals_are_refused_or_read_as_the_runtime_does() -> None:
    """Every mutated journal: the reader refuses (strict) exactly the interior corruption the runtime's reader
    refuses with "line N", and drops a torn tail where the runtime does."""
    backend = FileBackend(CORPUS / "broken")
    for entry in expected("broken"):
        run = entry["store_id"]
        error = entry["error"] or ""
        lenient = backend.read_run(run, strict=False)
        refused_by_reader = "corrupt record sequence: line " in error
        assert lenient.complete is not refused_by_reader, entry["path"]
        torn = any(f.code == "torn_tail" for f in lenient.findings)
        assert torn == bool(entry.get("dropped_torn_tail")), entry["path"]
        if "last_seq" in entry and not refused_by_reader:
            assert lenient.last_seq == entry["last_seq"], entry["path"]


# -- JetStream: the runtime's stream replayed -----------------------------------------------------------------


def assert_folds_as_the_runtime(records: list[Record], entry: dict[str, Any]) -> FoldResult:
    """The strict fold of ``records``, equal field by field to the state the runtime's load gave (``entry``)."""
    result = fold(records, run=entry["store_id"])
    assert result.state is not None
    got, want = result.state.to_go_json(), entry["state"]
    assert set(got) == set(want)
    for field in want:
        assert got[field] == want[field], f"{entry['store_id']}: {field} differs"
    return result


def _replay(dump: Path, nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[JetStreamBackend]:
    """A stream of the dump's configuration holding the dump's messages (subjects, headers, bodies) in order.

    Its name is the test's own; its subjects are the dump's, so the stream is removed before anything else on
    this server could want them."""
    lines = [json.loads(line) for line in dump.read_text().splitlines() if line]
    config: dict[str, Any] = dict(lines[0]["info"]["config"])
    config.pop("metadata", None)
    config["name"] = unique_stream()[0]
    nats_admin.create_stream(config)
    try:
        for message in [line for line in lines if line["kind"] == "msg"]:
            headers = {name: values[-1] for name, values in (message["headers"] or {}).items()}
            body = message["data"].encode() if "data" in message else base64.b64decode(message["data_b64"])
            ack = json.loads(nats_admin.request(message["subject"], body, headers).data)
            assert ack.get("seq") == message["seq"], ack
        with pytest.warns(Warning):  # the runtime's streams have direct get off: journaltools says it reads slower
            backend = open_jetstream_source(f"{nats_server.url}/{config['name']}", options=TEST_OPTIONS)
        yield backend
        backend.close()
    finally:
        nats_admin.delete_stream(config["name"])


@pytest.fixture(scope="module")
def replayed(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[JetStreamBackend]:
    """The August corpus's stream (subjects ``fisk.sessions.>``) replayed message for message."""
    yield from _replay(CORPUS / "nats-dump.jsonl", nats_server, nats_admin)


def test_stream_binds_as_the_runtime_binds_it(replayed: JetStreamBackend) -> None:
    assert replayed.prefix == "fisk.sessions"
    assert replayed.source_findings() == []


def test_jetstream_listing_equals_the_runtimes(replayed: JetStreamBackend) -> None:
    got = listing_rows(replayed.listing())
    want = runtime_rows("listing-jetstream.jsonl")
    assert {run: row for run, row in got.items() if row[4] != "invalid"} == want
    # The runtime's listing drops only the version-2 journal; journaltools lists it as invalid.
    assert {run for run, row in got.items() if row[4] == "invalid"} == {"3IFJ0ydR80CR95kPTqm7HTd4xis"}


def test_jetstream_listing_updated_is_the_last_message_time(replayed: JetStreamBackend) -> None:
    """``Updated`` is the server time of the run's last message (replayed, so today's time, not the dump's)."""
    for row in replayed.listing():
        read = replayed.read_run(row.run, strict=False)
        last = max(read.records, key=lambda stored: stored.position)
        assert row.updated == last.time == read.updated, row.run


@pytest.mark.parametrize("entry", expected("jetstream"), ids=lambda entry: entry["store_id"])
def test_read_and_fold_equals_the_runtimes_load(replayed: JetStreamBackend, entry: dict[str, Any]) -> None:
    read = replayed.read_run(entry["store_id"])
    assert read.complete
    assert all(stored.time is not None for stored in read.records)
    assert [stored.record.seq for stored in read.records] == sorted(stored.record.seq for stored in read.records)
    if not entry["ok"]:
        with pytest.raises(FoldError):
            fold(read.typed(), run=entry["store_id"])
        return
    result = assert_folds_as_the_runtime(read.typed(), entry)
    assert result.state is not None and result.state.completed() == entry["completed"]


# -- the newest line's stream replayed ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replayed_newest(nats_server: EmbeddedServer, nats_admin: NatsAdmin) -> Iterator[JetStreamBackend]:
    """The newest corpus's ``NEWEST`` stream (subjects ``newest.>``) replayed message for message."""
    yield from _replay(NEWEST_CORPUS / "nats-dump.jsonl", nats_server, nats_admin)


def newest_runtime_rows(name: str) -> dict[str, dict[str, Any]]:
    return {row["run_id"]: row for row in jsonl(NEWEST_CORPUS / name) if row.get("call") == "List(ListFilter{})"}


def test_newest_jetstream_listing_equals_the_runtimes(replayed_newest: JetStreamBackend) -> None:
    assert replayed_newest.prefix == "newest"
    want = newest_runtime_rows("listing-jetstream.jsonl")
    got = {row.run: row for row in replayed_newest.listing()}
    assert got.keys() == want.keys()
    for run, row in want.items():
        ours = got[run]
        assert ours.generation == "newest" and ours.status == (row["terminal"] or "open"), run
        assert (ours.agent, ours.caller, ours.ended, ours.created) == (
            row["agent"],
            row["caller"],
            row["ended"],
            row["created"],
        ), run
        if ours.updated_text is not None:  # the last record's own time; a replay restamps only the store's
            assert ours.updated_text == row["updated"], run


@pytest.mark.parametrize("entry", expected("jetstream", newest=True), ids=lambda entry: entry["store_id"])
def test_newest_read_and_fold_equals_the_runtimes_load(
    replayed_newest: JetStreamBackend, entry: dict[str, Any]
) -> None:
    read = replayed_newest.read_run(entry["store_id"])
    assert read.complete and all(stored.noncanonical is None for stored in read.records)
    if not entry["ok"]:
        with pytest.raises(FoldError):
            fold(read.typed(), run=entry["store_id"])
        return
    result = assert_folds_as_the_runtime(read.typed(), entry)
    assert result.state is not None and result.state.reopened == entry["reopened"]


def test_newest_file_and_stream_listings_compare_without_the_august_disagreement(
    replayed_newest: JetStreamBackend,
) -> None:
    from journaltools.audits.listings import compare_runs

    files = FileBackend(NEWEST_CORPUS / "file")
    rows = {row.run: row for row in compare_runs(files.listing(), replayed_newest.listing(), "file", "jetstream")}
    assert {row.verdict for row in rows.values()} <= {"agree", "summary_rule", "discrepancy", "missing_b"}
    assert not any(row.verdict == "documented" for row in rows.values())
    file_rows, stream_rows = newest_runtime_rows("listing-file.jsonl"), newest_runtime_rows("listing-jetstream.jsonl")
    for run, row in rows.items():
        if run in file_rows and run in stream_rows and file_rows[run]["updated"] == stream_rows[run]["updated"]:
            assert row.verdict == "agree", (run, row.explanation)
        elif row.verdict == "discrepancy":
            # Each backend dated its own copy of a record the runtime dates itself (the meta record, an answer).
            assert "different bytes" in row.explanation and file_rows[run]["updated"] != stream_rows[run]["updated"]


def test_pages_of_the_newest_jetstream_listing_are_the_runtimes(replayed_newest: JetStreamBackend) -> None:
    """The JetStream backend pages by the stream sequence of each run's meta message."""
    from journaltools.errors import InvalidPage
    from journaltools.sources.listing import list_page

    rows = replayed_newest.listing()
    calls = [row for row in jsonl(NEWEST_CORPUS / "listing-jetstream.jsonl") if row.get("call") == "ListPage"]
    cursor = ""
    for call in [call for call in calls if "page" in call]:
        page, cursor = list_page(rows, limit=call["limit"], cursor=cursor)
        assert [row.run for row in page] == (call["run_ids"] or []), call["page"]
        assert (cursor == "") == call["cursor_empty"], call["page"]
    for call in [call for call in calls if "error" in call]:
        with pytest.raises(InvalidPage) as refused:
            list_page(rows, limit=call.get("limit", 7), cursor=call.get("cursor", ""))
        assert str(refused.value) == call["error"]


def _tables_the_same_natively_and_in_python(backend: JetStreamBackend) -> None:
    reads = backend.read_runs(backend.list_runs(), strict=False)
    assert any(native_fold.usable_first(read) is not None for read in reads)
    ours = load(backend, strict=False, progress=False, workers=1)
    with native_fold.disabled():
        reference = load(backend, strict=False, progress=False, workers=1)
    same_tables(ours, reference)


def test_a_stream_tables_the_same_natively_and_in_python(replayed: JetStreamBackend) -> None:
    """A stream's canonical bodies take the native fold too (joined one per line): the tables are the reference's."""
    _tables_the_same_natively_and_in_python(replayed)


def test_a_newest_stream_tables_the_same_natively_and_in_python(replayed_newest: JetStreamBackend) -> None:
    _tables_the_same_natively_and_in_python(replayed_newest)
