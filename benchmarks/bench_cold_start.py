"""The command line's cold start. ``python -m benchmarks.bench_cold_start [--quick] [--rounds N]``.

Each figure is a new interpreter running the ``journaltools`` command (what its console script runs) over a bare
``python -c pass`` in another new interpreter, rounds interleaved (see ``measure``), min and median:

- ``cold_start_help``: ``journaltools --help``. Goal: at most 0.1 s beyond ``python -c pass``.
- ``cold_start_show``: ``journaltools show`` of a 10-record journal of the August build, and
  ``cold_start_show_newest`` of the newest line's. Goal: at most 0.2 s beyond ``python -c pass``.

Each line gives the ratio and the seconds beyond the bare interpreter (best and median). The untimed first round
runs with bytecode writing allowed, so the timed rounds read compiled modules, as an installed package does (an
environment with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module in every process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.measure import Rounds, child_env, figure, interleaved, load_average, note

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
#: What the ``journaltools`` console script runs.
COMMAND = "import sys; from journaltools.cli import main; sys.exit(main())"
#: Goals, in seconds beyond a bare interpreter's start.
GOALS = {"help": 0.1, "show": 0.2, "show_newest": 0.2}


def _env() -> dict[str, str]:
    env = child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _process(args: Sequence[str]) -> Callable[[], object]:
    env = _env()

    def run() -> object:
        return subprocess.run(
            [sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env
        )

    return run


def contenders() -> dict[str, Callable[[], object]]:
    show = ["-c", COMMAND, "show"]
    return {
        "python": _process(["-c", "pass"]),
        "help": _process(["-c", COMMAND, "--help"]),
        "show": _process([*show, str(SAMPLES / "completed-with-tools.json")]),
        "show_newest": _process([*show, str(SAMPLES / "newest-completed-with-tools.json")]),
    }


def _beyond(rounds: Rounds, name: str) -> tuple[float, float]:
    """Seconds beyond the bare interpreter: (median of the per-round differences, best minus best)."""
    per_round = [a - b for a, b in zip(rounds.times[name], rounds.times["python"], strict=True)]
    return statistics.median(per_round), rounds.best(name) - rounds.best("python")


def bench_cold_start(rounds: int) -> list[str]:
    for path in (SAMPLES / "completed-with-tools.json", SAMPLES / "newest-completed-with-tools.json"):
        records = [line for line in path.read_bytes().split(b"\n") if line.strip()]
        assert len(records) == 10, f"{path.name}: the figure is for a 10-record journal"
    timed = interleaved(contenders(), rounds)
    for name, times in timed.times.items():
        note(f"  {name:12} best {min(times):6.3f} s   median {statistics.median(times):6.3f} s")
    lines = []
    for name, goal in GOALS.items():
        median, best = _beyond(timed, name)
        lines.append(
            figure(
                f"cold_start_{name}_over_python",
                timed.ratio(name, "python"),
                f"at most {goal} s beyond python -c pass",
                f"{best:.3f} s beyond it best vs best, {median:.3f} s median of rounds",
            )
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cold_start", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test, not a figure")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    print(f"# bench_cold_start: {load_average()}", flush=True)
    note(f"cold start: {rounds} rounds of new interpreters ({os.path.basename(sys.executable)})")
    for line in bench_cold_start(rounds):
        print(line, flush=True)
    print(f"# bench_cold_start done: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
