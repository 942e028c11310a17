"""Table loading, folding and audit benchmarks. ``python -m benchmarks.bench_tables [--quick] [--corpus DIR]``.

On a generated corpus (journaltools.generate: 1,000 runs x 1,000 records, about 1 GB, unless --quick), every
figure is a ratio of two timings taken in this process on the same bytes, best of ``--repeat`` after one
untimed warm-up each. Stdout gets one line per figure; sizes and seconds go to stderr.

- ``load_vs_pyarrow_json``: ``pyarrow.json.read_json`` on all journals concatenated into one file (its best
  case: one call, all cores, an explicit schema of the five envelope fields, every other field ignored), over
  ``tables.load(corpus, fold=False)`` (the records table: raw bytes kept as text, envelopes validated, torn
  tails and corruption handled as the file backend does; this process and its co-decoder process). Above 1
  means ours is faster. Stderr also gets the user and kernel CPU seconds of one run of each: the kernel
  share of ours is mostly page faults for the body column, which pyarrow does not build.
- ``load_vs_pyarrow_json_per_journal``: the same, with ``read_json`` called per journal file (what loading a
  directory of journals with it takes).
- ``load_vs_pandas_read_json``: ``pandas.read_json(lines=True)`` over ``load(fold=False)``, on the first tenth
  of the corpus (pandas builds every nested field as Python objects; the whole corpus would take minutes).
- ``fold_vs_parse``: the time the fold takes for already-parsed records, as a multiple of the time orjson
  takes merely to parse the same lines (both with the cyclic collector paused, as journaltools' readers
  parse). Lower is better: 1.0x would mean folding costs as much as one more parse.
- ``audit_peak_rss_10x_over_1x``: peak memory of ``journaltools.audit.audit_sources(..., parquet=DIR)`` in a
  fresh process (its own high-water mark plus its worker processes'), on the corpus over its first tenth.
  Near 1 means memory does not grow with the number of runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json

from journaltools._perf import paused_gc
from journaltools.backends.file import FileBackend
from journaltools.backends.scan import scan_journal
from journaltools.fold import fold
from journaltools.generate import generate_corpus, run_id
from journaltools.protocol.records import RawRecord
from journaltools.tables import load

ENVELOPE = pa.schema(
    [("type", pa.string()), ("run", pa.string()), ("seq", pa.int64()), ("ts", pa.string()), ("optional", pa.bool_())]
)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """The best wall time of ``repeat`` runs after one untimed warm-up (results dropped between runs)."""
    action()
    gc.collect()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
        del result
        gc.collect()
    return min(times)


def cpu_seconds(action: Callable[[], object]) -> tuple[float, float]:
    """User and kernel CPU seconds of one run of ``action``, in this process and the children it waited for."""
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    result = action()
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    del result
    gc.collect()
    user = sum(a.ru_utime - b.ru_utime for a, b in zip(after, before, strict=True))
    kernel = sum(a.ru_stime - b.ru_stime for a, b in zip(after, before, strict=True))
    return user, kernel


def pyarrow_json(path: Path) -> pa.Table:
    options = pa_json.ParseOptions(explicit_schema=ENVELOPE, unexpected_field_behavior="ignore")
    return pa_json.read_json(path, parse_options=options)


def pyarrow_json_per_journal(paths: Sequence[Path]) -> pa.Table:
    options = pa_json.ParseOptions(explicit_schema=ENVELOPE, unexpected_field_behavior="ignore")
    return pa.concat_tables([pa_json.read_json(path, parse_options=options) for path in paths])


def bench_load(corpus: Path, scratch: Path, repeat: int) -> list[str]:
    paths = sorted(corpus.glob("*.jsonl"))
    joined = scratch / "all.jsonl"
    with open(joined, "wb") as out:
        for path in paths:
            out.write(path.read_bytes())
    size = joined.stat().st_size
    records = load(corpus, fold=False).records.num_rows
    assert pyarrow_json(joined).num_rows == records  # the same rows, or the comparison means nothing
    ours = best_of(repeat, lambda: load(corpus, fold=False))
    theirs = best_of(repeat, lambda: pyarrow_json(joined))
    per_journal = best_of(max(1, repeat - 1), lambda: pyarrow_json_per_journal(paths))
    ours_cpu = cpu_seconds(lambda: load(corpus, fold=False))
    theirs_cpu = cpu_seconds(lambda: pyarrow_json(joined))
    note(f"records table: {records:,} records, {size / 1e6:,.0f} MB in {len(paths)} journals")
    note(f"  journaltools load(fold=False)       {ours:7.2f} s  ({records / ours:,.0f} records/s)")
    note(f"  pyarrow.json.read_json (one file)   {theirs:7.2f} s")
    # Kernel time is mostly page faults: ours builds a body column as large as the input, pyarrow does not.
    note(f"  CPU of one more run, user + kernel: ours {ours_cpu[0]:.2f} + {ours_cpu[1]:.2f} s (with its co-decoder),")
    note(f"                                      pyarrow {theirs_cpu[0]:.2f} + {theirs_cpu[1]:.2f} s")
    note(f"  pyarrow.json.read_json (per file)   {per_journal:7.2f} s")

    tenth = paths[: max(1, len(paths) // 10)]
    part = scratch / "tenth.jsonl"
    with open(part, "wb") as out:
        for path in tenth:
            out.write(path.read_bytes())
    runs = [path.stem for path in tenth]
    ours_tenth = best_of(repeat, lambda: load(corpus, runs, fold=False))
    pandas = best_of(1, lambda: pd.read_json(part, lines=True))
    note(f"  on the first {len(runs)} journals: ours {ours_tenth:.2f} s, pandas.read_json(lines=True) {pandas:.2f} s")
    return [
        f"load_vs_pyarrow_json {theirs / ours:.2f}x",
        f"load_vs_pyarrow_json_per_journal {per_journal / ours:.2f}x",
        f"load_vs_pandas_read_json {pandas / ours_tenth:.1f}x",
    ]


def bench_fold(corpus: Path, repeat: int) -> list[str]:
    backend = FileBackend(corpus)
    runs = backend.list_runs()[: max(1, len(backend.list_runs()) // 5)]
    journals = [(run, backend.path_of(run).read_bytes()) for run in runs]
    lines = [line for _, data in journals for line in data.split(b"\n") if line]

    def parse() -> list[object]:
        loads = orjson.loads
        with paused_gc():  # as journaltools' own readers parse: no collector passes over fresh dicts
            return [loads(line) for line in lines]

    def fresh() -> list[tuple[str, list[RawRecord]]]:
        return [(run, scan_journal(data, run).records) for run, data in journals]

    def fold_all() -> float:
        parsed = fresh()  # new records each time: nothing validated before is reused
        start = time.perf_counter()
        for run, records in parsed:
            fold(records, run=run)
        return time.perf_counter() - start

    parse_s = best_of(repeat, parse)
    fold_all()
    fold_s = min(fold_all() for _ in range(repeat))
    note(f"fold: {len(lines):,} records of {len(runs)} runs")
    note(f"  orjson.loads per line   {parse_s:6.2f} s  ({len(lines) / parse_s:,.0f} records/s)")
    note(f"  fold (parsed records)   {fold_s:6.2f} s  ({len(lines) / fold_s:,.0f} records/s)")
    return [f"fold_vs_parse {fold_s / parse_s:.1f}x"]


PEAK = textwrap.dedent(
    """
    import resource, sys, tempfile
    from journaltools.audit import audit_sources
    result = audit_sources([sys.argv[1]], parquet=tempfile.mkdtemp(dir=sys.argv[2]), quiet=True)
    with open("/proc/self/status") as status:  # VmHWM: ru_maxrss would include the forked parent's
        own = int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(own, workers, result.runs, result.records)
    """
)


def audit_peak_kib(corpus: Path, scratch: Path) -> tuple[int, int, float]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(corpus), str(scratch)], capture_output=True, text=True, check=True
    )
    own, workers, runs, records = (int(value) for value in done.stdout.split()[-4:])
    note(f"  audit of {runs} runs, {records:,} records: peak {own // 1024} MiB + workers {workers // 1024} MiB")
    return own, workers, time.perf_counter() - start


def bench_audit_memory(corpus: Path, scratch: Path) -> list[str]:
    paths = sorted(corpus.glob("*.jsonl"))
    small = scratch / "tenth"
    small.mkdir()
    for path in paths[: max(1, len(paths) // 10)]:
        os.link(path, small / path.name)
    note("audit peak memory (parent high-water mark + the largest worker's):")
    own_1, workers_1, seconds_1 = audit_peak_kib(small, scratch)
    own_10, workers_10, seconds_10 = audit_peak_kib(corpus, scratch)
    note(f"  {seconds_1:.1f} s and {seconds_10:.1f} s")
    return [f"audit_peak_rss_10x_over_1x {(own_10 + workers_10) / (own_1 + workers_1):.2f}"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tables", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 50,000-record corpus: a smoke test, not a figure")
    parser.add_argument("--corpus", type=Path, help="reuse (or create) the generated corpus in this directory")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    runs, records = (100, 500) if args.quick else (1000, 1000)
    with tempfile.TemporaryDirectory(prefix="journaltools-bench-") as temporary:
        scratch = Path(temporary)
        corpus = args.corpus or scratch / "corpus"
        if not (corpus / f"{run_id(runs - 1)}.jsonl").exists():
            start = time.perf_counter()
            stats = generate_corpus(corpus, runs=runs, records=records, seed=0)
            elapsed = time.perf_counter() - start
            note(f"generated {stats.records:,} records ({stats.bytes / 1e6:,.0f} MB) in {elapsed:.0f} s")
        figures = bench_load(corpus, scratch, args.repeat)
        figures += bench_fold(corpus, args.repeat)
        figures += bench_audit_memory(corpus, scratch)
        shutil.rmtree(scratch / "tenth", ignore_errors=True)
    for line in figures:
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
