"""The backend contract, written once: every backend must pass ``BackendContract``.

Subclass it (with a name starting ``Test``), provide a ``backend`` fixture that yields an empty backend, and
say how the backend differs where the protocol lets it: whether a second writer is refused when it opens
(file: flock) or at its first append behind another writer (JetStream), and which listing rule it uses.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import ClassVar, Literal

import pytest

from journaltools.aio import run_sync
from journaltools.backends.base import AppendVerdictTaken, Backend, RunSummary
from journaltools.errors import (
    AnotherWriter,
    InvalidRunId,
    JournalLocked,
    RecordRefused,
    RunNotFound,
    SequenceGap,
    WriterConflict,
)
from journaltools.listing import summarize_two_records
from journaltools.protocol.records import encode_record
from tests.builders import JournalBuilder

#: Valid records whose bytes are not what journaltools would write: spacing, key order, escapes, non-ASCII.
ODD_BYTES = [
    b'{"seq": 2, "type": "user", "run": "odd", "ts": "2026-11-29T10:00:00Z", "content": "caf\\u00e9 \xf0\x9f\x9a\x80"}',
    b'{"type":"note","run":"odd","seq":3,"ts":"2026-11-29T10:00:01.5Z","text":"tab\\there","optional":true,"x":[1]}',
    b'{ "type" : "user" , "run" : "odd" , "seq" : 4 , "ts" : "2026-11-29T10:00:02Z" , '
    b'"content" : [ { "type" : "text" , "text" : "odd spacing" } ] }',
]


def stored(backend: Backend, run: str) -> list[bytes]:
    """The bytes of every stored record of ``run`` (none when the backend has no journal for it)."""
    try:
        return [record.raw for record in backend.read_run(run).records]
    except RunNotFound:
        return []


def write_journal(backend: Backend, journal: JournalBuilder) -> None:
    with backend.open_writer(journal.run) as writer:
        for record in journal.raw():
            assert writer.append(record.raw).outcome is AppendVerdictTaken.STORED


class BackendContract:
    """What every backend guarantees (PROTOCOL.md sections 3 and 5)."""

    exclusive_writers: ClassVar[bool]
    """True: a second writer is refused when it opens. False: it opens, and a conflict is refused at append."""
    listing_rule: ClassVar[Literal["fold", "two_records"]]

    # -- round trips -----------------------------------------------------------------------------

    def test_round_trip_is_byte_identical(self, backend: Backend) -> None:
        journal = JournalBuilder("odd")
        meta = journal.raw()[0].raw
        with backend.open_writer("odd") as writer:
            results = [writer.append(raw) for raw in [meta, *ODD_BYTES]]
        assert [result.seq for result in results] == [1, 2, 3, 4]
        assert {result.outcome for result in results} == {AppendVerdictTaken.STORED}
        read = backend.read_run("odd")
        assert [record.raw for record in read.records] == [meta, *ODD_BYTES]
        assert read.complete and read.findings == []
        positions = [record.position for record in read.records]
        assert positions == sorted(positions) and len(set(positions)) == 4

    def test_dict_records_are_written_as_canonical_bytes(self, backend: Backend) -> None:
        journal = JournalBuilder("dicts").user("hi").assistant(text="hello")
        with backend.open_writer("dicts") as writer:
            for body in journal.bodies:
                writer.append(body)
        assert [record.raw for record in backend.read_run("dicts").records] == [
            encode_record(body) for body in journal.bodies
        ]

    def test_writer_advances_last_seq_only_on_store(self, backend: Backend) -> None:
        journal = JournalBuilder("advance").user("one")
        with backend.open_writer("advance") as writer:
            assert writer.last_seq == 0
            writer.append(journal.bodies[0])
            assert writer.last_seq == 1
            with pytest.raises(RecordRefused):
                writer.append({**journal.bodies[1], "content": 42})  # schema violation
            assert writer.last_seq == 1
            writer.append(journal.bodies[1])
            assert writer.last_seq == 2

    def test_async_and_blocking_faces_agree(self, backend: Backend) -> None:
        write_journal(backend, JournalBuilder("faces").user())
        assert run_sync(backend.read_run_async("faces")).records[1].raw == backend.read_run("faces").records[1].raw
        assert run_sync(backend.list_runs_async()) == backend.list_runs()

    def test_blocking_face_works_inside_a_running_event_loop(self, backend: Backend) -> None:
        """A notebook cell runs inside the kernel's loop: the blocking calls must still work there."""
        write_journal(backend, JournalBuilder("in-loop").user())

        async def notebook_cell() -> list[str]:
            return [record.type or "" for record in backend.read_run("in-loop").records]

        assert asyncio.run(notebook_cell()) == ["meta", "user"]

    # -- CheckAppend -----------------------------------------------------------------------------

    def test_duplicate_is_skipped(self, backend: Backend) -> None:
        journal = JournalBuilder("dup").user("first")
        write_journal(backend, journal)
        with backend.open_writer("dup") as writer:
            again = writer.append({**journal.bodies[1], "content": "something else"})
            assert again.outcome is AppendVerdictTaken.DUPLICATE and again.seq == 2
            assert writer.append(journal.bodies[0]).outcome is AppendVerdictTaken.DUPLICATE
        assert [record.raw for record in backend.read_run("dup").records] == [r.raw for r in journal.raw()]

    def test_gap_is_refused_and_nothing_written(self, backend: Backend) -> None:
        journal = JournalBuilder("gap").user().user()
        with backend.open_writer("gap") as writer:
            writer.append(journal.bodies[0])
            with pytest.raises(SequenceGap) as refused:
                writer.append(journal.bodies[2])
            assert refused.value.seq == 3 and refused.value.last == 1
            assert writer.append(journal.bodies[1]).outcome is AppendVerdictTaken.STORED
        assert [record.seq for record in backend.read_run("gap").records] == [1, 2]

    def test_reopened_writer_continues_after_the_last_record(self, backend: Backend) -> None:
        journal = JournalBuilder("reopen").user().assistant()
        with backend.open_writer("reopen") as writer:
            writer.append(journal.bodies[0])
            writer.append(journal.bodies[1])
        with backend.open_writer("reopen") as writer:
            assert writer.last_seq == 2
            assert writer.append(journal.bodies[1]).outcome is AppendVerdictTaken.DUPLICATE
            assert writer.append(journal.bodies[2]).outcome is AppendVerdictTaken.STORED
        assert len(backend.read_run("reopen").records) == 3

    # -- what a writer refuses --------------------------------------------------------------------

    def test_first_record_must_be_meta(self, backend: Backend) -> None:
        journal = JournalBuilder("nometa", meta=False).user()
        with backend.open_writer("nometa") as writer, pytest.raises(RecordRefused) as refused:
            writer.append(journal.bodies[0])
        assert refused.value.code == "not_meta_first"
        assert stored(backend, "nometa") == []

    def test_meta_only_at_seq_one(self, backend: Backend) -> None:
        journal = JournalBuilder("twometa").add(
            "meta", version=1, fingerprint=JournalBuilder().bodies[0]["fingerprint"]
        )
        with backend.open_writer("twometa") as writer:
            writer.append(journal.bodies[0])
            with pytest.raises(RecordRefused) as refused:
                writer.append(journal.bodies[1])
        assert refused.value.code == "not_meta_first"

    def test_other_protocol_versions_are_refused(self, backend: Backend) -> None:
        journal = JournalBuilder("v2")
        with backend.open_writer("v2") as writer, pytest.raises(RecordRefused) as refused:
            writer.append({**journal.bodies[0], "version": 2})
        assert refused.value.code == "version_mismatch"

    @pytest.mark.parametrize(
        ("mutate", "code"),
        [
            (lambda body: {**body, "content": [{"type": "image"}]}, "schema_violation"),
            (lambda body: {**body, "run": "someone-else"}, "run_mismatch"),
            (lambda body: {**body, "type": "mystery"}, "unknown_type"),
            (lambda body: {**body, "ts": "yesterday"}, "schema_violation"),
        ],
    )
    def test_invalid_records_are_refused(self, backend: Backend, mutate: object, code: str) -> None:
        journal = JournalBuilder("bad").user()
        assert callable(mutate)
        with backend.open_writer("bad") as writer:
            writer.append(journal.bodies[0])
            with pytest.raises(RecordRefused) as refused:
                writer.append(mutate(journal.bodies[1]))
            assert refused.value.code == code
        assert len(backend.read_run("bad").records) == 1

    @pytest.mark.parametrize("raw", [b"not json", b'["a", "list"]', b'{"type":"user",\n"run":"bad"}'])
    def test_bytes_that_are_not_one_record_are_refused(self, backend: Backend, raw: bytes) -> None:
        with backend.open_writer("bad") as writer, pytest.raises(RecordRefused):
            writer.append(raw)
        assert stored(backend, "bad") == []

    # -- the raw path (migration): bytes as stored, CheckAppend still holds ---------------------------

    def test_raw_append_copies_records_that_break_the_schema(self, backend: Backend) -> None:
        journal = JournalBuilder("as-stored").user()
        newer_meta = encode_record({**journal.bodies[0], "version": 2})
        no_usage = encode_record({"type": "assistant", "run": "as-stored", "seq": 3, "ts": "t", "content": []})
        with backend.open_writer("as-stored") as writer:
            with pytest.raises(RecordRefused):  # the runtime's append still validates
                writer.append(newer_meta)
            assert writer.append_raw(newer_meta).outcome is AppendVerdictTaken.STORED
            writer.append_raw(journal.raw()[1].raw)
            with pytest.raises(RecordRefused) as refused:
                writer.append(no_usage)
            assert refused.value.code == "schema_violation"
            assert writer.append_raw(no_usage).outcome is AppendVerdictTaken.STORED
            assert writer.append_raw(no_usage).outcome is AppendVerdictTaken.DUPLICATE
            assert writer.last_seq == 3
        assert stored(backend, "as-stored") == [newer_meta, journal.raw()[1].raw, no_usage]

    @pytest.mark.parametrize(
        ("raw", "error"),
        [
            (b'{"type":"note","run":"raw","seq":3,"ts":"t","text":"skips seq 2"}', SequenceGap),
            (b'{"type":"note","run":"other","seq":2,"ts":"t","text":"another run"}', RecordRefused),
            (b'{"type":"note","run":"raw","ts":"t","text":"no seq"}', RecordRefused),
            (b'{"type":"note","run":"raw","seq":"2","ts":"t","text":"seq as text"}', RecordRefused),
            (b'{"type":"note","run":"raw",\n"seq":2,"ts":"t","text":"two lines"}', RecordRefused),
            (b"not json", RecordRefused),
        ],
    )
    def test_raw_append_still_enforces_check_append_one_line_and_the_run(
        self, backend: Backend, raw: bytes, error: type[Exception]
    ) -> None:
        first = JournalBuilder("raw").raw()[0].raw
        with backend.open_writer("raw") as writer:
            writer.append_raw(first)
            with pytest.raises(error):
                writer.append_raw(raw)
            assert writer.last_seq == 1
        assert stored(backend, "raw") == [first]

    @pytest.mark.parametrize("run", ["", "../etc", "a.b", "a b", "-leading", "x" * 129, "a*", "a>"])
    def test_run_ids_are_validated(self, backend: Backend, run: str) -> None:
        with pytest.raises(InvalidRunId):
            backend.open_writer(run)
        with pytest.raises(InvalidRunId):
            backend.read_run(run)

    def test_missing_run_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(RunNotFound):
            backend.read_run("never-written")

    # -- one writer per run ------------------------------------------------------------------------

    def test_a_second_writer_is_refused(self, backend: Backend) -> None:
        journal = JournalBuilder("two-writers").user()
        claim = JournalBuilder("two-writers").add("claim", seq=2, worker="second")
        first = backend.open_writer("two-writers")
        try:
            first.append(journal.bodies[0])
            if self.exclusive_writers:
                with pytest.raises(JournalLocked):
                    backend.open_writer("two-writers")
                return
            with backend.open_writer("two-writers") as second:
                assert second.last_seq == 1
                second.append(claim.bodies[1])  # the second worker's claim moves the tail
            with pytest.raises(AnotherWriter) as refused:
                first.append(journal.bodies[1])
            assert isinstance(refused.value, WriterConflict) and refused.value.seq == 2
            assert first.last_seq == 1
        finally:
            first.close()
        assert [record.type for record in backend.read_run("two-writers").records] == ["meta", "claim"]

    # -- listing ---------------------------------------------------------------------------------

    def test_list_runs_is_sorted_and_complete(self, backend: Backend) -> None:
        for run in ["b-run", "a-run", "c-run", "A-run", "9-run"]:
            write_journal(backend, JournalBuilder(run).user())
        assert backend.list_runs() == sorted(["b-run", "a-run", "c-run", "A-run", "9-run"])
        assert [read.run for read in backend.read_runs(["c-run", "a-run"])] == ["c-run", "a-run"]

    def test_listing(self, backend: Backend) -> None:
        journals = {
            "completed": JournalBuilder("completed").user().assistant(),
            "in-flight": JournalBuilder("in-flight").user().assistant("call-1"),
            "waiting-model": JournalBuilder("waiting-model").user(),
            "suspended": JournalBuilder("suspended")
            .user()
            .assistant("c1")
            .add("deferral", call="c1", reason="approval"),
            "failed": JournalBuilder("failed").user().add("error", where="provider", message="boom", fatal=True),
            "cancelled": JournalBuilder("cancelled").user().add("cancel", by="alice", reason="stop"),
            "answered": JournalBuilder("answered").user().assistant("c1").result("c1"),
        }
        for journal in journals.values():
            write_journal(backend, journal)
        rows = {row.run: row for row in backend.listing()}
        assert sorted(rows) == sorted(journals)
        in_flight = "open" if self.listing_rule == "fold" else "completed"  # the documented disagreement
        expected = {
            "completed": "completed",
            "in-flight": in_flight,
            "waiting-model": "open",
            "suspended": "suspended",
            "failed": "failed",
            "cancelled": "cancelled",
            "answered": "open",
        }
        assert {run: row.status for run, row in rows.items()} == expected
        for run, journal in journals.items():
            row: RunSummary = rows[run]
            assert row.last_seq == journal.seq
            assert row.created == journal.bodies[0]["ts"]
            assert row.model == journal.bodies[0]["fingerprint"]["model"]
            assert row.records in (None, len(journal.bodies))
        assert rows["in-flight"].last_type == "assistant" and rows["in-flight"].last_has_calls
        assert rows["in-flight"].to_json()["status"] == in_flight
        for run, journal in journals.items():  # what a comparison needs to show two sides hold the same records
            records = journal.raw()
            assert rows[run].first_sha256 == hashlib.sha256(records[0].raw).hexdigest()
            assert rows[run].last_sha256 == hashlib.sha256(records[-1].raw).hexdigest()
            assert rows[run].two_record_status == summarize_two_records(run, records[0], records[-1]).status
        assert rows["in-flight"].two_record_status == "completed"

    def test_lenient_read_of_a_good_run_is_complete(self, backend: Backend) -> None:
        write_journal(backend, JournalBuilder("good").user())
        read = backend.read_run("good", strict=False)
        assert read.complete and len(read.records) == 2
