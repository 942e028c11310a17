"""The export reads both backends alike: a run and its JetStream copy export to the same bytes, both generations."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.exports.interchange import export
from journaltools.ops.migrate import migrate
from journaltools.sources.jetstream import JetStreamBackend
from journaltools.sources.registry import open_source
from tests.paths import SAMPLES
from tests.runstate_corpus import NEWEST_CORPUS


@pytest.mark.parametrize("source", [SAMPLES, NEWEST_CORPUS / "file"], ids=["samples", "newest-scenarios"])
def test_a_run_and_its_jetstream_copy_export_identically(
    source: Path, jetstream: JetStreamBackend, tmp_path: Path
) -> None:
    with open_source(str(source)) as files:
        migrate(files, jetstream)
        copied = jetstream.list_runs()
        assert copied
        from_files = export(files, copied, otlp=tmp_path / "f.otlp", atif=tmp_path / "f.atif", content=True)
    from_stream = export(jetstream, copied, otlp=tmp_path / "j.otlp", atif=tmp_path / "j.atif", content=True)
    assert from_files.runs == from_stream.runs == copied
    assert (tmp_path / "f.otlp").read_bytes() == (tmp_path / "j.otlp").read_bytes()
    assert (tmp_path / "f.atif").read_bytes() == (tmp_path / "j.atif").read_bytes()
