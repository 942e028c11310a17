"""The bundled sample journals, written with the real writer (and, for the broken ones, as raw bytes).

Timestamps are fixed, so regenerating gives the same bytes as ``data/samples/`` (a test checks it).
``samples_dir()`` finds them for the demo and the notebooks: the checkout's ``data/samples`` when there is
one, otherwise a directory it writes them into, so an installed package needs nothing from the repository.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from journaltools._durable import fsync_directory
from journaltools.backends.file import FileBackend
from journaltools.backends.oserrors import mapped
from journaltools.errors import SourceError, StorageError
from journaltools.ops.answer import answer_call
from journaltools.ops.clock import format_ts
from journaltools.ops.resume import claim_run
from journaltools.protocol.fingerprint import system_sha256
from journaltools.protocol.records import encode_record

SAMPLE_EPOCH = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
SAMPLE_SYSTEM_PROMPT = "You are a careful coding agent. Use tools to inspect before you change anything."
SAMPLE_TOOLS = {
    "read_file": system_sha256('{"name":"read_file","input_schema":{"path":"string"}}'),
    "run_tests": system_sha256('{"name":"run_tests","input_schema":{"target":"string"}}'),
    "deploy": system_sha256('{"name":"deploy","input_schema":{"env":"string"}}'),
}


def sample_fingerprint() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "system_sha256": system_sha256(SAMPLE_SYSTEM_PROMPT),
        "temperature": 0.2,
        "max_tokens": 4096,
        "tools": dict(SAMPLE_TOOLS),
        "budget": {"max_turns": 20, "max_tokens": 200000},
    }


class _Script:
    """Builds one run's records with consecutive seqs and timestamps one second apart."""

    def __init__(self, run: str, start_minute: int) -> None:
        self.run = run
        self.seq = 0
        self.clock = SAMPLE_EPOCH + timedelta(minutes=start_minute)
        self.records: list[dict[str, Any]] = []

    def ts(self) -> str:
        self.clock += timedelta(seconds=1, microseconds=250_000)
        return format_ts(self.clock)

    def add(self, kind: str, **payload: Any) -> dict[str, Any]:
        self.seq += 1
        record = {"type": kind, "run": self.run, "seq": self.seq, "ts": self.ts(), **payload}
        self.records.append(record)
        return record

    def meta(self, **labels: str) -> None:
        self.add("meta", version=1, fingerprint=sample_fingerprint(), labels=labels or {"sample": self.run})

    def user(self, content: str | list[dict[str, Any]]) -> None:
        self.add("user", content=content)

    def assistant(self, text: str | None, *calls: tuple[str, str, dict[str, Any]], tokens: int = 120) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
        self.add(
            "assistant",
            content=content,
            stop_reason="tool_use" if calls else "end_turn",
            usage={"input_tokens": tokens * 10, "output_tokens": tokens},
            model="claude-sonnet-4-5",
        )

    def result(self, call: str, content: str, is_error: bool = False) -> None:
        payload: dict[str, Any] = {"call": call, "content": content}
        if is_error:
            payload["is_error"] = True
        self.add("tool_result", **payload)


