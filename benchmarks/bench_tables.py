"""Loading tables from fisk-ai journals. ``python -m benchmarks.bench_tables [--quick] [--mb N]``.

On a generated real-format corpus (``benchmarks.corpus``: several hundred MB of runstate version 3 journals,
``<id>.json`` files), each figure compares journaltools with a baseline on the same bytes (see ``measure``),
warm (one process, rounds interleaved, min and median) and fresh (the first call in a new interpreter, imports
done, several interpreters):

- ``records_vs_pyarrow_json``: ``pyarrow.json.read_json`` of every journal's lines concatenated into one
  file, with an explicit schema of the envelope (``seq``, ``protocol``, ``optional``; its best case: one
  call, every core, every other field skipped), over ``load(corpus, fold=False)`` (every line decoded into
  its typed record and proven canonical, the body kept). Above 1 means journaltools is faster; goal 1.0x.
  DuckDB's ``read_json`` of the same envelope is printed beside it when duckdb is installed.
- ``load_vs_orjson_parse``: the whole ``load(corpus)`` (every run folded, every table built) over a bare
  ``orjson.loads`` of every line already in memory, with the collector paused. Goal at most 2x.
  ``load_one_process_vs_orjson_parse``: the same with ``workers=1``; goal at most 2.33x, the ratio the runtime's
  own Go ``FileStore.Load`` (one goroutine) had to the same parse. ``load_mb_per_s``: the corpus bytes over
  ``load()``'s best time.
- ``native_over_python_path``: the same load on the pure-Python fast path (``protocol.native.disabled``) over
  the load with the C scanner, in one process: what the extension buys.
- ``first_over_warm``: the first load in a new interpreter over a warm one, for both kinds of load.
- ``records_peak_rss_over_corpus``: peak resident memory of ``load(fold=False)`` in a new interpreter over
  the corpus bytes on disk. Goal at most 1.3x. ``load_peak_rss_over_corpus``: the same for ``load()`` in one
  process (everything it holds, no worker elsewhere). Goal at most 1.6x.
- ``records_nbytes_over_corpus`` and ``tables_nbytes_over_corpus``: what the ``records`` table (and all six tables
  of ``load()``) hold, ``Table.nbytes``, over the corpus bytes: the bodies are the corpus less its newlines, the
  rest is the other columns (the repeated strings dictionary-encoded).
- ``newest_over_august_load`` and ``newest_over_august_records``: the same runs written in the newest line's
  format (format version 1: every record dated, kinds, summaries), loaded beside the August corpus, interleaved,
  as throughput (MB/s) newest over August. Goal at least 1.0x: the newest line is no slower to read.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import orjson
import pyarrow as pa
import pyarrow.json as pa_json

from benchmarks.corpus import bench_corpus, corpus_megabytes, joined_file, journals
from benchmarks.measure import figure, fresh_ratio, fresh_timings, interleaved, load_average, note, peak_rss_kib
from journaltools.folding import native as native_fold
from journaltools.protocol import native
from journaltools.protocol.generations import NEWEST
from journaltools.tables import load

#: The envelope of a runstate record: what a generic JSON reader can check without knowing the ten kinds.
ENVELOPE = pa.schema([("seq", pa.uint64()), ("protocol", pa.string()), ("optional", pa.bool_())])


def pyarrow_json(path: Path) -> pa.Table:
    options = pa_json.ParseOptions(explicit_schema=ENVELOPE, unexpected_field_behavior="ignore")
    return pa_json.read_json(path, parse_options=options)


def duckdb_json(path: Path) -> pa.Table:
    import duckdb

    columns = "{'seq': 'UBIGINT', 'protocol': 'VARCHAR', 'optional': 'BOOLEAN'}"
    query = (
        f"SELECT * FROM read_json('{path}', format='newline_delimited', columns={columns}, "
        "maximum_object_size=1073741824)"
    )
    relation = duckdb.sql(query)
    assert relation is not None  # a SELECT always gives a relation
    table: pa.Table = relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.fetch_arrow_table()
    return table


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def corpus_lines(corpus: Path) -> list[bytes]:
    return [line for path in journals(corpus) for line in path.read_bytes().split(b"\n") if line]


FRESH_RECORDS = """
import json, sys, time
from pathlib import Path
order, corpus, joined = sys.argv[1].split(","), sys.argv[2], Path(sys.argv[3])
from benchmarks.bench_tables import pyarrow_json
from journaltools.tables import load
calls = {"ours": lambda: load(corpus, fold=False, progress=False), "pyarrow": lambda: pyarrow_json(joined)}
times = {}
for name in order:
    started = time.perf_counter(); calls[name](); times[name] = time.perf_counter() - started
