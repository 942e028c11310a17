"""``import journaltools`` names the analysis job and the few others a user needs, and stays light."""

from __future__ import annotations

import subprocess
import sys

import journaltools


def test_the_analysis_job_is_at_the_top() -> None:
    for name in ("load", "iter_tables", "Tables", "LoadOptions", "audit_sources", "read_audit", "open_source", "fold"):
        assert name in journaltools.__all__ and getattr(journaltools, name) is not None
    from journaltools.audit import audit_sources
    from journaltools.tables import load

    assert journaltools.load is load and journaltools.audit_sources is audit_sources
    assert issubclass(journaltools.FoldError, journaltools.JournalError)
    assert sorted(dir(journaltools)) == sorted(journaltools.__all__)


def test_importing_it_does_not_import_pyarrow_or_pandas() -> None:
    code = "import sys, journaltools; print('pyarrow' in sys.modules, 'pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_the_readme_load_works_from_the_top(samples_dir: object) -> None:
    tables = journaltools.load(str(samples_dir), strict=False, progress=False)
    assert tables.runs.num_rows == 14 and isinstance(tables, journaltools.Tables)
