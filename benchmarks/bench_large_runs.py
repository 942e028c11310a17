"""Large runs (issue 41): a run of 100,000 records opened in the conversation view and paged, ``show`` of it until
its first line, and the report of a 20,000-record run, against the fold every face must do first.

The runs are generated real-format journals (``journaltools.testing.generate``, August build: the newest line's
generator makes each terminal's summary by folding the run so far, which is slow for so long a run), kept in
``out/bench-corpus/`` for the next time. The 100,000-record run is as long as a journal may be
(``JOURNALTOOLS_MAX_JOURNAL_RECORDS``): 99,992 records, 61 MB, 49,485 messages, 9,616 process runs.

Figures, each the median of interleaved rounds and the best, as ratios against the fold (reading the journal,
``fold_run`` and the facts of its records, which the view, ``show`` and the report all start from) on the same run
in the same process, and as seconds against the issue's goals:

- ``large_view_open``: ``ConversationView.from_source`` (read, fold, header, "jump to", first page), goal 1 s;
- ``large_view_page``: the next page and a jump to a seq in the opened view, goal 100 ms;
- ``large_show_first_line``: ``journaltools show`` until its first line is written, and until its last (the
  whole readable account, 44 MB);
- ``large_report``: the report of the 20,000-record run: its time, its size against the 10 MB bound, and whether
  every message the fold gives is in it (its compressed pages inflated and counted here).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import random
import re
import statistics
import sys
import time
from collections.abc import Sequence
from contextlib import redirect_stdout
from pathlib import Path

from benchmarks.measure import figure, interleaved, load_average, note
from journaltools.testing import generate
from journaltools.testing.generate import generate_corpus, run_id
from journaltools.widgets.conversation import ConversationView

#: Records of the long run (the most a journal may hold is 100,000; the generator ends a run past its target).
LONG_RECORDS = 99_990
REPORT_RECORDS = 20_000
QUICK_LONG, QUICK_REPORT = 10_000, 4_000
_ROOT = Path(__file__).resolve().parent.parent / "out" / "bench-corpus"


def long_run(records: int) -> tuple[Path, str]:
    """A directory holding one generated run of about ``records`` records, made once per version of the
    generator."""
    digest = hashlib.sha256(Path(generate.__file__).read_bytes()).hexdigest()[:10]
    directory = _ROOT / f"large-run-{digest}-{records}"
    if not (directory / "COMPLETE").is_file():
        note(f"generating a {records:,}-record run in {directory} (kept for the next time)")
        generate_corpus(directory, runs=1, records=records, workers=1)
        (directory / "COMPLETE").write_text("1 run\n")
    return directory, run_id(0)


def fold_only(source: Path, run: str) -> object:
    """What every face does first: read the journal, fold it, walk its records' facts."""
    from journaltools.folding.run import fold_run
    from journaltools.sources.registry import open_source

    with open_source(source) as backend:
        folded = fold_run(backend.read_run(run, strict=False))
    return folded.facts()


class Shown:
    """A view a round opened, closed once the round lets go of it (after its time is taken), as a notebook closes a
    view it no longer shows: a view left open stays registered with ipywidgets, and with it its run, so each later
    round would open with one more run of 100,000 records held (and scanned by the collector)."""

    def __init__(self, view: ConversationView) -> None:
        self.view = view

    def __del__(self) -> None:
        self.view.close()


