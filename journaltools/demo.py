"""``make demo`` (or ``python -m journaltools.demo``): the main job on the bundled samples, start to finish.

The listing, two folded conversations (one that failed, with why), the audit findings, and (when the
JetStream backend is available) the samples migrated into an embedded JetStream server with both listings
compared; it ends by saying what to open next. From a checkout it uses ``data/samples``; from an installed
package it writes the samples into ``out/samples`` first.
"""

from __future__ import annotations

import sys
from pathlib import Path

from journaltools.cli import main as cli
from journaltools.samples import samples_dir


def banner(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)), flush=True)


DEFAULT_OUT = Path("out") / "audit"


def run_demo(samples: Path | None = None, out: Path = DEFAULT_OUT) -> int:
    samples = samples if samples is not None else samples_dir(fallback=out.parent / "samples")
    source = str(samples)
    banner(f"journaltools ls {source}")
    status = cli(["ls", source])
    banner("journaltools show ... resumed-after-crash   (a claim between a turn and its results)")
    status |= cli(["show", source, "resumed-after-crash"])
    banner("journaltools show ... suspended-approval   (a deferred call waiting for an operator)")
    status |= cli(["show", source, "suspended-approval"])
    banner("journaltools show ... failed-provider   (why it failed: the fatal error and its seq)")
    status |= cli(["show", source, "failed-provider"])
    banner(f"journaltools audit {source} --parquet {out}")
    status |= cli(["audit", source, "--parquet", str(out), "--records", "--quiet"])
    status |= show_parquet(out)
    try:
        import journaltools.backends.jetstream
        import journaltools.compare
        import journaltools.ops.migrate  # noqa: F401
    except ImportError:
        print("\n(JetStream backend not installed in this build: comparison skipped)")
        print_next_steps(samples, out)
        return status
    from journaltools.embedded import embedded_url

    url = embedded_url()
    banner(f"journaltools migrate {source} {url}")
    status |= cli(["migrate", source, url, "--skip-invalid"])  # refuses the corrupt sample by design, and says so
    banner(f"journaltools ls {url}   (two-record summary)")
    status |= cli(["ls", url])
    banner(f"journaltools compare {source} {url}")
    status |= cli(["compare", source, url, "--fail-on", "discrepancy"])
    print_next_steps(samples, out)
    return status


def _in_checkout(samples: Path) -> Path | None:
    root = samples.resolve().parent.parent
    return root if (root / "Makefile").is_file() and (root / "notebooks").is_dir() else None


def print_next_steps(samples: Path, out: Path = DEFAULT_OUT) -> None:
    """What to open next: the notebooks in JupyterLab (``make lab`` in a checkout)."""
    banner("next: browse the runs in JupyterLab")
    root = _in_checkout(samples)
    if root is not None:
        print("  make lab     # JupyterLab (light or dark theme) on working copies of notebooks/, from .venv")
        print("  then open 01-explore.ipynb: click a run to read its conversation and see why it ended;")
        print("  02-post-mortem.ipynb steps through the failed run record by record.")
    else:
        print('  pip install "journaltools[notebook]"   # JupyterLab, matplotlib and duckdb')
        print("  jupyter lab                             # in a folder holding the notebooks")
        print(
            "  In a notebook: from journaltools.widgets import RunBrowser; RunBrowser.from_source("
            + repr(str(samples))
            + ")"
        )
    print(f"  samples: {samples}; audit tables: {out}/*.parquet", flush=True)


def show_parquet(out: Path) -> int:
    """Read the audit back as any Arrow tool would: here pyarrow, and DuckDB when it is installed."""
    import pyarrow.parquet as pq

    for name in ("runs", "messages", "tool_calls", "findings", "records"):
        table = pq.read_table(out / f"{name}.parquet")
        print(f"{out / (name + '.parquet')}: {table.num_rows} rows, columns {', '.join(table.column_names[:6])}, ...")
    try:
        import duckdb
    except ImportError:
        return 0
    query = f"SELECT status, count(*) AS runs FROM '{out / 'runs.parquet'}' GROUP BY status ORDER BY runs DESC, status"
    print(f"\nduckdb> {query}")
    relation = duckdb.sql(query)
    assert relation is not None  # a SELECT always gives a relation
    for status, runs in relation.fetchall():
        print(f"  {status:10} {runs}")
    return 0


if __name__ == "__main__":
    sys.exit(run_demo())
