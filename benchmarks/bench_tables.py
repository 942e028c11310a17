"""Loading tables. ``python -m benchmarks.bench_tables [--quick] [--corpus DIR]``.

On a generated corpus (journaltools.generate: 200 runs x 1,000 records, about 200 MB, unless --quick), each
figure compares journaltools with a baseline on the same bytes (see ``measure``), warm (one process, rounds
interleaved) and fresh (the first call in a new interpreter, imports done, several interpreters):

- ``records_vs_pyarrow_json``: ``pyarrow.json.read_json`` on all journals concatenated into one file with an
  explicit schema of the five envelope fields (its best case: one call, every core, every other field
  skipped) over ``load(corpus, fold=False)`` (every line checked, the envelope validated, the body kept).
  Above 1 means journaltools is faster. Also against polars ``read_ndjson`` and DuckDB ``read_json`` with
  the same schema, where those are installed.
- ``load_vs_orjson_parse``: ``load(corpus)`` (all five tables, every run folded) over a bare
  ``orjson.loads`` of every line already in memory, with the collector paused. Lower is better.
- ``first_over_warm``: the first load in a new interpreter over a warm one, for both kinds of load.
- ``records_peak_rss_over_corpus``: peak resident memory of ``load(fold=False)`` in a new interpreter over
  the corpus bytes on disk.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.json as pa_json

from benchmarks.measure import (
    figure,
    fresh_ratio,
    fresh_timings,
    interleaved,
    load_average,
    note,
    peak_rss_kib,
)
from journaltools.generate import generate_corpus
from journaltools.tables import load

ENVELOPE = pa.schema(
    [("type", pa.string()), ("run", pa.string()), ("seq", pa.int64()), ("ts", pa.string()), ("optional", pa.bool_())]
)


def pyarrow_json(path: Path) -> pa.Table:
    options = pa_json.ParseOptions(explicit_schema=ENVELOPE, unexpected_field_behavior="ignore")
    return pa_json.read_json(path, parse_options=options)


def polars_ndjson(path: Path) -> object:
    import polars as pl

    schema = {"type": pl.Utf8, "run": pl.Utf8, "seq": pl.Int64, "ts": pl.Utf8, "optional": pl.Boolean}
    return pl.read_ndjson(path, schema=schema)


def duckdb_json(path: Path) -> pa.Table:
    import duckdb

    columns = "{'type': 'VARCHAR', 'run': 'VARCHAR', 'seq': 'BIGINT', 'ts': 'VARCHAR', 'optional': 'BOOLEAN'}"
    query = f"SELECT * FROM read_json('{path}', format='newline_delimited', columns={columns})"
    relation = duckdb.sql(query)
    table: pa.Table = relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.fetch_arrow_table()
    return table


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


FRESH_RECORDS = """
import json, sys, time
order, corpus, joined = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
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
order, corpus = sys.argv[1].split(","), sys.argv[2]
import orjson
from pathlib import Path
from journaltools.tables import load
lines = [line for path in sorted(Path(corpus).glob("*.jsonl")) for line in path.read_bytes().split(b"\\n")[:-1]]
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


