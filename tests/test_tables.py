"""The Arrow tables: schemas and values on the samples, strict and lenient loads, the records path against
the file backend's reader (examples and hypothesis), other sources, pandas."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.backends.file import FileBackend
from journaltools.errors import CorruptJournal, FoldError, RecordRefused, SourceError, VersionMismatch
from journaltools.fold import fold
from journaltools.generate import generate_corpus, journal_bytes, run_id
from journaltools.protocol.envelope import check_envelope
from journaltools.tables import (
    FINDINGS_SCHEMA,
    MESSAGES_SCHEMA,
    RECORDS_SCHEMA,
    RUNS_SCHEMA,
    SCHEMAS,
    TIMESTAMP,
    TOOL_CALLS_SCHEMA,
    Tables,
    findings_of,
    findings_table,
    load,
    timestamps,
)
from journaltools.tables.build import RecordColumns, tables_of_runs
from journaltools.tables.columns import with_source
from tests.builders import JournalBuilder
from tests.strategies import valid_runs

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
BROKEN_SAMPLES = {"corrupt-interior", "schema-violation", "version-mismatch"}


@pytest.fixture
def samples(samples_dir: Path) -> Path:
    return samples_dir


def exact_records(root: Path) -> Tables:
    """The records table as the file backend's reader gives it, run by run (no fast route)."""
    backend = FileBackend(root)
    columns = RecordColumns()
    findings = []
    for run in backend.list_runs():
        read = backend.read_run(run, strict=False)
        findings.extend(read.findings)
        findings.extend(f for r in read.records if (f := check_envelope(r.body, expected_run=run)) is not None)
        columns.add(run, read.records)
    return Tables.of(
        records=pa.Table.from_batches([columns.batch(backend.url)]),
        findings=findings_table([with_source(f, backend.url) for f in findings]),
    )


def assert_same_records(root: Path) -> Tables:
    """The records path (small batches: many of them) gives the exact reader's rows and findings, and folding
    changes nothing about the records."""
    fast = load(root, strict=False, fold=False, batch_bytes=4096)
    exact = exact_records(root)
    assert fast.records.combine_chunks().equals(exact.records.combine_chunks())
    assert [(f.run, f.seq, f.code, f.message) for f in findings_of(fast.findings)] == [
        (f.run, f.seq, f.code, f.message) for f in findings_of(exact.findings)
    ]
    folded = load(root, strict=False, batch_bytes=4096)
    assert folded.records.combine_chunks().equals(fast.records.combine_chunks())
    corrupt = {f.run for f in findings_of(fast.findings) if f.code in ("corrupt_line", "line_too_long")}
    assert corrupt == {f.run for f in findings_of(folded.findings) if f.code in ("corrupt_line", "line_too_long")}
    return fast


# -- schemas and values on the samples -----------------------------------------------------------------


def test_every_table_has_its_schema_and_the_interface_columns(samples: Path) -> None:
    tables = load(samples, strict=False)
    required = {
        "records": "run seq type ts optional size body source position",
        "runs": "run status created last_seq last_ts records model turns tool_calls input_tokens output_tokens "
        "pending_calls deferred_calls claims errors",
        "messages": "run index role text tool_use_count tool_result_count",
        "tool_calls": "run call_id name input call_seq result_seq is_error deferred approval latency_s",
        "findings": "run seq code severity message source",
    }
    for name, table in tables.items():
        assert table.schema.equals(SCHEMAS[name]), name
        assert set(required[name].split()) <= set(table.column_names), name
    assert RECORDS_SCHEMA.field("body").type == pa.large_string()
    for schema, column in [(RECORDS_SCHEMA, "ts"), (RUNS_SCHEMA, "created"), (TOOL_CALLS_SCHEMA, "call_ts")]:
        assert schema.field(column).type == pa.timestamp("us", tz="UTC")


