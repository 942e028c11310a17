"""JetStream: reading, appending, listing. ``python -m benchmarks.bench_jetstream [--quick]``.

Everything runs against a throwaway local ``nats-server -js`` (journaltools.embedded) holding generated,
realistic journals stored exactly as the writer stores them (one message per ``journal.R.N``, the writer's
headers). Each figure compares journaltools with raw nats-py on the same messages (see ``measure``):

- ``read_all_runs_vs_ordered_consumer``: a raw nats-py ordered consumer over ``journal.>`` draining every
  message without decoding it, over journaltools' ``read_runs()`` (every run, every record decoded to a
  ``RawRecord``). ``read_one_run_vs_ordered_consumer``: the same for one long run (batched direct get).
- ``append_blocking_vs_raw_publish`` / ``append_async_vs_raw_publish``: a raw awaited ``js.publish`` with the
  writer's headers over a writer's blocking ``append`` (from this thread) and ``append_async`` (awaited on
  the loop), record after record, each waiting for its ack. Goals 0.8x and 0.9x.
- ``listing_many_short_over_few_long``: listing the runs of two streams holding the same number of records,
  one as many one-record runs, one as a few long runs: the time ratio should follow the ratio of their run
  counts (the cost follows runs, not records); the old enumeration of every subject is shown beside it.
  ``listing_short_vs_every_subject`` and ``listing_long_vs_every_subject``: that enumeration over the
  listing, per shape (above 1: the listing is faster). Counting a run costs the server time in proportion
  to its records, and each count is a request: where runs are short the listing enumerates every subject.
- ``listing_two_record_vs_fold``: the two-record summary against folding every run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import orjson
from nats.aio.client import Client

from benchmarks.measure import figure, interleaved, load_average, note
from journaltools.aio import run_sync
from journaltools.backends.jetstream import JetStreamBackend, new_msg_id, open_jetstream_source
from journaltools.backends.nats_connection import JetStreamOptions
from journaltools.embedded import EmbeddedServer
from journaltools.generate import generate_corpus, run_id
from journaltools.protocol.records import encode_record
from journaltools.samples import sample_fingerprint


def writer_headers(backend: JetStreamBackend, run: str, seq: int) -> dict[str, str]:
    return {
        "Nats-Msg-Id": new_msg_id(run, seq),
        "Nats-Expected-Last-Subject-Sequence": "0",
        "Nats-Expected-Stream": backend.stream,
    }


def store(client: Client, backend: JetStreamBackend, messages: list[tuple[str, bytes, dict[str, str]]]) -> None:
    """Publish without waiting for each ack, then wait for the last (one connection is stored in order)."""

    async def go() -> None:
        for subject, data, headers in messages[:-1]:
            await client.publish(subject, data, headers=headers)
        subject, data, headers = messages[-1]
        ack = orjson.loads((await client.request(subject, data, timeout=120, headers=headers)).data)
        assert "error" not in ack, ack

    run_sync(go())


def load_corpus(client: Client, backend: JetStreamBackend, root: Path) -> int:
    messages = []
    for path in sorted(root.glob("*.jsonl")):
        for seq, line in enumerate(path.read_bytes().splitlines(), start=1):
            messages.append((backend.subject(path.stem, seq), line, writer_headers(backend, path.stem, seq)))
    store(client, backend, messages)
    return len(messages)


async def drain_ordered_consumer(client: Client, subject: str) -> int:
    subscription = await client.jetstream().subscribe(subject, ordered_consumer=True)
    count = 0
    try:
        while True:
            msg = await subscription.next_msg(timeout=30)
            count += 1
            if msg.metadata.num_pending == 0:
                return count
    finally:
        await subscription.unsubscribe()


def bench_reads(
    client: Client, backend: JetStreamBackend, records: int, long_run: str, long: int, rounds: int
) -> list[str]:
    def ours_all() -> int:
        return sum(len(read.records) for read in backend.read_runs())

    def raw_all() -> int:
        return run_sync(drain_ordered_consumer(client, f"{backend.prefix}.>"))

    assert ours_all() == raw_all() == records
    everything = interleaved({"ours": ours_all, "raw": raw_all}, rounds)
    note(f"read all {records:,} records: ours best {everything.best('ours'):.2f} s, raw {everything.best('raw'):.2f} s")
    one = interleaved(
        {
            "ours": lambda: len(backend.read_run(long_run).records),
            "raw": lambda: run_sync(drain_ordered_consumer(client, backend.subject(long_run, "*"))),
        },
        rounds,
    )
    note(f"read one run of {long:,}: ours best {one.best('ours'):.2f} s, raw {one.best('raw'):.2f} s")
    return [
        figure("read_all_runs_vs_ordered_consumer", everything.ratio("raw", "ours"), "at least 1.0x, stretch 2x"),
        figure("read_one_run_vs_ordered_consumer", one.ratio("raw", "ours"), "at least 1.0x"),
    ]


def bench_appends(client: Client, backend: JetStreamBackend, count: int, rounds: int) -> list[str]:
    fingerprint = sample_fingerprint()

    def bodies(run: str) -> list[dict[str, object]]:
        ts = "2026-12-01T10:00:00.000000Z"
        first: dict[str, object] = {"type": "meta", "run": run, "seq": 1, "ts": ts, "version": 1}
        first["fingerprint"] = fingerprint
        notes = [{"type": "note", "run": run, "seq": seq, "ts": ts, "text": "x" * 300} for seq in range(2, count + 1)]
        return [first, *notes]

    js = client.jetstream()

    async def raw_publish(run: str) -> None:
        for body in bodies(run):
            seq = int(str(body["seq"]))
            await js.publish(backend.subject(run, seq), encode_record(body), headers=writer_headers(backend, run, seq))

    def raw() -> None:
        run_sync(raw_publish(f"raw-{uuid.uuid4().hex[:10]}"))

    def blocking() -> None:
        run = f"blocking-{uuid.uuid4().hex[:10]}"
        with backend.open_writer(run) as writer:
            for body in bodies(run):
                writer.append(body)

    async def append_async(run: str) -> None:
        writer = await backend.open_writer_async(run)
        for body in bodies(run):
            await writer.append_async(body)

    def awaited() -> None:
        run_sync(append_async(f"async-{uuid.uuid4().hex[:10]}"))

    timed = interleaved({"raw": raw, "blocking": blocking, "async": awaited}, rounds)
    for name, times in timed.times.items():
        note(f"  {count} appends, {name:8}: best {min(times) / count * 1e6:6.0f} us each")
    return [
        figure("append_blocking_vs_raw_publish", timed.ratio("raw", "blocking"), "at least 0.8x"),
        figure("append_async_vs_raw_publish", timed.ratio("raw", "async"), "at least 0.9x"),
    ]


def bench_listing_shapes(client: Client, server: EmbeddedServer, runs: int, long_runs: int, rounds: int) -> list[str]:
    """Two streams of ``runs`` records each: ``runs`` one-record runs, and ``long_runs`` runs sharing them."""
    options = JetStreamOptions(request_timeout=60)
    shapes: dict[str, JetStreamBackend] = {}
    for name, run_count in (("short", runs), ("long", long_runs)):
        stream = f"SHAPE{name.upper()}{uuid.uuid4().hex[:6]}"
        backend = open_jetstream_source(server.source_url(stream, prefix=stream.lower()), create=True, options=options)
        per_run = runs // run_count
        messages = []
        for index in range(run_count):
            run = f"{name}-{index:07d}"
            meta = {"type": "meta", "run": run, "seq": 1, "ts": "2026-12-01T10:00:00Z", "version": 1}
            meta["fingerprint"] = sample_fingerprint()
            messages.append((backend.subject(run, 1), encode_record(meta), writer_headers(backend, run, 1)))
            for seq in range(2, per_run + 1):
                note_body = {"type": "note", "run": run, "seq": seq, "ts": "2026-12-01T10:00:01Z", "text": "n"}
                messages.append(
                    (backend.subject(run, seq), encode_record(note_body), writer_headers(backend, run, seq))
                )
        store(client, backend, messages)
        shapes[name] = backend
    short, long = shapes["short"], shapes["long"]
    timed = interleaved(
        {
            "short": short.list_runs,
            "long": long.list_runs,
            "short, every subject": lambda: run_sync(short._run_slots()),
            "long, every subject": lambda: run_sync(long._run_slots()),
        },
        rounds,
    )
    for name, times in timed.times.items():
        note(f"  list runs ({name:20}): best {min(times) * 1000:9.1f} ms")
    for backend in shapes.values():
        backend.close()
    ratio = timed.ratio("short", "long")
    old = timed.ratio("short, every subject", "long, every subject")
    return [
        figure(
            "listing_many_short_over_few_long",
            ratio,
            f"close to {runs // long_runs}x, the ratio of run counts at {runs:,} records each",
            f"enumerating every subject instead: {old[0]:.2f}x",
        ),
        figure("listing_short_vs_every_subject", timed.ratio("short, every subject", "short"), "at least 1x"),
        figure("listing_long_vs_every_subject", timed.ratio("long, every subject", "long"), "above 1x"),
    ]


def bench_listing(backend: JetStreamBackend, rounds: int) -> list[str]:
    timed = interleaved({"summary": backend.listing, "fold": backend.listing_by_fold}, rounds)
    return [figure("listing_two_record_vs_fold", timed.ratio("fold", "summary"), "far above 1")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_jetstream", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of the read corpus")
    parser.add_argument("--records", type=int, default=200, help="records per run of the read corpus")
    parser.add_argument("--long", type=int, default=20000, help="records of the long run")
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--shape-runs", type=int, default=100_000, help="one-record runs of the listing shapes")
    parser.add_argument("--shape-long-runs", type=int, default=100, help="long runs holding as many records")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.records, args.long, args.appends = 20, 20, 500, 50
        args.shape_runs, args.shape_long_runs, args.rounds = 2000, 20, 1
    print(f"# bench_jetstream: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-jetstream-") as scratch, EmbeddedServer() as server:
        corpus = Path(scratch) / "corpus"
        generate_corpus(corpus, runs=args.runs, records=args.records, seed=7)
        generate_corpus(corpus, runs=1, records=args.long, seed=7, first=args.runs)
        backend = open_jetstream_source(server.source_url(), create=True, options=JetStreamOptions(request_timeout=60))
        client = Client()
        run_sync(client.connect(servers=[server.url], name="bench-raw", pending_size=256 << 20))
        try:
            records = load_corpus(client, backend, corpus)
            note(f"nats-server {server.url}: {records:,} records in {args.runs + 1} runs")
            figures = bench_reads(client, backend, records, run_id(args.runs), args.long, args.rounds)
            figures += bench_appends(client, backend, args.appends, args.rounds)
            figures += bench_listing(backend, args.rounds)
            figures += bench_listing_shapes(client, server, args.shape_runs, args.shape_long_runs, args.rounds)
            for line in figures:
                print(line, flush=True)
        finally:
            run_sync(client.drain())
            backend.close()
    print(f"# bench_jetstream done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
