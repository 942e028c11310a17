"""The ``--json`` documents of a JetStream source fit their schemas too: its listing rule gives other rows (no record
count, message times, ``open`` for a turn in flight) and compare's verdicts beyond agree and missing. A slow test
(it starts a nats-server): ``make test`` runs it, ``make check`` does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journaltools.cli import main
from tests.paths import SAMPLES
from tests.schemas import hold_to_schema, journals, printed


def test_the_documents_of_a_jetstream_source_fit_their_schemas(
    capsys: pytest.CaptureFixture[str], jetstream_url: str, tmp_path: Path
) -> None:
    printed(capsys, "migrate", "--json", "--skip-invalid", str(SAMPLES), jetstream_url)
    stream = jetstream_url.removesuffix("&create=1")  # the stream exists now; bound as the runtime binds it
    rows = hold_to_schema("ls", printed(capsys, "ls", "--json", stream))
    assert rows and all(row["records"] is None for row in rows)  # the two-record rule counts none
    compared = hold_to_schema("compare", printed(capsys, "compare", "--json", str(SAMPLES), stream))
    assert {"agree", "documented", "summary_rule", "missing_b"} <= {row["verdict"] for row in compared}
    hold_to_schema("audit", printed(capsys, "audit", "--json", "--quiet", stream))
    shown = 0
    for journal in journals(SAMPLES):
        run = journal.name.split(".")[0]
        code = main(["show", "--json", "--lenient", stream, run])
        out = capsys.readouterr().out
        if code == 0:
            hold_to_schema("show", out)
            shown += 1
    assert shown == len(rows)
    config = tmp_path / "next.json"
    config.write_text(json.dumps({"model": "another-model"}))
    code = main(["gate", "--json", stream, "deferred-waiting", "--config", str(config), "--force"])
    assert code == 0 and hold_to_schema("gate", capsys.readouterr().out)["resumable"] is True
    argv = ["answer", "--json", stream, "deferred-waiting", "toolu_01D2change", "--result", "approved"]
    assert hold_to_schema("answer", printed(capsys, *argv))["seq"] > 0
