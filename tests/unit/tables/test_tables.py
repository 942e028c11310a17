"""The tables over the real fisk-ai corpus, checked field by field against what the runtime's own fold returned
(tests/corpus/runstate/expected/*.jsonl), and the loader against the pure builder."""

from __future__ import annotations

import hashlib
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.audits.sources import audit_sources
from journaltools.errors import FoldError
from journaltools.protocol.decode import decode_line
from journaltools.protocol.findings import FINDING_SEVERITY
from journaltools.protocol.kinds import PROTOCOLS
from journaltools.sources.registry import open_source
from journaltools.tables import (
    SCHEMAS,
    TABLE_NAMES,
    LoadOptions,
    Tables,
    load,
    tables_of_reads,
)
from journaltools.tables.schema import with_plain_strings
from tests.runstate_corpus import CORPUS, expected
from tests.table_checks import same_tables

FOLDERS = ("file", "random")


@cache
def lenient(folder: str) -> Tables:
    return load(CORPUS / folder, strict=False, workers=1)


def rows_by_run(table: pa.Table) -> dict[str, dict[str, Any]]:
    return {row["run"]: row for row in table.to_pylist()}


def expected_status(entry: dict[str, Any]) -> str:
    if not entry["ok"]:
        return "invalid"
    terminal = entry["state"]["Terminal"]
    return terminal["reason"] if terminal is not None else "open"


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_journal_has_a_runs_row_equal_to_the_runtimes_fold(folder: str) -> None:
    runs = rows_by_run(lenient(folder).runs)
    entries = expected(folder)
    assert sorted(runs) == sorted(entry["store_id"] for entry in entries)
    for entry in entries:
        row = runs[entry["store_id"]]
        assert row["status"] == expected_status(entry), entry["path"]
        if not entry["ok"]:
            assert row["error_findings"] >= 1
            continue
        state = entry["state"]
        counters = state["Counters"]
        assert {name: row[name] for name in counters_columns()} == {
            name: counters[go_counter(name)] for name in counters_columns()
        }, entry["path"]
        assert row["last_seq"] == entry["last_seq"]
        assert row["records"] == entry["records"]
        assert row["next_iteration"] == state["NextIteration"]
        assert (row["last_stop_reason"] or "") == state["LastStopReason"]
        assert row["model"] == state["Fingerprint"]["model"]
        assert row["provider"] == state["Fingerprint"]["provider"]
        assert row["prompt"] == state["Prompt"]
        assert row["interactive"] == state["Interactive"]
        assert (row["caller"] or "") == state["Caller"]
        assert row["approvals"] == (state["Approvals"] or [])
        assert row["call_approvals"] == [a["tool_use_id"] for a in state["CallApprovals"] or ()]
        assert row["memory_keys"] == sorted(state["MemoryRevisions"] or {})
        terminal = state["Terminal"]
        assert row["terminal_reason"] == (terminal["reason"] if terminal else None)
        assert (row["terminal_message"] or "") == ((terminal or {}).get("message") or "")
        pending = state["Pending"]
        if pending is None:
            assert row["pending_calls"] == 0 and row["open_deferrals"] == 0
        else:
            calls = [b["tool_use"]["id"] for b in pending["Assistant"]["content"] or () if "tool_use" in b]
            assert row["pending_calls"] == len([c for c in calls if c not in (pending["Answered"] or {})])
            assert row["open_deferrals"] == len(entry.get("open_deferrals") or [])
        token = state["ConversationToken"]
        digest = hashlib.sha256(token.encode()).hexdigest()[:12] if token else None
        assert row["conversation"] == digest


def counters_columns() -> list[str]:
    return [
        "llm_calls",
        "tool_calls",
        "remote_tool_calls",
        "in_tokens",
        "out_tokens",
        "cache_read_tokens",
        "cache_create_tokens",
        "thinking_tokens",
    ]


def go_counter(name: str) -> str:
    return "LlmCalls" if name == "llm_calls" else "".join(part.capitalize() for part in name.split("_"))


