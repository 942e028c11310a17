"""Every notebook runs top to bottom in a fresh ``python3`` kernel of this venv, on the samples and on the journals
the real fisk-ai builds wrote (each pointed at its source as a reader would: ``JOURNALTOOLS_SOURCE``); any cell
error fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from journaltools.samples import SOURCE_VARIABLE
from tests.paths import ROOT, SAMPLES, TESTS

#: The samples, and the real corpora of both builds: the cells pick their runs from the data, never by name.
SOURCES = {
    "samples": SAMPLES,
    "august": TESTS / "corpus" / "runstate" / "file",
    "newest": TESTS / "corpus" / "runstate" / "newest" / "file",
}

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="session")
def kernel_name() -> str:
    """The ``python3`` kernelspec, installed into this venv (``--sys-prefix``) when it is missing."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix"], check=True, timeout=120)
    return "python3"


def test_the_five_notebooks_exist_without_outputs() -> None:
    names = [path.name for path in NOTEBOOKS]
    assert names == [
        "01-explore.ipynb",
        "02-post-mortem.ipynb",
        "03-compare-backends.ipynb",
        "04-batch-audit.ipynb",
        "05-compare-and-share.ipynb",
    ]
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} is committed with outputs"


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(
    path: Path, source: str, kernel_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbclient import NotebookClient

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel inherits it: what a notebook writes stays here
    monkeypatch.setenv(SOURCE_VARIABLE, str(SOURCES[source]))

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=kernel_name,
        timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},  # Jupyter's working directory: notebooks/
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    widget_views = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widget_views, f"{path.name} shows no widget"
    source_cell = next(cell for cell in notebook.cells if "SOURCE = " in cell.source)
    shown = "".join(output.get("data", {}).get("text/plain", "") for output in source_cell.outputs)
    assert shown == repr(str(SOURCES[source])), "the notebook did not open the source it was pointed at"


def test_the_notebooks_are_what_the_generator_writes(tmp_path: Path) -> None:
    script = ROOT / "scripts" / "generate-notebooks.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, timeout=120)
    for path in NOTEBOOKS:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), f"{path.name}: run {script.name}"
