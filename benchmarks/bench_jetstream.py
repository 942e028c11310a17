"""JetStream benchmarks: reading a run, and listing runs. ``python -m benchmarks.bench_jetstream [--quick]``.

Everything runs against a throwaway local ``nats-server -js`` (journaltools.embedded) loaded with generated,
realistic journals (journaltools.generate), stored exactly as the writer stores them (one message per
``journal.R.N`` with the writer's headers).

1. Reading one run, all in one process and on one stream, records per second of:
   - the raw nats-py ordered consumer draining the run's messages without decoding them (the baseline),
   - a raw ack-less pull consumer, and raw batched direct gets (the other ways nats-py offers),
   - journaltools' run reader (``read_run``: batched direct get, every record decoded to a ``RawRecord``).
   Printed as ``jetstream_read_vs_ordered_consumer <ratio>x`` for a long run and for many short runs.
2. Listing N runs: the two-record summary (``listing``) against folding every run (``listing_by_fold``),
   printed as ``listing_two_record_vs_fold <ratio>x``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig

from journaltools.aio import run_sync
from journaltools.backends.jetstream import JetStreamBackend, JetStreamOptions, new_msg_id, open_jetstream_source
from journaltools.embedded import EmbeddedServer
from journaltools.generate import generate_corpus, run_id


def load_corpus(client: Client, backend: JetStreamBackend, root: Path) -> tuple[int, int]:
    """Publish every generated journal the way the writer stores it; returns (runs, records)."""
    runs = records = 0

    async def go() -> None:
        nonlocal runs, records
        messages = []
        for path in sorted(root.glob("*.jsonl")):
            run = path.stem
            runs += 1
            for seq, line in enumerate(path.read_bytes().splitlines(), start=1):
                headers = {"Nats-Msg-Id": new_msg_id(run, seq), "Nats-Expected-Last-Subject-Sequence": "0"}
                messages.append((backend.subject(run, seq), line, headers))
        records = len(messages)
        for subject, line, headers in messages[:-1]:
            await client.publish(subject, line, headers=headers)
        # The last one waits for its ack: the server stores one connection's messages in order.
        subject, line, headers = messages[-1]
        ack = orjson.loads((await client.request(subject, line, timeout=60, headers=headers)).data)
        assert "error" not in ack, ack
        info = orjson.loads((await client.request(f"$JS.API.STREAM.INFO.{backend.stream}", b"")).data)
        assert info["state"]["messages"] == records, info["state"]

    run_sync(go())
    return runs, records


# -- the ways nats-py offers to read a run (raw: no decoding) ---------------------------------------------


async def drain_ordered_consumer(js_client: Client, subject: str) -> int:
    js = js_client.jetstream()
    subscription = await js.subscribe(subject, ordered_consumer=True)
    count = 0
    try:
        while True:
            msg = await subscription.next_msg(timeout=10)
            count += 1
            if msg.metadata.num_pending == 0:
                return count
    finally:
        await subscription.unsubscribe()


async def drain_pull_consumer(js_client: Client, stream: str, subject: str, batch: int = 1024) -> int:
    js = js_client.jetstream()
    config = ConsumerConfig(ack_policy=AckPolicy.NONE, mem_storage=True, inactive_threshold=10.0)
    subscription = await js.pull_subscribe(subject, config=config)
    count = 0
    try:
        while True:
            messages = await subscription.fetch(batch, timeout=10)
            count += len(messages)
            if messages[-1].metadata.num_pending == 0:
                return count
    finally:
        consumer = (await subscription.consumer_info()).name
        await subscription.unsubscribe()
        await js_client.jsm().delete_consumer(stream, consumer)  # ephemeral pull consumers outlive unsubscribe


async def drain_direct_batch(client: Client, stream: str, subject: str, batch: int = 4096) -> int:
    loop = asyncio.get_running_loop()
    count = 0
    done: list[asyncio.Future[Msg]] = []
    last_sequence = 0

    async def on_message(msg: Msg) -> None:
        nonlocal count, last_sequence
        if msg.data:
            count += 1
            last_sequence = int((msg.headers or {})["Nats-Sequence"])
        else:
            done[-1].set_result(msg)

    inbox = client.new_inbox()
    subscription = await client.subscribe(inbox, cb=on_message)
    try:
        start = 1
        while True:
            done.append(loop.create_future())
            request = {"seq": start, "next_by_subj": subject, "batch": batch}
            await client.publish(f"$JS.API.DIRECT.GET.{stream}", orjson.dumps(request), reply=inbox)
            end = await asyncio.wait_for(done[-1], 10)
            if (end.headers or {}).get("Status") != "204" or int((end.headers or {}).get("Nats-Num-Pending", 0)) == 0:
                return count
            start = last_sequence + 1
    finally:
        await subscription.unsubscribe()


def best_rate(label: str, records: int, action: Callable[[], Awaitable[int]] | Callable[[], int], repeat: int) -> float:
    """Records per second of the best of ``repeat`` runs of ``action`` (which returns how many it read)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        outcome = action()
        count = run_sync(outcome) if asyncio.iscoroutine(outcome) else outcome
        elapsed = time.perf_counter() - started
        assert count == records, f"{label}: read {count} of {records}"
        best = min(best, elapsed)
    rate = records / best
    print(f"  {label:<34} {rate:>12,.0f} records/s   ({best * 1000:8.1f} ms)", flush=True)
    return rate


