"""JetStream: reading and appending. ``python -m benchmarks.bench_jetstream [--quick]``.

Everything runs against a throwaway local ``nats-server -js`` (journaltools.sources.embedded) holding generated
real-format journals (``journaltools.testing.generate``) in the runtime's layout: ``<prefix>.<id>._meta`` for the meta
record and ``<prefix>.<id>.<seq>`` for the others, one message per record, the body the Go encoder's bytes.
Each figure compares journaltools with raw nats-py on the same messages (see ``measure``):

- ``read_all_runs_vs_ordered_consumer``: a raw nats-py ordered consumer over ``<prefix>.>`` draining every
  message without decoding it, over journaltools' ``read_runs()`` (every run, every record decoded to its
  typed value). ``read_one_run_vs_ordered_consumer``: the same for one long run. Goal at least 1.0x.
- ``append_blocking_vs_raw_publish`` / ``append_async_vs_raw_publish``: a raw awaited ``js.publish`` with a
  message id over a writer's blocking ``append`` (from this thread) and ``append_async`` (awaited on the
  loop), record after record, each waiting for its ack (the writer also sends the run-wide fence headers).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from collections.abc import Sequence

import orjson
from nats.aio.client import Client

from benchmarks.measure import figure, interleaved, load_average, note
from journaltools._base.aio import run_sync
from journaltools.protocol.encode import encode_record
from journaltools.samples.builder import JournalBuilder
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.embedded import EmbeddedServer
from journaltools.sources.jetstream import JetStreamBackend, open_jetstream_source
from journaltools.sources.jetstream_messages import new_nonce
from journaltools.sources.nats import JetStreamOptions
from journaltools.testing.generate import generated_run

Message = tuple[str, bytes, dict[str, str]]


def messages_of(backend: JetStreamBackend, journal: JournalBuilder) -> list[Message]:
    """A journal's records as the runtime's writer publishes them: subject, body, message id."""
    nonce = new_nonce()
    return [
        (backend.subject(journal.run_id, record.seq), encode_record(record), {"Nats-Msg-Id": f"{nonce}-{record.seq}"})
        for record in journal.records
    ]


def store(client: Client, messages: list[Message]) -> None:
    """Publish without waiting for each ack, then wait for the last (one connection is stored in order)."""

    async def go() -> None:
        for subject, data, headers in messages[:-1]:
            await client.publish(subject, data, headers=headers)
        subject, data, headers = messages[-1]
        ack = orjson.loads((await client.request(subject, data, timeout=120, headers=headers)).data)
        assert "error" not in ack, ack

    run_sync(go())


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
            "raw": lambda: run_sync(drain_ordered_consumer(client, backend.run_filter(long_run))),
        },
        rounds,
    )
    note(f"read one run of {long:,}: ours best {one.best('ours'):.2f} s, raw {one.best('raw'):.2f} s")
    return [
        figure("read_all_runs_vs_ordered_consumer", everything.ratio("raw", "ours"), "at least 1.0x, stretch 2x"),
        figure("read_one_run_vs_ordered_consumer", one.ratio("raw", "ours"), "at least 1.0x"),
    ]


def bench_appends(client: Client, backend: JetStreamBackend, count: int, rounds: int) -> list[str]:
    def journal(run: str) -> JournalBuilder:
        built = JournalBuilder(
            run, prompt="benchmark", created="2026-12-01T10:00:00.5+01:00", fingerprint=sample_fingerprint()
        )
        for _ in range(count - 1):
            built.user("x" * 300)
        return built

    js = client.jetstream()

    async def raw_publish(run: str) -> None:
        for subject, data, headers in messages_of(backend, journal(run)):
            await js.publish(subject, data, headers=headers)

    def raw() -> None:
        run_sync(raw_publish(f"raw-{uuid.uuid4().hex[:10]}"))

    def blocking() -> None:
        built = journal(f"blocking-{uuid.uuid4().hex[:10]}")
        with backend.create_journal(built.run_id, built.meta) as writer:
            for record in built.records[1:]:
                writer.append(record)

    async def append_async(built: JournalBuilder) -> None:
        writer = await backend.create_journal_async(built.run_id, built.meta)
        for record in built.records[1:]:
            await writer.append_async(record)
        await writer.aclose()

    def awaited() -> None:
        run_sync(append_async(journal(f"async-{uuid.uuid4().hex[:10]}")))

    timed = interleaved({"raw": raw, "blocking": blocking, "async": awaited}, rounds)
    for name, times in timed.times.items():
        note(f"  {count} appends, {name:8}: best {min(times) / count * 1e6:6.0f} us each")
    return [
        figure("append_blocking_vs_raw_publish", timed.ratio("raw", "blocking"), "at least 0.8x"),
        figure("append_async_vs_raw_publish", timed.ratio("raw", "async"), "at least 0.9x"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_jetstream", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="runs of the read corpus")
    parser.add_argument("--records", type=int, default=100, help="about this many records per run")
    parser.add_argument("--long", type=int, default=20000, help="records of the long run")
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.records, args.long, args.appends, args.rounds = 20, 20, 500, 50, 1
    print(f"# bench_jetstream: {load_average()}", flush=True)
    with EmbeddedServer() as server:
        backend = open_jetstream_source(server.source_url(), create=True, options=JetStreamOptions(request_timeout=60))
        client = Client()
        run_sync(client.connect(servers=[server.url], name="bench-raw", pending_size=256 << 20))
        try:
            journals = [generated_run(7, index, args.records) for index in range(args.runs)]
            long_run = generated_run(7, args.runs, args.long)
            journals.append(long_run)
            messages = [message for journal in journals for message in messages_of(backend, journal)]
            store(client, messages)
            note(f"nats-server {server.url}: {len(messages):,} records in {len(journals)} runs")
            figures = bench_reads(client, backend, len(messages), long_run.run_id, len(long_run.records), args.rounds)
            figures += bench_appends(client, backend, args.appends, args.rounds)
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
