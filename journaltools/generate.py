"""A deterministic corpus generator: N runs x M records of realistic agent-run journals.

Used by the benchmarks and the tests; the corpora it writes are never committed. The same
``(seed, index)`` always gives the same run, byte for byte, whatever the number of runs or
processes, so a 1x corpus is exactly the first tenth of the 10x corpus with the same seed.

Content sizes follow long-tailed (log-normal) distributions like real runs: short user prompts,
medium assistant text, small tool inputs and tool results from a few bytes to tens of kilobytes.
Runs end in every status (completed, open with calls in flight, suspended on a deferral, failed,
cancelled) and carry claims, deferrals with approvals, tool errors, non-fatal errors, notes and
the odd unknown record type flagged ``optional``. Every generated journal folds without a finding.

Writing: each journal is written in one ``write`` with the record bytes journaltools itself writes
(``encode_record``: compact orjson, keys in insertion order, one line per record), without the
per-record ``fsync`` of ``FileJournalWriter``. That fsync is what makes a live writer's
acknowledged records survive a crash; a generator has no acknowledged records and no crash to
survive (an interrupted generation is simply run again), and fsyncing a million records would
take minutes instead of seconds.

Command line: ``python -m journaltools.generate DIR --runs 1000 --records 1000 --seed 0``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import random
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from journaltools.protocol.records import PROTOCOL_VERSION, encode_record

JOURNAL_SUFFIX: Final = ".jsonl"
_EPOCH: Final = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)
_MODELS: Final = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
_TOOLS: Final = ("read_file", "write_file", "run_shell", "search_code", "http_get", "ask_operator")
_WORD_TEXT: Final = (
    "the a of to and in is it that for on with as this be are from at by not or have an was we can if will "
    "function return value error file line test run record journal stream table query index cache memory "
    "request response token model tool result call input output status config server client batch parse "
    "schema field type string integer list object array key path directory build deploy commit branch "
    "merge review check fix update refactor performance latency throughput timeout retry backoff queue "
    "worker process thread lock append fsync durable replay fold audit parquet arrow column row"
)
_WORDS: Final = tuple(_WORD_TEXT.split())
_ODD: Final = (
    'the "quoted" value',
    "a back\\slash path C:\\tmp\\x",
    "naïve café résumé",
    "日本語のテキスト",
    "emoji 🚀 ok",
    "tab\there",
    "x = {'a': [1, 2, 3]}",
    '<tag attr="v">&amp;</tag>',
)


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What ``generate_corpus`` wrote."""

    root: Path
    runs: int
    records: int
    bytes: int


def run_id(index: int) -> str:
    """The run id of the ``index``-th generated run (stable, so corpora of different sizes share runs)."""
    return f"run-{index:07d}"


def _text_pool(seed: int) -> str:
    """A few hundred kilobytes of word salad with newlines, quotes, escapes and non-ASCII text to slice from."""
    rng = random.Random(f"pool:{seed}")
    parts: list[str] = []
    size = 0
    while size < 400_000:
        roll = rng.random()
        if roll < 0.02:
            piece = rng.choice(_ODD)
        elif roll < 0.05:
            piece = "\n\n" if rng.random() < 0.5 else "\n    "
        else:
            piece = rng.choice(_WORDS)
        parts.append(piece)
        size += len(piece) + 1
    return " ".join(parts)