def bench_records(corpus: Path, joined: Path, rounds: int, processes: int) -> list[str]:
    size = joined.stat().st_size
    records = load(corpus, fold=False, progress=False).records.num_rows
    assert pyarrow_json(joined).num_rows == records, "the same rows, or the comparison means nothing"
    contenders: dict[str, Callable[[], object]] = {
        "ours": lambda: load(corpus, fold=False, progress=False),
        "pyarrow": lambda: pyarrow_json(joined),
    }
    if _installed("polars"):
        contenders["polars"] = lambda: polars_ndjson(joined)
    if _installed("duckdb"):
        contenders["duckdb"] = lambda: duckdb_json(joined)
    warm = interleaved(contenders, rounds)
    note(f"records: {records:,} records, {size / 1e6:,.0f} MB in {len(list(corpus.glob('*.jsonl')))} journals")
    for name, times in warm.times.items():
        note(f"  {name:8} best {min(times):6.3f} s   median {sorted(times)[len(times) // 2]:6.3f} s")
    lines = [figure("records_vs_pyarrow_json", warm.ratio("pyarrow", "ours"), "at least 1.0x, stretch 1.5x")]
    for other in ("polars", "duckdb"):
        if other in contenders:
            lines.append(figure(f"records_vs_{other}_read_json", warm.ratio(other, "ours"), "for reference"))
    orders = [("ours,pyarrow" if n % 2 == 0 else "pyarrow,ours") for n in range(processes)]
    fresh = [t for order in orders for t in fresh_timings(FRESH_RECORDS, [order, str(corpus), str(joined)], 1)]
    lines.append(figure("records_vs_pyarrow_json_fresh", fresh_ratio(fresh, "pyarrow", "ours"), "at least 1.0x"))
    first = [t["ours"] for t in fresh]
    warm_best = warm.best("ours")
    lines.append(
        figure(
            "records_first_over_warm", (sorted(first)[len(first) // 2] / warm_best, min(first) / warm_best), "near 1"
        )
    )
    peak = peak_rss_kib(PEAK_RECORDS, [str(corpus), "load"]) * 1024
    idle = peak_rss_kib(PEAK_RECORDS, [str(corpus), "import only"]) * 1024
    note(f"  peak RSS of load(fold=False) in a new interpreter: {peak / 1e6:,.0f} MB for {size / 1e6:,.0f} MB")
    note(f"  (the interpreter with journaltools imported and nothing loaded: {idle / 1e6:,.0f} MB)")
    lines.append(
        f"records_peak_rss_over_corpus {(peak - idle) / size:.2f}x (beyond the idle interpreter; "
        f"{peak / size:.2f}x with it)  goal: at most 1.3x"
    )
    return lines


def bench_fold(corpus: Path, rounds: int, processes: int) -> list[str]:
    lines = [line for path in sorted(corpus.glob("*.jsonl")) for line in path.read_bytes().split(b"\n")[:-1]]

    def parse() -> list[object]:
        gc.disable()
        try:
            return [orjson.loads(line) for line in lines]
        finally:
            gc.enable()

    warm = interleaved({"ours": lambda: load(corpus, progress=False), "orjson": parse}, rounds)
    note(
        f"fold: {len(lines):,} records; load() best {warm.best('ours'):.2f} s, orjson best {warm.best('orjson'):.2f} s"
    )
    orders = [("ours,orjson" if n % 2 == 0 else "orjson,ours") for n in range(processes)]
    fresh = [t for order in orders for t in fresh_timings(FRESH_FOLD, [order, str(corpus)], 1)]
    first = [t["ours"] for t in fresh]
    warm_best = warm.best("ours")
    return [
        figure("load_vs_orjson_parse", warm.ratio("ours", "orjson"), "at most 3x (lower is better)"),
        figure("load_vs_orjson_parse_fresh", fresh_ratio(fresh, "ours", "orjson"), "at most 3x (lower is better)"),
        figure("load_first_over_warm", (sorted(first)[len(first) // 2] / warm_best, min(first) / warm_best), "near 1"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tables", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small corpus: a smoke test, not a figure")
    parser.add_argument("--corpus", type=Path, help="reuse (or create) the generated corpus in this directory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=4, help="new interpreters for the fresh figures")
    args = parser.parse_args(argv)
    runs, records = (20, 300) if args.quick else (200, 1000)
    if args.quick:
        args.rounds, args.processes = 2, 2
    with tempfile.TemporaryDirectory(prefix="bench-tables-") as scratch_name:
        scratch = Path(scratch_name)
        corpus = args.corpus or scratch / "corpus"
        if not any(corpus.glob("*.jsonl")):
            generate_corpus(corpus, runs=runs, records=records, seed=0)
        joined = scratch / "all.jsonl"
        with open(joined, "wb") as out:
            for path in sorted(corpus.glob("*.jsonl")):
                out.write(path.read_bytes())
        print(f"# bench_tables: {load_average()}", flush=True)
        for line in [
            *bench_records(corpus, joined, args.rounds, args.processes),
            *bench_fold(corpus, args.rounds, args.processes),
        ]:
            print(line, flush=True)
        print(f"# bench_tables done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
