"""The cost of a run, not only of a byte. ``python -m benchmarks.bench_small_runs [--quick] [--runs N]``.

Two shapes of directory, each figure a ratio against a baseline on the same data in the same process, rounds
interleaved (``measure``), given as the median of the per-round ratios and the ratio of the best times:

- ``small``: the newest line's random runs (``tests/corpus/runstate/newest/random``, real journals of the Go
  runtime) copied under new names to 15,000 runs of about 15 records (``--runs``; ``--quick``: 1,500), their meta
  run ids rewritten to match (some 8% of them with a call left unanswered, 2% with a schema violation);
  ``copies``: the same copies with their meta run ids left as they were (every run a ``run_id_mismatch``);
- ``august``: 3,000 generated August runs of about 50 records (``--quick``: 300), some 100 MB.

The figures, per shape (the issue's goals in brackets):

- ``load_vs_orjson``: the whole ``load()`` over a bare ``orjson.loads`` of every line already in memory (at most
  1.5x), warm and fresh (the first call in a new interpreter); ``load_one_process_vs_orjson`` with ``workers=1``;
- ``beyond_bytes_us_per_run``: what ``load()`` spends per run beyond the parse of its bytes, ``(load - orjson) /
  runs`` in microseconds (at most 15 µs), with the whole per-run time beside it;
- ``python_fold_mixed_vs_parts`` (small only): a directory where 10% of the runs need the Python fold (a schema
  violation, which the native walk gives back) over its clean runs alone plus those runs alone (at most 1.0x);
- ``records_vs_duckdb`` and ``records_vs_pyarrow``: DuckDB's ``read_json`` over the directory's glob (its
  threads) and ``pyarrow.json.read_json`` of the same lines joined in one file, over ``load(fold=False)``
  (at least 1.5x and 1.0x: above 1 means journaltools is faster);
- ``reading_us_per_run``: what the reading alone costs per run, folding nothing: the directory listed, its journals
  looked at and read a batch at a time into one buffer and proven there (``sources.in_place``), as ``load()`` and
  ``ls`` both read them;
- ``ls_vs_load`` and ``audit_parquet_vs_load``: ``journaltools ls`` and ``journaltools audit --parquet`` (the
  commands, in this process, output discarded) over ``load()`` (at most 1.0x: as fast per run);
- ``records_peak_over_input`` and ``load_peak_over_input``: peak resident memory of ``load(fold=False)`` and of
  ``load(workers=1)`` in a new interpreter, beyond the idle interpreter, over the journal bytes (at most 1.3x and
  1.5x).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Final

import orjson

from benchmarks.bench_tables import FRESH_FOLD, PEAK_FOLD, PEAK_RECORDS, duckdb_json, pyarrow_json
from benchmarks.corpus import joined_file, journals
from benchmarks.measure import Rounds, figure, fresh_ratio, fresh_timings, interleaved, load_average, note, peak_rss_kib
from journaltools.folding import native as native_fold
from journaltools.protocol.generations import AUGUST
from journaltools.sources.base import RunRead
from journaltools.tables import load
from journaltools.tables.build import TablesBuilder
from journaltools.testing.generate import generate_corpus

ROOT: Final = Path(__file__).resolve().parent.parent
RANDOM_RUNS: Final = ROOT / "tests" / "corpus" / "runstate" / "newest" / "random"
SMALL_RUNS: Final = 15_000
AUGUST_RUNS: Final = 3_000
AUGUST_RECORDS: Final = 50
#: The share of a mixed directory's runs that need the Python fold.
PYTHON_SHARE: Final = 0.10


def copied_runs(target: Path, runs: int, *, matching: bool) -> Path:
    """``runs`` copies of the newest line's random runs under new names of the same length; ``matching``: each
    meta run id rewritten to its new name (the bytes stay canonical), else left naming the original run."""
    target.mkdir(parents=True)
    originals = [(path.stem, path.read_bytes()) for path in sorted(RANDOM_RUNS.glob("*.json"))]
    for index in range(runs):
        run, data = originals[index % len(originals)]
        name = f"{run[:-8]}c{index:07d}"
        if matching:
            data = data.replace(f'"run_id":"{run}"'.encode(), f'"run_id":"{name}"'.encode(), 1)
        (target / f"{name}.json").write_bytes(data)
    return target


def august_runs(target: Path, runs: int) -> Path:
    generate_corpus(target, runs=runs, records=AUGUST_RECORDS, seed=0, generation=AUGUST)
    return target


def lines_of(corpus: Path) -> list[bytes]:
    return [line for path in journals(corpus) for line in path.read_bytes().split(b"\n") if line]


def orjson_parse(lines: list[bytes]) -> Callable[[], object]:
    def parse() -> object:
        gc.disable()  # the baseline's best case: no collections while its objects are made
        try:
            return [orjson.loads(line) for line in lines]
        finally:
            gc.enable()

    return parse


def reading(corpus: Path) -> Callable[[], object]:
    """The reading a load and a listing share, alone: the runs listed, their journals looked at, every batch read
    and proven in place (``sources.in_place``), nothing folded."""
    from journaltools.sources.file import FileBackend
    from journaltools.sources.in_place import BATCH_BYTES, BATCH_JOURNALS, InPlace, batched

    def read() -> object:
        backend = FileBackend(corpus)
        runs = backend.list_runs()
        backend.source_findings()
        journals = backend.local_journals(runs)
        assert journals is not None, "the corpus holds plain journals only"
        for batch in batched(journals, BATCH_BYTES, BATCH_JOURNALS):
            InPlace.read([(journal.run, journal.path) for journal in batch], sum(j.size for j in batch))
        return runs

    return read


def command(*argv: str) -> Callable[[], object]:
    """A journaltools command run in this process, its output discarded."""
    from journaltools.cli import main

    def run() -> object:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            status = main(list(argv))
        assert status == 0, f"journaltools {' '.join(argv)} exited {status}"
        return status

    return run


def _us_per_run(rounds: Rounds, ours: str, base: str, runs: int) -> tuple[float, float]:
    """(median over rounds, best vs best) of ``(ours - base) / runs`` in microseconds."""
    per_round = sorted((a - b) / runs * 1e6 for a, b in zip(rounds.times[ours], rounds.times[base], strict=True))
    return per_round[len(per_round) // 2], (rounds.best(ours) - rounds.best(base)) / runs * 1e6


def bench_shape(name: str, corpus: Path, scratch: Path, rounds: int, processes: int) -> list[str]:
    paths = journals(corpus)
    runs = len(paths)
    size = sum(path.stat().st_size for path in paths)
    lines = lines_of(corpus)
    joined = joined_file(corpus, scratch / f"{name}-joined.json")
    out = scratch / f"{name}-parquet"
    note(f"{name}: {runs:,} runs, {len(lines):,} records, {size / 1e6:,.1f} MB ({load_average()})")

    def audit() -> object:
        shutil.rmtree(out, ignore_errors=True)
        return command("audit", str(corpus), "--parquet", str(out), "--quiet")()

    warm = interleaved(
        {
            "orjson": orjson_parse(lines),
            "load": lambda: load(corpus, progress=False),
            "load_one_process": lambda: load(corpus, progress=False, workers=1),
            "records": lambda: load(corpus, fold=False, progress=False),
            "reading": reading(corpus),
            "pyarrow": lambda: pyarrow_json(joined),
            "duckdb": lambda: duckdb_json(corpus / "*.json"),
            "ls": command("ls", str(corpus), "--json"),
            "audit": audit,
        },
        rounds,
    )
    for contender, times in warm.times.items():
        note(f"  {contender:17} best {min(times):7.3f} s   median {sorted(times)[len(times) // 2]:7.3f} s")
    del lines
    gc.collect()
    beyond = _us_per_run(warm, "load", "orjson", runs)
    whole = (sorted(warm.times["load"])[rounds // 2] / runs * 1e6, warm.best("load") / runs * 1e6)
    orders = [("ours,orjson" if n % 2 == 0 else "orjson,ours") for n in range(processes)]
    fresh = [t for order in orders for t in fresh_timings(FRESH_FOLD, [order, str(corpus)], 1)]
    idle = peak_rss_kib(PEAK_FOLD, [str(corpus), "import only"]) * 1024
    records_peak = peak_rss_kib(PEAK_RECORDS, [str(corpus), "load"]) * 1024
    load_peak = peak_rss_kib(PEAK_FOLD, [str(corpus), "load"]) * 1024
    return [
        figure(f"{name}_load_vs_orjson", warm.ratio("load", "orjson"), "at most 1.5x (moonshot 1.2x)"),
        figure(f"{name}_load_vs_orjson_fresh", fresh_ratio(fresh, "ours", "orjson"), "at most 1.5x"),
        figure(f"{name}_load_one_process_vs_orjson", warm.ratio("load_one_process", "orjson"), "for reference"),
        f"{name}_beyond_bytes_us_per_run {beyond[0]:.1f} us (median of rounds; {beyond[1]:.1f} us best vs best)  "
        f"goal: at most 15 us  [whole load {whole[0]:.1f} us per run median, {whole[1]:.1f} us best]",
        f"{name}_reading_us_per_run {sorted(warm.times['reading'])[rounds // 2] / runs * 1e6:.1f} us (median of "
        f"rounds; {warm.best('reading') / runs * 1e6:.1f} us best)  for reference: listed, looked at, read, proven",
        figure(f"{name}_records_vs_duckdb", warm.ratio("duckdb", "records"), "at least 1.5x (above 1: faster)"),
        figure(f"{name}_records_vs_pyarrow", warm.ratio("pyarrow", "records"), "at least 1.0x (above 1: faster)"),
        figure(f"{name}_ls_vs_load", warm.ratio("ls", "load"), "at most 1.0x (as fast per run as load)"),
        figure(f"{name}_audit_parquet_vs_load", warm.ratio("audit", "load"), "at most 1.0x (as fast per run)"),
        f"{name}_records_peak_over_input {(records_peak - idle) / size:.2f}x (beyond the idle interpreter)  "
        "goal: at most 1.3x",
        f"{name}_load_peak_over_input {(load_peak - idle) / size:.2f}x (one process, beyond the idle interpreter)  "
        "goal: at most 1.5x",
    ]


def bench_python_share(corpus: Path, scratch: Path, rounds: int) -> list[str]:
    """A directory where ``PYTHON_SHARE`` of the runs need the Python fold, against its two parts loaded alone."""
    from journaltools.sources.file import FileBackend

    backend = FileBackend(corpus)
    paths = journals(corpus)
    given_back = {read.run for read in backend.read_runs([path.stem for path in paths]) if _given_back(read)}
    python = [path for path in paths if path.stem in given_back]
    clean = [path for path in paths if path.stem not in given_back]
    wanted = int(len(paths) * PYTHON_SHARE)
    python = (python * (wanted // max(len(python), 1) + 1))[:wanted]
    parts = {"mixed": scratch / "mixed", "clean": scratch / "clean", "python": scratch / "python"}
    for directory in parts.values():
        directory.mkdir(parents=True)
    clean = clean[: len(paths) - wanted]
    for path in clean:
        os.link(path, parts["clean"] / path.name)
        os.link(path, parts["mixed"] / path.name)
    for index, path in enumerate(python):
        # Named after a clean run, so the Python-fold runs spread through the directory's order.
        name = f"{clean[index * len(clean) // max(len(python), 1)].stem}p.json"
        os.link(path, parts["python"] / name)
        os.link(path, parts["mixed"] / name)
    warm = interleaved({name: partial(load, directory, progress=False) for name, directory in parts.items()}, rounds)
    per_round = sorted(
        m / (c + p) for m, c, p in zip(warm.times["mixed"], warm.times["clean"], warm.times["python"], strict=True)
    )
    best = warm.best("mixed") / (warm.best("clean") + warm.best("python"))
    runs = sum(1 for _ in parts["mixed"].glob("*.json"))
    note(f"python share: {runs:,} runs, {sum(1 for _ in parts['python'].glob('*.json')):,} of them to the Python fold")
    return [
        f"small_python_fold_mixed_vs_parts {per_round[len(per_round) // 2]:.2f}x (median of rounds; {best:.2f}x "
        "best vs best)  goal: at most 1.0x (clean runs' time plus those runs' own Python fold)"
    ]


def _given_back(read: RunRead) -> bool:
    """Whether the native fold gives ``read`` back to the Python fold (its rows are written to a scratch builder)."""
    first = native_fold.usable_first(read)
    if first is None or first.meta is None:
        return True
    scratch = TablesBuilder(records=False)
    return native_fold.fold_rows(read, first.meta, scratch._native_columns) is None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_small_runs", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small directories: a smoke test, not a figure")
    parser.add_argument("--runs", type=int, help=f"small runs (default {SMALL_RUNS:,})")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=2, help="new interpreters for the fresh figures")
    parser.add_argument("--shapes", default="small,copies,august", help="which directories, comma-separated")
    args = parser.parse_args(argv)
    small_runs = args.runs or (SMALL_RUNS // 10 if args.quick else SMALL_RUNS)
    august = AUGUST_RUNS // 10 if args.quick else AUGUST_RUNS
    if args.quick:
        args.rounds, args.processes = 1, 1
    shapes = args.shapes.split(",")
    print(f"# bench_small_runs: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-small-runs-") as temporary:
        scratch = Path(temporary)
        made = {
            "small": lambda: copied_runs(scratch / "small", small_runs, matching=True),
            "copies": lambda: copied_runs(scratch / "copies", small_runs, matching=False),
            "august": lambda: august_runs(scratch / "august", august),
        }
        for shape in shapes:
            corpus = made[shape]()
            for line in bench_shape(shape, corpus, scratch, args.rounds, args.processes):
                print(line, flush=True)
            if shape == "small":
                for line in bench_python_share(corpus, scratch / "share", args.rounds):
                    print(line, flush=True)
            shutil.rmtree(corpus)
    print(f"# bench_small_runs done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
