"""Issue 42, a hostile world round four, the values: C extensions clean under UBSan, journal values that do not fit
the column they land in, compressed journals bounded while they are decompressed, prices whose costs cannot be
represented, and JetStream subjects whose sequence is not written as Go writes it.

Each test fails on the code path it guards as it was before the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

# -- T1: both C extensions under UBSan over every corpus journal of both generations ------------------------------

#: Every folder of journals of both generations: written by the runtime, random, broken, the newest format's own.
SANITIZED_CORPORA = [
    CORPUS / "file",
    CORPUS / "random",
    CORPUS / "broken",
    NEWEST_CORPUS / "file",
    NEWEST_CORPUS / "random",
    NEWEST_CORPUS / "broken",
    NEWEST_CORPUS / "version3",
]

#: Loads every folder named on its command line (strict=False, the native fold on), then every line-prefix of each
#: journal the runtime wrote through its API (folders named file: a run cut after each of its records, so pending
#: calls, open turns, every state the walk holds), and fails unless the native walk folded a great many of them (a
#: sanitizer that never ran would pass).
_SANITIZED_LOAD = """
import sys, tempfile
from pathlib import Path
import journaltools as jt
from journaltools.tables import nativerows

assert nativerows.active() and "sanitized" in nativerows._nativerows.__file__, nativerows._nativerows.__file__
folded = []
walk = nativerows._nativerows.fold_rows

def counted(*arguments):
    found = walk(*arguments)
    folded.append(found is not None)
    return found

extension = nativerows._nativerows
nativerows._nativerows = type("Counted", (), {"fold_rows": staticmethod(counted), "KINDS": extension.KINDS})
for folder in sys.argv[1:]:
    jt.load(folder, strict=False)
with tempfile.TemporaryDirectory() as prefixes:
    for folder in (name for name in sys.argv[1:] if Path(name).name == "file"):
        for path in sorted(Path(folder).glob("*.json")):
            lines = path.read_bytes().splitlines(keepends=True)
            for kept in range(1, len(lines)):
                cut = Path(prefixes, str(kept))
                cut.mkdir(exist_ok=True)
                (cut / path.name).write_bytes(b"".join(lines[:kept]))
    for cut in Path(prefixes).iterdir():
        jt.load(cut, strict=False)
assert sum(folded) > 1000, (len(folded), sum(folded))
"""


def _sanitized_package(into: Path) -> Path:
    """A copy of the package whose two C extensions are built with UBSan, any report fatal; the checkout's built
    extensions are left out so that only the sanitized ones can load."""
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.skip("the UBSan build needs gcc, which this machine lacks")
    package = into / "sanitized" / "journaltools"
    shutil.copytree(ROOT / "journaltools", package, ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.pyd"))
    include, suffix = sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX")
    for source in (package / "protocol" / "_canonical.c", package / "tables" / "_nativerows.c"):
        command = [compiler, "-shared", "-fPIC", "-O1", "-g", "-std=c11", f"-I{include}"]
        command += ["-fsanitize=undefined", "-fno-sanitize-recover=all", str(source)]
        subprocess.run([*command, "-o", str(source.with_suffix("")) + suffix], check=True, timeout=120)
    return package.parent


@pytest.mark.slow
def test_the_extensions_run_every_corpus_journal_without_an_undefined_behaviour_report(tmp_path: Path) -> None:
    # T1: an assistant turn of tool_use blocks only put an empty text from a NULL buffer: memcpy(dst, NULL, 0).
    packages = _sanitized_package(tmp_path)
    runtime = subprocess.run(
        ["gcc", "-print-file-name=libubsan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    # Python itself is not built with the sanitizer: its runtime is loaded first, so that it is set up before
    # the extensions that call it are.
    environment = {**os.environ, "PYTHONPATH": str(packages), "LD_PRELOAD": runtime, "JOURNALTOOLS_NATIVE_ROWS": "1"}
    environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    completed = subprocess.run(
        [sys.executable, "-c", _SANITIZED_LOAD, *map(str, SANITIZED_CORPORA)],
        cwd=packages,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "runtime error" not in completed.stderr, completed.stderr[-4000:]
    assert completed.returncode == 0, completed.stderr[-4000:]
