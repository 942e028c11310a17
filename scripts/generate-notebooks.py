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

FIND_SOURCE = """from journaltools.samples import notebook_source

# Your runs: set SOURCE to a state directory or a nats:// URL. Left as it is, SOURCE is $JOURNALTOOLS_SOURCE when set,
# else the runtime's own directory (~/.local/state/fisk-ai/runs) when it holds journals, else the bundled samples.
SOURCE = notebook_source()
SOURCE"""

TABLES = """from journaltools.tables import load

# Arrow tables of every run, read leniently: a journal the runtime would refuse is a row (`invalid`) and its
# findings say why, instead of stopping the load.
tables = load(SOURCE, strict=False, progress=False)
runs = tables.runs.to_pandas()
tables.findings.to_pandas()[['run', 'code', 'severity']]"""

# The cells pick runs by what they show (a status, a resume, an open deferral), never by name, so every notebook runs
# on any source: the samples, the runtime's own directory, a stream (`make test` runs them on the samples and on
# journals both fisk-ai builds wrote).


def notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    return nb


EXPLORE = [
    (
        "md",
        "# 01 — Explore runs\n\nBrowse the runs of a source: your own (set `SOURCE` below), or the bundled samples, "
        "where each story is there twice, as fisk-ai's August build writes it (format version 3) and as its newest "
        "line does (format version 1, run ids `newest-…`: every record dated, the agent, each tool call's provider). "
        "**Click a row** to open its conversation in a pane above the table (it scrolls into view; *close* or "
        "Escape closes it), **click a column header** to sort (again to reverse), type in the filter box or pick statuses to narrow the list. *why it stopped* says how each run "
        "ended: the terminal's message, the deferred calls it waits on, the calls of a turn in flight, or the "
        "first error of a journal the runtime would refuse (`invalid`).",
    ),
    ("code", FIND_SOURCE),
    (
        "code",
        "from journaltools.widgets import ConversationView, RunBrowser, load_source\n\n"
        "# The runs table of the source, loaded leniently: every journal is a row, broken ones are `invalid`.\n"
        "model, loader = load_source(SOURCE)\n"
        "browser = RunBrowser(model, loader)\nbrowser",
    ),
    ("md", "The model behind the browser is plain Python: rows you can filter and sort without a browser."),
    (
        "code",
        "for row in model.with_filter(statuses={'open', 'suspended'}).sorted_by('pending_calls', True).visible():\n"
        "    print(f'{row.run:32} {row.status:10} pending={row.pending_calls} {row.reason[:80]}')\n"
        "counts = model.status_counts()\nprint(counts)\n"
        "assert sum(counts.values()) == len(model.rows)  # every run has one status, an unreadable one `invalid`",
    ),
    (
        "md",
        "Both generations side by side. A journal's meta record says which build wrote it, and journaltools reads "
        "each by its own build's rules: the `generation` column (empty for a journal too broken to say). The same "
        "story can end differently: a newest run that journaled anything after its last terminal (memory "
        "revisions, a claim) is `open` again (`reopened`), as the newest runtime lists it, where the August build "
        "names its last terminal. Only the newest line dates its records (`ended`), names the agent, and counts "
        "calls by provider.",
    ),
    (
        "code",
        "import journaltools as jt\n\n"
        "runs = jt.load(SOURCE, strict=False, workers=1, progress=False).to_pandas().runs\n"
        "print(runs.groupby('generation', dropna=False).size().to_string())\n"
        "side = runs.dropna(subset=['generation']).sort_values('reopened', ascending=False).groupby('generation').head(2)\n"
        "print(side.set_index('run')[['generation', 'status', 'reopened', 'agent', 'ended', 'turns', 'tool_calls']]"
        ".to_string())\n"
        "assert set(runs.generation.dropna()) <= {'newest', 'august'}\n"
        "august = runs[runs.generation == 'august']\n"
        "assert august.ended.isna().all() and august.agent.isna().all()  # the August build dates and names nothing\n"
        "reopened = runs[(runs.generation == 'newest') & runs.reopened.fillna(False)]\n"
        "assert (reopened.status == 'open').all()  # the newest line lists a reopened run as open again",
    ),
    (
        "md",
        "Opening a run from code does what a click does: the run opens in the browser above, not in a second "
        "copy here. The banner at the top of its pane says why it stopped: here a run that did not complete (its "
        "terminal's reason and message, and the last stop reason).",
    ),
    (
        "code",
        "ended_badly = [row.run for row in model.rows if row.status in ('error', 'budget', 'max_iterations')]\n"
        "ended = (ended_badly or [row.run for row in model.rows])[0]\n"
        "browser.select(ended)  # the pane above the table now shows it\n"
        "print(browser.conversation.model.why.banner().text)",
    ),
    (
        "md",
        "A journal spans several process runs: each resume writes a claim. The header shows one chip per process "
        "run (who claimed it, how it ended: a terminal reason, `crashed`, or *no ending recorded* with the last "
        "activity where the store kept a time: a journal with no terminal says nothing of whether its process still "
        "runs). Thinking blocks are "
        "collapsed (their signatures are never shown), tool calls sit next to their results, provider blocks show "
        "their kind and raw JSON.",
    ),
    (
        "code",
        "resumed_row = max(model.rows, key=lambda row: row.segments or 0)  # the run resumed most often\n"
        "resumed = ConversationView.from_source(SOURCE, resumed_row.run)  # with every time the records keep\n"
        "print([(s.index, s.claimed_by, s.ending) for s in resumed.model.segments])\n"
        "assert len(resumed.model.segments) == resumed_row.segments  # the header and the table count alike\nresumed",
    ),
    (
        "md",
        "Journal content is untrusted: message text, a deferral's note and handle, `claim.by`, `meta.caller` and "
        "`meta.prompt` are shown as text and never run; Markdown is rendered without raw HTML, and only http(s) "
        "and mailto links become links. The conversation token is a credential: only a 12-hex digest of it is shown.",
    ),
]