class _RunWriter:
    """Builds one run's records in order; ``records()`` yields exactly ``count`` bodies."""

    def __init__(self, seed: int, index: int, count: int, pool: str) -> None:
        self.rng = random.Random(f"run:{seed}:{index}")
        self.run = run_id(index)
        self.index = index
        self.count = count
        self.pool = pool
        self.seq = 0
        self.clock = _EPOCH + timedelta(minutes=index * 7, microseconds=self.rng.randrange(1_000_000))
        self.model = self.rng.choice(_MODELS)
        self.calls = 0
        self.context_tokens = self.rng.randrange(800, 4000)
        self.clean = False

    # -- content ----------------------------------------------------------------------------

    def text(self, median: float, sigma: float = 1.0, cap: int = 60_000) -> str:
        length = min(cap, max(1, int(self.rng.lognormvariate(math.log(median), sigma))))
        start = self.rng.randrange(len(self.pool) - min(length, len(self.pool) - 1))
        return self.pool[start : start + length]

    def tick(self, median_seconds: float) -> str:
        self.clock += timedelta(seconds=self.rng.lognormvariate(math.log(median_seconds), 0.8))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def record(self, kind: str, median_seconds: float, **payload: Any) -> dict[str, Any]:
        self.seq += 1
        body: dict[str, Any] = {"type": kind, "run": self.run, "seq": self.seq, "ts": self.tick(median_seconds)}
        body.update(payload)
        return body

    def tool_input(self, name: str) -> dict[str, Any]:
        rng = self.rng
        if name in ("read_file", "write_file"):
            value: dict[str, Any] = {"path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"}
            if name == "write_file":
                value["content"] = self.text(600, 1.1)
            return value
        if name == "run_shell":
            return {"command": f"pytest -q tests/test_{rng.choice(_WORDS)}.py", "timeout_s": rng.choice([30, 60, 300])}
        if name == "search_code":
            return {"query": self.text(30, 0.5, 200), "max_results": rng.randrange(5, 50), "regex": rng.random() < 0.2}
        if name == "http_get":
            return {"url": f"https://example.com/{rng.choice(_WORDS)}?q={rng.randrange(10_000)}", "headers": {}}
        return {"question": self.text(120, 0.7)}

    # -- records ----------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        rng = self.rng
        system = self.text(2000, 0.3)
        tools = {name: hashlib.sha256(f"{name}:schema:v{rng.randrange(3)}".encode()).hexdigest() for name in _TOOLS}
        fingerprint: dict[str, Any] = {
            "model": self.model,
            "system_sha256": hashlib.sha256(system.encode()).hexdigest(),
            "temperature": rng.choice([0.0, 0.2, 0.7, 1.0]),
            "max_tokens": rng.choice([1024, 4096, 8192]),
            "tools": tools,
            "budget": {"max_turns": rng.choice([20, 50, 200]), "max_cost_usd": rng.choice([1.0, 5.0, 25.0])},
        }
        labels = {"team": rng.choice(["search", "infra", "billing", "docs"]), "env": rng.choice(["dev", "prod"])}
        return self.record(
            "meta", 1.0, version=PROTOCOL_VERSION, fingerprint=fingerprint, task=f"task-{self.index}", labels=labels
        )

    def user(self) -> dict[str, Any]:
        content: Any = self.text(300, 1.2, 12_000)
        if self.rng.random() < 0.15:
            content = [{"type": "text", "text": content}, {"type": "text", "text": self.text(80)}]
        self.context_tokens += 50
        return self.record("user", 20.0, content=content)

    def assistant(self, n_calls: int) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        rng = self.rng
        blocks: list[dict[str, Any]] = []
        if n_calls == 0 or rng.random() < 0.7:
            blocks.append({"type": "text", "text": self.text(400, 1.1, 20_000)})
        calls = []
        for _ in range(n_calls):
            self.calls += 1
            call_id = f"toolu_{self.index:07d}_{self.calls:05d}"
            name = rng.choice(_TOOLS)
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": self.tool_input(name)})
            calls.append((call_id, name))
        output_tokens = sum(len(str(block)) for block in blocks) // 4 + rng.randrange(5, 60)
        usage: dict[str, int] = {"input_tokens": self.context_tokens, "output_tokens": output_tokens}
        if rng.random() < 0.5:
            usage["cache_read_input_tokens"] = self.context_tokens // 2
        self.context_tokens += output_tokens
        body = self.record(
            "assistant",
            6.0,
            content=blocks,
            stop_reason="tool_use" if calls else "end_turn",
            usage=usage,
            model=self.model,
        )
        return body, calls

    def tool_result(self, call: str, *, error: bool = False, content: str | None = None) -> dict[str, Any]:
        text = content if content is not None else self.text(500, 1.3, 60_000)
        self.context_tokens += len(text) // 4
        payload: dict[str, Any] = {"call": call, "content": text}
        if self.rng.random() < 0.1:
            payload["content"] = [{"type": "text", "text": text}]
        if error:
            payload["is_error"] = True
        return self.record("tool_result", 1.5, **payload)

    def claim(self, reason: str) -> dict[str, Any]:
        rng = self.rng
        host = f"worker-{rng.randrange(16):02d}"
        return self.record(
            "claim", 30.0, worker=f"{host}/{rng.randrange(4)}", host=host, pid=rng.randrange(1000, 60000), reason=reason
        )

    def records(self) -> Iterator[dict[str, Any]]:
        """Exactly ``count`` records (at least 1): a meta, then turns, then how the run ends.

        Most runs end where the count cuts the conversation (often with calls in flight: ``open``);
        about half of those that can end cleanly get a final assistant answer (``completed``), and a
        few end with a fatal error (``failed``) or a cancel (``cancelled``).
        """
        fate = self.rng.random()
        if self.count <= 2:
            yield from itertools.islice(self._conversation(), self.count)
            return
        conversation = self._conversation()
        # islice stops before asking for one more body, so no seq is spent on a record never written.
        yield from itertools.islice(conversation, self.count - 1)
        if fate < 0.05:
            yield self.record("error", 5.0, where="provider", message="overloaded_error: retries exhausted", fatal=True)
        elif fate < 0.08:
            yield self.record("cancel", 60.0, by="operator@example.com", reason="budget exceeded")
        elif fate < 0.6 and self.clean:
            yield self.assistant(0)[0]
        else:
            yield next(conversation)

    def _conversation(self) -> Iterator[dict[str, Any]]:
        """Endless turns; ``self.clean`` is True whenever the last yielded record left no call unanswered."""
        rng = self.rng
        self.clean = False
        yield self.meta()
        while True:
            self.clean = True
            yield self.user()
            for turn in range(rng.randrange(1, 12)):
                if rng.random() < 0.04:
                    yield self.record(
                        "error", 3.0, where="provider", message="rate_limit_error: retrying in 2s", fatal=False
                    )
                n_calls = rng.choice((0, 1, 1, 1, 2, 2, 3)) if turn < 10 else 0
                body, calls = self.assistant(n_calls)
                self.clean = not calls
                yield body
                if not calls:
                    break
                if rng.random() < 0.05:
                    yield self.claim("resume after worker restart")
                for position, (call_id, name) in enumerate(calls):
                    roll = rng.random()
                    if name == "ask_operator" or roll < 0.04:
                        reason = "external" if name == "ask_operator" else "approval"
                        yield self.record("deferral", 0.5, call=call_id, reason=reason)
                        if reason == "approval":
                            decision = "approve" if rng.random() < 0.8 else "deny"
                            approval: dict[str, Any] = {
                                "call": call_id,
                                "decision": decision,
                                "by": "operator@example.com",
                            }
                            if rng.random() < 0.3:
                                approval["optional"] = True
                            yield self.record("approval", 120.0, **approval)
                            if decision == "deny":
                                self.clean = position == len(calls) - 1
                                yield self.tool_result(call_id, error=True, content="denied by the operator")
                                continue
                        else:
                            yield self.claim("answer from operator")
                    self.clean = position == len(calls) - 1
                    yield self.tool_result(call_id, error=rng.random() < 0.05)
                if rng.random() < 0.02:
                    yield self.record("note", 1.0, text=self.text(100), tags=["generated", rng.choice(_WORDS)])
                if rng.random() < 0.01:
                    yield self.record("metric", 0.1, optional=True, name="latency_ms", value=rng.randrange(1, 5000))


