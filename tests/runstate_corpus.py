"""The real fisk-ai corpus kept in tests/corpus/runstate: journals, listings and stream messages written by the
runtime's own Go code, with what its fold and listings returned for each (tests/corpus/runstate/MANIFEST.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parent / "corpus" / "runstate"
#: The newest line's corpus (format version 1), written by its own code: tests/corpus/runstate/newest/MANIFEST.md.
NEWEST_CORPUS = CORPUS / "newest"


def random_ones_slow(corpora: list[Any]) -> list[Any]:
    """Parameters over corpora (names or paths), those of the random corpora marked slow: each is hundreds of runs,
    and a sweep of it belongs to ``make test``; ``make check`` sweeps the scenario and broken corpora."""
    return [pytest.param(corpus, marks=pytest.mark.slow) if "random" in str(corpus) else corpus for corpus in corpora]


def expected(name: str, *, newest: bool = False) -> list[dict[str, Any]]:
    """One fold result per journal of ``expected/<name>.jsonl`` (file, random, broken, jetstream; for the newest
    corpus also version3). Each entry's ``corpus`` names the folder its ``path`` is relative to."""
    return _expected(name, newest)


@cache
def _expected(name: str, newest: bool) -> list[dict[str, Any]]:
    root = NEWEST_CORPUS if newest else CORPUS
    with open(root / "expected" / f"{name}.jsonl", encoding="utf-8") as lines:
        return [{**json.loads(line), "corpus": str(root)} for line in lines]


def journal_bytes(entry: dict[str, Any]) -> bytes:
    return (Path(entry.get("corpus", CORPUS)) / entry["path"]).read_bytes()


def jsonl(name: str | Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file of the corpus (a name within it, or a path)."""
    with open(CORPUS / name, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def canonical_lines() -> Iterator[tuple[str, bytes]]:
    """Every line of every journal the runtime wrote through its API (file/ and random/)."""
    for folder in ("file", "random"):
        for path in sorted((CORPUS / folder).glob("*.json")):
            for line in path.read_bytes().split(b"\n"):
                if line:
                    yield path.name, line
