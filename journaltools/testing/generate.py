"""Real-format journals made by journaltools: a typed builder, one run model, and a corpus generator.

Three layers, each usable alone:

- ``JournalBuilder`` (``samples.builder``) builds one run's ``Record`` values with consecutive seqs, in either
  generation's format (the August build's version 3 by default, or the newest line's version 1: every record
  dated, the agent, each result's provider kind and dispatch, a summary on each terminal), using ``make_record``
  and the payload structs; ``journal_bytes()`` is what the file backend's writer puts on disk (``encode_record``
  + ``\\n`` per record, the Go encoder's bytes). Tool inputs and provider blocks go through ``raw_json``; times
  are written as Go writes them (``goencoding.time.format_go_time``). The samples and the test builders use it, so
  the record shapes live in one place.
- ``build_run(choices, ...)`` tells one run's life the way the runtime lives it: process lifetimes, each
  after the first opened by a claim; parallel calls answered in any order, tool errors, remote results,
  deferrals answered later (supplied before a resume, or by the resuming run), gated calls approved once,
  standing decisions, crashes mid-batch, every terminal reason, memory revisions after a terminal. Every
  decision is asked of a ``Choices``: the corpus generator answers from a seeded ``random.Random``; the
  hypothesis strategies (tests/strategies.py) answer from ``draw``, so both share one model and every run
  it builds folds strictly, without an error finding.
- ``generate_corpus`` writes many such runs in the runtime's file layout (``<id>.json`` + empty
  ``<id>.lock``, directory 0700, files 0600), deterministic by ``(seed, index)`` whatever the number of
  runs or processes; ``publish_corpus`` appends the same runs to any source through its writer (JetStream
  included). Generated files are written in one ``write`` each, without the live writer's fsync per
  record: a generator acknowledges nothing to anyone, and an interrupted generation is simply run again.

Command line: ``python -m journaltools.testing.generate DIR --runs 1000 --records 100 --seed 0 [--generation newest]``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from journaltools.goencoding.time import format_go_time
from journaltools.protocol.blocks import (
    Block,
    ToolUseBlock,
)
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.generations import AUGUST, Generation, generation_named
from journaltools.samples.builder import (
    _NANOS,
    FLEET_TOOLS,
    FleetTool,
    JournalBuilder,
    calls_of,
    claimant,
    epoch_ns,
    fingerprint_for,
    text,
    thinking,
    tool_use,
)

# -- times as Go writes them -------------------------------------------------------------------------------------


# -- the fingerprint ----------------------------------------------------------------------------------------------


# -- content blocks -----------------------------------------------------------------------------------------------


# -- the builder -------------------------------------------------------------------------------------------------


# -- the run model -----------------------------------------------------------------------------------------------


class Choices(Protocol):
    """Where ``build_run`` takes each decision from: a seeded random source, or hypothesis' ``draw``."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``low..high`` (inclusive)."""
        ...

    def chance(self, probability: float) -> bool:
        """True with about ``probability``; a shrinking source should prefer False."""
        ...

    def words(self, median: int, cap: int) -> str:
        """Text of about ``median`` characters (long-tailed, at most ``cap``)."""
        ...


class RandomChoices:
    """``Choices`` from a seeded ``random.Random``, with texts sliced from a shared pool of prose."""

    def __init__(self, rng: random.Random, pool: str) -> None:
        self.rng = rng
        self.pool = pool

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def words(self, median: int, cap: int) -> str:
        length = min(cap, max(1, int(self.rng.lognormvariate(math.log(max(1, median)), 1.0))))
        length = min(length, len(self.pool) - 1)
        start = self.rng.randrange(len(self.pool) - length)
        return self.pool[start : start + length]


_Option = TypeVar("_Option")


def pick(choices: Choices, options: Sequence[_Option]) -> _Option:
    return options[choices.integer(0, len(options) - 1)]


_TOOL_BY_NAME: Final = {tool.name: tool for tool in FLEET_TOOLS}
#: The provider kind the newest line records for each way a tool runs.
_KIND_OF: Final = {"local": "application", "gated": "application", "remote": "remote", "deferred": "custom"}
_AGENTS: Final = ("ops", "ops", "billing", "")
_MODELS: Final = ("claude-sonnet-4-6", "claude-opus-4-8", "claude-haiku-4-5")
_ZONES: Final = (120, 60, 0, -300, 330)
_HOSTS: Final = ("fisk-0", "fisk-1", "ci-runner-3", "laptop")
_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _base62(data: bytes, length: int) -> str:
    number = int.from_bytes(data, "big")
    digits = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits))


