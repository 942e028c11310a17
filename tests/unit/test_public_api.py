"""``import journaltools`` names the analysis job first and the few others a user needs, and stays light."""

from __future__ import annotations

import subprocess
import sys

import journaltools
from tests.paths import TESTS


def test_the_analysis_job_is_at_the_top() -> None:
    assert journaltools.__all__[:9] == [
        "load", "iter_tables", "Tables", "LoadOptions", "audit_sources", "read_audit", "open_source",
        "default_source", "fold",
    ]  # fmt: skip
    for name in journaltools.__all__:
        assert getattr(journaltools, name) is not None, name
    from journaltools.audits.sources import audit_sources
    from journaltools.tables import load

    assert journaltools.load is load and journaltools.audit_sources is audit_sources
    for error in ("FoldError", "VersionMismatch", "CorruptJournal", "RunNotFound", "SourceError", "WriterConflict"):
        assert issubclass(getattr(journaltools, error), journaltools.JournalError)
    assert sorted(dir(journaltools)) == sorted(journaltools.__all__)
    # About twenty names; the newest runtime's three inspection commands (stats, calls, search); grep, diff, the
    # report and the two exports.
    assert len(journaltools.__all__) <= 32


def test_importing_it_does_not_import_pyarrow_or_pandas() -> None:
    code = "import sys, journaltools; print('pyarrow' in sys.modules, 'pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_one_run_folds_from_the_top() -> None:
    corpus = TESTS / "corpus" / "runstate" / "file"
    with journaltools.open_source(corpus / "3IDi1LEy6uQIbFWHJESmsjTENLn.json") as source:
        [read] = source.read_runs()
    folded = journaltools.fold(read.typed(), run=read.run)
    assert isinstance(folded, journaltools.FoldResult) and folded.status == "suspended"
    assert isinstance(folded.state, journaltools.RunState) and folded.waiting_for == "answer"
