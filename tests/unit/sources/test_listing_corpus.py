"""Both listing rules and the comparison against the listings the runtime's two backends returned."""

from __future__ import annotations

import base64
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from journaltools.audits.listings import compare_runs
from journaltools.errors import UndecodableLine
from journaltools.protocol.decode import decode_line
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.journal import journal_generation
from journaltools.protocol.kinds import Record
from journaltools.sources.listing import RunSummary, summarize_file, summarize_stream
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS, jsonl


@dataclass(frozen=True)
class Stored:
    record: Record
    raw: bytes
    time: datetime | None = None


#: The modification time the newest tests give every journal: a row dated by it took the mtime rule.
MTIME = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def file_listing(corpus: Path = CORPUS) -> dict[str, RunSummary]:
    rows = {}
    for path in sorted((corpus / "file").glob("*.json")):
        lines = [line for line in path.read_bytes().split(b"\n") if line]
        generation = journal_generation(lines[0] if lines else None)
        stored = [Stored(decode_line(line, generation).record, line) for line in lines]
        rows[path.stem] = summarize_file(path.stem, stored, updated=MTIME if corpus is NEWEST_CORPUS else None)
    return rows


def stream_listing(corpus: Path = CORPUS, prefix: str = "fisk.sessions.") -> dict[str, RunSummary]:
    """The JetStream rule over the stream the runtime wrote (nats-dump.jsonl): the ``_meta`` message and the
    last message of each run's subjects."""
    messages = [entry for entry in jsonl(corpus / "nats-dump.jsonl") if entry["kind"] == "msg"]
    by_run: dict[str, list[dict[str, object]]] = defaultdict(list)
    for message in messages:
        run = str(message["subject"])[len(prefix) :].rsplit(".", 1)[0]
        by_run[run].append(message)
    rows = {}
    for run, run_messages in by_run.items():
        meta = next((m for m in run_messages if str(m["subject"]).endswith("._meta")), None)
        last = max(run_messages, key=lambda m: int(str(m["seq"])))
        rows[run] = summarize_stream(run, _stored(meta), _stored(last))
    return rows


def _stored(message: dict[str, object] | None) -> Stored | None:
    if message is None:
        return None
    data = str(message["data"]).encode()
    time = datetime.fromisoformat(str(message["time"])[:26].rstrip("Z") + "+00:00")
    try:
        return Stored(decode_line(data).record, data, time)
    except UndecodableLine:
        return None


def _data_of(message: dict[str, object]) -> bytes:
    data = message["data"]
    return base64.b64decode(str(data)) if message.get("encoding") == "base64" else str(data).encode()


def runtime_rows(name: str) -> dict[str, dict[str, object]]:
    return {str(row["RunID"]): row for row in jsonl(name)}


@pytest.mark.parametrize(
    ("name", "listing"), [("listing-file.jsonl", file_listing), ("listing-jetstream.jsonl", stream_listing)]
)
def test_each_rule_lists_what_the_runtime_listed(name: str, listing: object) -> None:
    want = runtime_rows(name)
    got = listing()  # type: ignore[operator]
    for run, row in want.items():
        ours = got[run]
        assert ours.status == (row["Terminal"] or "open"), run
        assert ours.created == row["Created"], run
        assert ours.model == row["Model"], run
        assert ours.prompt == row["Prompt"], run
        assert ours.meta_run_id == row["RunID"], run
    # What the runtime omits, journaltools lists as invalid, saying why.
    for run in got.keys() - want.keys():
        assert got[run].status == "invalid" and got[run].problem, run


def test_the_comparison_explains_every_difference_and_finds_no_discrepancy() -> None:
    compared = {
        row.run: row
        for row in compare_runs(list(file_listing().values()), list(stream_listing().values()), "file", "jetstream")
    }
    file_rows, stream_rows = runtime_rows("listing-file.jsonl"), runtime_rows("listing-jetstream.jsonl")
    assert [row for row in compared.values() if row.verdict == "discrepancy"] == []
    for run, row in compared.items():
        in_file, in_stream = file_rows.get(run), stream_rows.get(run)
        if in_file is not None and in_stream is not None:
            differs = in_file["Terminal"] != in_stream["Terminal"]
            assert (row.verdict != "agree") == differs, run
            if differs:
                assert row.verdict == "summary_rule", (run, row.explanation)
        elif in_stream is not None:
            # The runtime's file listing drops a journal its fold refuses: journaltools lists it invalid.
            assert row.verdict == "summary_rule" and row.status_a == "invalid", run
        else:
            # Dropped by both runtime listings (meta version 2): invalid on both sides here.
            assert row.verdict == "agree" and row.status_a == row.status_b == "invalid", run


# --- the newest line's listings ------------------------------------------------------------------------------------