POST_MORTEM = [
    (
        "md",
        "# 02 — Post-mortem: a run that ended badly and a run that waits\n\nStart with *why*: the `runs` table says "
        "how every run ended. Then step through a run's records with **TimeTravel** (the fold of every prefix).",
    ),
    ("code", FIND_SOURCE),
    ("code", TABLES),
    (
        "code",
        "runs[['run', 'status', 'terminal_reason', 'terminal_message', 'last_stop_reason', 'pending_calls',\n"
        "      'open_deferrals', 'stale_terminal', 'segments']].sort_values('run')",
    ),
    (
        "md",
        "## A run that ended badly\n\nThe first run that ended in an error, out of budget or out of iterations "
        "(else the first readable run): which record ended it, and what did the run look like just before?",
    ),
    (
        "code",
        "from journaltools.widgets import ConversationView, TimeTravel, load_source\n\n"
        "ended_badly = runs[runs['status'].isin(['error', 'budget', 'max_iterations'])]\n"
        "failed_run = (ended_badly if len(ended_badly) else runs[runs['status'] != 'invalid']).iloc[0]\n"
        "print(failed_run['run'], '—', failed_run['terminal_message'])\n"
        "_, loader = load_source(SOURCE)\n"
        "ConversationView.from_source(SOURCE, failed_run['run'])  # the banner says why",
    ),
    (
        "code",
        "failed = TimeTravel.from_source(SOURCE, failed_run['run'])\n"
        "changes = failed.model.status_changes()  # (seq, before, after)\nprint(changes)\n"
        "assert changes[-1][2] == failed_run['status']  # the last change is where the table says the run stands",
    ),
    (
        "code",
        "seq = changes[-1][0]\n"
        "index = failed.model.index_of_seq(seq)\n"
        "before, after = failed.model.snapshot(index - 1), failed.model.snapshot(index)\n"
        "print(before.status, '→', after.status, '—', after.banner.text)\n"
        "failed.show(index)\nfailed",
    ),
    (
        "md",
        "## A run that waits\n\nA run with an open deferral (else the one with most calls pending): what is it "
        "waiting for, and on whom?",
    ),
    (
        "code",
        "deferred = runs[runs['open_deferrals'] > 0]\n"
        "waiting = (deferred if len(deferred) else runs.sort_values('pending_calls', ascending=False)).iloc[0]\n"
        "waiting_run = waiting['run']\n"
        "result = loader(waiting_run)\n"
        "for call in result.pending_calls:\n"
        "    print(call.name, call.id, 'deferred' if call.deferred else 'not deferred',\n"
        "          call.deferred.note if call.deferred else '', call.deferred.handle if call.deferred else '')\n"
        "print('waiting for:', result.waiting_for)\n"
        "assert len(result.pending_calls) == waiting['pending_calls']  # the fold and the table agree\n"
        "ConversationView.from_source(SOURCE, waiting_run)",
    ),
    (
        "md",
        "The turn in flight is shown last, each call with its state: answered, deferred (with the tool's note and "
        "handle), approved once, or waiting. `journaltools answer` supplies the deferred result the runtime's way.",
    ),
]

