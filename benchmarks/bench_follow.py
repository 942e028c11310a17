"""The incremental fold's cost per appended record on a 100,000-record journal against a 100-record one, and the
time from a record's append to its display in ``show --follow`` on a file journal and on a real nats-server.

A followed run (``show --follow``) folds each record as it arrives (``folding.incremental.IncrementalRun``); the goal
is that a record costs what it costs whatever the journal's length (within 2x from 100 to 100,000 records), where
folding the whole journal again for each record grows linearly. Both journals are the newest line's, built record by
record (a model turn with one call, then its result); each round starts a fresh run from all but the last
``APPENDED`` records and times appending those one at a time, each append giving the folded run (so the small
journal grows from 50 records to 100, the big one from 99,950 to 100,000).

The display latency: a writer in another process (the project's own) appends 20 records a second for a minute
(``--quick``: five seconds) to a newest-line journal, whose records are dated when written; ``show --follow`` runs as
a process too, and each record's ``(shown ... after it was journaled)`` is read off its output (goal: 200 ms at the
50th percentile, 1 s at the 99th).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.measure import figure, load_average, note
from journaltools.folding.fold import fold
from journaltools.folding.incremental import IncrementalRun
from journaltools.protocol.encode import encode_record
from journaltools.protocol.findings import Finding
from journaltools.protocol.generations import NEWEST
from journaltools.protocol.journal import StoredRecord
from journaltools.samples.builder import JournalBuilder, calls_of, text, tool_use
from journaltools.samples.stories import sample_fingerprint

#: Records appended one at a time in each round (the per-record cost is their mean): the last ones of each journal.
APPENDED = 50


def journal(records: int) -> list[StoredRecord]:
    built = JournalBuilder(
        "bench-follow",
        prompt="follow me",
        created="2026-11-29T10:00:00.123456789Z",
        fingerprint=sample_fingerprint(),
        generation=NEWEST,
        time="2026-11-29T10:00:01.5Z",
    )
    while len(built.records) < records:
        turn = built.assistant(text("next"), tool_use(f"toolu_{len(built.records)}", "lookup", {"n": 1}))
        built.result(calls_of(turn)[0], "done")
    return [StoredRecord(record, encode_record(record), n) for n, record in enumerate(built.records[:records], 1)]


class _Read:
    def __init__(self, records: Sequence[StoredRecord]) -> None:
        self.run, self.records, self.complete = "bench-follow", records, True
        self.findings: list[Finding] = []


def per_record_seconds(records: list[StoredRecord], rounds: int) -> list[float]:
    """Seconds per appended record, one figure per round."""
    head, tail = records[:-APPENDED], records[-APPENDED:]
    figures = []
    for _ in range(rounds):
        run = IncrementalRun.of(_Read(head))
        gc.collect()  # the collector's pass over the big journal's objects is not the fold's
        start = time.perf_counter()
        for stored in tail:
            run.append([stored])
        figures.append((time.perf_counter() - start) / len(tail))
    return figures


#: The writer process: a newest-line run whose records are dated as they are written, ``RATE`` a second.
WRITER = textwrap.dedent(
    """
    import sys, time
    from journaltools.goencoding.time import now_go_time
    from journaltools.protocol.generations import NEWEST
    from journaltools.samples.builder import JournalBuilder
    from journaltools.samples.stories import sample_fingerprint
    from journaltools.sources.registry import open_source

    url, run, seconds, rate = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    built = JournalBuilder(run, prompt="latency", created=now_go_time(), fingerprint=sample_fingerprint(),
                           generation=NEWEST, clock=now_go_time)
    with open_source(url, create=True) as source, source.create_journal(run, built.meta) as writer:
        print("created", flush=True)
        sys.stdin.readline()  # the follower is following
        start = time.monotonic()
        count = 0
        while time.monotonic() - start < seconds:
            count += 1
            writer.append(built.user(f"record {count}"))
            time.sleep(max(0.0, start + count / rate - time.monotonic()))
        writer.append(built.terminal("completed"))
    """
)
_SHOWN = re.compile(r"\(shown ([0-9.]+)(µs|ms|s) after it was journaled\)")
_UNIT = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def display_latencies(url: str, seconds: float, rate: float = 20.0) -> list[float]:
    """Seconds from append to display of every record a writer process appended (see the module doc)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = "latency-run"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, run, str(seconds), str(rate)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert writer.stdout is not None and writer.stdin is not None
    writer.stdout.readline()
    follow = subprocess.Popen(
        [sys.executable, "-m", "journaltools", "show", "--follow", url, run], stdout=subprocess.PIPE, text=True, env=env
    )
    assert follow.stdout is not None
    latencies = []
    for line in follow.stdout:
        if line.startswith("--- following"):
            writer.stdin.write("go\n")
            writer.stdin.flush()
        found = _SHOWN.search(line)
        if found is not None and "[seq 1]" not in line:
            latencies.append(float(found.group(1)) * _UNIT[found.group(2)])
    follow.wait()
    writer.wait()
    return latencies


def _percentiles(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p50 = ordered[len(ordered) // 2]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {p50 * 1e3:.0f}ms p99 {p99 * 1e3:.0f}ms over {len(ordered)} records"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_follow", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 records instead of 100,000, one round")
    args = parser.parse_args(argv)
    big_size = 10_000 if args.quick else 100_000
    rounds = 1 if args.quick else 5
    print(f"# bench_follow: {load_average()}", flush=True)
    small, big = journal(100), journal(big_size)
    small_times, big_times = [], []
    for _ in range(rounds):  # interleaved, so a noisy moment weighs on both
        small_times += per_record_seconds(small, 1)
        big_times += per_record_seconds(big, 1)
    per_round = statistics.median(big / small for big, small in zip(big_times, small_times, strict=True))
    best = min(big_times) / min(small_times)
    whole = time.perf_counter()
    fold([stored.record for stored in big], run="bench-follow")
    whole = time.perf_counter() - whole
    note(f"per record: 100-record journal {small_times}, {big_size:,}-record journal {big_times}")
    detail = (
        f"{min(big_times) * 1e6:.0f}us vs {min(small_times) * 1e6:.0f}us best; a whole refold of {big_size:,} "
        f"records: {whole * 1e3:.0f}ms"
    )
    print(figure(f"follow_append_per_record_{big_size}_vs_100", (per_round, best), "within 2x", detail), flush=True)
    seconds = 5.0 if args.quick else 60.0
    with tempfile.TemporaryDirectory() as directory:
        print(f"follow_display_latency_file {_percentiles(display_latencies(directory, seconds))}  goal: p50 200ms, "
              "p99 1s", flush=True)  # fmt: skip
    from journaltools.sources.embedded import EmbeddedServer

    with EmbeddedServer() as server:
        url = server.source_url("FOLLOW_BENCH", prefix="follow.bench") + "&create=1"
        print(f"follow_display_latency_jetstream {_percentiles(display_latencies(url, seconds))}  goal: p50 200ms, "
              "p99 1s", flush=True)  # fmt: skip
    print(f"# bench_follow done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