def _scripts() -> Iterator[_Script]:
    s = _Script("completed-with-tools", 0)
    s.meta()
    s.user("The tests in billing/ fail since this morning. Find out why.")
    s.assistant(
        "Let me look at the failing test and the module.",
        ("toolu_01", "run_tests", {"target": "billing/"}),
        ("toolu_02", "read_file", {"path": "billing/invoice.py"}),
    )
    s.result("toolu_01", "FAILED billing/test_invoice.py::test_rounding - assert 10.01 == 10.0")
    s.result("toolu_02", "def total(lines):\n    return round(sum(l.amount for l in lines), 1)\n")
    s.assistant("`total` rounds to one decimal; the test expects cents. Round to 2 places instead.")
    yield s

    s = _Script("turn-in-flight", 5)
    s.meta()
    s.user("Deploy the fix to staging and run the smoke tests.")
    s.assistant(
        "Running the smoke tests first.",
        ("toolu_11", "run_tests", {"target": "smoke/"}),
        ("toolu_12", "read_file", {"path": "deploy/staging.yaml"}),
    )
    yield s

    s = _Script("suspended-approval", 10)
    s.meta()
    s.user("Ship release 2.4 to production.")
    s.assistant("Deploying needs an operator's approval.", ("toolu_21", "deploy", {"env": "production"}))
    s.add("deferral", call="toolu_21", reason="approval")
    yield s

    s = _Script("approved-deferral", 15)
    s.meta()
    s.user("Ship release 2.4 to staging.")
    s.assistant("Deploying to staging needs approval.", ("toolu_31", "deploy", {"env": "staging"}))
    s.add("deferral", call="toolu_31", reason="approval")
    s.add("approval", call="toolu_31", decision="approve", by="oncall@example.com", note="staging is fine")
    yield s

    s = _Script("answered-deferral", 20)
    s.meta()
    s.user("Ask the build farm for the nightly artifact checksum.")
    s.assistant("The build farm answers out of band.", ("toolu_41", "read_file", {"path": "farm://nightly.sha256"}))
    s.add("deferral", call="toolu_41", reason="external")
    yield s  # answered below with answer_call, as an operator would

    s = _Script("resumed-after-crash", 25)
    s.meta()
    s.user("Read the config and summarise the feature flags.")
    s.assistant("Reading the config.", ("toolu_51", "read_file", {"path": "config/flags.toml"}))
    yield s  # a worker crashed here; the resume below claims the run and finishes the turn

    s = _Script("consecutive-users", 30)
    s.meta()
    s.user("Summarise yesterday's incident.")
    s.user([{"type": "text", "text": "Also: keep it under five lines."}])
    s.assistant("Yesterday's incident: a bad cache key caused stale invoices for 40 minutes; reverted at 14:10.")
    yield s

    s = _Script("failed-provider", 35)
    s.meta()
    s.user("Run the whole test suite.")
    s.assistant("Running it.", ("toolu_61", "run_tests", {"target": "all"}))
    s.result("toolu_61", "error: test runner killed (out of memory)", is_error=True)
    s.add("error", where="provider", message="overloaded: 3 retries exhausted", fatal=True)
    yield s

    s = _Script("cancelled-by-user", 40)
    s.meta()
    s.user("Rewrite the billing module in Rust.")
    s.add("note", text="operator looked at this run", tags=["triage"], optional=True)
    s.add("cancel", by="alice@example.com", reason="wrong repository")
    yield s

    s = _Script("optional-unknown-record", 45)
    s.meta()
    s.user("What does <script>alert('xss')</script> do in a tool result?")
    s.add("checkpoint", optional=True, snapshot="s3://bucket/snap-1")
    s.add("note", text="reviewed", optional=True)
    s.assistant("It is only text here; journal content is shown escaped.")
    yield s


def _post_write(backend: FileBackend, run: str, script: _Script) -> None:
    """What an operator or a resuming worker adds to a run after the runner stopped."""
    if run == "answered-deferral":
        answer_call(backend, run, "toolu_41", "sha256:9f2c...e1 nightly-2026-11-28.tar.gz", ts=script.ts())
    elif run == "resumed-after-crash":
        resumed = claim_run(backend, run, "worker-b", ts=script.ts(), host="build-7", pid=4242)
        with resumed.writer as writer:
            seq = writer.last_seq
            for record in (
                {"type": "tool_result", "call": "toolu_51", "content": "[flags]\nnew_checkout = true\nbeta = false\n"},
                {
                    "type": "assistant",
                    "content": [{"type": "text", "text": "Two flags: new_checkout is on, beta is off."}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 900, "output_tokens": 40},
                },
            ):
                seq += 1
                writer.append({"type": record.pop("type"), "run": run, "seq": seq, "ts": script.ts(), **record})


def _broken_journals() -> dict[str, bytes]:
    """Journals the writer refuses to produce, so they are written as raw bytes."""
    out: dict[str, bytes] = {}

    torn = _Script("torn-tail", 50)
    torn.meta()
    torn.user("Count the TODOs in src/.")
    torn.assistant("There are 14 TODOs.")
    body = b"".join(encode_record(r) + b"\n" for r in torn.records)
    out["torn-tail"] = body + b'{"type":"note","run":"torn-tail","seq":4,"ts":"2026-11-29T10:5'

    corrupt = _Script("corrupt-interior", 55)
    corrupt.meta()
    corrupt.user("List the open incidents.")
    corrupt.assistant("Two are open.")
    lines = [encode_record(r) for r in corrupt.records]
    lines.insert(2, b'{"type":"assistant","run":"corrupt-interior","seq":3,"content":[{"type":"te\x00xt"')
    out["corrupt-interior"] = b"\n".join(lines) + b"\n"

    version = _Script("version-mismatch", 60)
    version.add("meta", version=2, fingerprint=sample_fingerprint())
    version.user("Hello from a newer runtime.")
    out["version-mismatch"] = b"".join(encode_record(r) + b"\n" for r in version.records)

    schema = _Script("schema-violation", 65)
    schema.meta()
    schema.user("Tell me a joke.")
    schema.add("assistant", content=[{"type": "text", "text": "Why did the journal..."}], stop_reason="end_turn")
    out["schema-violation"] = b"".join(encode_record(r) + b"\n" for r in schema.records)
    return out


