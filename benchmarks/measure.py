"""How every benchmark measures: ours and a baseline on the same data, interleaved, as ratios.

These machines are shared and noisy, so no figure is a bare number of seconds. Each round runs every
contender once, in an order that rotates from round to round, with the collector run between them; a
figure is the ratio of two contenders' times, given as the median of the per-round ratios and as the
ratio of their best times. "Fresh" figures time the first call in a new interpreter (imports done), once
per process, in several processes.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def note(text: str) -> None:
    """Detail for the reader, on stderr; the figures go to stdout."""
    print(text, file=sys.stderr, flush=True)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


@dataclass(frozen=True, slots=True)
class Rounds:
    times: dict[str, list[float]]

    def best(self, name: str) -> float:
        return min(self.times[name])

    def ratio(self, numerator: str, denominator: str) -> tuple[float, float]:
        """(median of the per-round ratios, ratio of the best times) of ``numerator / denominator``."""
        per_round = [a / b for a, b in zip(self.times[numerator], self.times[denominator], strict=True)]
        return statistics.median(per_round), self.best(numerator) / self.best(denominator)


def interleaved(contenders: dict[str, Callable[[], object]], rounds: int, *, warm_up: bool = True) -> Rounds:
    """Wall-clock seconds of every contender in each of ``rounds`` rounds (after one untimed round)."""
    names = list(contenders)
    if warm_up:
        for name in names:
            contenders[name]()
            gc.collect()
    times: dict[str, list[float]] = {name: [] for name in names}
    for number in range(rounds):
        order = names[number % len(names) :] + names[: number % len(names)]
        for name in order:
            started = time.perf_counter()
            result = contenders[name]()
            times[name].append(time.perf_counter() - started)
            del result
            gc.collect()
    return Rounds(times)


def figure(name: str, value: tuple[float, float], goal: str, detail: str = "") -> str:
    """One figure line: ``name median x (best x), goal ...``."""
    median, best = value
    text = f"{name} {median:.2f}x (median of rounds; {best:.2f}x best vs best)  goal: {goal}"
    return f"{text}  [{detail}]" if detail else text


def fresh_timings(script: str, args: Sequence[str], processes: int) -> list[dict[str, float]]:
    """Run ``script`` (which prints one JSON object of timings) in ``processes`` new interpreters."""
    results = []
    for _ in range(processes):
        done = subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True, env=_env()
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def fresh_ratio(timings: list[dict[str, float]], numerator: str, denominator: str) -> tuple[float, float]:
    per_process = [t[numerator] / t[denominator] for t in timings]
    best = min(t[numerator] for t in timings) / min(t[denominator] for t in timings)
    return statistics.median(per_process), best


def peak_rss_kib(script: str, args: Sequence[str]) -> int:
    """The high-water mark of resident memory of ``script`` run in a new interpreter (it prints VmHWM)."""
    done = subprocess.run(
        [sys.executable, "-c", script + PRINT_PEAK, *args], capture_output=True, text=True, check=True, env=_env()
    )
    return int(done.stdout.strip().splitlines()[-1])


#: Appended to a peak-memory script: VmHWM, not ru_maxrss, which a child inherits from the parent it forked from.
PRINT_PEAK = """
with open("/proc/self/status") as _status:
    print(next(line.split()[1] for line in _status if line.startswith("VmHWM:")))
"""


def child_env() -> dict[str, str]:
    """The environment of a new interpreter that can import ``benchmarks`` (the checkout on its path)."""
    return _env()


def _env() -> dict[str, str]:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env
