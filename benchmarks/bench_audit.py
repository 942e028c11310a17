"""Batch audits: memory. ``python -m benchmarks.bench_audit [--quick]``.

- ``audit_peak_rss_100k_over_10k``: peak resident memory of ``journaltools audit DIR --parquet OUT`` (the
  command, in a new interpreter) over a directory of 100,000 tiny fisk-ai journals, over the same for 10,000.
  Each run has a finding (a call left unanswered when the next user message came), so findings grow with
  runs too. Near 1 means memory does not grow with the
  number of runs or findings; the goal is at most 1.2x.
- ``audit_peak_rss_300k_over_100k``: the same from 100,000 to 300,000 runs, where the Parquet row-group
  buffers are full at both sizes: near 1 means nothing is held per run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.measure import PRINT_PEAK, child_env, load_average, note
from journaltools.samples.builder import JournalBuilder, tool_use
from journaltools.samples.stories import sample_fingerprint

AUDIT = """
import sys
from journaltools.cli import main
status = main(["audit", sys.argv[1], "--parquet", sys.argv[2], "--quiet", "--json", *sys.argv[3:]])
"""


def tiny_runs(root: Path, count: int) -> None:
    """``count`` journals of four records each: meta, a call, the next user message, a terminal."""
    root.mkdir(parents=True)
    fingerprint = sample_fingerprint()
    for index in range(count):
        run = f"tiny-{index:07d}"
        journal = JournalBuilder(run, prompt="hello", created="2026-12-01T10:00:00.25+01:00", fingerprint=fingerprint)
        journal.assistant(tool_use(f"toolu_{index}", "stream_info", {"stream": "ORDERS"}))
        journal.user("never mind")
        journal.terminal("error", "cancelled")
        (root / f"{run}.json").write_bytes(journal.journal_bytes())
        (root / f"{run}.lock").touch()


def audit_peak_kib(source: Path, out: Path, *options: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", AUDIT + PRINT_PEAK, str(source), str(out), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=True,
        env=child_env(),
    )
    return int(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_audit", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    small, large, larger = (1_000, 10_000, 30_000) if args.quick else (10_000, 100_000, 300_000)
    print(f"# bench_audit: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as scratch_name:
        scratch = Path(scratch_name)
        tiny_runs(scratch / "small", small)
        tiny_runs(scratch / "large", large)
        peak_small = audit_peak_kib(scratch / "small", scratch / "out-small")
        peak_large = audit_peak_kib(scratch / "large", scratch / "out-large")
        note(f"audit peak RSS: {small:,} runs {peak_small / 1024:.0f} MiB, {large:,} runs {peak_large / 1024:.0f} MiB")
        print(
            f"audit_peak_rss_{large // 1000}k_over_{small // 1000}k {peak_large / peak_small:.2f}x  goal: at most 1.2x"
        )
        # Between the two sizes above, the Parquet writers' row-group buffers (row_group_bytes per table) fill
        # up; beyond them, anything still growing is held per run.
        tiny_runs(scratch / "larger", larger)
        peak_larger = audit_peak_kib(scratch / "larger", scratch / "out-larger")
        note(f"audit peak RSS: {larger:,} runs {peak_larger / 1024:.0f} MiB")
        print(
            f"audit_peak_rss_{larger // 1000}k_over_{large // 1000}k {peak_larger / peak_large:.2f}x"
            "  goal: near 1 (the buffers are full at both sizes)"
        )

    print(f"# bench_audit done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