class _Life:
    """The state of one run's story while ``build_run`` tells it."""

    def __init__(self, journal: JournalBuilder, choices: Choices, clock_ns: int) -> None:
        self.journal = journal
        self.choices = choices
        self.clock_ns = clock_ns
        #: The last assistant turn's calls without a result, and which of them are deferred.
        self.unanswered: list[ToolUseBlock] = []
        self.deferred: set[str] = set()
        #: How the last process run ended: None while it runs, else a terminal reason or ``crashed``.
        self.ended: str | None = None
        self.memory: dict[str, int] = {}
        self.context = choices.integer(800, 4000)
        self.calls_made = 0

    def call_id(self) -> str:
        """A fresh call id shaped like Anthropic's, unique within the run (derived, so it costs no choice)."""
        self.calls_made += 1
        digest = hashlib.blake2b(f"{self.journal.run_id}:{self.calls_made}".encode(), digest_size=16).digest()
        return "toolu_01" + _base62(digest, 22)

    def tick(self, median_seconds: float) -> None:
        self.clock_ns += int(max(0.001, median_seconds * (0.5 + self.choices.integer(0, 100) / 100)) * _NANOS)
        if self.journal.newest:
            # The runner dates a record when it journals it, in UTC.
            self.journal.time = format_go_time(self.clock_ns)

    def arguments(self, tool: FleetTool) -> dict[str, Any]:
        return {tool.argument: self.choices.words(24, 200)}

    def answer(self, call: ToolUseBlock) -> None:
        """Run one call and journal its result (an error now and then; remote tools report ``remote``)."""
        tool = _TOOL_BY_NAME[call.name]
        self.tick(1.5)
        if self.journal.newest and tool.how == "gated" and self.choices.chance(0.1):
            # The newest line records a call a policy denied: answered, never handed to its provider.
            self.journal.result(call, "denied by policy", is_error=True, dispatched=False)
            self.unanswered.remove(call)
            return
        failed = self.choices.chance(0.06)
        content = "nats: error: " + self.choices.words(30, 200) if failed else self.choices.words(400, 40_000)
        self.context += len(content) // 4
        self.journal.result(call, content, is_error=failed, remote=tool.how == "remote", kind=_KIND_OF[tool.how])
        self.unanswered.remove(call)
        self.deferred.discard(call.id)
        if tool.how == "gated" and not failed and self.choices.chance(0.3):
            self.journal.decision(tool.name)

    def turn(self, *, final: bool) -> None:
        """One model reply: a final answer, or 1-3 parallel calls that are then run, deferred or left."""
        choices = self.choices
        content: list[Block] = []
        thinking_tokens = 0
        if self.journal.meta.fingerprint.thinking_mode != "off" and choices.chance(0.6):
            thought = choices.words(200, 4000)
            content.append(thinking(thought, ("sig:" + thought[:16]).encode()))
            thinking_tokens = len(thought) // 4 + 1
        if final or choices.chance(0.6):
            content.append(text(choices.words(300, 12_000)))
        calls = 0 if final else choices.integer(1, 3)
        for _ in range(calls):
            tool = pick(choices, FLEET_TOOLS)
            content.append(tool_use(self.call_id(), tool.name, self.arguments(tool)))
        if not content:
            content.append(text(choices.words(40, 400)))
        out_tokens = sum(len(encode_go_json(block)) for block in content) // 4 + choices.integer(5, 60)
        cached = self.context // 2 if choices.chance(0.5) else 0
        self.tick(6.0)
        record = self.journal.assistant(
            *content,
            in_tokens=self.context - cached,
            out_tokens=out_tokens + thinking_tokens,
            cache_read_tokens=cached,
            cache_create_tokens=choices.integer(0, 3000) if choices.chance(0.1) else 0,
            thinking_tokens=thinking_tokens,
        )
        self.context += out_tokens
        self.unanswered = calls_of(record)

    def run_tools(self) -> bool:
        """Run the turn's calls in a random order; deferrable ones may defer. False when the process crashed."""
        order = list(self.unanswered)
        for position in range(len(order) - 1, 0, -1):
            swap = self.choices.integer(0, position)
            order[position], order[swap] = order[swap], order[position]
        for call in order:
            if self.choices.chance(0.02):
                return False  # died mid-batch: the claim of the next run lands before the remaining results
            tool = _TOOL_BY_NAME[call.name]
            if tool.how == "deferred" and self.choices.chance(0.7):
                self.tick(0.5)
                self.journal.deferred(
                    call, note=self.choices.words(40, 200), handle=f"CHG{self.choices.integer(1, 99999):07d}"
                )
                self.deferred.add(call.id)
            else:
                self.answer(call)
        return True

    def end(self, reason: str, message: str = "") -> None:
        self.tick(0.2)
        self.journal.terminal(reason, message)
        self.ended = reason
        if self.choices.chance(0.4):
            key = pick(self.choices, ("notes", "streams/ORDERS", "team.oncall", "clusters/prod"))
            self.memory[key] = self.memory.get(key, 0) + self.choices.integer(1, 5)
            self.journal.memory_revisions(self.memory)

    def lifetime(self, max_turns: int) -> None:
        """One process run, from the claim (or the meta record) to its terminal or its crash."""
        choices = self.choices
        self.ended = None
        for turn_number in range(max_turns):
            pending = [call for call in self.unanswered if call.id not in self.deferred]
            if pending:  # a resume runs the calls a crash or a gate left without a result
                for call in pending:
                    self.answer(call)
            elif self.deferred:  # the deferred calls still open: only an answer lets the turn go on
                self.end("suspended")
                return
            last = turn_number == max_turns - 1
            roll = choices.integer(0, 99)
            if last and roll < 40:
                self.turn(final=True)
                self.end("completed")
                return
            if last and roll < 50:
                self.end("max_iterations")
                return
            if roll < 3:
                self.end("error", 'llm call: POST "https://api.anthropic.com/v1/messages": 529 Overloaded')
                return
            if roll < 5:
                return  # crashed between turns: no terminal
            self.turn(final=False)
            if roll < 7:
                budget = self.journal.meta.fingerprint.max_tokens
                spent = f"this conversation has processed {budget + self.context} of its {budget} token budget"
                self.end("budget", spent + " (llm.budget.max_tokens)")
                return
            gated = [call for call in self.unanswered if _TOOL_BY_NAME[call.name].how == "gated"]
            if gated and choices.chance(0.15):
                self.end("suspended", "the operator did not answer the prompt")
                return
            if not self.run_tools():
                self.ended = "crashed"
                return
            if self.deferred and not self.unanswered_without_deferral():
                self.end("suspended")
                return
        self.turn(final=True)
        self.end("completed")

    def unanswered_without_deferral(self) -> list[ToolUseBlock]:
        return [call for call in self.unanswered if call.id not in self.deferred]

    def between_lifetimes(self) -> None:
        """What happens while no process runs the journal: a supplied answer, an allow-once approval."""
        for call in list(self.unanswered):
            if call.id in self.deferred and self.choices.chance(0.5):
                self.tick(600)
                self.answer(call)  # runstate.SupplyToolResult: journaled before any resume
            elif call.id not in self.deferred and self.ended == "suspended" and self.choices.chance(0.5):
                self.journal.call_approval(call)

    def resume(self, host: str) -> None:
        self.tick(900)
        pid = self.choices.integer(1000, 65000)
        self.journal.claim(claimant("fisk", host, pid), format_go_time(self.clock_ns))
        for call in [c for c in self.unanswered if c.id in self.deferred]:
            self.answer(call)  # the agent's --answer path, right after the claim
        if self.ended == "completed" or (not self.unanswered and self.choices.chance(0.3)):
            self.tick(30)
            self.journal.user(self.choices.words(120, 2000))  # a completed run resumes only with a follow-up


