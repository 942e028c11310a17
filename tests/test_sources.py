"""Sources a user has: one journal file, a glob, several sources at once, compressed journals, ``embedded:DIR``,
and a directory whose other files are reported once rather than ignored."""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
import zstandard

from journaltools.audit import audit_sources
from journaltools.backends.file import FileBackend, JournalFilesBackend
from journaltools.backends.jetstream import JetStreamBackend
from journaltools.backends.registry import open_source
from journaltools.embedded import STORE_LOCK_NAME, lease_server, shared_server
from journaltools.errors import CorruptJournal, ReadOnlySource, SourceError
from journaltools.tables import Tables, findings_of, load
from tests.builders import JournalBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "journaltools", *argv], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def compressed_copy(source: Path, target: Path, suffix: str) -> Path:
    target.mkdir()
    for journal in sorted(source.glob("*.jsonl")):
        data = journal.read_bytes()
        packed = gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)
        (target / (journal.name + suffix)).write_bytes(packed)
    return target


def comparable(tables: Tables, *roots: Path) -> dict[str, list[dict[str, object]]]:
    """The tables without what names the place they were read from (the source column, paths in messages)."""
    out = {}
    for name in ("records", "runs", "messages", "tool_calls", "findings"):
        table: pa.Table = tables[name]
        if "source" in table.column_names:
            table = table.drop_columns(["source"])
        rows = table.to_pylist()
        for row in rows:
            if isinstance(row.get("message"), str):
                for root in roots:
                    row["message"] = row["message"].replace(str(root) + "/", "")
                row["message"] = row["message"].replace(".jsonl.gz", ".jsonl").replace(".jsonl.zst", ".jsonl")
        out[name] = rows
    return out


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_compressed_copy_of_the_samples_loads_to_the_same_tables(tmp_path: Path, suffix: str) -> None:
    packed = compressed_copy(SAMPLES, tmp_path / "packed", suffix)
    backend = FileBackend(packed)
    assert backend.local_journals(backend.list_runs()) is None, "compressed journals are read through the backend"
    plain = load(SAMPLES, strict=False)
    assert plain.runs.num_rows == 14
    assert comparable(load(packed, strict=False), packed) == comparable(plain, SAMPLES)
    one = next(SAMPLES.glob("*.jsonl"))
    assert comparable(load(packed / (one.name + suffix), strict=False), packed) == comparable(
        load(one, strict=False), SAMPLES
    )


def test_compressed_journals_are_read_only(tmp_path: Path) -> None:
    packed = compressed_copy(SAMPLES, tmp_path / "packed", ".gz")
    for source in (FileBackend(packed), open_source(packed / "suspended-approval.jsonl.gz")):
        with pytest.raises(ReadOnlySource, match="read-only"):
            source.open_writer("suspended-approval")
    assert sorted(p.name for p in packed.iterdir()) == sorted(p.name + ".gz" for p in SAMPLES.glob("*.jsonl"))


def test_damaged_compressed_data_refuses_the_journal_after_the_records_before_it(tmp_path: Path) -> None:
    journal = JournalBuilder("r").user().assistant().user("more")
    packed = gzip.compress(journal.bytes())
    (tmp_path / "r.jsonl.gz").write_bytes(packed[: len(packed) - 12])  # the stream ends early
    backend = FileBackend(tmp_path)
    with pytest.raises(CorruptJournal, match="compressed data is damaged"):
        backend.read_run("r")
    read = backend.read_run("r", strict=False)
    assert not read.complete and [f.code for f in read.findings] == ["corrupt_line"]
    assert [r.raw for r in read.records] == journal.bytes().splitlines()[: len(read.records)]


