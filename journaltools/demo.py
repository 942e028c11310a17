"""``make demo``: the main job on the bundled samples, start to finish.

The listing, one folded conversation, the audit findings, and (when the JetStream backend is
available) the samples migrated into an embedded JetStream server with both listings compared.
"""

from __future__ import annotations

import sys
from pathlib import Path

from journaltools.cli import main as cli

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


def banner(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)), flush=True)


DEFAULT_OUT = Path("out") / "audit"


def run_demo(samples: Path = SAMPLES, out: Path = DEFAULT_OUT) -> int:
    source = str(samples)
    banner(f"journaltools ls {source}")
    status = cli(["ls", source])
    banner("journaltools show ... resumed-after-crash   (a claim between a turn and its results)")
    status |= cli(["show", source, "resumed-after-crash"])
    banner("journaltools show ... suspended-approval   (a deferred call waiting for an operator)")
    status |= cli(["show", source, "suspended-approval"])
    banner(f"journaltools audit {source} --parquet {out}")
    status |= cli(["audit", source, "--parquet", str(out), "--records", "--quiet"])
    status |= show_parquet(out)
    try:
        import journaltools.backends.jetstream
        import journaltools.compare
        import journaltools.ops.migrate  # noqa: F401
    except ImportError:
        print("\n(JetStream backend not installed in this build: comparison skipped)")
        return status
    from journaltools.embedded import embedded_url

    url = embedded_url()
    banner(f"journaltools migrate {source} {url}")
    cli(["migrate", source, url])  # refuses the broken samples by design, and says so
    banner(f"journaltools ls {url}   (two-record summary)")
    status |= cli(["ls", url])
    banner(f"journaltools compare {source} {url}")
    status |= cli(["compare", source, url])
    return status


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
