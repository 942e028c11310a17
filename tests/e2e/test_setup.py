"""What a newcomer meets first: the README and the docs it links (all inside the repository), the licence,
the documented commands, the notebooks as committed, ``--version``, the demo's last words, and samples that
are found or written wherever the package runs."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

import journaltools.samples as samples_module
from journaltools.errors import SourceError
from journaltools.samples import samples_dir
from tests.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
SAMPLES = ROOT / "data" / "samples"


def _markdown_links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_readme_and_its_docs_stay_inside_the_repository() -> None:
    documents = {"README.md": README}
    for link in _markdown_links(README):
        if not link.startswith(("http://", "https://", "#")):
            target = (ROOT / link.split("#")[0]).resolve()
            assert target.is_relative_to(ROOT) and target.exists(), f"README links to {link}, which is not here"
            if target.suffix == ".md":
                documents[link] = target.read_text(encoding="utf-8")
    assert {"docs/protocol.md", "docs/interfaces.md"} <= set(documents)
    for name, text in documents.items():
        assert "../shared" not in text and "/work/" not in text, f"{name} points outside the repository"
        for link in _markdown_links(text):
            if not link.startswith(("http://", "https://", "#")):
                base = ROOT if name == "README.md" else (ROOT / name).parent
                assert (base / link.split("#")[0]).resolve().exists(), f"{name} links to missing {link}"


def test_the_interfaces_page_lists_every_table_column() -> None:
    from journaltools.audits.turns import TURN_FINDINGS_SCHEMA, TURN_RECORDS_SCHEMA, TURN_TOOL_CALLS_SCHEMA
    from journaltools.tables.schema import SCHEMAS

    interfaces = (ROOT / "docs" / "interfaces.md").read_text(encoding="utf-8")
    journal_tables, turn_tables = interfaces.split("### Turn-checkpoint tables", 1)

    def columns(text: str, table: str) -> list[str]:
        row = re.search(rf"^\| `{table}` \| [^|]+ \| (.+) \|$", text, flags=re.MULTILINE)
        assert row is not None, f"no row for the {table} table"
        return re.findall(r"[a-z_]+", re.sub(r"\([^)]*\)|;.*$", "", row.group(1).replace("`", "")))

    for name, schema in SCHEMAS.items():
        assert columns(journal_tables, name) == schema.names, name
    turn_schemas = {
        "records": TURN_RECORDS_SCHEMA,
        "tool_calls": TURN_TOOL_CALLS_SCHEMA,
        "findings": TURN_FINDINGS_SCHEMA,
    }
    for name, schema in turn_schemas.items():
        assert columns(turn_tables, name) == schema.names, f"turn {name}"


def test_the_licence_is_the_one_pyproject_declares() -> None:
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in licence
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"


def test_the_notebook_extra_brings_the_three_hosts_matplotlib_and_duckdb() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", requirement)[0] for requirement in extras["notebook"]}
    assert names == {"jupyterlab", "notebook", "marimo", "matplotlib", "duckdb"}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert ".[test,dask,notebook]" in makefile  # make setup installs JupyterLab into .venv
    assert re.search(r"^lab: setup\n(\t.*\n)*\t\$\(BIN\)/jupyter lab ", makefile, flags=re.MULTILINE)


def test_ignored_files() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".ipynb_checkpoints/" in ignored and "/test-artifacts/" in ignored and "/out/" in ignored


def test_the_notebooks_are_committed_as_generated_without_outputs(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate-notebooks.py"), "--out", str(tmp_path)],
        check=True,
        timeout=120,
    )
    committed = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert [path.name for path in committed] == sorted(path.name for path in tmp_path.glob("*.ipynb"))
    for path in committed:
        assert path.read_bytes() == (tmp_path / path.name).read_bytes(), f"{path.name}: regenerate the notebooks"
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} is committed with outputs"


def test_working_copies_leave_the_users_newer_edits_alone(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_notebooks", ROOT / "scripts" / "generate-notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.working_copies(tmp_path)
    copy = tmp_path / "01-explore.ipynb"
    assert copy.read_bytes() == (ROOT / "notebooks" / "01-explore.ipynb").read_bytes()
    copy.write_text("my edits", encoding="utf-8")  # saved later than the tracked notebook
    module.working_copies(tmp_path)
    assert copy.read_text(encoding="utf-8") == "my edits"


def test_version_flag() -> None:
    result = subprocess.run([sys.executable, "-m", "journaltools", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    from importlib.metadata import version

    assert result.stdout.strip() == f"journaltools {version('journaltools')}"


def test_the_demo_ends_by_saying_what_to_open_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from journaltools.testing.demo import print_next_steps

    print_next_steps(SAMPLES)  # in a checkout: make lab
    inside = capsys.readouterr().out
    assert "make lab" in inside and "01-explore.ipynb" in inside
    print_next_steps(tmp_path / "out" / "samples")  # from an installed package: what to install
    outside = capsys.readouterr().out
    assert 'pip install "journaltools[notebook]"' in outside and "make lab" not in outside


# -- samples found or written --------------------------------------------------------------------------


def test_samples_dir_finds_the_checkouts_samples_from_anywhere_inside_it(tmp_path: Path) -> None:
    assert samples_dir(start=ROOT / "notebooks") == SAMPLES
    assert samples_dir(start=tmp_path) == SAMPLES  # this package itself sits in the checkout


def test_samples_dir_writes_the_samples_where_no_checkout_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(samples_module, "_checkout_samples", lambda start: None)  # as from site-packages
    monkeypatch.chdir(tmp_path)
    written = samples_dir()
    assert written == Path("journaltools-samples")
    for path in SAMPLES.glob("*.jsonl"):
        assert (tmp_path / written / path.name).read_bytes() == path.read_bytes()
    assert samples_dir() == written  # found the second time, not written again
    assert not list(tmp_path.glob("*.partial-*"))
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(SourceError, match="does not hold the sample journals"):
        samples_dir(fallback=tmp_path / "taken")