def build_run(
    choices: Choices,
    *,
    run_id: str,
    created_ns: int,
    target_records: int,
    zone_minutes: int = 120,
    generation: Generation = AUGUST,
) -> JournalBuilder:
    """One run's whole journal, in ``generation``'s format, told until it holds at least ``target_records``
    records (or sooner when ``target_records`` is small) and its last process run has ended."""
    interactive = choices.chance(0.25)
    newest = generation is not AUGUST
    journal = JournalBuilder(
        run_id,
        prompt=choices.words(120, 3000),
        created=format_go_time(created_ns, zone_minutes * 60),
        fingerprint=fingerprint_for(
            pick(choices, _MODELS), thinking_mode="summarized" if choices.chance(0.3) else "off"
        ),
        interactive=interactive,
        conversation_token=f"ctk_{choices.integer(10**9, 10**10):x}" if interactive else "",
        caller=f"slack:U{choices.integer(10**6, 10**7)}" if interactive else "",
        generation=generation,
        agent=pick(choices, _AGENTS) if newest else "",
        # Create dates the meta record as it appends it, a moment after meta.created, in UTC.
        time=format_go_time(created_ns + 150_000) if newest else "",
    )
    life = _Life(journal, choices, created_ns)
    host = pick(choices, _HOSTS)
    life.lifetime(choices.integer(1, 6))
    while len(journal.records) < target_records:
        life.between_lifetimes()
        life.resume(host)
        life.lifetime(choices.integer(1, 8))
    if life.ended == "completed" and choices.chance(0.1):
        # The conversation's next turn in flight: the last terminal still says completed (the file listing's
        # status) while a worker runs the turn (what the JetStream listing calls open).
        life.resume(host)
        life.turn(final=False)
    return journal


