"""What a user who installs the package gets: the wheel, installed with the ``notebook`` extra into a fresh
virtual environment, runs the CLI, the demo and the five notebooks from a directory outside the repository.

The wheel is built from a copy of the files git knows (tracked, or new and not ignored), so the test sees
what a clean clone would ship. pip resolves the dependencies from the package index through its cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _run(command: list[str], cwd: Path, timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def _source_copy(target: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():  # a tracked file deleted in the working tree is not shipped
            destination = target / os.fsdecode(name)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    return target


@pytest.mark.timeout(900)
def test_the_wheel_with_the_notebook_extra_runs_the_cli_demo_and_notebooks_outside_the_repository(
    tmp_path: Path,
) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    for name in ("JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / "home" / name.lower())  # no kernel or config of this machine's user leaks in
    source = _source_copy(tmp_path / "source")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)], tmp_path, 300, env)
    [wheel] = dist.glob("journaltools-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(name.endswith("licenses/LICENSE") for name in names)
    # Both C extensions are built into it: the scanner and the native fold.
    assert any(name.startswith("journaltools/protocol/_canonical.") for name in names)
    assert any(name.startswith("journaltools/folding/_native.") for name in names)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, 120, env)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"{wheel}[notebook]"]
    _run(install, tmp_path, 600, env)

    outside = tmp_path / "elsewhere"  # not under the repository: nothing can be found by walking up
    outside.mkdir()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    where = _run([str(python), "-c", "import journaltools; print(journaltools.__file__)"], outside, 60, env)
    assert Path(where.stdout.strip()).is_relative_to(venv) and not Path(where.stdout.strip()).is_relative_to(ROOT)

    version = _run([str(bin_dir / "journaltools"), "--version"], outside, 60, env)
    assert version.stdout.strip().startswith("journaltools ") and version.stdout.strip() != "journaltools "
    _run([str(bin_dir / "journaltools"), "samples", "samples"], outside, 120, env)
    listing = json.loads(_run([str(bin_dir / "journaltools"), "ls", "samples", "--json"], outside, 120, env).stdout)
    from journaltools.samples import SAMPLE_STORIES

    assert len(listing) == len(SAMPLE_STORIES)

    demo = _run([str(python), "-m", "journaltools.testing.demo"], outside, 300, env)
    assert "next: browse the runs in JupyterLab" in demo.stdout
    assert 'pip install "journaltools[notebook]"' in demo.stdout  # outside a checkout: how to get JupyterLab
    assert (outside / "out" / "samples" / "completed-with-tools.json").is_file()  # written, not looked for in the repo
    assert (outside / "out" / "audit" / "runs.parquet").is_file()

    # The kernel the notebooks get is this venv's python (a kernel spec in the venv outranks the system's).
    _run([str(python), "-m", "ipykernel", "install", "--sys-prefix"], outside, 120, env)
    notebooks = outside / "notebooks"
    notebooks.mkdir()
    for path in NOTEBOOKS:
        shutil.copy(path, notebooks / path.name)
    names = [path.name for path in NOTEBOOKS]
    _run([str(bin_dir / "jupyter"), "execute", "--inplace", "--timeout=180", *names], notebooks, 600, env)
    for name in names:
        executed = nbformat.read(notebooks / name, as_version=4)
        outputs = [output for cell in executed.cells if cell.cell_type == "code" for output in cell.outputs]
        assert not [output for output in outputs if output.get("output_type") == "error"], name
        assert any("application/vnd.jupyter.widget-view+json" in output.get("data", {}) for output in outputs), name
    assert (notebooks / "journaltools-samples" / "completed-with-tools.json").is_file()