COMPARE = [
    (
        "md",
        "# 03 — Compare the file and JetStream listings\n\nStart an embedded JetStream server (source "
        "`embedded`), copy the source's journals into it (bytes unchanged), and compare both listings run by run.",
    ),
    ("code", FIND_SOURCE),
    (
        "code",
        "from journaltools.sources.registry import open_source\nfrom journaltools.ops.migrate import migrate\n\n"
        "files = open_source(SOURCE)\njetstream = open_source('embedded', create=True)  # a throwaway local server\n"
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
        "The file rule folds every journal and names the last terminal's reason; the JetStream rule reads two "
        "records (`_meta` and the last message) and says `open` unless the last one is a terminal. **documented** "
        "(amber): a new turn follows the last terminal, the conversation's next turn is in flight. **summary rule** "
        "(blue): only records that start no turn follow the last terminal (memory revisions, a claim, a decision), "
        "or the file rule refuses a journal the two-record rule still reads. A **discrepancy** (the records "
        "differ) would be an error; there is none here.",
    ),
    (
        "code",
        "for row in comparison.rows:\n"
        "    if row.verdict != 'agree':\n"
        "        print(f'{row.flag:16} {row.run:32} {row.explanation[:90]}')\n"
        "assert not [row for row in comparison.rows if row.verdict == 'discrepancy']",
    ),
    ("code", "jetstream.close()\nfiles.close()"),
]

AUDIT = [
    (
        "md",
        "# 04 — Batch audit\n\nAudit every journal, write the tables as Parquet, query them (with DuckDB when "
        "installed), and open the affected runs from the summary.",
    ),
    ("code", FIND_SOURCE),
    (
        "code",
        "import tempfile\nfrom pathlib import Path\n\nfrom journaltools.audits.sources import audit_sources\nfrom journaltools.widgets import AuditSummary, "
        "AuditSummaryModel, load_source\n\nout = Path(tempfile.mkdtemp(prefix='journaltools-audit-'))\n"
        "# One call: every record checked, every run folded, the tables streamed to Parquet batch by batch.\n"
        "result = audit_sources([SOURCE], parquet=out, records=True, progress=False)\n"
        "print(result.runs, 'runs,', result.records, 'records,', len(result.findings), 'findings;',\n"
        "      'worst:', result.worst())\nsorted(p.name for p in out.iterdir())",
    ),
    (
        "code",
        "_, loader = load_source(SOURCE)\nsummary = AuditSummary(AuditSummaryModel(result.findings), loader)\nsummary",
    ),
    (
        "code",
        "first = summary.model.affected_runs()[0]\n"
        "summary.open_run(first)  # what a button under the chart does: the run opens in the summary above\n"
        "print(first, [finding.code for finding in summary.model.findings_for(first)])",
    ),
    (
        "md",
        "## Query the Parquet audit\n\nThe files carry the columns of docs/interfaces.md with real types (timestamps in "
        "UTC, nullable integers); any Arrow tool reads them. Here DuckDB, then pandas with Arrow-backed dtypes. The "
        "conversation token never appears in them: `runs.conversation` is a 12-hex digest.",
    ),
    (
        "code",
        'import duckdb\n\nduckdb.sql(f"""\n    SELECT severity, code, count(*) AS n, string_agg(DISTINCT run, \', \') AS runs\n'
        "    FROM '{out / 'findings.parquet'}' GROUP BY severity, code ORDER BY n DESC, code\n\"\"\").df()",
    ),
    (
        "code",
        'duckdb.sql(f"""\n    SELECT r.run, r.status, r.llm_calls, r.tool_calls, count(t.call_id) FILTER (WHERE t.is_error) AS '
        "failed_calls\n    FROM '{out / 'runs.parquet'}' r LEFT JOIN '{out / 'tool_calls.parquet'}' t USING (run)\n"
        '    GROUP BY ALL ORDER BY r.run\n""").df()',
    ),
    (
        "code",
        "import pandas as pd\n\nruns = pd.read_parquet(out / 'runs.parquet')\nprint(runs.dtypes[['created', 'last_seq', "
        "'llm_calls']])\nerrors = pd.read_parquet(out / 'findings.parquet').query(\"severity == 'error'\")\n"
        "assert set(errors['run'].dropna()) <= set(runs[runs['status'] == 'invalid']['run'])\nerrors",
    ),
    (
        "md",
        "## Beside the journals: task records and turn checkpoints\n\nA fisk-ai task directory (what was asked, and "
        "the answer) and an agent-harness-go state directory (turn checkpoints: which step is safe next), written here "
        "in the runtimes' own layouts. The audit takes both: `task_state` for each run whose id names a task, and the "
        "turn findings beside the journals' findings.",
    ),
    (
        "code",
        "from journaltools.testing.demo import write_demo_stores\nfrom journaltools.audits.tasks import audit_tasks\n"
        "from journaltools.widgets import TurnCheckpoints\n\ntasks, turns = write_demo_stores(Path(tempfile.mkdtemp("
        "prefix='journaltools-stores-')))\nprint(audit_tasks(str(tasks)).tasks.select(['id', 'state', 'outcome', "
        "'error']).to_pandas())\nwith_stores = audit_sources([SOURCE], task_store=tasks, turn_store=turns, "
        "progress=False)\nprint(sorted({f.code for f in with_stores.findings if f.code.startswith('turn_')}))\n"
        "TurnCheckpoints.from_store(str(turns))",
    ),
]


