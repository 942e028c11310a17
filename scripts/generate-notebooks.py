"""Write notebooks/*.ipynb from the cells below, without outputs (run: .venv/bin/python scripts/generate-notebooks.py).

The notebooks are committed as generated here, so edit this file, not the .ipynb files (a test checks that
they match and carry no outputs). ``--out DIR`` writes them elsewhere; ``--working-copies DIR`` (``make lab``)
copies the tracked notebooks into DIR where a copy is missing or older, so saving in JupyterLab never
touches the tracked files.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

FIND_SAMPLES = """from pathlib import Path

from journaltools.samples import samples_dir

# The repository's data/samples; outside a checkout the samples are written into ./journaltools-samples.
SAMPLES = str(samples_dir())
SAMPLES"""

TABLES = """from journaltools.tables import load

# Arrow tables of every run (lenient: the samples hold broken journals on purpose; they land in findings).
tables = load(SAMPLES, strict=False, progress=False)
tables.findings.to_pandas()[['run', 'code', 'severity']]"""


def notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    return nb


EXPLORE = [
    (
        "md",
        "# 01 — Explore runs\n\nLoad the sample journals and browse the runs. **Click a row** to open its "
        "conversation below the table, **click a column header** to sort (again to reverse), type in the filter "
        "box or pick statuses to narrow the list. *why it stopped* says how each run ended: the fatal error, "
        "the cancel, the first broken record, or what the run is waiting for.",
    ),
    ("code", FIND_SAMPLES),
    (
        "code",
        "from journaltools.widgets import ConversationView, RunBrowser, load_source\n\n"
        "# The runs table of the source, loaded leniently: every journal is a row, broken ones are `invalid`.\n"
        "model, loader = load_source(SAMPLES)\n"
        "browser = RunBrowser(model, loader)\nbrowser",
    ),
    ("md", "The model behind the browser is plain Python: rows you can filter and sort without a browser."),
    (
        "code",
        "for row in model.with_filter(statuses={'open', 'suspended'}).sorted_by('pending_calls', True).visible():\n"
        "    print(f'{row.run:24} {row.status:10} pending={row.pending_calls} {row.reason}')\n"
        "assert len(model.rows) == 14",
    ),
    (
        "md",
        "Opening a run from code does what a click does. The banner at the top says why it ended; the record "
        "that ended it sits at the end of the conversation, where it is in the journal.",
    ),
    ("code", "browser.select('failed-provider')\nbrowser.detail.children[1]"),
    (
        "md",
        "A run resumed after a crash: the claim shows as a marker on the timeline in the header; the claim landed "
        "between a turn and the result answering it and changed nothing in the conversation. Messages are "
        "rendered as Markdown (`code` stays monospace); tool calls sit next to their results.",
    ),
    (
        "code",
        "resumed = ConversationView.from_fold(loader('resumed-after-crash'))\n"
        "assert [m.seq for m in resumed.model.markers] == [4]\nresumed",
    ),
    (
        "md",
        "Journal content is untrusted: this user message contains a `<script>` tag. It is shown as text and "
        "never runs; Markdown is rendered without raw HTML, and only http(s) and mailto links become links.",
    ),
    ("code", "ConversationView.from_fold(loader('optional-unknown-record'))"),
]

POST_MORTEM = [
    (
        "md",
        "# 02 — Post-mortem: a failed run and a stuck run\n\nStart with *why*: the `runs` table says how every "
        "run ended. Then step through a run's records with **TimeTravel** (the fold of every prefix) and confirm "
        "with the `tool_calls` table.",
    ),
    ("code", FIND_SAMPLES),
    ("code", TABLES),
    (
        "code",
        "runs = tables.runs.to_pandas()\n"
        "runs[['run', 'status', 'end_reason', 'stop_reason', 'waiting_for']].sort_values('run')",
    ),
    ("md", "## The failed run\n\n`failed-provider` is `failed`. Why, and when did it go wrong?"),
    (
        "code",
        "failed_row = runs.set_index('run').loc['failed-provider']\n"
        "print(failed_row['status'], '—', failed_row['end_reason'])\n"
        "assert failed_row['end_reason'] == 'provider error: overloaded: 3 retries exhausted'\n\n"
        "from journaltools.widgets import ConversationView, TimeTravel, load_source\n\n"
        "_, loader = load_source(SAMPLES)\n"
        "ConversationView.from_fold(loader('failed-provider'))  # the banner says why; the error record ends it",
    ),
    (
        "code",
        "failed = TimeTravel.from_source(SAMPLES, 'failed-provider')\n"
        "failed.model.status_changes()  # (seq, before, after)",
    ),
    (
        "code",
        "# One record before the failure: the test run came back as an error (out of memory).\n"
        "failed.show(failed.model.index_of_seq(4))\n"
        "before = failed.model.snapshot(failed.model.index_of_seq(4))\n"
        "print(before.status, before.counters['tool_errors'], before.last_messages[-1][1])\nfailed",
    ),
    (
        "code",
        "after = failed.model.snapshot(failed.model.index_of_seq(5))\nprint(after.status, '—', after.banner.text)\n"
        "assert (before.status, after.status) == ('open', 'failed')",
    ),
    (
        "code",
        "calls = tables.tool_calls.to_pandas()\n"
        "calls[calls['is_error'] == True][['run', 'call_id', 'name', 'call_seq', 'result_seq']]",
    ),
    (
        "md",
        "So: the tool run failed (out of memory), then the provider call for the next turn was overloaded and "
        "retries ran out — a fatal `error` record ends the run. Resuming would retry the model call.",
    ),
    ("md", "## The stuck run\n\n`suspended-approval` has not moved. What is it waiting for?"),
    (
        "code",
        "stuck = TimeTravel.from_source(SAMPLES, 'suspended-approval')\n"
        "print(stuck.model.status_changes())\n"
        "last = stuck.model.snapshot(len(stuck.model) - 1)\n"
        "print(last.status, last.waiting_for, last.pending)\n"
        "assert last.waiting_for == 'answer' and last.pending[0]['deferred'] == 'approval'\nstuck",
    ),
    (
        "code",
        "pending = calls[calls['result_seq'].isna()]\npending[['run', 'call_id', 'name', 'deferred', 'approval']]",
    ),
    (
        "md",
        "`suspended-approval` waits for an operator to approve the `deploy` call (deferred for approval at seq 4, no "
        "decision yet). `turn-in-flight` is different: its calls are not deferred, the runner simply has not written "
        "their results — it waits for tools.",
    ),
]

COMPARE = [
    (
        "md",
        "# 03 — Compare the file and JetStream listings\n\nStart an embedded JetStream server (source "
        "`embedded`), migrate the samples into it, and compare both listings run by run.",
    ),
    ("code", FIND_SAMPLES),
    (
        "code",
        "from journaltools.backends.registry import open_source\nfrom journaltools.ops.migrate import migrate\n\n"
        "files = open_source(SAMPLES)\njetstream = open_source('embedded', create=True)  # a throwaway local server\n"
        "report = migrate(files, jetstream)\nprint(report.to_json())\nfor refusal in report.refused:\n"
        "    print('not migrated:', refusal.run, '-', refusal.code, '-', refusal.message[:100])",
    ),
    (
        "code",
        "from journaltools.widgets import ListingComparison, ListingComparisonModel\n\n"
        "comparison = ListingComparisonModel.from_listings(files.listing(), jetstream.listing(), 'file', 'jetstream')\n"
        "print(comparison.summary_text())\nListingComparison(comparison)",
    ),
    (
        "md",
        "`turn-in-flight` is flagged **documented**: the file listing folds the run and sees unanswered tool calls "
        "(`open`); JetStream's two-record summary sees an assistant record last (`completed`). `schema-violation` "
        "and `version-mismatch` are flagged **summary rule** (expected, shown in blue): migrate copies every journal whose lines parse, as it "
        "is; the file listing validates and calls them invalid, the two-record summary does not validate. Only "
        "`corrupt-interior` is missing on the JetStream side: migrate refuses a journal whose lines do not all parse. "
        "A **discrepancy** (the records differ) would be an error; there is none here.",
    ),
    (
        "code",
        "row = comparison.row('turn-in-flight')\nprint(row.flag, '-', row.explanation)\n"
        "assert row.verdict == 'documented'\n"
        "assert comparison.row('schema-violation').verdict == 'summary_rule'\n"
        "assert all(r.verdict in ('agree', 'documented', 'summary_rule', 'missing_b') for r in comparison.rows)",
    ),
    ("code", "jetstream.close()\nfiles.close()"),
]

AUDIT = [
    (
        "md",
        "# 04 — Batch audit\n\nAudit every journal, write the findings as Parquet, query them (with DuckDB when "
        "installed), and open the affected runs from the summary.",
    ),
    ("code", FIND_SAMPLES),
    (
        "code",
        "import tempfile\n\nfrom journaltools.audit import audit_sources\nfrom journaltools.widgets import AuditSummary, "
        "AuditSummaryModel, load_source\n\nout = Path(tempfile.mkdtemp(prefix='journaltools-audit-'))\n"
        "# One call: every record checked, every run folded, the tables streamed to Parquet batch by batch.\n"
        "result = audit_sources([SAMPLES], parquet=out, include_records=True, quiet=True)\n"
        "print(result.runs, 'runs,', result.records, 'records,', len(result.findings), 'findings;',\n"
        "      'worst:', result.worst())\nsorted(p.name for p in out.iterdir())",
    ),
    (
        "code",
        "_, loader = load_source(SAMPLES)\nsummary = AuditSummary(AuditSummaryModel(result.findings), loader)\nsummary",
    ),
    ("code", "summary.open_run('torn-tail')  # what the button under the chart does\nsummary.detail"),
    (
        "md",
        "## Query the Parquet audit\n\nThe files carry the columns of INTERFACES.md with real types (timestamps in UTC, "
        "nullable integers); any Arrow tool reads them. Here DuckDB, then pandas with Arrow-backed dtypes.",
    ),
    (
        "code",
        'import duckdb\n\nduckdb.sql(f"""\n    SELECT severity, code, count(*) AS n, string_agg(DISTINCT run, \', \') AS runs\n'
        "    FROM '{out / 'findings.parquet'}' GROUP BY severity, code ORDER BY n DESC, code\n\"\"\").df()",
    ),
    (
        "code",
        'duckdb.sql(f"""\n    SELECT r.run, r.status, r.turns, r.tool_calls, count(t.call_id) FILTER (WHERE t.is_error) AS '
        "failed_calls\n    FROM '{out / 'runs.parquet'}' r LEFT JOIN '{out / 'tool_calls.parquet'}' t USING (run)\n"
        '    GROUP BY ALL ORDER BY r.run\n""").df()',
    ),
    (
        "code",
        "import pandas as pd\n\nruns = pd.read_parquet(out / 'runs.parquet')\nprint(runs.dtypes[['created', 'last_seq', "
        "'turns']])\nerrors = pd.read_parquet(out / 'findings.parquet').query(\"severity == 'error'\")\n"
        "assert set(errors['run']) >= {'corrupt-interior', 'schema-violation', 'version-mismatch'}\nerrors",
    ),
]


