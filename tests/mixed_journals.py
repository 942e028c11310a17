"""Directories of journals a load or a listing meets, for the tests that hold the native and Python paths equal:
real corpus journals, copies under other names, and proven journals whose lines were dropped, doubled or swapped."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from tests.runstate_corpus import CORPUS


def journals_of(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.glob("*.json")):
        yield path.name.removesuffix(".json"), path.read_bytes()


def line_mutations(data: bytes, chooser: random.Random, count: int) -> Iterator[bytes]:
    """``data`` with a line dropped, doubled, or swapped with the next, at random places: every line stays
    canonical (so the journal stays proven), while the fold meets gaps, repeats, results before their calls,
    turns after terminals, claims out of place."""
    lines = data.split(b"\n")[:-1]
    for _ in range(count):
        where = chooser.randrange(1, len(lines)) if len(lines) > 1 else 0
        how = chooser.choice(["drop", "double", "swap"])
        changed = list(lines)
        if how == "drop":
            del changed[where]
        elif how == "double":
            changed.insert(where, changed[where])
        elif where + 1 < len(changed):
            changed[where], changed[where + 1] = changed[where + 1], changed[where]
        yield b"".join(line + b"\n" for line in changed)


def mixed_directory(target: Path, root: Path) -> Path:
    """Every kind of journal a load meets in one directory: the corpus's clean, random and broken journals, copies
    under other names, proven journals whose lines were dropped, doubled or swapped (some of which the walk gives
    back), an August journal holding a newest field. (No compressed one: a source holding one is read journal by
    journal, never in place.)"""
    chooser = random.Random(20261206)
    target.mkdir()
    for folder in ("file", "random", "broken"):
        for run, data in journals_of(root / folder):
            (target / f"{run}.json").write_bytes(data)
            if folder != "file":  # a copy of each runtime journal, a mutation of each random one
                if folder == "random":
                    (target / f"{run}-m.json").write_bytes(next(line_mutations(data, chooser, 1)))
                continue
            (target / f"copy-{run}.json").write_bytes(data)
            (target / f"{run}-m.json").write_bytes(next(line_mutations(data, chooser, 1)))
    august, august_data = next(journals_of(CORPUS / "file"))
    assistant = b'"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant",'
    dated = august_data.replace(assistant, assistant + b'"time":"2026-08-21T07:00:00Z",')
    assert dated != august_data
    (target / f"dated-{august}.json").write_bytes(dated)
    return target
