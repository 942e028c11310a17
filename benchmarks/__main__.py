"""``python -m benchmarks [--quick] [--mb N]`` (``make bench``): every benchmark, one line per figure on stdout.

The table benchmarks run on a generated real-format corpus of several hundred MB (``--mb``, or the
``JOURNALTOOLS_BENCH_MB`` environment variable; ``--quick`` takes a small one for a smoke test).

Each benchmark module has a ``main(argv)``; modules are imported only when they run, and a missing one
is skipped with the reason printed, so one area's benchmarks never block another's.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

BENCHMARKS = (
    "benchmarks.bench_tables",
    "benchmarks.bench_small_runs",
    "benchmarks.bench_cold_start",
    "benchmarks.bench_jetstream",
    "benchmarks.bench_audit",
    "benchmarks.bench_hostile",
    "benchmarks.bench_grep",
    "benchmarks.bench_first_render",
    "benchmarks.bench_follow",
    "benchmarks.bench_large_runs",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for every benchmark: a smoke test")
    parser.add_argument("--mb", type=int, help="size of the tables benchmarks' corpus in MB")
    options = parser.parse_args(argv)
    args = ["--quick"] if options.quick else []
    status = 0
    for name in BENCHMARKS:
        extra = ["--mb", str(options.mb)] if options.mb is not None and name == "benchmarks.bench_tables" else []
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise  # the benchmark exists but something it needs does not: that is a failure
            print(f"skipped {name}: the module is not there", file=sys.stderr)
            continue
        status |= int(module.main([*args, *extra]) or 0)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
