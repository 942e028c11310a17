"""End to end: a real trace viewer, Arize Phoenix with its embedded database, takes the export and gives the spans back.

The OTLP export goes in as OpenTelemetry's own protobuf request on Phoenix's ``/v1/traces`` (what a collector
forwarding the file would send), the ATIF export through Phoenix's own ATIF importer; both are read back with
Phoenix's client. The ``phoenix`` extra brings it (``make test-phoenix`` installs it and runs this file; without it
the file is skipped, saying so).
"""

from __future__ import annotations

import collections
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from journaltools.exports.interchange import export
from tests.otlp import with_binary_ids
from tests.paths import SAMPLES
from tests.processes import stop

# Phoenix's own imports warn (deprecations in its dependencies), and the suite makes warnings errors: not ours.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pytest.importorskip("phoenix.server", reason="Arize Phoenix is not installed: make test-phoenix installs it")
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from phoenix.client import Client
    from phoenix.client.helpers.atif import upload_atif_trajectories_as_spans

#: Dated and undated, with tools, errors and deferrals: small enough for the viewer to take in a second.
RUNS = ["completed-with-tools", "newest-completed-with-tools", "deferred-waiting", "newest-terminal-error"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server on loopback with its SQLite database in a temporary directory, started and stopped here."""
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(tmp_path_factory.mktemp("phoenix")),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    try:
        assert server.stdout is not None
        # Uvicorn says when it listens: read its output until then (the test's timeout bounds a server that hangs).
        for line in server.stdout:
            if "Uvicorn running on" in line:
                break
        else:
            pytest.fail(f"Phoenix exited before listening (status {server.wait()})")
        # It goes on logging every request: keep its pipe drained so it never blocks on a full one.
        drain = threading.Thread(target=collections.deque, args=(server.stdout, 0), daemon=True)
        drain.start()
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)
        if server.stdout is not None:
            server.stdout.close()


def request_of(line: bytes) -> bytes:
    """One OTLP JSON line as the protobuf request a collector sends (the JSON encoding's hex ids made bytes)."""
    message = json_format.Parse(with_binary_ids(line), ExportTraceServiceRequest())
    return message.SerializeToString()


def read_back(client: Client, project: str, expected: int) -> list[Any]:
    """The project's spans once all ``expected`` are stored. Phoenix stores what it received in the background
    and says nothing when done, so the spans are asked for until they are all there (the deadline bounds it)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            spans = client.spans.get_spans(project_identifier=project, limit=10_000)
        except Exception:  # the project exists only once its first span is stored
            spans = []
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(0.2)


def attributes(span: Any) -> dict[str, Any]:
    """A read-back span's attributes, flat (Phoenix may nest dotted keys)."""

    def flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from flatten(f"{prefix}.{key}" if prefix else key, item)
        else:
            yield prefix, value

    return dict(flatten("", span.get("attributes") or {}))


def test_phoenix_stores_the_otlp_export_and_gives_the_spans_back(phoenix_url: str, tmp_path: Path) -> None:
    out = tmp_path / "traces.ndjson"
    export(SAMPLES, RUNS, otlp=out)
    raw = out.read_bytes().splitlines()
    sent = {}
    for line in raw:
        for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            sent[span["spanId"]] = span
        posted = urllib.request.Request(
            f"{phoenix_url}/v1/traces", data=request_of(line), headers={"Content-Type": "application/x-protobuf"}
        )
        with urllib.request.urlopen(posted, timeout=30) as answer:
            assert answer.status == 200
    spans = read_back(Client(base_url=phoenix_url), "default", len(sent))
    assert len(spans) == len(sent)
    roots = 0
    for span in spans:
        ours = sent[span["context"]["span_id"]]
        assert span["context"]["trace_id"] == ours["traceId"] and span["name"] == ours["name"]
        assert (span.get("parent_id") or None) == ours.get("parentSpanId")
        values = attributes(span)
        assert values["gen_ai.operation.name"] in ("invoke_agent", "chat", "execute_tool")
        if ours.get("parentSpanId") is None:
            roots += 1
            assert values["fisk.undated"] is (values["fisk.generation"] == "august")
    assert roots == len(RUNS)
    # the undated run's spans all sit at one instant in the viewer too
    august = [
        span
        for span in spans
        if sent[span["context"]["span_id"]]["traceId"]
        == json.loads(raw[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    ]
    assert len({(span["start_time"], span["end_time"]) for span in august}) == 1


def test_phoenix_imports_the_atif_export(phoenix_url: str, tmp_path: Path) -> None:
    out = tmp_path / "trajectories.ndjson"
    export(SAMPLES, RUNS, atif=out, content=True)
    trajectories = [json.loads(line) for line in out.read_bytes().splitlines()]
    client = Client(base_url=phoenix_url)
    # Phoenix's importer validates each trajectory first and refuses one it cannot read (ValueError).
    answer = upload_atif_trajectories_as_spans(client, trajectories, project_name="journaltools-atif")
    spans = read_back(client, "journaltools-atif", answer["total_queued"])
    assert len(spans) == answer["total_queued"] > 0
    sessions = {attributes(span).get("session.id") for span in spans}
    assert sessions == set(RUNS)
    tools = {span["name"] for span in spans if span.get("span_kind") == "TOOL"}
    assert tools  # the calls came through as tool spans