@pytest.mark.parametrize("folder", FOLDERS)
def test_messages_are_the_folded_messages(folder: str) -> None:
    messages = lenient(folder).messages
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in messages.to_pylist():
        by_run.setdefault(row["run"], []).append(row)
    for entry in expected(folder):
        if not entry["ok"]:
            continue
        want = entry["state"]["Messages"]
        rows = by_run.get(entry["store_id"], [])
        got = [row for row in rows if not row["pending"]]
        assert [row["index"] for row in got] == list(range(len(want)))
        in_flight = [row for row in rows if row["pending"]]
        pending = entry["state"]["Pending"]
        assert len(in_flight) == (pending is not None)  # the turn in flight: one flagged row, after the others
        if pending is not None:
            blocks = pending["Assistant"]["content"] or []
            assert rows[-1] is in_flight[0] and in_flight[0]["index"] == len(want)
            assert in_flight[0]["text"] == "\n".join(b["text"]["text"] for b in blocks if "text" in b)
        for row, message in zip(got, want, strict=True):
            blocks = message["content"] or []
            assert row["role"] == message["role"]
            assert row["text"] == "\n".join(b["text"]["text"] for b in blocks if "text" in b)
            assert row["tool_use_count"] == sum("tool_use" in b for b in blocks)
            assert row["tool_result_count"] == sum("tool_result" in b for b in blocks)
            assert row["provider_blocks"] == sum("provider" in b for b in blocks)
            assert row["thinking_chars"] == sum(len(b["thinking"].get("text", "")) for b in blocks if "thinking" in b)


def test_tool_calls_follow_the_records() -> None:
    tables = lenient("file")
    calls = tables.tool_calls.to_pylist()
    assert calls, "the named scenarios make tool calls"
    records = {(r["run"], r["seq"]): r for r in tables.records.to_pylist()}
    for call in calls:
        assert records[(call["run"], call["call_seq"])]["kind"] == "assistant"
        if call["result_seq"] is not None:
            assert records[(call["run"], call["result_seq"])]["kind"] == "tool_result"
            assert call["result_seq"] > call["call_seq"]
    waiting = rows_by_run(tables.runs)["3IDi1LEy6uQIbFWHJESmsjTENLn"]  # deferred-waiting: one open deferral
    deferred = [c for c in calls if c["run"] == "3IDi1LEy6uQIbFWHJESmsjTENLn" and c["deferred"]]
    assert waiting["open_deferrals"] == 1 and len(deferred) == 1 and deferred[0]["result_seq"] is None
    assert deferred[0]["deferred_note"]
    remote = [c for c in calls if c["run"] == "3IDQ1OhDHSSoRIEpX5dNk2z1f6f" and c["remote"]]
    assert len(remote) == 1  # completed-parallel-tools: one remote (A2A) result
    approved = [c for c in calls if c["run"] == "3IE01GOisLGlZTbwKdloB5eSLAc"]
    assert [c["call_approved"] for c in approved] == [True]


def test_segments_split_at_claims() -> None:
    tables = lenient("file")
    segments = tables.segments.to_pylist()
    runs = rows_by_run(tables.runs)
    for run, row in runs.items():
        own = [s for s in segments if s["run"] == run]
        assert len(own) == row["segments"] == (row["resumes"] + 1 if row["status"] != "invalid" else len(own))
        assert [s["segment"] for s in own] == list(range(len(own)))
    served = [s for s in segments if s["run"].startswith("3f6d0c2b")]  # three turns, claims between them
    assert [s["ending"] for s in served] == ["completed", "completed", "completed"]
    assert all(s["claimed_by"] for s in served[1:]) and served[0]["claimed_by"] is None
    in_flight = [s for s in segments if s["run"] == "3IEj14CtE7bmwlCCwwtiSgDi881"]
    assert [s["ending"] for s in in_flight] == ["running"]


def test_records_hold_the_journal_bytes() -> None:
    records = lenient("file").records
    for path in sorted((CORPUS / "file").glob("*.json")):
        run = path.stem
        own = records.filter(pc.equal(records["run"], run))
        lines = [line for line in path.read_bytes().split(b"\n") if line]
        assert own["body"].to_pylist() == lines
        assert own["size"].to_pylist() == [len(line) for line in lines]
        decoded = [decode_line(line).record for line in lines]
        assert own["seq"].to_pylist() == [r.seq for r in decoded]
        assert own["protocol"].to_pylist() == [r.protocol for r in decoded]
        assert own["kind"].to_pylist() == [r.kind for r in decoded]
        assert own["position"].to_pylist() == list(range(1, len(lines) + 1))
        assert own["time"].null_count == len(lines)  # files have no per-record time