NOTEBOOK_CELLS = {
    "01-explore": EXPLORE,
    "02-post-mortem": POST_MORTEM,
    "03-compare-backends": COMPARE,
    "04-batch-audit": AUDIT,
}


def write_notebooks(directory: Path) -> list[Path]:
    """Write the four notebooks, without outputs and with stable cell ids (regenerating gives the same bytes)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, cells in NOTEBOOK_CELLS.items():
        nb = notebook(cells)
        for index, cell in enumerate(nb.cells):
            cell["id"] = f"{name}-{index}"
        nbformat.validate(nb)
        path = directory / f"{name}.ipynb"
        nbformat.write(nb, path)
        written.append(path)
    return written


def working_copies(directory: Path) -> None:
    """Copy each tracked notebook into ``directory`` unless a copy at least as new is there (the user's work)."""
    directory.mkdir(parents=True, exist_ok=True)
    for tracked in sorted(NOTEBOOKS.glob("*.ipynb")):
        copy = directory / tracked.name
        if not copy.exists() or tracked.stat().st_mtime > copy.stat().st_mtime:
            shutil.copy2(tracked, copy)
    print(f"JupyterLab opens {directory}: working copies of notebooks/ (saving there leaves the tracked files alone)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=NOTEBOOKS, help="where to write the notebooks")
    parser.add_argument("--working-copies", type=Path, metavar="DIR", help="copy the tracked notebooks into DIR")
    args = parser.parse_args()
    if args.working_copies is not None:
        working_copies(args.working_copies)
    else:
        write_notebooks(args.out)


if __name__ == "__main__":
    main()