def test_lenient_load_of_the_samples_keeps_every_run_record_and_finding(samples: Path) -> None:
    tables = load(samples, strict=False)
    journals = sorted(path.stem for path in samples.glob("*.jsonl"))
    assert tables.runs.column("run").to_pylist() == journals  # one row per journal, the broken ones too
    statuses = dict(zip(tables.runs["run"].to_pylist(), tables.runs["status"].to_pylist(), strict=True))
    assert {run for run, status in statuses.items() if status == "invalid"} == BROKEN_SAMPLES
    assert set(tables.records.column("run").to_pylist()) == set(journals)
    by_code = {(f.run, f.code) for f in findings_of(tables.findings)}
    assert {
        ("corrupt-interior", "corrupt_line"),
        ("schema-violation", "schema_violation"),
        ("version-mismatch", "version_mismatch"),
        ("torn-tail", "torn_tail"),
    } <= by_code
    assert all(source for source in tables.findings.column("source").to_pylist())
    # The corrupt journal is refused (not folded) but its parseable lines are records, positions intact.
    corrupt = tables.records.filter(pa.compute.equal(tables.records["run"], "corrupt-interior"))
    lines = (samples / "corrupt-interior.jsonl").read_bytes().split(b"\n")[:-1]
    assert corrupt["position"].to_pylist() == [n for n, line in enumerate(lines, 1) if n != 3]
    refused = tables.runs.filter(pa.compute.equal(tables.runs["run"], "corrupt-interior")).to_pylist()[0]
    assert refused["records"] == len(lines) - 1 and refused["error_findings"] == 1 and refused["turns"] is None


def test_why_a_run_ended(samples: Path) -> None:
    rows = {row["run"]: row for row in load(samples, strict=False).runs.to_pylist()}
    assert rows["failed-provider"]["end_reason"] == "provider error: overloaded: 3 retries exhausted"
    assert rows["cancelled-by-user"]["end_reason"] == "cancelled by alice@example.com: wrong repository"
    assert rows["completed-with-tools"]["end_reason"] is None
    assert rows["completed-with-tools"]["stop_reason"] == "end_turn"
    assert rows["turn-in-flight"]["stop_reason"] == "tool_use"


def test_run_rows_match_the_fold(samples: Path) -> None:
    tables = load(samples, strict=False)
    backend = FileBackend(samples)
    for row in tables.runs.to_pylist():
        if row["run"] in BROKEN_SAMPLES:
            continue
        read = backend.read_run(row["run"])
        result = fold(read.records, run=row["run"])
        assert row["status"] == result.status
        assert row["records"] == len(read.records)
        assert row["last_seq"] == result.resume.last_seq
        assert row["turns"] == result.counters.turns
        assert row["tool_calls"] == result.counters.tool_calls
        assert row["input_tokens"] == result.counters.input_tokens
        assert row["pending_calls"] == len(result.pending)
        assert row["deferred_calls"] == sum(call.deferred is not None for call in result.pending)
        assert row["model"] == result.model
        assert row["created"] == datetime.fromisoformat(read.records[0].ts or "").astimezone(UTC)
        assert row["waiting_for"] == result.resume.waiting_for
    statuses = dict(zip(tables.runs["run"].to_pylist(), tables.runs["status"].to_pylist(), strict=True))
    assert statuses["completed-with-tools"] == "completed"
    assert statuses["suspended-approval"] == "suspended"
    assert statuses["failed-provider"] == "failed"
    assert statuses["cancelled-by-user"] == "cancelled"
    assert statuses["turn-in-flight"] == "open"


