"""pydantic stays at the edges: ``import journaltools``, the command line's start and ``--help``, ``load()`` and the
commands that print documents never import it; reading a gate configuration does."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.paths import ROOT

# Each step runs in one fresh interpreter, in order; after each, whether pydantic has been imported so far.
STEPS = """
import contextlib, io, json, sys
seen = {}
def step(name):
    seen[name] = "pydantic" in sys.modules

import journaltools
step("import journaltools")
from journaltools.cli import build_parser, main
build_parser()
step("import journaltools.cli")
with contextlib.suppress(SystemExit):
    main(["--help"])
step("journaltools --help")
journaltools.load("data/samples", strict=False)
step("load()")
main(["ls", "--json", "data/samples"])
main(["show", "--json", "data/samples/deferred-waiting.json"])
main(["audit", "--json", "--quiet", "data/samples"])
step("ls, show and audit --json")
from journaltools.ops.gate import Candidate
Candidate.from_config({"model": "m"})
step("a gate configuration read")
print(json.dumps(seen), file=sys.stderr)
"""


def test_pydantic_is_imported_only_at_the_edges() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STEPS], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen == {
        "import journaltools": False,
        "import journaltools.cli": False,
        "journaltools --help": False,
        "load()": False,
        "ls, show and audit --json": False,
        "a gate configuration read": True,  # the edge: the check above can see an import
    }
