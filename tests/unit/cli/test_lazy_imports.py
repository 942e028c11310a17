"""A command imports what it uses when it uses it: ``journaltools --help``, ``--version`` and ``show`` of a small
journal (either generation, as text or ``--json``) never import numpy, pyarrow, pandas or nats, which take a
command's start ten times as long as the rest of it (``benchmarks/bench_cold_start.py`` measures the start)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import ROOT

#: The modules a small command must not pay for.
HEAVY = ("numpy", "pyarrow", "pandas", "nats")

# Each step runs in one fresh interpreter, in order; after each, which of HEAVY have been imported so far.
STEPS = """
import contextlib, io, json, sys
heavy = json.loads(sys.argv[1])
seen = {}
def step(name):
    seen[name] = sorted(module for module in heavy if module in sys.modules)

import journaltools
step("import journaltools")
from journaltools.cli import main
step("import journaltools.cli")
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--help"])
step("journaltools --help")
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--version"])
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["show", "--nonsense"])
step("journaltools --version and bad usage")
for sample in ("completed-with-tools", "newest-completed-with-tools"):
    assert main(["show", f"data/samples/{sample}.json"]) == 0
step("show of a 10-record journal, both generations")
assert main(["show", "--json", "data/samples/newest-completed-with-tools.json"]) == 0
assert main(["show", "--lenient", "data/samples/noncanonical-line.json"]) == 0
step("show --json, and show of a line the exact reader reads")
journaltools.load("data/samples", strict=False)
step("load()")
print(json.dumps(seen), file=sys.stderr)
"""


def test_a_small_command_never_imports_numpy_pyarrow_pandas_or_nats() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STEPS, json.dumps(HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen == {
        "import journaltools": [],
        "import journaltools.cli": [],
        "journaltools --help": [],
        "journaltools --version and bad usage": [],
        "show of a 10-record journal, both generations": [],
        "show --json, and show of a line the exact reader reads": [],
        "load()": ["numpy", "pandas", "pyarrow"],  # the edge: the check above can see an import
    }


def test_the_command_line_orders_ls_by_the_keys_its_help_names() -> None:
    # The parser names the keys without importing the commands; the commands hold the orders.
    from journaltools.cli._commands import LS_SORT_KEYS as ORDERED
    from journaltools.cli._parser import LS_SORT_KEYS

    assert LS_SORT_KEYS == ORDERED


def test_the_version_is_looked_up_when_asked_for_and_printed_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    from journaltools import __version__
    from journaltools.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    out, err = capsys.readouterr()
    assert out == f"journaltools {__version__}\n" and err == ""


def test_the_search_statuses_help_gives_are_the_ones_search_takes() -> None:
    from journaltools.analyses.search import SEARCH_STATUSES as TAKEN
    from journaltools.cli._parser import SEARCH_STATUSES

    assert SEARCH_STATUSES == TAKEN
