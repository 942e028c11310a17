"""Both listing rules and the comparison against the listings the runtime's two backends returned."""

from __future__ import annotations

import base64
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import pytest

from journaltools.compare import compare_runs
from journaltools.errors import UndecodableLine
from journaltools.listing import RunSummary, summarize_file, summarize_stream
from journaltools.protocol.decode import decode_line
from journaltools.protocol.kinds import Record
from tests.runstate_corpus import CORPUS, jsonl


@dataclass(frozen=True)
class Stored:
    record: Record
    raw: bytes
    time: datetime | None = None


def file_listing() -> dict[str, RunSummary]:
    rows = {}
    for path in sorted((CORPUS / "file").glob("*.json")):
        stored = [Stored(decode_line(line).record, line) for line in path.read_bytes().split(b"\n") if line]
        rows[path.stem] = summarize_file(path.stem, stored, updated=None)
    return rows


def stream_listing() -> dict[str, RunSummary]:
    """The JetStream rule over the stream the runtime wrote (nats-dump.jsonl): the ``_meta`` message and the
    last message of each run's subjects."""
    messages = [entry for entry in jsonl("nats-dump.jsonl") if entry["kind"] == "msg"]
    prefix = "fisk.sessions."
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
    time = datetime.fromisoformat(str(message["time"])[:26] + "+00:00")
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
