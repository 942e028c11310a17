"""Audits to Parquet: the files read back with pandas, pyarrow and DuckDB with the right types, the same
findings as the run-by-run audit, the Dask path equal to the local one, and memory that does not grow
with the number of runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from journaltools.audit import AUDIT_TABLES, audit_sources, iter_run_audits, read_audit, source_findings
from journaltools.backends.registry import open_source
from journaltools.errors import SourceError
from journaltools.generate import generate_corpus, run_id
from journaltools.protocol.findings import Finding
from journaltools.tables import SCHEMAS, TIMESTAMP, findings_of

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


@pytest.fixture
def samples(samples_dir: Path) -> Path:
    return samples_dir


def run_by_run_findings(urls: list[str]) -> list[Finding]:
    """The audit the simple way: every run read and folded on its own, in order."""
    findings: list[Finding] = []
    for url in urls:
        backend = open_source(url)
        findings.extend(source_findings(backend))
        for run_audit in iter_run_audits(backend):
            findings.extend(run_audit.findings)
    return findings


def mixed_corpus(root: Path) -> Path:
    """Generated runs plus the samples (broken ones included) and a journal with an unusable name."""
    generate_corpus(root, runs=16, records=50, seed=21, workers=1)
    for path in SAMPLES.glob("*.jsonl"):
        shutil.copy(path, root / path.name)
    path = root / f"{run_id(4)}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines.insert(6, b"garbage")
    path.write_bytes(b"\n".join(lines))
    (root / "not a run id.jsonl").write_bytes(b"{}\n")
    return root


def test_parquet_round_trip_with_pandas_pyarrow_and_duckdb(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    result = audit_sources([str(samples)], parquet=out, include_records=True)
    assert sorted(result.parquet) == sorted([*AUDIT_TABLES, "records"])
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{name}.parquet" for name in result.parquet)
    assert result.runs == len(list(samples.glob("*.jsonl")))

    # pyarrow: the exact schemas back, row counts as reported.
    for name, path in result.parquet.items():
        table = pq.read_table(path)
        assert table.schema.equals(SCHEMAS[name]), name
        assert table.num_rows == result.rows[name], name
    findings = pq.read_table(out / "findings.parquet")
    assert findings_of(findings) == result.findings

    # pandas: Arrow-backed dtypes without being asked (pandas metadata in the file).
    runs = pd.read_parquet(out / "runs.parquet")
    assert runs["created"].dtype == pd.ArrowDtype(TIMESTAMP)
    assert runs["records"].dtype == pd.ArrowDtype(pa.int64())
    assert runs.loc[runs["run"] == "corrupt-interior", "turns"].isna().all()  # refused: never folded
    assert set(runs.loc[runs["status"] == "invalid", "run"]) == {
        "corrupt-interior",
        "schema-violation",
        "version-mismatch",
    }
    records = pd.read_parquet(out / "records.parquet")
    first = records[records["run"] == "completed-with-tools"].iloc[0]
    assert first["body"].encode() == (samples / "completed-with-tools.jsonl").read_bytes().split(b"\n")[0]
    assert orjson.loads(first["body"])["type"] == "meta"

    # DuckDB: typed columns and a query over them.
    con = duckdb.connect()
    described = {row[0]: row[1] for row in con.sql(f"DESCRIBE SELECT * FROM '{out}/runs.parquet'").fetchall()}
    assert described["created"] == "TIMESTAMP WITH TIME ZONE"
    assert described["turns"] == "BIGINT"
    counts = dict(con.sql(f"SELECT code, count(*) FROM '{out}/findings.parquet' GROUP BY code").fetchall())
    assert counts["corrupt_line"] == 1 and counts["torn_tail"] == 1
    latency = con.sql(
        f"SELECT max(latency_s), min(call_ts) FROM '{out}/tool_calls.parquet' WHERE result_seq IS NOT NULL"
    ).fetchall()[0]
    assert latency is not None and latency[0] > 0 and latency[1].tzinfo is not None


def test_the_streamed_audit_finds_what_the_run_by_run_audit_finds(tmp_path: Path) -> None:
    root = mixed_corpus(tmp_path / "corpus")
    expected = run_by_run_findings([str(root)])
    assert {f.code for f in expected} >= {"corrupt_line", "torn_tail", "schema_violation", "invalid_run_id"}
    for batch_bytes in (16384, 1 << 20):
        result = audit_sources([str(root)], parquet=tmp_path / f"out{batch_bytes}", batch_bytes=batch_bytes)
        assert result.findings == expected
        assert result.runs == len(open_source(str(root)).list_runs())
    small, large = read_audit(tmp_path / "out16384"), read_audit(tmp_path / f"out{1 << 20}")
    for name, table in small.items():
        assert table.equals(large[name]), name


def test_dask_path_gives_the_local_findings_and_tables(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    root = mixed_corpus(tmp_path / "corpus")
    local = audit_sources([str(root)], parquet=tmp_path / "local", include_records=True, batch_bytes=16384)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = audit_sources(
            [str(root)], parquet=tmp_path / "dask", include_records=True, dask=client, batch_bytes=16384
        )
    assert remote.findings == local.findings
    assert (remote.runs, remote.records, remote.rows) == (local.runs, local.records, local.rows)
    partitions = sorted(p.name for p in (tmp_path / "dask" / "runs.parquet").iterdir())
    assert len(partitions) > 1 and all(name.startswith("part.") for name in partitions)  # one per batch
    from_dask, from_local = read_audit(tmp_path / "dask"), read_audit(tmp_path / "local")
    for name, table in from_local.items():
        assert table.equals(from_dask[name]), name
    assert pd.read_parquet(tmp_path / "dask" / "runs.parquet")["turns"].dtype == pd.ArrowDtype(pa.int64())
    total = duckdb.sql(f"SELECT count(*) FROM '{tmp_path}/dask/records.parquet/*.parquet'").fetchall()[0]
    assert total is not None and total[0] == local.records


def test_a_failed_audit_leaves_no_parquet_file(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    with pytest.raises(SourceError):
        audit_sources([str(samples), str(tmp_path / "missing")], parquet=out)
    assert list(out.glob("*.parquet*")) == []


def test_an_audit_without_runs_writes_empty_tables(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = audit_sources([str(tmp_path / "empty")], parquet=tmp_path / "out")
    assert (result.runs, result.records, result.findings) == (0, 0, [])
    for name in AUDIT_TABLES:
        table = pq.read_table(tmp_path / "out" / f"{name}.parquet")
        assert table.num_rows == 0 and table.schema.equals(SCHEMAS[name])


PEAK_RSS = textwrap.dedent(
    """
    import sys, tempfile
    mode, source, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "audit":
        from journaltools.audit import audit_sources
        audit_sources([source], parquet=tempfile.mkdtemp(dir=scratch), include_records=True,
                      batch_bytes=1 << 18, row_group_bytes=1 << 20, quiet=True)
    else:
        from journaltools.tables import load
        tables = load(source, batch_bytes=1 << 18)
    # VmHWM, not ru_maxrss: a child's ru_maxrss keeps the high-water mark of the forked parent it was before exec.
    with open("/proc/self/status") as status:
        print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    """
)


def peak_rss_kib(mode: str, source: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, mode, str(source), str(source.parent)],
        capture_output=True,
        check=True,
        text=True,
    )
    return int(done.stdout.split()[-1])


def test_a_ten_times_larger_corpus_does_not_raise_the_audit_peak_memory(tmp_path: Path) -> None:
    """Peak RSS of an audit (records included) in a fresh process, for a corpus and one ten times larger.

    Batches of 256 KiB and row groups of 1 MiB keep what an audit holds far below the 36 MiB the corpus
    grows by; an audit holding the data would grow by more than that, as ``load`` does.
    """
    generate_corpus(tmp_path / "x1", runs=20, records=200, seed=1, workers=1)
    generate_corpus(tmp_path / "x10", runs=200, records=200, seed=1, workers=1)
    corpus_growth_kib = (
        sum(p.stat().st_size for p in (tmp_path / "x10").iterdir())
        - sum(p.stat().st_size for p in (tmp_path / "x1").iterdir())
    ) // 1024
    audit_growth = peak_rss_kib("audit", tmp_path / "x10") - peak_rss_kib("audit", tmp_path / "x1")
    # The control: loading everything into memory does grow with the corpus, so the measurement can see it.
    load_growth = peak_rss_kib("load", tmp_path / "x10") - peak_rss_kib("load", tmp_path / "x1")
    assert load_growth > corpus_growth_kib
    assert audit_growth < corpus_growth_kib // 2, (audit_growth, corpus_growth_kib)


def test_dask_tasks_read_a_jetstream_source_themselves(
    samples: Path, jetstream: Any, jetstream_url: str, tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    from journaltools.backends.file import FileBackend
    from journaltools.ops.migrate import migrate

    migrate(FileBackend(samples), jetstream)
    local = audit_sources([jetstream_url], parquet=tmp_path / "local")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = audit_sources([jetstream_url], parquet=tmp_path / "dask", dask=client, runs_per_task=3)
    assert remote.findings == local.findings
    assert (remote.runs, remote.records) == (local.runs, local.records)
    assert len(list((tmp_path / "dask" / "runs.parquet").iterdir())) == -(-local.runs // 3)
    from_dask, from_local = read_audit(tmp_path / "dask"), read_audit(tmp_path / "local")
    for name in AUDIT_TABLES:
        assert from_dask[name].equals(from_local[name]), name


def test_an_audit_that_keeps_no_findings_streams_them_all_and_counts_them(tmp_path: Path) -> None:
    root = mixed_corpus(tmp_path / "corpus")
    kept = audit_sources([str(root)])
    streamed: list[Any] = []
    counted = audit_sources([str(root)], keep_findings=False, on_finding=streamed.append)
    assert counted.findings == [] and streamed == kept.findings
    assert counted.counts == kept.counts and sum(counted.counts.values()) == len(kept.findings)
    assert counted.worst() == kept.worst() == "error" and counted.fails("warning") and counted.fails("error")


def test_the_cli_prints_findings_as_they_come(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json as json_module

    from journaltools import cli

    root = mixed_corpus(tmp_path / "corpus")
    expected = [f.to_json() for f in audit_sources([str(root)]).findings]
    monkeypatch.setattr(cli._StreamedFindings, "TABLE_LIMIT", 2)  # past it, lines instead of a table
    done = subprocess.run(
        [sys.executable, "-m", "journaltools", "audit", str(root), "--quiet", "--json"], capture_output=True, text=True
    )
    assert json_module.loads(done.stdout) == expected
    lines: list[str] = []
    printer = cli._StreamedFindings(as_json=False)
    monkeypatch.setattr("builtins.print", lambda text="", **kw: lines.append(str(text)))
    for finding in audit_sources([str(root)]).findings:
        printer.add(finding)
    printer.finish()
    assert len(lines) == len(expected) and all(row["code"] in line for row, line in zip(expected, lines, strict=True))


def _file_and_jetstream_sources(root: Path, jetstream: Any) -> str:
    """Three runs written to a file source and to JetStream: a turn in flight, a completed run ending in a note
    (the two-record rule says open), and one whose JetStream copy lost its last record."""
    from journaltools.backends.file import FileBackend
    from tests.builders import JournalBuilder

    files = FileBackend(root, create=True)
    journals = [
        (JournalBuilder("in-flight").user().assistant("c1"), None),
        (JournalBuilder("ends-in-note").user().assistant().add("note", text="seen", optional=True), None),
        (JournalBuilder("lost-last").user().assistant(), -1),
    ]
    for journal, cut in journals:
        for backend, upto in ((files, None), (jetstream, cut)):
            with backend.open_writer(journal.run) as writer:
                for body in journal.bodies[:upto]:
                    writer.append(body)
    return str(root)


LISTING_FINDINGS = {
    ("in-flight", "listing_documented", "info"),
    ("ends-in-note", "listing_summary_rule", "info"),
    ("lost-last", "listing_discrepancy", "error"),
}


@pytest.mark.parametrize("with_dask", [False, True], ids=["local", "dask"])
def test_auditing_a_file_and_a_jetstream_source_compares_their_listings(
    jetstream: Any, jetstream_url: str, tmp_path: Path, with_dask: bool
) -> None:
    files = _file_and_jetstream_sources(tmp_path / "files", jetstream)
    out = tmp_path / "audit"
    if with_dask:
        pytest.importorskip("dask")
    result = audit_sources([files, jetstream_url], parquet=out, dask=True if with_dask else None)
    listing = [f for f in result.findings if f.code.startswith("listing_")]
    assert {(f.run, f.code, f.severity) for f in listing} == LISTING_FINDINGS
    assert all(" vs " in f.source and jetstream.url in f.source for f in listing)
    lost = next(f for f in listing if f.run == "lost-last")
    assert "different records" in lost.message and "the last seq is 3 in file but 2 in jetstream" in lost.message
    parquet = findings_of(read_audit(out).findings)
    assert {(f.run, f.code, f.severity) for f in parquet if f.code.startswith("listing_")} == LISTING_FINDINGS
    assert result.fails("error") and not any(f.code.startswith("listing_") for f in audit_sources([files]).findings)


def test_audit_command_over_a_file_and_a_jetstream_source(
    jetstream: Any, jetstream_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from journaltools.cli import main

    files = _file_and_jetstream_sources(tmp_path / "files", jetstream)
    code = main(["audit", jetstream_url, files, "--json", "--quiet", "--parquet", str(tmp_path / "out")])
    findings = orjson.loads(capsys.readouterr().out)
    assert code == 0  # findings are data
    assert {(f["run"], f["code"], f["severity"]) for f in findings if f["code"].startswith("listing_")} == (
        LISTING_FINDINGS
    )
    codes = pq.read_table(tmp_path / "out" / "findings.parquet").column("code").to_pylist()
    assert sorted(code for code in codes if code.startswith("listing_")) == sorted(c for _, c, _ in LISTING_FINDINGS)
    assert main(["audit", jetstream_url, files, "--fail-on", "error", "--quiet"]) == 1