def test_the_conversation_token_is_in_no_column_but_the_raw_bodies() -> None:
    tokens = {e["state"]["ConversationToken"] for e in expected("file") if e["ok"]} - {""}
    assert tokens, "the corpus has served and chat runs with a token"
    tables = lenient("file")
    for name, table in tables.items():
        for column_name in table.column_names:
            if (name, column_name) == ("records", "body"):
                continue
            text = repr(table.column(column_name).to_pylist())
            for token in tokens:
                assert token not in text, (name, column_name)
    bodies = b"".join(tables.records["body"].to_pylist())
    assert all(token.encode() in bodies for token in tokens)


def test_lenient_keeps_refused_journals_and_strict_raises_the_first() -> None:
    runs = rows_by_run(lenient("file").runs)
    refused = [e for e in expected("file") if not e["ok"]]
    assert refused
    for entry in refused:
        assert runs[entry["store_id"]]["status"] == "invalid"
    codes = set(lenient("file").findings["code"].to_pylist())
    assert {"unknown_protocol", "version_mismatch", "result_outside_turn"} <= codes
    assert codes <= set(FINDING_SEVERITY)
    with pytest.raises(FoldError) as raised:
        load(CORPUS / "file", workers=1)
    assert raised.value.run in {e["store_id"] for e in refused}


def test_strict_load_of_good_runs_equals_lenient() -> None:
    good = [e["store_id"] for e in expected("file") if e["ok"]]
    strict = load(CORPUS / "file", runs=good, workers=1)
    assert strict.runs.num_rows == len(good)
    assert set(strict.runs["status"].to_pylist()) <= {
        "completed",
        "suspended",
        "error",
        "budget",
        "max_iterations",
        "open",
    }


def test_fold_false_gives_records_and_findings_only() -> None:
    tables = load(CORPUS / "file", strict=False, fold=False, workers=1)
    assert with_plain_strings(tables.records).equals(with_plain_strings(lenient("file").records))
    assert tables.runs.num_rows == tables.messages.num_rows == 0


def test_a_task_store_fills_task_state(tmp_path: Path) -> None:
    """A served run's task record carries the run's own id; a run without one has a null task_state."""
    from journaltools.stores.tasks import FileTaskStore
    from tests.task_store_contract import request, result

    journals = tmp_path / "journals"
    journals.mkdir()
    for path in sorted((CORPUS / "file").glob("*.json"))[:4]:
        shutil.copy(path, journals / path.name)
    runs = sorted(path.stem for path in journals.glob("*.json"))
    store = FileTaskStore(tmp_path / "tasks")
    store.submit(request(runs[0]))
    store.complete(runs[0], result(runs[0]))
    store.submit(request(runs[1]))
    expected_states = {runs[0]: "completed", runs[1]: "submitted", runs[2]: None, runs[3]: None}
    for task_store in (str(tmp_path / "tasks"), store):
        rows = load(journals, task_store=task_store).runs.to_pylist()
        assert {row["run"]: row["task_state"] for row in rows} == expected_states


def test_schemas_and_pandas_dtypes() -> None:
    tables = lenient("file")
    for name in TABLE_NAMES:
        assert tables[name].schema.equals(SCHEMAS[name]), name
    frames = tables.to_pandas()
    assert str(frames.runs["last_seq"].dtype) == "uint64[pyarrow]"
    assert str(frames.records["time"].dtype).startswith("timestamp[us, tz=UTC]")


#: The dictionary-encoded columns of docs/interfaces.md, by table.
DICTIONARY_COLUMNS = {
    "records": {"run", "source", "protocol", "kind"},
    "segments": {"run", "ending"},
    "messages": {"run", "role"},
    "tool_calls": {"run", "name"},
    "responses": {"run"},
    "runs": set(),
    "findings": set(),
}