COMPARE_AND_SHARE = [
    (
        "md",
        "# 05 — Compare, search and share runs\n\nWhat the runtime's own tools cannot do across runs: compare two "
        "runs call by call, search every run's text, write a run as one HTML file, and send a run to a trace "
        "viewer. Every step works on both "
        "generations of journals; where a journal carries no record times (every August one) the times are "
        "left out and the step says so, never invented.",
    ),
    ("code", FIND_SOURCE),
    (
        "md",
        "Two runs to compare: two that were asked the same thing (the samples tell each story as both builds "
        "wrote it), else the first two readable runs.",
    ),
    (
        "code",
        "import journaltools as jt\n\n"
        "runs = jt.load(SOURCE, strict=False, progress=False).to_pandas().runs\n"
        "readable = runs[runs.status != 'invalid'].sort_values(['prompt', 'generation', 'run'], na_position='last')\n"
        "prompted = readable[readable.prompt.fillna('').str.strip() != '']\n"
        "twins = prompted[prompted.prompt.duplicated(keep=False)]\n"
        "a, b = (twins if len(twins) >= 2 else readable).run.iloc[:2]\n"
        "print(a, 'and', b)",
    ),
    (
        "md",
        "**Diff.** The runs line up turn by turn (by iteration) and call by call (by tool_use_id). Where the "
        "fingerprints agree, the resume gate would let one configuration resume the other; times are compared "
        "only where both journals are dated, and otherwise the diff says why not.",
    ),
    (
        "code",
        "compared = jt.diff(SOURCE, a, b)\n"
        "print('same records:', compared.same_records, '· calls compared:', len(compared.calls))\n"
        "print('fingerprint changes:', [change.field for change in compared.fingerprint_changes])\n"
        "print('gate:', 'resumable' if compared.gate is None or compared.gate.resumable else compared.gate.refusal)\n"
        "print(compared.times_note)\n"
        "assert compared.times_compared or compared.times_note  # times compared, or a note says why not",
    ),
    ("md", "The same comparison side by side, the first divergence marked:"),
    (
        "code",
        "from journaltools.widgets import RunDiff\n\nRunDiff.from_sources(SOURCE, a, b)",
    ),
    (
        "md",
        "A run against its own second process run: `segments=(0, 1)` compares what the first process did with what "
        "the resume did, turn by turn (here the run resumed most often).",
    ),
    (
        "code",
        "resumed_run = runs.sort_values(['segments', 'run'], ascending=[False, True]).run.iloc[0]\n"
        "resumed = jt.diff(SOURCE, resumed_run, segments=(0, 1), strict=False)\n"
        "for pair in resumed.turns:\n"
        "    print(f'turn {pair.turn}: calls {pair.calls.a} / {pair.calls.b}, '\n"
        '          f\'output tokens {pair.tokens["out_tokens"].a} / {pair.tokens["out_tokens"].b}\')\n'
        "first = resumed.first_divergence\n"
        "print('first divergence:', first.a.tool if first and first.a else None, first.b.tool if first and first.b else None)",
    ),
    (
        "md",
        "**Grep.** Every run's prompts, messages, thinking, tool inputs and results, searched at once without "
        "folding a journal; each match is a row with a snippet around it. `ignore_case` folds case as Unicode does. "
        "Here the longest word of a run's prompt, in capitals.",
    ),
    (
        "code",
        "asked = prompted.iloc[0]\nword = max(asked.prompt.split(), key=len)\n"
        "found = jt.grep(word.upper(), SOURCE, ignore_case=True)\n"
        "matches = found.table.to_pandas()\n"
        "print(found.runs, 'runs searched,', len(matches), 'texts match')\n"
        "print(matches.groupby('where').size().to_string())\n"
        "assert asked.run in set(matches['run']) and set(matches['where']) <= {'prompt', 'user', 'assistant', 'thinking', 'tool_input', "
        "'tool_result'}\n"
        "matches.head(5)",
    ),
    (
        "md",
        "**Report.** One run as one HTML file to read offline or send on: why it ended or the calls it waits for, "
        "the timeline of its turns and calls (with durations where the journal is dated), its process runs, its "
        "findings and its conversation in pages, light and dark. Nothing in it reaches the network, journal text "
        "is escaped and the conversation token is never in it. It stays under a size bound (10 MB unless "
        "`max_bytes` says otherwise), and says what it cut. In the run browser, the opened run's **report** button "
        "does the same.",
    ),
    (
        "code",
        "import html\nimport tempfile\nfrom pathlib import Path\n\n"
        "shared = Path(tempfile.mkdtemp(prefix='journaltools-report-'))  # not the repository: a file to send on\n"
        "made = jt.report(SOURCE, b, shared / 'report.html')\n"
        "print(made.summary())\n"
        "assert made.size <= made.max_bytes and made.messages_shown == made.messages\n"
        "assert html.escape(b) in made.path.read_text(encoding='utf-8')",
    ),
    (
        "md",
        "**Share.** One OpenTelemetry trace per run, in the shape fisk-ai's own telemetry sends (an `invoke_agent` "
        "root, a `chat` span per model response, an `execute_tool` span per call), as OTLP JSON lines any collector "
        "or viewer takes; ids come from the run, so a second export is byte for byte the first. Message content "
        "only when asked for (`content=True`), the conversation token never.",
    ),
    (
        "code",
        "import json\nimport tempfile\nfrom pathlib import Path\n\n"
        "out = Path(tempfile.mkdtemp(prefix='journaltools-export-'))  # the file a collector or a viewer would take\n"
        "report = jt.export_otlp(SOURCE, [a, b], "
        "path=out / 'traces.ndjson')\n"
        "lines = (out / 'traces.ndjson').read_text().splitlines()\n"
        "print(report.runs, report.spans, 'spans')\n"
        "for line in lines:\n"
        "    spans = json.loads(line)['resourceSpans'][0]['scopeSpans'][0]['spans']\n"
        "    print([span['name'] for span in spans][:5])\n"
        "assert len(lines) == 2",
    ),
]

NOTEBOOK_CELLS = {
    "01-explore": EXPLORE,
    "02-post-mortem": POST_MORTEM,
    "03-compare-backends": COMPARE,
    "04-batch-audit": AUDIT,
    "05-compare-and-share": COMPARE_AND_SHARE,
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