class _FirstWrite(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.first: float | None = None

    def write(self, text: str) -> int:
        if self.first is None:
            self.first = time.perf_counter()
        return len(text)  # the text itself is not kept: 44 MB of it


def show_times(source: Path, run: str) -> tuple[float, float]:
    """Seconds from calling ``journaltools show SOURCE RUN`` to its first line, and to its end."""
    from journaltools.cli import main

    out = _FirstWrite()
    started = time.perf_counter()
    with redirect_stdout(out):
        main(["show", str(source), run])
    ended = time.perf_counter()
    assert out.first is not None
    return out.first - started, ended - started


_PACKED = re.compile(r'data-jt-gz="([^"]*)"')
_MESSAGE = re.compile(r'<div class="jt-msg jt-msg-\w+[^"]*" id="jt-r-seq-\d+" data-index="\d+" data-seq="(\d+)"')


def seqs_in_report(html: str) -> list[int]:
    """The seq of every message the file holds, its compressed pages inflated (as its script does)."""
    whole = _PACKED.sub(lambda found: gzip.decompress(base64.b64decode(found[1])).decode(), html)
    return [int(seq) for seq in _MESSAGE.findall(whole)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_large_runs", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 and 4,000 records, two rounds")
    args = parser.parse_args(argv)
    long_records = QUICK_LONG if args.quick else LONG_RECORDS
    report_records = QUICK_REPORT if args.quick else REPORT_RECORDS
    rounds = 2 if args.quick else 5
    print(f"# bench_large_runs: {load_average()}", flush=True)
    source, run = long_run(long_records)
    opened = interleaved(
        {"fold": lambda: fold_only(source, run), "open": lambda: Shown(ConversationView.from_source(source, run))},
        rounds,
    )
    view = ConversationView.from_source(source, run)
    messages = len(view.model.messages)
    detail = (
        f"{messages:,} messages, {len(view.model.segments):,} process runs; open {opened.best('open'):.2f}s best, "
        f"{statistics.median(opened.times['open']):.2f}s median; the fold alone {opened.best('fold'):.2f}s"
    )
    goal = "within 1 s"
    print(figure(f"large_view_open_{long_records}_vs_fold", opened.ratio("open", "fold"), goal, detail), flush=True)

    pages, jumps = [], []
    last_seq = int(view.model.header["last_seq"])
    chosen = random.Random(41)
    for number in range(1, 41):
        started = time.perf_counter()
        view.show_page(number * (view.model.page_count // 41))
        pages.append(time.perf_counter() - started)
        started = time.perf_counter()
        view.jump_to_seq(chosen.randint(1, last_seq))
        jumps.append(time.perf_counter() - started)
    print(
        f"large_view_page_{long_records} page {statistics.median(pages) * 1e3:.1f}ms median, {max(pages) * 1e3:.1f}ms "
        f"worst; jump to a seq {statistics.median(jumps) * 1e3:.1f}ms median, {max(jumps) * 1e3:.1f}ms worst "
        f"(40 of each)  goal: within 100 ms",
        flush=True,
    )
    view.close()

    firsts: list[float] = []
    totals: list[float] = []

    def show() -> None:
        first, total = show_times(source, run)
        firsts.append(first)
        totals.append(total)

    shown = interleaved({"fold": lambda: fold_only(source, run), "show": show}, rounds)
    firsts, totals = firsts[-rounds:], totals[-rounds:]
    first_ratio = statistics.median(f / b for f, b in zip(firsts, shown.times["fold"], strict=True))
    detail = (
        f"first line {min(firsts):.2f}s best, {statistics.median(firsts):.2f}s median; the whole account "
        f"{min(totals):.2f}s best; the fold alone {shown.best('fold'):.2f}s"
    )
    print(
        figure(
            f"large_show_first_line_{long_records}_vs_fold",
            (first_ratio, min(firsts) / shown.best("fold")),
            "the first line once the run is folded",
            detail,
        ),
        flush=True,
    )

    import journaltools as jt
    from journaltools.folding.run import fold_run
    from journaltools.sources.registry import open_source

    report_source, report_run = long_run(report_records)
    made = jt.report(str(report_source), report_run)
    reported = interleaved(
        {
            "fold": lambda: fold_only(report_source, report_run),
            "report": lambda: jt.report(str(report_source), report_run),
        },
        rounds,
    )
    with open_source(report_source) as backend:
        expected = fold_run(backend.read_run(report_run, strict=False)).result.message_seqs
    every = seqs_in_report(made.html) == expected
    detail = (
        f"{reported.best('report'):.2f}s best; {made.size / 1e6:.1f} MB of {made.max_bytes / 1e6:.0f} MB; "
        f"{made.messages_shown:,} of {made.messages:,} messages in {made.pages:,} pages, {made.compressed_pages:,} "
        f"compressed; every message the fold gives is in it: {'yes' if every else 'NO'}"
    )
    print(
        figure(f"large_report_{report_records}_vs_fold", reported.ratio("report", "fold"), "every message", detail),
        flush=True,
    )
    print(f"# bench_large_runs done: {load_average()}", flush=True)
    return 0 if every else 1


if __name__ == "__main__":
    sys.exit(main())