def test_repeated_strings_are_dictionary_encoded_and_read_as_categories_in_pandas() -> None:
    tables = lenient("file")
    for name in TABLE_NAMES:
        encoded = {field.name for field in SCHEMAS[name] if pa.types.is_dictionary(field.type)}
        assert encoded == DICTIONARY_COLUMNS[name], name
    records = tables.records.combine_chunks()
    for column in DICTIONARY_COLUMNS["records"]:
        dictionary = records.column(column).chunk(0).dictionary.to_pylist()
        assert len(dictionary) == len(set(dictionary)), column  # each value once
    assert records.column("kind").chunk(0).dictionary.to_pylist() == list(PROTOCOLS.values())
    frames = tables.to_pandas()
    for name, columns in DICTIONARY_COLUMNS.items():
        for column in columns:
            frame = getattr(frames, name)
            assert str(frame[column].dtype) == "category", (name, column)
            categories = list(frame[column].cat.categories)
            assert categories == sorted(categories), (name, column)  # sorting by the column is by its text
            values = frame[column].astype(object).where(frame[column].notna(), None).tolist()  # NaN: a null kind
            assert values == getattr(tables, name).column(column).to_pylist(), (name, column)
    runs = frames.records.sort_values("run", kind="stable")["run"].tolist()
    assert runs == sorted(records.column("run").to_pylist())


def test_polars_and_duckdb_read_the_dictionary_columns_as_their_text(tmp_path: Path) -> None:
    import duckdb
    import polars as pl

    tables = lenient("file")
    audit_sources([str(CORPUS / "file")], parquet=tmp_path)
    for name, columns in DICTIONARY_COLUMNS.items():
        table = getattr(tables, name)
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        for column in columns:
            assert frame.schema[column] == pl.Categorical, (name, column)
            assert frame[column].cast(pl.String).to_list() == table.column(column).to_pylist(), (name, column)
        if name != "records":  # an audit does not write the records table
            written = pl.read_parquet(tmp_path / f"{name}.parquet")
            assert written.height == table.num_rows, name
            for column in columns:
                texts = duckdb.sql(f"select {column} from '{tmp_path}/{name}.parquet'").fetchall()
                assert [text for (text,) in texts] == table.column(column).to_pylist(), (name, column)
                assert written[column].cast(pl.String).to_list() == table.column(column).to_pylist(), (name, column)


def test_plain_strings_give_the_rows_whatever_the_dictionaries() -> None:
    values = ["b", "a", "b", "c"]
    one = pa.table({"run": pa.array(values).dictionary_encode()})
    other = pa.table({"run": pa.DictionaryArray.from_arrays(pa.array([2, 1, 2, 0], pa.int32()), ["c", "a", "b"])})
    assert not one.equals(other)  # the same rows, encoded differently
    assert with_plain_strings(one).equals(with_plain_strings(other))
    assert with_plain_strings(one).schema.field("run").type == pa.string()
    assert not with_plain_strings(one).equals(with_plain_strings(pa.table({"run": ["b", "a", "b", "d"]})))


@cache
def pure_tables(folder: str) -> Tables:
    """The pure builder over per-run lenient reads: what any batching of a load must give."""
    with open_source(CORPUS / folder) as backend:
        reads = [backend.read_run(run, strict=False) for run in backend.list_runs()]
    return tables_of_reads(reads)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_bytes=st.integers(1, 64 << 10), runs_per_batch=st.integers(1, 40), workers=st.sampled_from([1, 2]))
def test_load_equals_the_pure_builder_for_any_batching(batch_bytes: int, runs_per_batch: int, workers: int) -> None:
    options = LoadOptions(strict=False, batch_bytes=batch_bytes, runs_per_batch=runs_per_batch, workers=workers)
    same_tables(load(CORPUS / "file", options=options), pure_tables("file"))


def test_load_of_one_run_and_of_a_journal_file() -> None:
    one = load(CORPUS / "file", runs="3IDQ1OhDHSSoRIEpX5dNk2z1f6f")
    assert one.runs["run"].to_pylist() == ["3IDQ1OhDHSSoRIEpX5dNk2z1f6f"]


def test_load_with_no_source_reads_the_runtimes_default_directory(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "fisk-ai" / "runs"
    runs.mkdir(parents=True)
    (runs / "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json").write_bytes(
        (CORPUS / "file" / "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json").read_bytes()
    )
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert load().runs["status"].to_pylist() == ["completed"]


def test_the_run_row_is_made_in_the_runs_schemas_order() -> None:
    """``_put_run`` makes every run row, from either fold, as a tuple in ``_ROW_ORDER``'s order, which must be the
    schema's; the meta columns it splices in keep theirs."""
    from journaltools.folding.summary import MetaColumns
    from journaltools.tables import build

    assert build._ROW_ORDER == build._RUN_COLUMNS
    assert MetaColumns._fields[:2] == build._RUN_COLUMNS[2:4]
    assert MetaColumns._fields[2:] == build._RUN_COLUMNS[7:14]