def write_samples(directory: str | Path) -> list[str]:
    """Write every sample journal into ``directory`` (which must not hold them yet); returns the run ids.

    All or nothing: the journals are written into a scratch directory inside ``directory`` and moved into
    place only once every one of them is complete, so a full disk or a refused write leaves ``directory`` as
    it was (``StorageError``, naming the path).
    """
    root = Path(directory)
    created = not root.exists()
    with mapped(root, "create the samples directory"):
        root.mkdir(parents=True, exist_ok=True)
    try:
        with mapped(root, "write the sample journals"):
            scratch = Path(tempfile.mkdtemp(prefix=".samples-", dir=root))
    except BaseException:
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    moved: list[str] = []
    try:
        try:
            runs = _write_into(scratch)
        except StorageError as exc:  # name the file the user asked for, not the scratch copy that is removed
            where = str(root / Path(exc.path).name) if exc.path.startswith(str(scratch)) else exc.path
            raise StorageError(where, exc.doing, exc.why, exc.hint, exc.errno) from None
        with mapped(root, "move the sample journals into place"):
            for run in runs:
                (scratch / f"{run}.jsonl").rename(root / f"{run}.jsonl")
                moved.append(run)
            fsync_directory(root)
    except BaseException:
        for run in moved:
            (root / f"{run}.jsonl").unlink(missing_ok=True)
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return runs


def _write_into(root: Path) -> list[str]:
    backend = FileBackend(root)
    runs = []
    for script in _scripts():
        with backend.open_writer(script.run) as writer:
            for record in script.records:
                writer.append(record)
        _post_write(backend, script.run, script)
        runs.append(script.run)
    with mapped(root, "write the sample journals"):
        for run, data in _broken_journals().items():
            (root / f"{run}.jsonl").write_bytes(data)
            runs.append(run)
    return sorted(runs)


#: Where ``samples_dir`` writes the samples when no checkout holds them (relative to the working directory).
DEFAULT_SAMPLES_FALLBACK = Path("journaltools-samples")

#: One journal every sample set has, to recognise a directory of samples.
_MARKER = "completed-with-tools.jsonl"


def _holds_samples(directory: Path) -> bool:
    return (directory / _MARKER).is_file()


def _checkout_samples(start: Path) -> Path | None:
    """``data/samples`` of a journaltools checkout at or above ``start`` (a checkout has ``pyproject.toml``)."""
    for folder in (start, *start.parents):
        candidate = folder / "data" / "samples"
        if (folder / "pyproject.toml").is_file() and _holds_samples(candidate):
            return candidate
    return None


def samples_dir(fallback: str | os.PathLike[str] | None = None, start: str | os.PathLike[str] | None = None) -> Path:
    """The directory of sample journals, never raising for want of a repository.

    In order: ``data/samples`` of the checkout holding ``start`` (the working directory by default) or this
    package; else ``fallback`` (``./journaltools-samples`` by default) when it holds them already; else the
    samples are written there (the same bytes every time) and it is returned.
    """
    here = Path(start) if start is not None else Path.cwd()
    found = _checkout_samples(here.resolve()) or _checkout_samples(Path(__file__).resolve().parent)
    if found is not None:
        return found
    target = Path(fallback) if fallback is not None else DEFAULT_SAMPLES_FALLBACK
    if _holds_samples(target):
        return target
    if target.exists() and any(target.iterdir()):
        raise SourceError(f"{target} exists and does not hold the sample journals; remove it or pass another directory")
    # Written beside the target and renamed into place, so an interrupted write never looks like a sample set.
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    write_samples(partial)
    if target.exists():
        target.rmdir()
    partial.rename(target)
    return target