def test_a_single_journal_file_is_a_source(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES, tmp_path / "d")
    path = tmp_path / "d" / "suspended-approval.jsonl"
    with open_source(path) as backend:
        assert isinstance(backend, JournalFilesBackend) and backend.list_runs() == ["suspended-approval"]
        assert backend.url == path.as_uri()
    done = cli("show", str(path), "suspended-approval", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["resume"]["waiting_for"] == "answer"
    done = cli("answer", str(path), "suspended-approval", "toolu_21", "--result", "ok")
    assert done.returncode == 0, done.stderr  # a plain journal named alone can still be answered
    with open_source(path) as backend, pytest.raises(ReadOnlySource, match="create runs in a directory"):
        backend.open_writer("another-run")
    missing = cli("ls", str(tmp_path / "d" / "nope.jsonl"))
    assert missing.returncode == 1 and "no such journal file" in missing.stderr


def test_a_glob_is_a_source_and_reports_what_it_cannot_read(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for month, run in (("2026-01", "a"), ("2026-02", "b"), ("2026-02", "c"), ("2025-12", "old")):
        (logs / month).mkdir(parents=True, exist_ok=True)
        (logs / month / f"{run}.jsonl").write_bytes(JournalBuilder(run).user().assistant().bytes())
    (logs / "2026-02" / "notes.txt").write_text("not a journal")
    (logs / "2026-03").mkdir()
    (logs / "2026-03" / "a.jsonl").write_bytes(JournalBuilder("a").user().bytes())  # run a again
    with open_source(str(logs / "2026-*" / "*")) as backend:
        assert backend.list_runs() == ["a", "b", "c"]
        codes = sorted((f.code, Path(f.message.split(":")[0]).name) for f in backend.source_findings())
        assert codes == [("duplicate_journal", "a.jsonl"), ("not_a_journal", "notes.txt")]
        assert backend.read_run("a").records[-1].type == "assistant", "the first match of a run is read"
    assert load(str(logs / "**" / "*.jsonl"), strict=False).runs.num_rows == 4
    done = cli("ls", str(logs / "2026-*" / "*.jsonl"), "--json")
    assert done.returncode == 0 and [row["run"] for row in json.loads(done.stdout)] == ["a", "b", "c"]
    assert "duplicate_journal" in done.stderr
    nothing = cli("ls", str(logs / "1999-*" / "*.jsonl"))
    assert nothing.returncode == 1 and "matches no file" in nothing.stderr and "Traceback" not in nothing.stderr
    with pytest.raises(SourceError, match="matches no file"):
        open_source(str(logs / "1999-*" / "*.jsonl"))


def test_several_sources_at_once(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES, tmp_path / "one")
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "extra.jsonl").write_bytes(JournalBuilder("extra").user().assistant().bytes())
    listed = cli("ls", str(tmp_path / "one"), str(tmp_path / "two"), "--json")
    rows = json.loads(listed.stdout)
    assert listed.returncode == 0 and len(rows) == 15
    assert {row["source"] for row in rows} == {(tmp_path / "one").as_uri(), (tmp_path / "two").as_uri()}
    shell_expanded = [str(p) for p in sorted((tmp_path / "one").glob("*.jsonl"))[:3]]
    table = cli("ls", *shell_expanded)
    assert table.returncode == 0 and len(table.stdout.splitlines()) == 4 and "SOURCE" in table.stdout
    audited = cli("audit", str(tmp_path / "one"), str(tmp_path / "two"))
    assert audited.returncode == 0 and "15 runs" in audited.stderr


def test_other_files_in_a_directory_are_reported_once(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES, tmp_path / "d")
    root = tmp_path / "d"
    (root / "README.txt").write_text("about these runs")
    (root / "archive").mkdir()
    (root / "torn-tail.jsonl.gz").write_bytes(gzip.compress(b"{}"))
    (root / "turn-in-flight.lock").write_bytes(b"")  # a writer's lock: ours, not reported
    backend = FileBackend(root)
    found = sorted((f.code, f.message.split(":")[0]) for f in backend.source_findings())
    assert found == [
        ("duplicate_journal", "torn-tail.jsonl.gz"),
        ("not_a_journal", "README.txt"),
        ("not_a_journal", "archive"),
    ]
    assert len(backend.list_runs()) == 14
    findings = load(root, strict=False).findings.to_pylist()
    assert sum(1 for f in findings if f["code"] in ("not_a_journal", "duplicate_journal")) == 3
    listed = cli("ls", str(root))
    assert listed.returncode == 0 and len(listed.stderr.splitlines()) == 3 and "README.txt" in listed.stderr


def test_embedded_dir_keeps_what_one_command_wrote_for_the_next(tmp_path: Path) -> None:
    store = tmp_path / "store"
    migrated = cli("migrate", str(SAMPLES), f"embedded:{store}", "--json")
    report = json.loads(migrated.stdout)
    refused = {entry["run"] for entry in report["refused"]}
    assert report["verified"] is True and report["runs"] == 14 - len(refused) and refused
    assert "throwaway" not in migrated.stderr
    compared = cli("compare", str(SAMPLES), f"embedded:{store}", "--json")
    assert compared.returncode == 0, compared.stderr
    rows = {row["run"]: row["verdict"] for row in json.loads(compared.stdout)}
    assert len(rows) == 14
    assert {run for run, verdict in rows.items() if verdict.startswith("missing")} == refused
    assert all(rows[run] == "missing_b" for run in refused), "only the journals migrate refused are absent"
    listed = cli("ls", f"embedded:{store}", "--json")
    assert {row["run"] for row in json.loads(listed.stdout)} == set(rows) - refused
    # Each command stopped its server: the store is free, so this process can lock it.
    with open(store / STORE_LOCK_NAME, "rb+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_store_in_use_by_another_process_is_refused_at_once(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with open_source(f"embedded:{store}") as backend:
        assert isinstance(backend, JetStreamBackend)
        done = cli("ls", f"embedded:{store}")
        assert done.returncode == 1 and "another process is running a server on this store" in done.stderr
        assert len(done.stderr.splitlines()) == 1


def test_close_stops_the_embedded_server_it_started(tmp_path: Path) -> None:
    backend = open_source(f"embedded:{tmp_path / 'store'}")
    lease = lease_server(tmp_path / "store")  # a second user of the same store shares the server
    server = lease.server
    assert server.running
    with backend.open_writer("kept") as writer:
        writer.append(JournalBuilder("kept").bodies[0])
    backend.close()
    assert server.running, "still leased"
    lease.release()
    assert not server.running
    with open_source(f"embedded:{tmp_path / 'store'}") as again:
        assert again.list_runs() == ["kept"]


def test_the_throwaway_server_stops_with_the_last_source_using_it() -> None:
    first, second = open_source("embedded"), open_source("embedded")
    throwaway = lease_server()
    assert first.url.startswith(throwaway.server.url) and second.url.startswith(throwaway.server.url)
    throwaway.release()
    first.close()
    assert throwaway.server.running, "the second source still uses it"
    second.close()
    assert not throwaway.server.running
    kept = shared_server()  # asked for directly (the demo does): it stays until the process exits
    with open_source("embedded") as third:
        assert third.url.startswith(kept.url)
    assert kept.running


def test_migrating_into_a_throwaway_embedded_server_warns(tmp_path: Path) -> None:
    done = cli("migrate", str(SAMPLES), "embedded")
    warnings = [line for line in done.stderr.splitlines() if "throwaway" in line]
    assert len(warnings) == 1 and "ends with this command" in warnings[0] and "embedded:DIR" in warnings[0]


def test_paths_with_unusual_names_are_still_paths(tmp_path: Path) -> None:
    odd = tmp_path / "runs:2026"
    shutil.copytree(SAMPLES, odd)
    with open_source(str(odd)) as backend:
        assert len(backend.list_runs()) == 14
    assert os.fspath(odd).count(":") == 1


def test_every_finding_names_the_source_url_and_a_damaged_journal_its_path_in_the_message(tmp_path: Path) -> None:
    packed = compressed_copy(SAMPLES, tmp_path / "packed", ".zst")
    for root, suffix in ((SAMPLES, ".jsonl"), (packed, ".jsonl.zst")):
        url = root.as_uri()
        findings = findings_of(load(root, strict=False).findings)
        assert {f.code for f in findings} >= {"corrupt_line", "torn_tail", "schema_violation"}
        assert {f.source for f in findings} == {url}, root
        assert {f.source for f in audit_sources([str(root)]).findings} == {url}, root
        for finding in findings:
            if finding.code in ("corrupt_line", "torn_tail"):
                assert f"{finding.run}{suffix}" in finding.message, finding
