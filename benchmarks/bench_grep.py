"""Searching every run's text: ``python -m benchmarks.bench_grep [--quick]``.

On 5,000 generated runs of 40 records each
(``python -m journaltools.testing.generate DIR --runs 5000 --records 40``, about 150 MB, kept in ``out/bench-corpus/``;
``--quick``: 500 runs), ``jt.grep`` against a plain walk that decodes every record and tests each text in Python
(what grep must find, found the slow way):

- ``grep_5000_runs_<case>_seconds``: wall-clock seconds of ``jt.grep`` over the whole directory (reading the
  journals included), the median of the rounds and the best; the goal is about one second for a pattern that
  is in a few runs' texts (``rare``: a phrase, and ``-i`` on non-English text) and for one that is nowhere
  (``absent``). A pattern in most runs (``common``) or a regular expression (``regex``, which decodes every
  record) costs more: every record that may hold it is decoded, and each match makes a row.
- ``grep_<case>_vs_walk``: the same as a ratio of the walk's time (below 1: faster than the walk).

These machines are shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from benchmarks.corpus import _ROOT, _generator_digest
from benchmarks.measure import figure, interleaved, load_average, note
from journaltools.analyses.textgrep import grep, texts_of
from journaltools.sources.registry import open_source
from journaltools.testing.generate import generate_corpus

RECORDS: Final = 40
#: (case, pattern, ignore_case, regex): words the generator's text pool holds, rarely or often.
CASES: Final = (
    ("rare", '"quoted" in timeout', False, False),
    ("rare_ignore_case", "🚀 ON WITH", True, False),
    ("absent", "no run says this", False, False),
    ("common", "latency", False, False),
    ("regex", r"back\\slash (healthy|leader)", False, True),
)


def grep_corpus(runs: int) -> Path:
    """``runs`` generated runs of ``RECORDS`` records, generated once and kept."""
    directory = _ROOT / f"grep-{_generator_digest()}-{runs}x{RECORDS}"
    marker = directory / "COMPLETE"
    if not marker.is_file():
        note(f"generating {runs} runs in {directory} (kept for the next run)")
        stats = generate_corpus(directory, runs=runs, records=RECORDS, seed=0)
        marker.write_text(f"{stats.runs} runs, {stats.bytes} bytes\n")
    return directory


def walk(source: Path, pattern: str, ignore_case: bool) -> int:
    """The slow way: decode every record and test every text in Python (substring only)."""
    wanted = pattern.casefold() if ignore_case else pattern
    found = 0
    with open_source(str(source)) as backend:
        for read in backend.read_runs(strict=False):
            for record in read.typed():
                for _, _, text in texts_of(record):
                    found += wanted in (text.casefold() if ignore_case else text)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_grep", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 runs, for a smoke test")
    args = parser.parse_args(argv)
    runs = 500 if args.quick else 5000
    rounds = 1 if args.quick else 3
    print(f"# bench_grep: {load_average()}", flush=True)
    source = grep_corpus(runs)
    for case, pattern, ignore_case, regex in CASES:
        contenders = {"grep": lambda p=pattern, i=ignore_case, r=regex: grep(p, str(source), ignore_case=i, regex=r)}
        if not regex:
            contenders["walk"] = lambda p=pattern, i=ignore_case: walk(source, p, i)
        timed = interleaved(contenders, rounds, warm_up=not args.quick)
        matches = len(grep(pattern, str(source), ignore_case=ignore_case, regex=regex))
        seconds = timed.times["grep"]
        note(f"{case}: {pattern!r} -> {matches} matching texts; grep {seconds}, walk {timed.times.get('walk')}")
        print(
            f"grep_{runs}_runs_{case}_seconds {statistics.median(seconds):.2f}s (median of rounds; "
            f"{min(seconds):.2f}s best)  goal: about 1s for rare and absent  [{matches} matching texts]",
            flush=True,
        )
        if "walk" in contenders:
            print(figure(f"grep_{case}_vs_walk", timed.ratio("grep", "walk"), "below 1"), flush=True)
    print(f"# bench_grep done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