def newest_rows(name: str) -> dict[str, dict[str, object]]:
    """``List(ListFilter{})`` as the newest build returned it, by run id (the corpus's own keys)."""
    return {str(row["run_id"]): row for row in jsonl(NEWEST_CORPUS / name) if row.get("call") == "List(ListFilter{})"}


def _summary_json(row: RunSummary) -> object:
    import json

    return None if row.summary is None else json.loads(encode_go_json(row.summary))


@pytest.mark.parametrize(
    ("name", "listing"),
    [
        ("listing-file.jsonl", lambda: file_listing(NEWEST_CORPUS)),
        ("listing-jetstream.jsonl", lambda: stream_listing(NEWEST_CORPUS, "newest.")),
    ],
)
def test_each_rule_lists_newest_journals_as_the_newest_runtime_did(name: str, listing: object) -> None:
    want = newest_rows(name)
    got = listing()  # type: ignore[operator]
    assert len(want) >= 27
    for run, row in want.items():
        ours = got[run]
        assert ours.generation == "newest", run
        assert ours.status == (row["terminal"] or "open"), run
        assert (ours.created, ours.model, ours.prompt) == (row["created"], row["model"], row["prompt"]), run
        assert (ours.agent, ours.caller) == (row["agent"], row["caller"]), run
        assert ours.ended == row["ended"], run
        assert _summary_json(ours) == row["summary"], run
        updated = ours.to_json()["updated"]
        if ours.updated_text is not None:
            assert updated == row["updated"], run  # the last record's own time, to the nanosecond
        elif "file" in name:
            assert ours.updated == MTIME, run  # an undated last record: the file's modification time
        else:
            assert str(row["updated"]).startswith(str(updated).rstrip("Z")[:26]), run  # the store's time
    for run in got.keys() - want.keys():
        assert got[run].status == "invalid" and got[run].problem, run


def test_newest_journals_list_alike_on_both_backends_and_compare_as_agreeing() -> None:
    """With Ending() on both backends, the disagreement the August build documents does not exist for the newest
    line: every run both runtime listings name agrees; the one the file rule refuses is the summary rule."""
    compared = compare_runs(
        list(file_listing(NEWEST_CORPUS).values()),
        list(stream_listing(NEWEST_CORPUS, "newest.").values()),
        "file",
        "jetstream",
    )
    file_rows, stream_rows = newest_rows("listing-file.jsonl"), newest_rows("listing-jetstream.jsonl")
    by_run = {row.run: row for row in compared}
    for run in file_rows.keys() & stream_rows.keys():
        if file_rows[run]["updated"] != stream_rows[run]["updated"]:
            # The last record is one the runtime dates itself (the meta record, an answer): each backend stamped
            # its own copy, so the two stores really hold different bytes (the corpus's MANIFEST says so).
            assert by_run[run].verdict == "discrepancy" and "different bytes" in by_run[run].explanation, run
            continue
        assert by_run[run].verdict == "agree", (run, by_run[run].explanation)
    for run in stream_rows.keys() - file_rows.keys():
        assert by_run[run].verdict == "summary_rule" and by_run[run].status_a == "invalid", run
    # The mixed journal was written to the file backend only.
    assert {row.verdict for row in compared if row.run not in stream_rows} == {"missing_b"}


# -- the newest runtime's pages and Describe ------------------------------------------------------------------------


def newest_calls(name: str, call: str) -> list[dict[str, object]]:
    return [row for row in jsonl(NEWEST_CORPUS / name) if row.get("call") == call]


def test_pages_and_describe_of_the_file_listing_are_the_newest_runtimes() -> None:
    from journaltools.errors import InvalidPage
    from journaltools.sources.file import FileBackend
    from journaltools.sources.listing import describe, list_page

    rows = FileBackend(NEWEST_CORPUS / "file").listing()
    cursor = ""
    pages = [call for call in newest_calls("listing-file.jsonl", "ListPage") if "page" in call]
    assert len(pages) == 5
    for call in pages:
        page, cursor = list_page(rows, limit=int(str(call["limit"])), cursor=cursor)
        assert [row.run for row in page] == (call["run_ids"] or []), call["page"]
        assert (cursor == "") == call["cursor_empty"], call["page"]
    for call in newest_calls("listing-file.jsonl", "ListPage"):
        if "error" in call:
            with pytest.raises(InvalidPage) as refused:
                list_page(rows, limit=int(str(call.get("limit", 7))), cursor=str(call.get("cursor", "")))
            assert str(refused.value) == call["error"]
    (asked,) = newest_calls("listing-file.jsonl", "Describe")
    described = describe(rows, [str(run) for run in asked["ids"]])  # type: ignore[attr-defined]
    assert [row.run for row in described] == [row["run_id"] for row in asked["rows"]]  # type: ignore[attr-defined]
