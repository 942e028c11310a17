"""The benchmarks' corpus: generated real-format journals (``journaltools.testing.generate``) of a given size.

Several hundred MB by default (``JOURNALTOOLS_BENCH_MB``, or ``--mb``; ``--quick`` takes a small one). A
corpus is generated once per size, seed and version of the generator and kept in ``out/bench-corpus/`` (a
``COMPLETE`` marker says the generation finished), since generating is slower than what is measured on it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

from benchmarks.measure import note
from journaltools.protocol.generations import AUGUST, Generation
from journaltools.testing import generate
from journaltools.testing.generate import generate_corpus

DEFAULT_MB: Final = 300
QUICK_MB: Final = 20
#: Records per run: with the generator's content sizes, about 60 KB a run, like long tool-using sessions.
RECORDS_PER_RUN: Final = 100
_BATCH: Final = 200
_MARKER: Final = "COMPLETE"
_ROOT: Final = Path(__file__).resolve().parent.parent / "out" / "bench-corpus"


def corpus_megabytes(quick: bool, requested: int | None) -> int:
    if requested is not None:
        return requested
    if quick:
        return QUICK_MB
    return int(os.environ.get("JOURNALTOOLS_BENCH_MB", DEFAULT_MB))


def bench_corpus(megabytes: int, seed: int = 0, root: Path | None = None, generation: Generation = AUGUST) -> Path:
    """A directory holding at least ``megabytes`` MB of generated journals (``<id>.json`` + ``<id>.lock``) in
    ``generation``'s format (the same runs' stories in either)."""
    label = "v3" if generation is AUGUST else f"v{generation.version}-{generation.name}"
    directory = (root or _ROOT) / f"{label}-{_generator_digest()}-seed{seed}-{megabytes}mb"
    if (directory / _MARKER).is_file():
        return directory
    note(f"generating a {megabytes} MB corpus in {directory} (kept for the next run)")
    written = runs = 0
    while written < megabytes * 1_000_000:
        # Batches of runs appended in index order: the same size always gives the same runs.
        stats = generate_corpus(
            directory, runs=_BATCH, records=RECORDS_PER_RUN, seed=seed, first=runs, generation=generation
        )
        written += stats.bytes
        runs += _BATCH
    (directory / _MARKER).write_text(f"{runs} runs, {written} bytes\n")
    return directory


def _generator_digest() -> str:
    """A digest of the generator's source: a cached corpus from another version of it is never reused."""
    return hashlib.sha256(Path(generate.__file__).read_bytes()).hexdigest()[:10]


def journals(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("*.json"))


def joined_file(corpus: Path, target: Path) -> Path:
    """Every journal's lines concatenated into one file: the best case of a one-file JSON reader."""
    with open(target, "wb") as out:
        for path in journals(corpus):
            out.write(path.read_bytes())
    return target
