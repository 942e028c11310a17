"""Hostile journals: time and peak memory. ``python -m benchmarks.bench_hostile [--quick]``.

Each figure is one command (``ls``, ``audit``, ``load(fold=False)``) in a new interpreter over a directory holding
one hostile journal: its wall time inside the interpreter (imports done) and its peak resident memory. The
bounds per journal (``JOURNALTOOLS_MAX_JOURNAL_BYTES``, ``JOURNALTOOLS_MAX_JOURNAL_RECORDS``) keep both small.

- ``zeros_1m_*``: a million ``{}`` lines (3 MB; each a record to Go, every field zero). Refused by the record
  bound after a newline count. Before the bound: ``ls`` 33 s and 813 MB, ``load(fold=False)`` 19 s and 778 MB.
- ``junk_16mib_*``: 16 MiB of ``x`` lines (8 million lines that do not decode). Refused the same way. Before:
  more than 60 s in ``ls`` and ``audit``.
- ``junk_16mib_unbounded_ls``: the same with the record bound lifted: every line is read, those past the corrupt
  findings kept are only counted (not decoded): the cost per line that is left.
- ``baseline_*``: the same commands over one ordinary short run, for scale (imports and tables alone).
- ``zeros_at_bound_ls``: as many ``{}`` lines as the default record bound allows: the worst a journal within the
  bounds costs ``ls``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.measure import PRINT_PEAK, child_env, load_average
from journaltools.samples.builder import JournalBuilder, text
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.scan import DEFAULT_MAX_JOURNAL_RECORDS, MAX_JOURNAL_RECORDS_VARIABLE


def measure(command: str, source: Path, environment: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds, peak resident MiB) of ``command`` (``ls``, ``audit`` or ``load``) over ``source``."""
    done = subprocess.run(
        [sys.executable, "-c", _timed(command), str(source)],
        capture_output=True,
        text=True,
        check=True,
        env={**child_env(), **(environment or {})},
        timeout=600,
    )
    seconds, peak_kib = done.stdout.strip().splitlines()[-2:]
    return float(seconds), int(peak_kib) / 1024


def _timed(command: str) -> str:
    """The script: run ``command`` with its output discarded, then print its seconds and the peak (VmHWM)."""
    run = (
        "jt.load(sys.argv[1], strict=False, fold=False, workers=0)"
        if command == "load"
        else f"main([{command!r}, sys.argv[1]])"
    )
    return (
        "import os, sys, time\n"
        "import journaltools as jt\n"
        "from journaltools.cli import main\n"
        "out = os.dup(1)\n"
        "null = os.open(os.devnull, os.O_WRONLY)\n"
        "os.dup2(null, 1)\n"
        "os.dup2(null, 2)\n"
        "started = time.perf_counter()\n"
        f"{run}\n"
        "seconds = time.perf_counter() - started\n"
        "sys.stdout.flush()\n"
        "os.dup2(out, 1)\n"
        "print(seconds)\n" + PRINT_PEAK
    )


def _ordinary_run() -> bytes:
    """One short completed run: what the commands cost with nothing hostile to read (imports, tables)."""
    built = JournalBuilder("baseline", prompt="hello", created="2026-12-01T10:00:00Z", fingerprint=sample_fingerprint())
    built.assistant(text("hi"))
    built.terminal("completed")
    return built.journal_bytes()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_hostile", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="leave out the runs with the record bound lifted")
    args = parser.parse_args(argv)
    print(f"# bench_hostile: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch_name:
        scratch = Path(scratch_name)
        cases = {
            "zeros_1m": b"{}\n" * 1_000_000,
            "junk_16mib": b"x\n" * (8 << 20),
            "zeros_at_bound": b"{}\n" * DEFAULT_MAX_JOURNAL_RECORDS,
            "baseline": _ordinary_run(),
        }
        for name, data in cases.items():
            (scratch / name).mkdir()
            (scratch / name / f"{name.replace('_', '-')}.json").write_bytes(data)
        plan: list[tuple[str, str, str, dict[str, str]]] = [
            ("baseline_ls", "ls", "baseline", {}),
            ("baseline_load_unfolded", "load", "baseline", {}),
            ("baseline_audit", "audit", "baseline", {}),
            ("zeros_1m_ls", "ls", "zeros_1m", {}),
            ("zeros_1m_load_unfolded", "load", "zeros_1m", {}),
            ("zeros_1m_audit", "audit", "zeros_1m", {}),
            ("junk_16mib_ls", "ls", "junk_16mib", {}),
            ("junk_16mib_audit", "audit", "junk_16mib", {}),
            ("zeros_at_bound_ls", "ls", "zeros_at_bound", {}),
        ]
        if not args.quick:
            lifted = {MAX_JOURNAL_RECORDS_VARIABLE: str(1 << 40)}
            plan.append(("junk_16mib_unbounded_ls", "ls", "junk_16mib", lifted))
        for figure, command, case, environment in plan:
            seconds, peak_mib = measure(command, scratch / case, environment)
            print(f"{figure} {seconds:.2f} s, peak RSS {peak_mib:.0f} MiB", flush=True)
    print(f"# bench_hostile done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
