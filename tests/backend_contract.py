"""One suite both backends must pass (tests/integration/test_backend_contract.py runs it over files and a real
nats-server).

The contract of ``journaltools.sources.base``: create writes meta at seq 1 and refuses an existing run; resume
continues from the last stored seq; CheckAppend skips a duplicate seq without writing and refuses a gap; bytes
stored by ``append`` are the Go encoder's and ``append_raw`` stores bytes unchanged; reads give every record in
order with its position; the listing applies the backend's own rule.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from journaltools.errors import RunExists, RunNotFound, SequenceGap, WriterConflict
from journaltools.protocol.encode import encode_record
from journaltools.sources.base import AppendOutcome, Backend
from tests.backend_records import meta, terminal, user


class BackendContract:
    #: File: a second writer is refused when it opens (the flock); JetStream: at its first append (the fence).
    exclusive_writers: ClassVar[bool]
    kind: ClassVar[str]

    def test_create_then_read(self, backend: Backend) -> None:
        with backend.create_journal("r1", meta("r1")) as writer:
            assert writer.last_seq == 1
            assert writer.append(user(2)).outcome is AppendOutcome.STORED
            writer.append(terminal(3))
        read = backend.read_run("r1")
        assert read.complete and read.last_seq == 3
        assert [stored.record.seq for stored in read.records] == [1, 2, 3]
        assert [stored.raw for stored in read.records] == [
            encode_record(record) for record in (read.records[0].record, user(2), terminal(3))
        ]
        assert read.records[0].record.meta == meta("r1")
        assert all(stored.noncanonical is None for stored in read.records)
        assert (read.records[0].time is None) == (self.kind == "file")
        assert read.updated is not None
        assert backend.list_runs() == ["r1"]

    def test_create_refuses_an_existing_run(self, backend: Backend) -> None:
        backend.create_journal("r1", meta("r1")).close()
        with pytest.raises(RunExists):
            backend.create_journal("r1", meta("r1"))

    def test_open_a_missing_run(self, backend: Backend) -> None:
        with pytest.raises(RunNotFound):
            backend.open_writer("nope")
        with pytest.raises(RunNotFound):
            backend.read_run("nope")

    def test_resume_continues_from_the_last_seq(self, backend: Backend) -> None:
        with backend.create_journal("r1", meta("r1")) as writer:
            writer.append(user(2))
        with backend.open_writer("r1") as writer:
            assert writer.last_seq == 2
            writer.append(terminal(3))
        assert backend.read_run("r1").last_seq == 3

    def test_check_append(self, backend: Backend) -> None:
        with backend.create_journal("r1", meta("r1")) as writer:
            writer.append(user(2))
            # A duplicate seq is skipped without writing or comparing content, as the runtime does.
            assert writer.append(terminal(2)).outcome is AppendOutcome.DUPLICATE
            with pytest.raises(SequenceGap):
                writer.append(user(4))
            assert writer.last_seq == 2
        assert [s.record.kind for s in backend.read_run("r1").records] == ["meta", "user"]

    def test_append_raw_stores_bytes_unchanged(self, backend: Backend) -> None:
        odd = (
            b'{"seq":2, "protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[]}}}'
        )
        with backend.create_journal("r1", meta("r1")) as writer:
            assert writer.append_raw(odd).seq == 2
        read = backend.read_run("r1")
        assert read.records[1].raw == odd
        assert read.records[1].noncanonical is not None
        assert [f.code for f in read.findings] == ["noncanonical_line"]

    def test_second_writer(self, backend: Backend) -> None:
        first = backend.create_journal("r1", meta("r1"))
        try:
            if self.exclusive_writers:
                with pytest.raises(WriterConflict):
                    backend.open_writer("r1")
            else:
                second = backend.open_writer("r1")
                second.append(user(2))
                with pytest.raises(WriterConflict):
                    first.append(user(2))
        finally:
            first.close()

    def test_listing_applies_the_backends_rule(self, backend: Backend) -> None:
        with backend.create_journal("done", meta("done")) as writer:
            writer.append(terminal(2))
            writer.append(user(3))  # the next turn in flight after a completed terminal
        with backend.create_journal("fresh", meta("fresh", "a prompt")):
            pass
        rows = {row.run: row for row in backend.listing()}
        assert rows["fresh"].status == "open" and rows["fresh"].prompt == "a prompt"
        assert rows["fresh"].model == "claude-sonnet-4-6"
        # The documented disagreement: the file rule folds (completed), the JetStream rule reads the last record.
        assert rows["done"].status == ("completed" if self.kind == "file" else "open")
        assert rows["done"].last_seq == 3

    def test_read_runs_in_order(self, backend: Backend) -> None:
        for run in ("b", "a", "c"):
            backend.create_journal(run, meta(run)).close()
        assert [read.run for read in backend.read_runs()] == ["a", "b", "c"]
        assert [read.run for read in backend.read_runs(["c", "a"])] == ["c", "a"]