def test_records_keep_the_bytes_and_positions_of_the_file(samples: Path) -> None:
    tables = load(samples, strict=False)
    records = tables.records.to_pylist()
    for run in ("completed-with-tools", "torn-tail"):
        lines = (samples / f"{run}.jsonl").read_bytes().split(b"\n")
        rows = [row for row in records if row["run"] == run]
        for row in rows:
            assert row["body"].encode() == lines[row["position"] - 1]
            assert row["size"] == len(lines[row["position"] - 1])
            body = orjson.loads(row["body"])
            assert (row["seq"], row["type"]) == (body["seq"], body["type"])
            assert row["ts"] == datetime.strptime(body["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
            assert row["optional"] == (body.get("optional") is True)
        assert [row["position"] for row in rows] == list(range(1, len(rows) + 1))
    torn = [row for row in records if row["run"] == "torn-tail"]
    assert len(torn) == len((samples / "torn-tail.jsonl").read_bytes().split(b"\n")) - 1  # the torn line dropped
    optional = [row for row in records if row["run"] == "optional-unknown-record" and row["optional"]]
    assert optional, "the sample with an unknown optional record has optional rows"


def test_messages_and_tool_calls_on_a_sample(samples: Path) -> None:
    tables = load(samples, "completed-with-tools")
    result = fold(FileBackend(samples).read_run("completed-with-tools").records)
    messages = tables.messages.to_pylist()
    assert [m["role"] for m in messages] == [m["role"] for m in result.messages]
    assert [m["index"] for m in messages] == list(range(len(result.messages)))
    assert sum(m["tool_use_count"] for m in messages) == result.counters.tool_calls == tables.tool_calls.num_rows
    assert sum(m["tool_result_count"] for m in messages) == result.counters.tool_calls
    assert messages[0]["text"] and messages[0]["role"] == "user"
    calls = tables.tool_calls.to_pylist()
    for call, trace in zip(calls, result.tool_calls, strict=True):
        assert orjson.loads(call["input"]) == trace.input
        assert (call["call_id"], call["call_seq"], call["result_seq"]) == (
            trace.call_id,
            trace.call_seq,
            trace.result_seq,
        )
        assert call["latency_s"] == pytest.approx((call["result_ts"] - call["call_ts"]).total_seconds())
        assert call["latency_s"] > 0


def test_a_pending_deferred_call_has_no_result(samples: Path) -> None:
    calls = load(samples, "suspended-approval").tool_calls.to_pylist()
    assert [(c["deferred"], c["result_seq"], c["is_error"], c["latency_s"]) for c in calls] == [
        ("approval", None, None, None)
    ]


def test_to_pandas_uses_arrow_backed_dtypes(samples: Path) -> None:
    frames = load(samples, strict=False).to_pandas()
    for frame in (frames.records, frames.runs, frames.messages, frames.tool_calls, frames.findings):
        assert all(isinstance(dtype, pd.ArrowDtype) for dtype in frame.dtypes)
    assert frames.runs["created"].dtype == pd.ArrowDtype(TIMESTAMP)
    assert frames.runs["records"].dtype == pd.ArrowDtype(pa.int64())
    assert frames.records["body"].dtype == pd.ArrowDtype(pa.large_string())
    # A plain Table.to_pandas() keeps nullable integers as integers too (pandas metadata in the schema).
    plain = load(samples, "suspended-approval").tool_calls.to_pandas()
    assert plain["result_seq"].dtype == pd.ArrowDtype(pa.int64())


# -- strict and lenient ------------------------------------------------------------------------------------


def test_strict_load_raises_at_the_first_bad_journal(samples: Path) -> None:
    with pytest.raises(CorruptJournal, match="corrupt-interior"):
        load(samples)
    with pytest.raises(FoldError, match="schema_violation"):
        load(samples, "schema-violation")
    with pytest.raises(VersionMismatch):
        load(samples, ["completed-with-tools", "version-mismatch"])
    torn = load(samples, "torn-tail")  # a torn tail is a warning: strict loads it and reports it
    assert [f.code for f in findings_of(torn.findings)] == ["torn_tail"]
    assert torn.runs.num_rows == 1


def test_strict_records_only_load_refuses_a_record_naming_another_run(tmp_path: Path) -> None:
    (tmp_path / "named.jsonl").write_bytes(JournalBuilder("other").user().bytes())
    with pytest.raises(RecordRefused, match="run_mismatch"):
        load(tmp_path, fold=False)
    lenient = load(tmp_path, fold=False, strict=False)
    assert lenient.records.num_rows == 2  # lenient loads keep every parseable record
    assert {f.code for f in findings_of(lenient.findings)} == {"run_mismatch"}


def corrupt_corpus(root: Path) -> dict[str, str]:
    """A generated corpus with one journal broken per way; returns run -> expected finding code."""
    generate_corpus(root, runs=12, records=40, seed=7, workers=1)

    def rewrite(index: int, change: object) -> str:
        path = root / f"{run_id(index)}.jsonl"
        lines = path.read_bytes().split(b"\n")[:-1]
        lines = change(lines)  # type: ignore[operator]
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        return run_id(index)

    def field(line: bytes, **changes: object) -> bytes:
        return orjson.dumps({**orjson.loads(line), **changes})

    return {
        rewrite(1, lambda ls: [*ls[:5], b"{not json", *ls[5:]]): "corrupt_line",
        rewrite(3, lambda ls: [*ls[:-1], ls[-1][: len(ls[-1]) // 2]]): "torn_tail",
        rewrite(5, lambda ls: [*ls[:7], field(ls[7], seq=0), *ls[8:]]): "schema_violation",
        rewrite(8, lambda ls: [*ls[:9], field(ls[9], run="someone-else"), *ls[10:]]): "run_mismatch",
    }


def test_lenient_load_of_a_directory_with_corrupt_journals(tmp_path: Path) -> None:
    broken = corrupt_corpus(tmp_path)
    tables = load(tmp_path, strict=False)
    assert tables.runs.column("run").to_pylist() == [run_id(i) for i in range(12)]
    statuses = dict(zip(tables.runs["run"].to_pylist(), tables.runs["status"].to_pylist(), strict=True))
    assert {run for run, status in statuses.items() if status == "invalid"} == {
        run for run, code in broken.items() if code != "torn_tail"
    }
    found = {(f.run, f.code) for f in findings_of(tables.findings)}
    assert {(run, code) for run, code in broken.items()} <= found
    assert tables.records.num_rows == sum(row["records"] for row in tables.runs.to_pylist())
    with pytest.raises(CorruptJournal, match="run-0000001"):
        load(tmp_path)


# -- the fast records path is the file backend's reader ------------------------------------------------------


def test_fast_records_equal_the_exact_reader_on_a_generated_corpus(tmp_path: Path) -> None:
    generate_corpus(tmp_path, runs=30, records=60, seed=3, workers=1)
    fast = assert_same_records(tmp_path)
    assert fast.records.num_rows == 30 * 60
    assert fast.findings.num_rows == 0


MUTATIONS: dict[str, object] = {
    "blank interior line": lambda ls: [*ls[:3], b"", *ls[3:]],
    "whitespace line": lambda ls: [*ls[:3], b"  \t", *ls[3:]],
    "torn tail": lambda ls: [*ls, b'{"type":"us'],
    "trailing blank line": lambda ls: [*ls, b""],
    "two objects on a line": lambda ls: [*ls[:3], ls[3] + b" " + ls[3], *ls[4:]],
    "invalid utf-8 in a skipped field": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":"\xff"}', *ls[4:]],
    "NaN in a skipped field": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":NaN}', *ls[4:]],
    "not an object": lambda ls: [b"[1, 2]", *ls[1:]],
    "whitespace around a record": lambda ls: [*ls[:2], b" " + ls[2] + b"\r ", *ls[3:]],
    "optional null": lambda ls: [*ls[:3], ls[3][:-1] + b',"optional":null}', *ls[4:]],
    "optional false": lambda ls: [*ls[:3], ls[3][:-1] + b',"optional":false}', *ls[4:]],
    "optional as a string": lambda ls: [*ls[:3], ls[3][:-1] + b',"optional":"yes"}', *ls[4:]],
    "escaped optional key": lambda ls: [*ls[:3], ls[3][:-1] + b',"\\u006fptional":true}', *ls[4:]],
    "duplicate seq key": lambda ls: [*ls[:3], ls[3][:-1] + b',"seq":99}', *ls[4:]],
    "seq zero": lambda ls: [*ls[:3], ls[3].replace(b'"seq":4', b'"seq":0'), *ls[4:]],
    "seq as float": lambda ls: [*ls[:3], ls[3].replace(b'"seq":4', b'"seq":4.0'), *ls[4:]],
    "seq as bool": lambda ls: [*ls[:3], ls[3].replace(b'"seq":4', b'"seq":true'), *ls[4:]],
    "seq beyond int64": lambda ls: [*ls[:3], ls[3].replace(b'"seq":4', b'"seq":9223372036854775813'), *ls[4:]],
    "impossible date": lambda ls: [*ls[:3], ls[3].replace(b'"ts":"2026-01', b'"ts":"2026-13'), *ls[4:]],
    "nanosecond ts": lambda ls: [*ls[:3], ls[3].replace(b'Z"', b'123Z"', 1), *ls[4:]],
    "type missing": lambda ls: [*ls[:3], ls[3].replace(b'"type":', b'"kind":', 1), *ls[4:]],
    "last line without newline": lambda ls: ls,  # written without the final newline below
    # Each pair keeps msgspec's count of values equal to the number of lines.
    "a record over two lines, two on another": lambda ls: [
        *ls[:2],
        *ls[2].split(b",", 1),
        ls[3] + b" " + ls[4],
        *ls[5:],
    ],
    "a whitespace line, two records on another": lambda ls: [*ls[:3], b" ", ls[3] + b" " + ls[4], *ls[5:]],
    "a number beyond a double in a skipped field": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":1e400}', *ls[4:]],
    "a huge integer in a skipped field": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":1' + b"0" * 40 + b"}", *ls[4:]],
    "a duplicated envelope key": lambda ls: [*ls[:3], ls[3][:-1] + b',"type":"note"}', *ls[4:]],
    "a duplicated nested key": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":{"a":1,"a":2}}', *ls[4:]],
    "an unpaired surrogate": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":"\\ud800"}', *ls[4:]],
    "a surrogate pair": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":"\\ud83d\\ude00"}', *ls[4:]],
    "a control character in a string": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":"a\x01b"}', *ls[4:]],
    "nested 300 deep": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":' + b"[" * 300 + b"]" * 300 + b"}", *ls[4:]],
    "nested 2000 deep": lambda ls: [*ls[:3], ls[3][:-1] + b',"x":' + b"[" * 2000 + b"]" * 2000 + b"}", *ls[4:]],
    "a carriage return before the newline": lambda ls: [*ls[:3], ls[3] + b"\r", *ls[4:]],
    "a byte order mark": lambda ls: [b"\xef\xbb\xbf" + ls[0], *ls[1:]],
    "a journal of one empty line": lambda ls: [b""],
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_fast_records_equal_the_exact_reader_on_broken_journals(tmp_path: Path, mutation: str) -> None:
    generate_corpus(tmp_path, runs=3, records=12, seed=11, workers=1)
    journal = tmp_path / f"{run_id(1)}.jsonl"
    lines = MUTATIONS[mutation](journal.read_bytes().split(b"\n")[:-1])  # type: ignore[operator]
    data = b"".join(line + b"\n" for line in lines)
    journal.write_bytes(data[:-1] if mutation == "last line without newline" else data)
    assert_same_records(tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cut=st.integers(min_value=0, max_value=4000),
    noise=st.binary(min_size=0, max_size=6),
    where=st.integers(min_value=0, max_value=4000),
)
def test_fast_records_equal_the_exact_reader_on_random_damage(
    tmp_path_factory: pytest.TempPathFactory, cut: int, noise: bytes, where: int
) -> None:
    root = tmp_path_factory.mktemp("damage")
    good = journal_bytes(5, 0, 8)
    damaged = journal_bytes(5, 1, 8)
    where = min(where, len(damaged))
    damaged = (damaged[:where] + noise + damaged[where:])[: max(1, len(damaged) - cut)]
    (root / f"{run_id(0)}.jsonl").write_bytes(good)
    (root / f"{run_id(1)}.jsonl").write_bytes(damaged)
    (root / f"{run_id(2)}.jsonl").write_bytes(good.replace(run_id(0).encode(), run_id(2).encode()))
    assert_same_records(root)


def test_a_line_beyond_the_cap_is_a_finding_and_never_held_whole(tmp_path: Path) -> None:
    good = journal_bytes(5, 0, 8)
    lines = journal_bytes(5, 1, 8).split(b"\n")[:-1]
    huge = lines[3][:-1] + b',"padding":"' + b"x" * 5000 + b'"}'
    (tmp_path / f"{run_id(0)}.jsonl").write_bytes(good)
    (tmp_path / f"{run_id(1)}.jsonl").write_bytes(b"\n".join([*lines[:3], huge, *lines[4:]]) + b"\n")
    for fold_runs in (False, True):
        tables = load(tmp_path, strict=False, fold=fold_runs, max_line_bytes=4096)
        codes = [(f.run, f.code) for f in findings_of(tables.findings)]
        assert codes == [(run_id(1), "line_too_long")]
        positions = tables.records.filter(pa.compute.equal(tables.records["run"], run_id(1)))["position"]
        assert positions.to_pylist() == [n for n in range(1, len(lines) + 1) if n != 4]
        statuses = tables.runs["status"].to_pylist()
        assert not fold_runs or statuses[1] == "invalid"
    with pytest.raises(CorruptJournal, match="4,096-byte limit"):
        load(tmp_path, max_line_bytes=4096)
    assert load(tmp_path).records.num_rows == 16  # under the default cap the line is an ordinary record


def test_timestamps_follow_the_protocol_pattern() -> None:
    values = [
        "2026-11-29T10:00:00.123456Z",
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:00.123456789Z",  # truncated to microseconds
        "2026-13-29T10:00:00Z",  # no 13th month
        "2026-11-29T10:00:00+00:00",  # RFC 3339 but not the protocol's Z form
        "\uff12\uff10\uff12\uff16-11-29T10:00:00Z",  # fullwidth digits: Python's \\d matches them
        None,
    ]
    got = timestamps(values).to_pylist()
    assert got[0] == datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)
    assert got[1] == datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
    assert got[2] == datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)
    assert got[3:] == [None, None, None, None]
    assert timestamps(values[:2]).to_pylist() == got[:2]  # a value does not depend on its neighbours


# -- processes, other sources, progress ------------------------------------------------------------------------


def test_loading_from_jetstream_gives_the_file_tables(samples: Path, jetstream: Any, jetstream_url: str) -> None:
    from journaltools.ops.migrate import migrate

    migrate(FileBackend(samples), jetstream)
    from_file = load(samples, strict=False)
    from_nats = load(jetstream_url, strict=False)  # by URL, like any other source
    for name in ("runs", "messages", "tool_calls"):
        # The file's torn tail is a warning only there: migration copies the records, not the torn line.
        columns = [c for c in from_file[name].column_names if c not in ("source", "warning_findings")]
        migrated = pa.compute.is_in(from_file[name]["run"], value_set=from_nats.runs["run"])
        assert from_file[name].filter(migrated).select(columns).equals(from_nats[name].select(columns)), name
    columns = ["run", "seq", "type", "ts", "optional", "size", "body"]
    migrated = pa.compute.is_in(from_file.records["run"], value_set=from_nats.runs["run"])
    assert from_file.records.filter(migrated).select(columns).equals(from_nats.records.select(columns))
    assert set(from_nats.records["source"].to_pylist()) == {jetstream.url}
    assert from_nats.records["position"].to_pylist() != from_file.records["position"].to_pylist()  # stream seqs
    assert load(jetstream, "completed-with-tools").runs["status"].to_pylist() == ["completed"]  # an open backend
    records_only = load(jetstream_url, fold=False, strict=False)
    assert records_only.records.select(columns).equals(from_nats.records.select(columns))

    from journaltools.audit import audit_sources, iter_run_audits

    audit = audit_sources([jetstream_url], parquet=samples.parent / "audit")
    assert audit.findings == [f for run_audit in iter_run_audits(jetstream) for f in run_audit.findings]
    assert audit.runs == len(jetstream.list_runs()) and audit.rows["runs"] == audit.runs


def test_progress_bar_only_when_asked_or_on_a_terminal(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load(samples, strict=False)
    assert capsys.readouterr().err == ""  # stderr is not a terminal here
    load(samples, strict=False, progress=True)
    assert "journaltools load" in capsys.readouterr().err
    load(samples, strict=False, progress=False)
    assert capsys.readouterr().err == ""


def test_empty_source_gives_empty_tables_with_schemas(tmp_path: Path) -> None:
    tables = load(tmp_path)
    for name, table in tables.items():
        assert table.num_rows == 0 and table.schema.equals(SCHEMAS[name])
    assert load(tmp_path, fold=False).records.schema.equals(RECORDS_SCHEMA)
    assert MESSAGES_SCHEMA.names[:2] == ["run", "index"] and FINDINGS_SCHEMA.names[0] == "run"


def test_asking_for_a_run_that_is_not_there(samples: Path) -> None:
    from journaltools.errors import InvalidRunId, RunNotFound

    for fold_runs in (True, False):
        with pytest.raises(RunNotFound, match="nope"):
            load(samples, ["completed-with-tools", "nope"], fold=fold_runs)
    with pytest.raises(InvalidRunId):
        load(samples, "not a run id")


def test_a_file_that_cannot_be_a_journal_is_reported_once(samples: Path) -> None:
    (samples / "not a run.jsonl").write_bytes(JournalBuilder("x").bytes())
    tables = load(samples, strict=False)
    assert [f.code for f in findings_of(tables.findings) if f.run is None] == ["invalid_run_id"]
    with pytest.raises(SourceError, match="not a run"):
        load(samples)


def test_a_task_store_fills_task_state(tmp_path: Path) -> None:
    from journaltools.tasks import FileTaskStore
    from tests.task_store_contract import request, result

    generate_corpus(tmp_path / "corpus", runs=6, records=12, seed=2, workers=1)
    tasks = {row["run"]: row["task"] for row in load(tmp_path / "corpus").runs.to_pylist()}
    store = FileTaskStore(tmp_path / "tasks")
    named = sorted({task for task in tasks.values() if task is not None})
    assert named, "the generated metas name tasks"
    store.submit(request(named[0]))
    store.complete(named[0], result(named[0]))
    for task in named[1:]:
        store.submit(request(task))
    for task_store in (str(tmp_path / "tasks"), store):
        runs = load(tmp_path / "corpus", task_store=task_store).runs.to_pylist()
        expected = {
            run: None if task is None else "completed" if task == named[0] else "submitted"
            for run, task in tasks.items()
        }
        assert {row["run"]: row["task_state"] for row in runs} == expected


# -- load() against the pure builder over per-run folds ---------------------------------------------------------

#: Damage a journal's bytes the way storage does: a torn last line, a line that is not JSON, a lost record,
#: a newer version. Each keeps the run readable leniently.
DAMAGE = {
    "none": lambda data: data,
    "torn tail": lambda data: data[: data.rindex(b"\n", 0, len(data) - 1) + 1] + data.split(b"\n")[-2][:7],
    "garbage line": lambda data: data.replace(b"\n", b"\nnot json\n", 2).replace(b"\nnot json\n", b"\n", 1),
    "lost record": lambda data: b"\n".join(line for i, line in enumerate(data.split(b"\n")) if i != 2),
    "newer version": lambda data: data.replace(b'"version":1', b'"version":2', 1),
}


@st.composite
def run_sets(draw: st.DrawFn, min_runs: int = 1) -> list[tuple[str, bytes]]:
    """Runs with unique ids (valid, or damaged by one of ``DAMAGE``), as (run, journal bytes)."""
    count = draw(st.integers(min_runs, 4))
    runs = []
    for index in range(count):
        run = f"gen-{index}"
        data = draw(valid_runs(run)).bytes()
        runs.append((run, DAMAGE[draw(st.sampled_from(sorted(DAMAGE)))](data)))
    return runs


def folded_tables(root: Path) -> Tables:
    """The tables the pure builder makes of each run read by the file backend's reader and folded on its own."""
    backend = FileBackend(root)
    folded = []
    for run in backend.list_runs():
        read = backend.read_run(run, strict=False)
        folded.append(
            (run, read.records, read.findings, fold(read.records, strict=False, run=run) if read.complete else None)
        )
    return tables_of_runs(folded, backend.url)


def assert_load_equals_the_folds(root: Path, runs: list[tuple[str, bytes]], **options: Any) -> None:
    for run, data in runs:
        (root / f"{run}.jsonl").write_bytes(data)
    loaded = load(root, strict=False, progress=False, **options)
    expected = folded_tables(root)
    for name in ("runs", "messages", "tool_calls"):
        assert loaded[name].equals(expected[name]), (name, loaded[name].to_pylist(), expected[name].to_pylist())
    key = lambda f: (f.run or "", f.seq or 0, f.code, f.message)  # noqa: E731
    assert sorted(findings_of(loaded.findings), key=key) == sorted(findings_of(expected.findings), key=key)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=run_sets(), batch_bytes=st.sampled_from([1, 400, 2000, 8 << 20]))
def test_load_equals_the_builder_over_per_run_folds(
    tmp_path_factory: pytest.TempPathFactory, runs: list[tuple[str, bytes]], batch_bytes: int
) -> None:
    assert_load_equals_the_folds(tmp_path_factory.mktemp("runs"), runs, batch_bytes=batch_bytes, workers=1)


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=run_sets(min_runs=3))
def test_load_with_worker_processes_equals_the_builder_over_per_run_folds(
    tmp_path_factory: pytest.TempPathFactory, runs: list[tuple[str, bytes]]
) -> None:
    assert_load_equals_the_folds(tmp_path_factory.mktemp("runs"), runs, batch_bytes=1, workers=2)