print(json.dumps(times))
"""

FRESH_FOLD = """
import gc, json, sys, time
from pathlib import Path
order, corpus = sys.argv[1].split(","), Path(sys.argv[2])
import orjson
from benchmarks.bench_tables import corpus_lines
from journaltools.tables import load
lines = corpus_lines(corpus)
def parse():
    gc.disable()
    try:
        return [orjson.loads(line) for line in lines]
    finally:
        gc.enable()
calls = {"ours": lambda: load(corpus, progress=False), "orjson": parse}
times = {}
for name in order:
    started = time.perf_counter(); calls[name](); times[name] = time.perf_counter() - started
print(json.dumps(times))
"""

PEAK_RECORDS = """
import sys
from journaltools.tables import load
if sys.argv[2] == "load":
    tables = load(sys.argv[1], fold=False, progress=False)
"""

#: One process, so that the peak is all a folded load holds (worker processes would hold part of it elsewhere).
PEAK_FOLD = """
import sys
from journaltools.tables import load
if sys.argv[2] == "load":
    tables = load(sys.argv[1], progress=False, workers=1)
"""

#: The runtime's own Go load (``FileStore.Load``, one goroutine) took this many times a bare orjson parse of the
#: same lines (min of 5, interleaved, 98 MB of real journals): ``load()`` in one process at this ratio or below
#: keeps the runtime's pace per core.
GO_LOAD_OVER_ORJSON: Final = 2.33


def _python_path(call: Callable[[], object]) -> object:
    """``call`` on the pure-Python fast path (the C scanner set aside): the baseline the scanner must beat."""
    with native.disabled():
        return call()


def _python_fold(call: Callable[[], object]) -> object:
    """``call`` with every journal folded and tabled in Python (the native fold set aside, the scanner kept)."""
    with native_fold.disabled():
        return call()


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def bench_records(corpus: Path, joined: Path, rounds: int, processes: int) -> list[str]:
    size = joined.stat().st_size
    loaded = load(corpus, fold=False, progress=False).records
    records = loaded.num_rows
    held = loaded.nbytes
    del loaded
    assert pyarrow_json(joined).num_rows == records, "the same rows, or the comparison means nothing"
    contenders: dict[str, Callable[[], object]] = {
        "ours": lambda: load(corpus, fold=False, progress=False),
        "pyarrow": lambda: pyarrow_json(joined),
        "python": lambda: _python_path(lambda: load(corpus, fold=False, progress=False)),
    }
    if _installed("duckdb"):
        contenders["duckdb"] = lambda: duckdb_json(joined)
    warm = interleaved(contenders, rounds)
    note(f"records: {records:,} records, {size / 1e6:,.0f} MB in {len(journals(corpus)):,} journals")
    for name, times in warm.times.items():
        note(f"  {name:8} best {min(times):6.3f} s   median {_median(times):6.3f} s")
    lines = [
        figure("records_vs_pyarrow_json", warm.ratio("pyarrow", "ours"), "at least 1.0x"),
        figure("records_native_over_python_path", warm.ratio("python", "ours"), "what the C scanner buys"),
    ]
    if "duckdb" in contenders:
        lines.append(figure("records_vs_duckdb_read_json", warm.ratio("duckdb", "ours"), "for reference"))
    orders = [("ours,pyarrow" if n % 2 == 0 else "pyarrow,ours") for n in range(processes)]
    fresh = [t for order in orders for t in fresh_timings(FRESH_RECORDS, [order, str(corpus), str(joined)], 1)]
    lines.append(figure("records_vs_pyarrow_json_fresh", fresh_ratio(fresh, "pyarrow", "ours"), "at least 1.0x"))
    first = [t["ours"] for t in fresh]
    warm_best = warm.best("ours")
    lines.append(figure("records_first_over_warm", (_median(first) / warm_best, min(first) / warm_best), "near 1"))
    peak = peak_rss_kib(PEAK_RECORDS, [str(corpus), "load"]) * 1024
    idle = peak_rss_kib(PEAK_RECORDS, [str(corpus), "import only"]) * 1024
    note(f"  peak RSS of load(fold=False) in a new interpreter: {peak / 1e6:,.0f} MB for {size / 1e6:,.0f} MB")
    note(f"  (the interpreter with journaltools imported and nothing loaded: {idle / 1e6:,.0f} MB)")
    lines.append(
        f"records_peak_rss_over_corpus {(peak - idle) / size:.2f}x (beyond the idle interpreter; "
        f"{peak / size:.2f}x with it)  goal: at most 1.3x"
    )
    lines.append(f"records_nbytes_over_corpus {held / size:.3f}x  [{held / 1e6:,.1f} MB for {size / 1e6:,.1f} MB]")
    return lines


def bench_fold(corpus: Path, size: int, rounds: int, processes: int) -> list[str]:
    lines = corpus_lines(corpus)

    def parse() -> list[object]:
        gc.disable()  # the baseline's best case: no collections while a million objects are made
        try:
            return [orjson.loads(line) for line in lines]
        finally:
            gc.enable()

    warm = interleaved(
        {
            "ours": lambda: load(corpus, progress=False),
            "orjson": parse,
            # One process for both, as worker processes would fold with the scanner whatever this one does.
            "ours_one_process": lambda: load(corpus, progress=False, workers=1),
            "python_one_process": lambda: _python_path(lambda: load(corpus, progress=False, workers=1)),
            "python_fold_one_process": lambda: _python_fold(lambda: load(corpus, progress=False, workers=1)),
        },
        rounds,
    )
    tables = load(corpus, progress=False)
    held = sum(table.nbytes for _, table in tables.items())
    note(f"fold: the six tables hold {held / 1e6:,.1f} MB ({tables.records.nbytes / 1e6:,.1f} MB of it records)")
    del tables
    note(
        f"fold: {len(lines):,} records; load() best {warm.best('ours'):.2f} s (median "
        f"{_median(warm.times['ours']):.2f} s), orjson best {warm.best('orjson'):.2f} s"
    )
    orders = [("ours,orjson" if n % 2 == 0 else "orjson,ours") for n in range(processes)]
    fresh = [t for order in orders for t in fresh_timings(FRESH_FOLD, [order, str(corpus)], 1)]
    first = [t["ours"] for t in fresh]
    warm_best = warm.best("ours")
    megabytes_per_s = size / 1e6 / warm_best
    peak = peak_rss_kib(PEAK_FOLD, [str(corpus), "load"]) * 1024
    idle = peak_rss_kib(PEAK_FOLD, [str(corpus), "import only"]) * 1024
    note(f"  peak RSS of load(workers=1) in a new interpreter: {peak / 1e6:,.0f} MB for {size / 1e6:,.0f} MB")
    return [
        figure("load_vs_orjson_parse", warm.ratio("ours", "orjson"), "at most 2x (lower is better)"),
        figure(
            "load_one_process_vs_orjson_parse",
            warm.ratio("ours_one_process", "orjson"),
            f"at most {GO_LOAD_OVER_ORJSON}x, the runtime's Go load (lower is better)",
        ),
        figure(
            "load_native_over_python_path",
            warm.ratio("python_one_process", "ours_one_process"),
            "what the C scanner buys (one process)",
        ),
        figure(
            "load_native_fold_over_python_fold",
            warm.ratio("python_fold_one_process", "ours_one_process"),
            "what the native fold of clean journals buys (one process, the scanner in use both ways)",
        ),
        figure("load_vs_orjson_parse_fresh", fresh_ratio(fresh, "ours", "orjson"), "at most 2x (lower is better)"),
        figure("load_first_over_warm", (_median(first) / warm_best, min(first) / warm_best), "near 1"),
        f"load_mb_per_s {megabytes_per_s:.1f} MB/s (best; median {size / 1e6 / _median(warm.times['ours']):.1f})",
        f"tables_nbytes_over_corpus {held / size:.3f}x  [{held / 1e6:,.1f} MB for {size / 1e6:,.1f} MB]",
        f"load_peak_rss_over_corpus {(peak - idle) / size:.2f}x (one process, beyond the idle interpreter; "
        f"{peak / size:.2f}x with it)  goal: at most 1.6x",
    ]


def _megabytes(corpus: Path) -> float:
    return sum(path.stat().st_size for path in journals(corpus)) / 1e6


def bench_generations(august: Path, newest: Path, rounds: int) -> list[str]:
    """Throughput on the newest line's journals over the August build's, for both kinds of load."""
    sizes = {"august": _megabytes(august), "newest": _megabytes(newest)}
    warm = interleaved(
        {
            "august": lambda: load(august, progress=False),
            "newest": lambda: load(newest, progress=False),
            "august_records": lambda: load(august, fold=False, progress=False),
            "newest_records": lambda: load(newest, fold=False, progress=False),
        },
        rounds,
    )
    note(
        f"generations: august {sizes['august']:.0f} MB, newest {sizes['newest']:.0f} MB (the same runs, dated); "
        f"load() best {warm.best('august'):.2f} s / {warm.best('newest'):.2f} s"
    )

    def throughput_ratio(ours: str, baseline: str) -> tuple[float, float]:
        best = (sizes["newest"] / warm.best(ours)) / (sizes["august"] / warm.best(baseline))
        median = (sizes["newest"] / _median(warm.times[ours])) / (sizes["august"] / _median(warm.times[baseline]))
        return median, best

    return [
        figure("newest_over_august_load", throughput_ratio("newest", "august"), "at least 1.0x (MB/s, newest/august)"),
        figure(
            "newest_over_august_records",
            throughput_ratio("newest_records", "august_records"),
            "at least 1.0x (MB/s, newest/august)",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tables", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small corpus: a smoke test, not a figure")
    parser.add_argument("--mb", type=int, help="corpus size in MB (default: $JOURNALTOOLS_BENCH_MB or 300)")
    parser.add_argument("--corpus", type=Path, help="use the journals in this directory instead of generating")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=4, help="new interpreters for the fresh figures")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.processes = 2, 2
    megabytes = corpus_megabytes(args.quick, args.mb)
    corpus = args.corpus or bench_corpus(megabytes)
    newest_corpus = None if args.corpus else bench_corpus(megabytes, generation=NEWEST)
    with tempfile.TemporaryDirectory(prefix="bench-tables-") as scratch:
        joined = joined_file(corpus, Path(scratch) / "all.json")
        print(f"# bench_tables: {load_average()}", flush=True)
        note(f"C scanner: {'built' if native.AVAILABLE else 'not built: every figure is the pure-Python path'}")
        for line in [
            *bench_records(corpus, joined, args.rounds, args.processes),
            *bench_fold(corpus, joined.stat().st_size, args.rounds, args.processes),
            *(bench_generations(corpus, newest_corpus, args.rounds) if newest_corpus is not None else []),
        ]:
            print(line, flush=True)
        print(f"# bench_tables done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