def bench_read(client: Client, backend: JetStreamBackend, runs: Sequence[str], per_run: int, repeat: int) -> float:
    """Read ``runs`` one after the other with every method; returns journaltools' rate / the ordered consumer's."""
    total = per_run * len(runs)
    stream = backend.stream

    def each(read_one: Callable[[str], Awaitable[int]]) -> Callable[[], Awaitable[int]]:
        async def read_all() -> int:
            return sum([await read_one(backend.subject(run, "*")) for run in runs])

        return read_all

    def journaltools_reader() -> int:
        return sum(len(backend.read_run(run).records) for run in runs)

    ordered = best_rate(
        "nats-py ordered consumer (raw)", total, each(lambda s: drain_ordered_consumer(client, s)), repeat
    )
    best_rate(
        "nats-py pull fetch, no acks (raw)", total, each(lambda s: drain_pull_consumer(client, stream, s)), repeat
    )
    best_rate("direct batch get (raw)", total, each(lambda s: drain_direct_batch(client, stream, s)), repeat)
    ours = best_rate("journaltools read_run (decoded)", total, journaltools_reader, repeat)
    return ours / ordered


def bench_listing(backend: JetStreamBackend, runs: int, repeat: int) -> float:
    """Two-record summaries against folding every run; returns the speed-up of the summary."""

    def timed(label: str, action: Callable[[], object]) -> float:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            rows = action()
            best = min(best, time.perf_counter() - started)
            assert isinstance(rows, list) and len(rows) == runs, label
        print(f"  {label:<34} {best * 1000:10.1f} ms   ({runs / best:,.0f} runs/s)", flush=True)
        return best

    summary = timed("two-record summary (listing)", backend.listing)
    folded = timed("fold every run (listing_by_fold)", backend.listing_by_fold)
    return folded / summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_jetstream", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs for the listing benchmark (default 2000)")
    parser.add_argument("--records", type=int, default=25, help="records per listed run (default 25)")
    parser.add_argument("--long", type=int, default=20000, help="records of the long run (default 20000)")
    parser.add_argument("--short-runs", type=int, default=200, help="short runs read one after the other")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.records, args.long, args.short_runs, args.repeat = 100, 10, 2000, 20, 1

    with tempfile.TemporaryDirectory(prefix="bench-jetstream-") as scratch, EmbeddedServer() as server:
        corpus = Path(scratch) / "corpus"
        generate_corpus(corpus, runs=args.runs, records=args.records, seed=7)
        generate_corpus(corpus, runs=1, records=args.long, seed=7, first=args.runs)
        backend = open_jetstream_source(server.source_url(), create=True, options=JetStreamOptions())
        client = Client()
        run_sync(client.connect(servers=[server.url], name="bench-raw", pending_size=64 * 1024 * 1024))
        try:
            started = time.perf_counter()
            runs, records = load_corpus(client, backend, corpus)
            elapsed = time.perf_counter() - started
            print(f"nats-server {server.url}: loaded {runs} runs, {records} records in {elapsed:.1f}s")

            long_run = run_id(args.runs)
            print(f"\nread one long run ({args.long} records), best of {args.repeat}:")
            long_ratio = bench_read(client, backend, [long_run], args.long, args.repeat)
            short = [run_id(index) for index in range(min(args.short_runs, args.runs))]
            print(f"\nread {len(short)} short runs ({args.records} records each) one after the other:")
            short_ratio = bench_read(client, backend, short, args.records, args.repeat)

            print(f"\nlisting {args.runs} runs of {args.records} records, best of {args.repeat}:")
            listing_ratio = bench_listing(backend, args.runs + 1, args.repeat)

            print()
            print(f"jetstream_read_vs_ordered_consumer {long_ratio:.2f}x")
            print(f"jetstream_read_vs_ordered_consumer_short_runs {short_ratio:.2f}x")
            print(f"listing_two_record_vs_fold {listing_ratio:.2f}x")
        finally:
            run_sync(client.drain())
            backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
