"""The suite is laid out as the package is, so a newcomer knows where a test goes: ``tests/unit/<subpackage>/``
holds the tests of ``journaltools/<subpackage>/`` and ``tests/unit/`` itself those of the top-level modules."""

from __future__ import annotations

from tests.paths import ROOT, TESTS


def test_every_unit_folder_is_named_after_a_subpackage() -> None:
    subpackages = {path.parent.name for path in (ROOT / "journaltools").glob("*/__init__.py")}
    folders = {path.name for path in (TESTS / "unit").iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders and folders <= subpackages, sorted(folders - subpackages)


def test_every_test_file_sits_in_a_folder_that_says_what_it_needs() -> None:
    misplaced = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if "corpus" not in path.relative_to(TESTS).parts
        and path.relative_to(TESTS).parts[0] not in ("unit", "integration", "e2e")
    ]
    assert misplaced == []


def test_every_folder_of_tests_is_a_package() -> None:
    # Two test files of one name in two folders must not collide as modules.
    folders = {path.parent for path in TESTS.rglob("test_*.py") if "corpus" not in path.relative_to(TESTS).parts}
    assert [str(folder) for folder in sorted(folders) if not (folder / "__init__.py").is_file()] == []


def test_no_test_file_or_script_imports_a_test_file() -> None:
    # What two files share belongs in tests/ itself: a test module imported elsewhere runs its tests' imports there.
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    importing = [
        str(path.relative_to(ROOT))
        for path in [*TESTS.rglob("*.py"), *scripts]
        if "corpus" not in path.relative_to(ROOT).parts
        and any(f"tests.{kind}." in path.read_text(encoding="utf-8") for kind in ("unit", "integration", "e2e"))
        and path.name != "test_layout.py"
    ]
    assert importing == []
