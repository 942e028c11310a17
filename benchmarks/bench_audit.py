"""Batch audits: memory. ``python -m benchmarks.bench_audit [--quick]``.

- ``audit_peak_rss_100k_over_10k``: peak resident memory of ``journaltools audit DIR --parquet OUT`` (the
  command, in a new interpreter) over a directory of 100,000 tiny runs, over the same for 10,000. Each run
  has a finding (a seq gap), so findings grow with runs too. Near 1 means memory does not grow with the
  number of runs or findings; the goal is at most 1.2x.
- ``audit_peak_rss_300k_over_100k``: the same from 100,000 to 300,000 runs, where the Parquet row-group
  buffers are full at both sizes: near 1 means nothing is held per run.
- ``audit_peak_rss_long_line_over_cap``: the same command over one journal holding a line of 300 MB, above
  the 64 MiB cap: its growth in peak memory over an audit of an empty directory, as a multiple of the cap (a
  line up to the cap has to be held to be parsed; one beyond it is skipped as it is read). Near 1 means
  the line was never held whole.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.measure import PRINT_PEAK, child_env, load_average, note
from journaltools.protocol.records import encode_record
from journaltools.samples import sample_fingerprint

AUDIT = """
import sys
from journaltools.cli import main
status = main(["audit", sys.argv[1], "--parquet", sys.argv[2], "--quiet", "--json", *sys.argv[3:]])
"""


def tiny_runs(root: Path, count: int) -> None:
    """``count`` journals of three records each: meta, a user message, and a note after a gap."""
    root.mkdir(parents=True)
    fingerprint = sample_fingerprint()
    for index in range(count):
        run = f"tiny-{index:07d}"
        ts = "2026-12-01T10:00:00Z"
        records = [
            {"type": "meta", "run": run, "seq": 1, "ts": ts, "version": 1, "fingerprint": fingerprint},
            {"type": "user", "run": run, "seq": 2, "ts": ts, "content": "hello"},
            {"type": "note", "run": run, "seq": 5, "ts": ts, "text": "after a gap"},
        ]
        (root / f"{run}.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))


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
    small, large, larger, line_mb = (1_000, 10_000, 30_000, 80) if args.quick else (10_000, 100_000, 300_000, 300)
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

        (scratch / "empty").mkdir()
        long_line = scratch / "long"
        long_line.mkdir()
        with open(long_line / "long-1.jsonl", "wb") as out:
            out.write(b'{"type":"note","run":"long-1","seq":1,"ts":"2026-12-01T10:00:00Z","text":"')
            block = b"x" * (1 << 20)
            for _ in range(line_mb):
                out.write(block)
            out.write(b'"}\n')
        cap = 64 << 20 if not args.quick else 16 << 20
        cap_option = ("--max-line-bytes", str(cap))
        peak_empty = audit_peak_kib(scratch / "empty", scratch / "out-empty", *cap_option)
        peak_line = audit_peak_kib(long_line, scratch / "out-long", *cap_option)
        growth = (peak_line - peak_empty) * 1024
        note(f"audit of one {line_mb} MB line: peak {peak_line / 1024:.0f} MiB (empty: {peak_empty / 1024:.0f} MiB)")
        note(f"  it grew by {growth / (line_mb << 20):.2f}x of the line; a line up to the cap is held to be parsed")
        print(f"audit_peak_rss_long_line_over_cap {growth / cap:.2f}x  goal: near 1 (the cap, never the whole line)")
    print(f"# bench_audit done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