# -- the corpus --------------------------------------------------------------------------------------------------

JOURNAL_SUFFIX: Final = ".json"
LOCK_SUFFIX: Final = ".lock"
_EPOCH_NS: Final = epoch_ns(datetime(2026, 8, 3, 6, 0, 0, tzinfo=UTC))
_PROSE_TEXT: Final = (
    "the a of to and in is it that for on with as this be are from at by not or stream consumer subject "
    "cluster server leader replica message ack redelivery lag pending bytes limit retention interest "
    "work queue mirror source kv bucket key revision purge delete seal snapshot restore account jwt "
    "latency timeout retry backoff error warning healthy degraded quorum raft peer route gateway leaf"
)
_PROSE: Final = tuple(_PROSE_TEXT.split())
_ODD: Final = ('"quoted"', "back\\slash", "naïve café", "日本語", "🚀", "tab\there", "<b>&amp;</b>", "line\nbreak")


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What ``generate_corpus`` wrote."""

    root: Path
    runs: int
    records: int
    bytes: int


def run_id(index: int, seed: int = 0, generation: Generation = AUGUST) -> str:
    """The id of generated run ``index``: KSUID-shaped (27 base62 characters, creation second first), so ids
    sort by creation time as the runtime's do, and stable whatever the corpus size. The generations' ids differ,
    so both corpora can share a directory."""
    created = _created_ns(index) // _NANOS - 1_400_000_000  # KSUID's epoch
    label = f"journaltools:{seed}:{index}" + ("" if generation is AUGUST else f":{generation.name}")
    digest = hashlib.sha256(label.encode()).digest()[:16]
    return _base62(created.to_bytes(4, "big") + digest, 27)


def _created_ns(index: int) -> int:
    return _EPOCH_NS + index * 97 * _NANOS + (index * 7919 % 1_000_000_000)


def _text_pool(seed: int) -> str:
    """A few hundred kilobytes of operator prose (with quotes, escapes, HTML and non-ASCII) to slice texts from."""
    rng = random.Random(f"pool:{seed}")
    parts = [rng.choice(_ODD) if rng.random() < 0.02 else rng.choice(_PROSE) for _ in range(60_000)]
    return " ".join(parts)


def generated_run(
    seed: int, index: int, records: int, pool: str | None = None, generation: Generation = AUGUST
) -> JournalBuilder:
    """Generated run ``index`` of corpus ``seed``, about ``records`` records long, in ``generation``'s format."""
    choices = RandomChoices(random.Random(f"run:{seed}:{index}"), pool if pool is not None else _text_pool(seed))
    return build_run(
        choices,
        run_id=run_id(index, seed, generation),
        created_ns=_created_ns(index),
        target_records=records,
        zone_minutes=_ZONES[index % len(_ZONES)],
        generation=generation,
    )


