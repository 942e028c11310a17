"""``diff`` and ``grep`` across backends: a run and its JetStream copy (made by ``migrate``) are the same, byte
for byte, and every text found in the files is found in the stream."""

from __future__ import annotations

import journaltools as jt
from journaltools.ops.migrate import migrate
from journaltools.sources.jetstream import JetStreamBackend
from journaltools.sources.registry import open_source
from tests.paths import SAMPLES


def test_a_run_and_its_jetstream_copy_are_identical(jetstream: JetStreamBackend, jetstream_url: str) -> None:
    with open_source(str(SAMPLES)) as files:
        migrate(files, jetstream)
    for run in ("newest-completed-with-tools", "deferred-waiting", "newest-resumed-mid-batch"):
        result = jt.diff(str(SAMPLES), run, source_b=jetstream_url)
        assert result.a.source != result.b.source and result.b.source.startswith("nats://")
        assert result.same_records and result.identical, run
        assert result.first_divergence is None and result.gate is not None and result.gate.resumable
        assert result.times_compared == run.startswith("newest-")
    # A process run of the copy against the same one of the file journal: the same records too.
    segments = jt.diff(str(SAMPLES), "newest-resumed-mid-batch", source_b=jetstream_url, segments=(1, 1))
    assert segments.same_records and segments.identical


def test_grep_finds_the_same_texts_in_the_stream(jetstream: JetStreamBackend, jetstream_url: str) -> None:
    with open_source(str(SAMPLES)) as files:
        migrate(files, jetstream)
    # migrate leaves behind the journals the runtime would refuse; every other journal's texts are in both.
    copied = set(jetstream.list_runs())
    assert len(copied) > 30
    for pattern, ignore_case in (("ORDERS", False), ("orders", True), ("<", False), ('"', False)):
        in_files = jt.grep(pattern, str(SAMPLES), ignore_case=ignore_case)
        in_stream = jt.grep(pattern, jetstream_url, ignore_case=ignore_case)
        stream_rows = in_stream.table.drop_columns(["source"]).to_pylist()
        file_rows = [row for row in in_files.table.drop_columns(["source"]).to_pylist() if row["run"] in copied]
        key = lambda row: (row["run"], row["seq"], row["where"], row["snippet"])  # noqa: E731
        assert sorted(stream_rows, key=key) == sorted(file_rows, key=key), pattern
        assert in_stream.runs == len(copied)
