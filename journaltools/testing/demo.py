"""``make demo`` (or ``python -m journaltools.testing.demo``): the main job on the bundled samples, start to finish.

The listing of the bundled fisk-ai journals (both generations: the August build's and the newest line's), a
stuck run shown (suspended on a deferred call: why it stopped and what it waits for), the same story as the
newest line writes it (every message dated, the agent, each call's provider kind), a resumed one, the audit
written to Parquet and read back, then the samples migrated into an embedded JetStream server (an
``embedded:DIR`` source on a scratch store) and the two listings compared: they differ only where the runtime's
two listing rules are documented to (``documented``, ``summary_rule``), never by a ``discrepancy``. It ends by
saying what to open next. From a checkout it uses ``data/samples``; from an installed package it writes the
samples into ``out/samples`` first.

``python -m journaltools.testing.demo --runs 5000`` does the audit at scale, on generated journals.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from journaltools.cli import main as cli
from journaltools.samples import samples_dir
from journaltools.testing.generate import generate_corpus


def banner(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)), flush=True)


DEFAULT_OUT = Path("out") / "audit"


#: The run ``show`` opens: suspended on a deferred call, waiting for an operator's answer.
STUCK_RUN = "deferred-waiting"


def run_demo(samples: Path | None = None, out: Path = DEFAULT_OUT) -> int:
    """Run the tour; the exit status is nonzero when a step failed (a discrepancy between the listings
    included), so ``make demo`` fails loudly instead of printing a wrong story."""
    samples = samples if samples is not None else samples_dir(fallback=out.parent / "samples")
    source = str(samples)
    banner(f"journaltools ls {source}")
    status = cli(["ls", source])
    banner(f"journaltools show {source} {STUCK_RUN}   (why it stopped, and what it waits for)")
    status |= cli(["show", source, STUCK_RUN])
    banner(f"journaltools show {source} newest-{STUCK_RUN}   (the newest line: dated, the agent, provider kinds)")
    status |= cli(["show", source, f"newest-{STUCK_RUN}"])
    banner(f"journaltools show {source} resumed-mid-batch   (a crash, then a resume's claim mid-batch)")
    status |= cli(["show", source, "resumed-mid-batch"])
    banner(f"journaltools audit {source} --parquet {out}")
    audited = cli(["audit", source, "--parquet", str(out), "--records", "--quiet"])
    status |= audited if audited else show_parquet(out)  # no tables to read back when the audit failed
    # The runtime's JetStream layout on an embedded server whose store lives in a scratch directory: every
    # command below starts it on that store, so what migrate writes is there for ls and compare, and nothing
    # is left behind afterwards.
    with tempfile.TemporaryDirectory(prefix="journaltools-demo-") as store:
        stream = f"embedded:{store}"
        banner(f"journaltools migrate {source} {stream}   (bytes unchanged; refused journals stay behind)")
        status |= cli(["migrate", source, stream, "--skip-invalid"])
        banner(f"journaltools ls {stream}   (the JetStream rule: the meta record and the last record)")
        status |= cli(["ls", stream])
        banner(f"journaltools compare {source} {stream}   (documented / summary_rule, never a discrepancy)")
        status |= cli(["compare", source, stream, "--fail-on", "discrepancy"])
    with tempfile.TemporaryDirectory(prefix="journaltools-demo-stores-") as stores:
        tasks, turns = write_demo_stores(Path(stores))
        banner(f"journaltools tasks {tasks}   (fisk-ai task records: answered, failed, waiting)")
        status |= cli(["tasks", str(tasks)])
        banner(f"journaltools turns {turns}   (agent-harness-go checkpoints that need an operator)")
        status |= cli(["turns", str(turns)])
    print_next_steps(samples, out)
    return status


def write_demo_stores(root: Path) -> tuple[Path, Path]:
    """A fisk-ai task directory and an agent-harness-go state directory, written in the runtimes' own layouts:
    one task answered, one failed, one waiting; one turn whose side-effecting call was requested and may have run
    (so recovery asks an operator)."""
    import json

    from journaltools.stores import open_task_store, open_turn_store
    from journaltools.stores.turns import HistoryMessageRef, ToolBatchCheckpoint, ToolCheckpoint, TurnRecord

    tasks, turns = root / "tasks", root / "state"
    with open_task_store(tasks, create=True) as task_store:
        for task_id, answer in (("invoice-42", "result"), ("report-7", "error"), ("backup-3", None)):
            ask = {"protocol": "io.choria.fisk-ai.v1.request.prompt", "id": f"m-{task_id}", "request": task_id}
            task_store.submit(json.dumps({**ask, "prompt": "sum the invoices"}).encode())
            if answer is not None:
                reply = {"protocol": f"io.choria.fisk-ai.v1.{answer}", "request": task_id}
                words = {"text": "12 invoices"} if answer == "result" else {"error": "the provider refused"}
                task_store.complete(task_id, json.dumps({**reply, **words}).encode())
    digest = "0" * 64

    def message(message_id: str) -> HistoryMessageRef:
        return HistoryMessageRef(workspace_id="acme", session_id="s1", message_id=message_id, digest=digest)

    with open_turn_store(turns, create=True) as store:
        record = store.create(
            TurnRecord(
                workspace_id="acme",
                session_id="s1",
                task_id="invoice-42",
                owner_identity="worker-1",
                input=message("m1"),
            )
        )
        record = store.update(record.with_changes(phase="provider_pending"), record.revision)
        email = ToolCheckpoint(invocation_id="call-1", name="send_email", args_digest=digest, outcome="requested")
        batch = ToolBatchCheckpoint(assistant=message("m2"), calls=(email,))
        store.update(record.with_changes(phase="tool_pending", tool_batch=batch), record.revision)
    return tasks, turns


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
        print("  02-post-mortem.ipynb steps through a stopped run record by record.")
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

    for name in ("runs", "segments", "messages", "tool_calls", "findings", "records"):
        path = out / f"{name}.parquet"
        if not path.is_file():  # the records table is written only when asked for
            continue
        table = pq.read_table(path)
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


def run_large_demo(runs: int, out: Path = DEFAULT_OUT.parent) -> int:
    """The same job at scale: ``runs`` generated fisk-ai journals (``journaltools.testing.generate``; the same bytes
    for the same number every time, kept in ``out/corpus-<runs>`` for the next try), audited to Parquet."""
    corpus = out / f"corpus-{runs}"
    if not any(corpus.glob("*.json")):
        banner(f"python -m journaltools.testing.generate {corpus} --runs {runs}")
        stats = generate_corpus(corpus, runs=runs, records=LARGE_DEMO_RECORDS)
        print(f"{stats.runs:,} runs, {stats.records:,} records, {stats.bytes / 1e6:,.0f} MB", flush=True)
    target = out / f"audit-{runs}"
    banner(f"journaltools audit {corpus} --parquet {target}")
    started = time.perf_counter()
    status = cli(["audit", str(corpus), "--parquet", str(target), "--quiet"])
    print(f"audited in {time.perf_counter() - started:.1f} s", flush=True)
    return status if status else show_parquet(target)


#: Records per generated run in the large demo: about 40 KB a run, a few hundred MB for 5,000 runs.
LARGE_DEMO_RECORDS = 60


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m journaltools.testing.demo", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--runs", type=int, metavar="N", help="instead of the samples, audit N generated journals (e.g. 5000)"
    )
    args = parser.parse_args(argv)
    return run_large_demo(args.runs) if args.runs else run_demo()


if __name__ == "__main__":
    sys.exit(main())
