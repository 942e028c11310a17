"""docs/ held to the code: every command and option, finding code and table column of the interface is
documented, and the pages stand on their own (no link outside the repository, no trace of the old format)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from journaltools.cli._parser import build_parser
from journaltools.protocol.findings import FINDING_SEVERITY
from tests.paths import ROOT

INTERFACES = (ROOT / "docs" / "interfaces.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def documented_codes() -> dict[str, str]:
    section = INTERFACES.split("## Finding codes", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| (error|warning|info) \|", section, flags=re.MULTILINE))


def test_every_command_and_option_is_documented() -> None:
    for name, parser in subcommands().items():
        assert f"`{name}" in INTERFACES, name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in INTERFACES, f"{name} {option}"


def test_every_finding_code_is_documented_with_its_severity() -> None:
    from journaltools.audits.tasks import TASK_FINDING_SEVERITY
    from journaltools.audits.turns import TURN_FINDING_SEVERITY

    # The journals' codes, and the two stores' analyses, which keep tables of their own.
    every = {**FINDING_SEVERITY, **TURN_FINDING_SEVERITY, **TASK_FINDING_SEVERITY}
    documented = documented_codes()
    assert documented, "the finding code table"
    for code, severity in documented.items():
        assert every.get(code) == severity, code
    assert set(every) <= set(documented), sorted(set(every) - set(documented))


def test_every_table_column_is_documented() -> None:
    from journaltools.tables import SCHEMAS

    section = INTERFACES.split("\n## Tables", 1)[1].split("\n### ", 1)[0]  # the journal tables, not the turn ones
    rows = dict(re.findall(r"^\| `(\w+)` \| [^|]+ \| (.+) \|$", section, flags=re.MULTILINE))
    for table, schema in SCHEMAS.items():
        assert table in rows, table
        for column in schema.names:
            assert re.search(rf"\b{column}\b", rows[table]), f"{table}.{column}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_pages_stand_on_their_own(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    assert not re.search(r'"type": *"meta"|\.jsonl', text), "a trace of the retired format"
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)", text):
        assert (page.parent / target).exists(), f"{page.name} links to a missing {target}"


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda path: path.stem)
def test_each_widget_is_shown_once_in_the_notebooks(notebook: Path) -> None:
    """A cell that shows a part of a widget already on the page (``browser.detail``) makes a second live copy of
    it, and a click in the first scrolls the notebook to the copy: a widget is shown by the cell that makes it."""
    import nbformat

    shown: set[str] = set()
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        last = cell.source.strip().splitlines()[-1].strip()
        name = re.match(r"[A-Za-z_]\w*", last)
        if name is None:
            continue
        assert not (name.group() in shown and last != name.group()), f"{notebook.name}: {last!r} shows a part again"
        assert last not in shown, f"{notebook.name}: {last!r} is shown twice"
        if re.fullmatch(r"[A-Za-z_]\w*", last):
            shown.add(last)
    text = " ".join(cell.source for cell in nbformat.read(notebook, as_version=4).cells)
    assert "below the table" not in text