def journal_bytes(seed: int, index: int, records: int, pool: str | None = None) -> bytes:
    """The bytes of generated run ``index`` (``records`` records, each one line ending in a newline)."""
    writer = _RunWriter(seed, index, max(1, records), pool if pool is not None else _text_pool(seed))
    return b"".join(encode_record(body) + b"\n" for body in writer.records())


def _write_runs(root: str, seed: int, indexes: Sequence[int], records: int) -> tuple[int, int]:
    pool = _text_pool(seed)
    total = 0
    for index in indexes:
        data = journal_bytes(seed, index, records, pool)
        with open(os.path.join(root, run_id(index) + JOURNAL_SUFFIX), "wb") as handle:
            handle.write(data)
        total += len(data)
    return len(indexes), total


def generate_corpus(
    root: str | os.PathLike[str],
    *,
    runs: int,
    records: int,
    seed: int = 0,
    first: int = 0,
    workers: int | None = None,
) -> CorpusStats:
    """Write runs ``first .. first+runs-1`` of corpus ``seed`` into ``root``, ``records`` records each.

    ``workers`` > 1 generates in that many processes (default: one per core for large corpora);
    the output does not depend on it.
    """
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    indexes = list(range(first, first + runs))
    if workers is None:
        workers = (os.cpu_count() or 1) if runs * records >= 50_000 else 1
    written = 0
    if workers <= 1:
        written = _write_runs(str(path), seed, indexes, records)[1]
    else:
        chunks = [indexes[start : start + 64] for start in range(0, len(indexes), 64)]
        with ProcessPoolExecutor(workers) as pool:
            jobs = [pool.submit(_write_runs, str(path), seed, chunk, records) for chunk in chunks]
            written = sum(job.result()[1] for job in jobs)
    return CorpusStats(path, runs, runs * max(1, records), written)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m journaltools.generate", description=__doc__.split("\n")[0])
    parser.add_argument("root", help="directory to write <run>.jsonl journals into")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--records", type=int, default=100, help="records per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--first", type=int, default=0, help="index of the first run")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    stats = generate_corpus(
        args.root, runs=args.runs, records=args.records, seed=args.seed, first=args.first, workers=args.workers
    )
    print(f"{stats.runs} runs, {stats.records} records, {stats.bytes} bytes in {stats.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
