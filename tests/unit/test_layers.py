"""The package's layers, as ``docs/architecture.md`` draws them, held against every import the code makes.

Each subpackage has a rank; a module imports only its own subpackage and lower ranks, never a sibling of its own
rank. Imports inside functions and under ``TYPE_CHECKING`` count: an import made late is still a dependency.
The lists of known exceptions below may only shrink: an entry that no longer applies fails the test too, so the
lists stay true.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Final

from tests.paths import ROOT

PACKAGE: Final = ROOT / "journaltools"

#: Every top-level part of the package and its rank, from the bytes up (``docs/architecture.md``).
RANKS: Final = {
    "errors": 0,
    "_base": 1,
    "goencoding": 1,
    "protocol": 2,
    "folding": 3,
    "models": 3,
    "sources": 4,
    "stores": 5,
    "ops": 5,
    "samples": 5,
    "tables": 6,
    "audits": 7,
    "analyses": 7,
    "exports": 7,
    "widgets": 8,
    "cli": 8,
    "testing": 9,
    "__init__": 10,
    "__main__": 10,
}

#: Imports that cross the layers on purpose, each with its reason (none today).
CROSSINGS: Final[set[tuple[str, str]]] = set()

#: The modules that speak the wire format: they may import the record structs (``protocol.kinds``,
#: ``protocol.blocks``, ``protocol.goreader``). Everything above reads the folded run.
WIRE_LAYERS: Final = ("protocol", "folding", "sources", "stores", "ops", "samples", "testing")
WIRE_MODULES: Final = ("journaltools.protocol.kinds", "journaltools.protocol.blocks", "journaltools.protocol.goreader")
#: Modules above the wire layers that read the wire structs on purpose, each with its reason; every other module
#: reads the folded run (``FoldedRun``, ``RunFacts``, the exchanges, the history, the run summary).
WIRE_READERS: Final = {
    "journaltools": "re-exports Record and Message as public names",
    "journaltools.tables.records": "the raw records table: each record's fields as the journal holds them",
}

#: The most lines a Python module holds: past it, a file holds more than one idea.
MAX_LINES: Final = 600

#: The public modules at the top of the package: the face, the entry point and the error tree.
MAX_PUBLIC_TOP_MODULES: Final = 6


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path


@cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module, parsed once for all the tests here (the package is parsed four times otherwise)."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


@cache
def _imports(path: Path) -> frozenset[str]:
    found: set[str] = set()
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "journaltools":
                found.update(f"journaltools.{alias.name}" for alias in node.names)
            elif node.module.startswith("journaltools."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("journaltools"))
    return frozenset(found)


def _crossing(importer: str, imported: str) -> bool:
    mine, theirs = _part(importer), _part(imported)
    if mine == theirs:
        return False
    return RANKS[theirs] >= RANKS[mine]


def test_every_part_of_the_package_has_a_rank() -> None:
    parts = {_part(module) for module, _path in _modules()}
    assert parts - set(RANKS) == set(), "give the new part a rank here and in docs/architecture.md"


def test_imports_point_down_the_layers() -> None:
    crossings = {
        (module, imported) for module, path in _modules() for imported in _imports(path) if _crossing(module, imported)
    }
    assert crossings - CROSSINGS == set()
    assert CROSSINGS - crossings == set(), "a crossing is gone: strike it from CROSSINGS"


def test_the_library_never_imports_the_fixture_tooling() -> None:
    importing = {
        (module, imported)
        for module, path in _modules()
        if _part(module) != "testing"
        for imported in _imports(path)
        if _part(imported) == "testing"
    }
    assert importing == CROSSINGS


def test_only_the_wire_layers_read_the_wire_structs() -> None:
    readers = {
        module
        for module, path in _modules()
        if _part(module) not in WIRE_LAYERS and any(imported.startswith(WIRE_MODULES) for imported in _imports(path))
    }
    assert readers - set(WIRE_READERS) == set(), "read the folded run (FoldedRun, RunFacts), not the records"
    assert set(WIRE_READERS) - readers == set(), "a module stopped reading the wire structs: strike it"


def test_no_module_holds_more_than_one_idea() -> None:
    long = {
        str(path.relative_to(ROOT))
        for _module, path in _modules()
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    }
    assert long == set(), f"split it: no module over {MAX_LINES} lines"


def test_no_c_source_holds_more_than_one_idea() -> None:
    # Each C extension is one translation unit made of parts, each holding one idea (``folding/_native_parts/``,
    # ``protocol/_canonical_parts/``).
    long = {
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.[ch]"))
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    }
    assert long == set(), f"split it into parts: no C source over {MAX_LINES} lines"


def test_the_top_of_the_package_holds_few_public_modules() -> None:
    public = sorted(path.name for path in PACKAGE.glob("*.py") if not path.name.startswith("_"))
    assert len(public) + 2 <= MAX_PUBLIC_TOP_MODULES, public  # with __init__ and __main__


def test_a_rule_that_depends_on_the_build_is_asked_of_the_generation_by_name() -> None:
    # ``generation is AUGUST`` in a rule is a place a third generation would have to be taught by hand; the
    # generation says what differs (dates_records, extended_records, reopens_after_terminal). Builders of sample
    # and generated journals pick a generation on purpose and may name it.
    asking_by_identity = sorted(
        f"{module}:{node.lineno}"
        for module, path in _modules()
        if _part(module) not in ("testing", "samples")
        for node in _nodes(path)
        if isinstance(node, ast.Compare)
        and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
        and any(
            isinstance(side, ast.Name) and side.id in ("AUGUST", "NEWEST") for side in (node.left, *node.comparators)
        )
    )
    assert asking_by_identity == []
