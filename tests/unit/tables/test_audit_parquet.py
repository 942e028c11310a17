"""Audits to Parquet: the tables of a lenient load written row group by row group (or by Dask partitions) and
read back unchanged by ``read_audit``; one options object shared with ``load``."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from journaltools.audits.sources import AUDIT_TABLES, audit_sources, read_audit
from journaltools.protocol.findings import Finding
from journaltools.tables import SCHEMAS, LoadOptions, load
from journaltools.tables.schema import with_plain_strings
from tests.runstate_corpus import CORPUS

SOURCE = CORPUS / "file"


def test_a_bare_string_is_one_source(tmp_path: Path) -> None:
    result = audit_sources(str(SOURCE), parquet=tmp_path)
    assert result.runs == len(list(SOURCE.glob("*.json")))
    assert result.counts["error"] >= 3  # the three refused edge journals


def test_the_parquet_tables_read_back_as_loaded(tmp_path: Path) -> None:
    result = audit_sources([SOURCE], parquet=tmp_path, row_group_bytes=4096)
    assert set(result.parquet) == set(AUDIT_TABLES)
    written = read_audit(tmp_path)
    loaded = load(SOURCE, strict=False, workers=1)
    for name in AUDIT_TABLES:
        assert with_plain_strings(written[name]).equals(with_plain_strings(loaded[name].cast(SCHEMAS[name]))), name
        assert pq.read_schema(tmp_path / f"{name}.parquet").remove_metadata().equals(SCHEMAS[name].remove_metadata())
    assert written.records.num_rows == 0  # records only when asked


def test_records_are_written_when_asked(tmp_path: Path) -> None:
    audit_sources(SOURCE, parquet=tmp_path, records=True)
    written = read_audit(tmp_path).records
    assert written.schema.equals(SCHEMAS["records"])  # dictionary-encoded, as loaded
    assert with_plain_strings(written).equals(with_plain_strings(load(SOURCE, strict=False, workers=1).records))


def test_one_options_object_for_load_and_audit(tmp_path: Path) -> None:
    seen: list[Finding] = []
    options = LoadOptions(workers=1, keep_findings=False, on_finding=seen.append, parquet=tmp_path)
    result = audit_sources(SOURCE, options)
    assert result.findings == [] and len(seen) == sum(result.counts.values())
    assert load(SOURCE, options=options, strict=False).runs.num_rows == result.runs


def test_the_default_source_when_none_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "fisk-ai" / "runs"
    runs.mkdir(parents=True)
    name = "3IDQ1OhDHSSoRIEpX5dNk2z1f6f.json"
    (runs / name).write_bytes((SOURCE / name).read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert audit_sources().runs == 1


def test_a_dask_audit_writes_partitions_read_back_as_the_local_one(tmp_path: Path) -> None:
    pytest.importorskip("dask")
    audit_sources(SOURCE, parquet=tmp_path / "local")
    result = audit_sources(SOURCE, parquet=tmp_path / "dask", dask=True, batch_bytes=16384)
    assert all(path.is_dir() for path in result.parquet.values())
    local, spread = read_audit(tmp_path / "local"), read_audit(tmp_path / "dask")
    for name in AUDIT_TABLES:
        assert spread[name].num_rows == local[name].num_rows, name
    assert spread.runs.sort_by("run").equals(local.runs.sort_by("run"))


def test_a_dask_audit_needs_a_directory() -> None:
    with pytest.raises(ValueError, match="parquet=DIR"):
        audit_sources(SOURCE, dask=True)
