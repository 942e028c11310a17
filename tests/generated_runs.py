"""One generated run of a given length, read and folded: the long runs the large-run tests page, stream and pack."""

from __future__ import annotations

from pathlib import Path

from journaltools.folding import FoldResult
from journaltools.folding.run import fold_run
from journaltools.sources.registry import open_source
from journaltools.testing.generate import generate_corpus, run_id


def generated_run(root: Path, records: int, seed: int) -> tuple[Path, str, FoldResult]:
    """A run of about ``records`` records generated into ``root``: the directory, its run id and its fold."""
    generate_corpus(root, runs=1, records=records, seed=seed, workers=1)
    run = run_id(0, seed)
    with open_source(root) as backend:
        result = fold_run(backend.read_run(run, strict=False)).result
    return root, run, result