def _write_runs(
    root: str, seed: int, indexes: Sequence[int], records: int, generation: str = AUGUST.name
) -> tuple[int, int]:
    from journaltools._base.oserrors import open_regular, writing

    pool = _text_pool(seed)
    written_records = written_bytes = 0
    for index in indexes:
        journal = generated_run(seed, index, records, pool, generation_named(generation))
        data = journal.journal_bytes()
        base = os.path.join(root, journal.run_id)
        # The runtime's modes: journal and lock readable by their owner only. Through the one writer and opener:
        # a link or FIFO already in the directory is never written through. Not fsynced: a corpus is made again.
        with writing(base + JOURNAL_SUFFIX, "write the generated journal", durable=False) as handle:
            handle.write(data)
        os.close(open_regular(base + LOCK_SUFFIX, os.O_WRONLY | os.O_CREAT, "create the lock", 0o600))
        written_records += len(journal.records)
        written_bytes += len(data)
    return written_records, written_bytes


def generate_corpus(
    root: str | os.PathLike[str],
    *,
    runs: int,
    records: int,
    seed: int = 0,
    first: int = 0,
    workers: int | None = None,
    generation: Generation = AUGUST,
) -> CorpusStats:
    """Write runs ``first .. first+runs-1`` of corpus ``seed`` into ``root`` in the runtime's file layout, each
    about ``records`` records long, in ``generation``'s format. ``workers`` > 1 generates in that many processes
    (by default one per core for large corpora); the bytes do not depend on it."""
    path = Path(root)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    indexes = list(range(first, first + runs))
    if workers is None:
        workers = (os.cpu_count() or 1) if runs * records >= 50_000 else 1
    if workers <= 1:
        counts = [_write_runs(str(path), seed, indexes, records, generation.name)]
    else:
        chunks = [indexes[start : start + 32] for start in range(0, len(indexes), 32)]
        with ProcessPoolExecutor(workers) as executor:
            counts = list(
                executor.map(
                    _write_runs,
                    [str(path)] * len(chunks),
                    [seed] * len(chunks),
                    chunks,
                    [records] * len(chunks),
                    [generation.name] * len(chunks),
                )
            )
    return CorpusStats(path, runs, sum(count[0] for count in counts), sum(count[1] for count in counts))


def publish_corpus(
    source: str, *, runs: int, records: int, seed: int = 0, first: int = 0, generation: Generation = AUGUST
) -> CorpusStats:
    """Append the same runs ``generate_corpus`` writes to ``source`` (any URL ``open_source`` takes, e.g. a
    JetStream stream), through its writer: each record is checked and written as the runtime appends it."""
    from journaltools.sources.registry import open_source

    pool = _text_pool(seed)
    total_records = total_bytes = 0
    with open_source(source, create=True) as backend:
        for index in range(first, first + runs):
            journal = generated_run(seed, index, records, pool, generation)
            with backend.create_journal(journal.run_id, journal.meta) as writer:
                for record in journal.records[1:]:
                    writer.append(record)
            total_records += len(journal.records)
            total_bytes += len(journal.journal_bytes())
    return CorpusStats(Path(source), runs, total_records, total_bytes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m journaltools.testing.generate", description=__doc__.split("\n")[0])
    parser.add_argument("root", help="directory to write <id>.json journals into, or a source URL with --publish")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--records", type=int, default=100, help="about this many records per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--first", type=int, default=0, help="index of the first run")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--publish", action="store_true", help="append through the source's writer (e.g. nats://)")
    parser.add_argument(
        "--generation",
        choices=["august", "newest"],
        default="august",
        help="the runtime build whose format to write: august (format version 3) or newest (version 1)",
    )
    args = parser.parse_args(argv)
    generation = generation_named(args.generation)
    if args.publish:
        stats = publish_corpus(
            args.root, runs=args.runs, records=args.records, seed=args.seed, first=args.first, generation=generation
        )
    else:
        stats = generate_corpus(
            args.root,
            runs=args.runs,
            records=args.records,
            seed=args.seed,
            first=args.first,
            workers=args.workers,
            generation=generation,
        )
    print(f"{stats.runs} runs, {stats.records} records, {stats.bytes} bytes in {stats.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
