"""Issue 20, the cases that need no server: passwords in messages, decompression bombs, unbounded findings,
deep and huge values, compressed journals that break off, and audits that share a Parquet directory.

Each journal is real format (``tests.builders``); each test fails on the code path it guards as it was before
the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.cli import main

PASSWORD = "S3cret"


@pytest.mark.parametrize(
    "url",
    [
        f"nats://alice:{PASSWORD}/x@127.0.0.1:4222/J",
        f"nats://alice:{PASSWORD}?x@127.0.0.1:4222/J",
        f"nats://alice:{PASSWORD}#x@127.0.0.1:4222/J",
        f"tls://alice:{PASSWORD}/x@127.0.0.1:99999/J",
        f"nats://al/ice:{PASSWORD}@host:4222/J",
    ],
)
@pytest.mark.parametrize(
    "argv",
    [
        ["ls", "{url}"],
        ["audit", "{url}"],
        ["show", "{url}", "run-1"],
        ["gate", "{url}", "run-1", "--config", "{config}"],
        ["answer", "{url}", "run-1", "toolu_1", "--result", "x"],
        ["migrate", "data/samples", "{url}"],
        ["compare", "data/samples", "{url}"],
        ["turns", "{url}"],
        ["tasks", "{url}"],
        ["audit", "data/samples", "--task-store", "{url}"],
        ["audit", "data/samples", "--turn-store", "{url}"],
    ],
)
def test_case2_a_password_holding_a_slash_never_reaches_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str, argv: list[str]
) -> None:
    config = tmp_path / "next.json"
    config.write_text('{"model": "m"}')
    code = main([word.replace("{url}", url).replace("{config}", str(config)) for word in argv])
    captured = capsys.readouterr()
    assert code in (1, 2)
    assert PASSWORD not in captured.out + captured.err, captured.err
    assert "***@" in captured.err and captured.err.count("\n") == 1, captured.err
