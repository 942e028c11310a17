"""The command line's parser: every command, its arguments and its help. Each command's code is imported when that
command runs, not here: ``--help`` and a small ``show`` start in a fraction of the time numpy, pyarrow, pandas or
nats take to import (tests/unit/cli/test_lazy_imports.py holds them to it)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from journaltools.cli._options import (
    REPORT_MAX_SIZE_TEXT,
    add_fail_on,
    add_prices,
    add_run_targets,
    add_stuck_after,
    byte_size,
    moment_value,
    non_negative_int,
    output_path,
    positive_int,
    segment_number,
    status_list,
    text_value,
)
from journaltools.models import INPUT_NAMES, OUTPUT_NAMES

#: ``search --status`` values, as the runtime's search takes them (``analyses.search`` checks them; a test holds both).
SEARCH_STATUSES: Final = ("open", "completed", "suspended", "error", "budget", "max_iterations")

#: ``ls --sort`` keys, in the order ``--help`` gives them (``_commands`` orders by them; a test holds the two equal).
LS_SORT_KEYS: Final = ("status", "created", "updated", "last_seq", "records", "run")

#: ``--where``: the same option for ``ls``, ``audit`` and ``search`` (docs/filter.md).
WHERE_HELP: Final = (
    "only the runs this filter expression keeps, over the runs table's columns (docs/filter.md), such as "
    '\'status == "error" and model ~ "sonnet" and created > "2026-12-01"\': and, or, not, == != < <= > >=, '
    "in [...], ~ (contains, any case). It folds every journal of the source (the runs table) to judge them"
)


def _version() -> str:
    """The installed distribution's version (the package's own when it runs from a source tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("journaltools")
    except PackageNotFoundError:
        from journaltools._base.version import __version__

        return __version__


class _VersionAction(argparse.Action):
    """``--version``, the installed version looked up only when asked for (importlib.metadata is slow to load)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(
            option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help="show program's version number and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"journaltools {_version()}")  # on stdout, as argparse's own version action prints it
        parser.exit()


def _handler(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command's function, imported from ``module`` when the command runs."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), name)
        return command(args)

    return run


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    return _handler("journaltools.cli._commands", name)


SOURCES_HELP = (
    "SOURCE is a directory of <id>.json journals (the runtime's layout), file:///path, one journal file (<id>.json, "
    "<id>.json.gz, <id>.json.zst), a quoted glob ('runs/*.json'), nats://host:port/STREAM (an existing stream, "
    "bound as the runtime binds it; ?create=1 creates it), 'embedded' (a throwaway local server) or embedded:DIR "
    "(a local server keeping its data in DIR). With no SOURCE, the runtime's own directory is read: "
    "$XDG_STATE_HOME/fisk-ai/runs, else ~/.local/state/fisk-ai/runs."
)

#: The tools that are not subcommands, named where a newcomer looks first (``journaltools --help``).
MORE_TOOLS_HELP = (
    "Not subcommands: 'python -m journaltools.testing.generate DIR --runs 1000 --records 100 --seed 0' writes "
    "that many realistic runs in the runtime's layout (to try the tools on, or load-test them; --publish appends "
    "them to a nats:// source instead), and 'python -m journaltools.testing.demo' lists, folds and audits the "
    "bundled samples."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="journaltools",
        description="Read, fold, audit and compare the run journals of the fisk-ai agent runtime, of both builds in "
        "the field (the newest line, format version 1, and the August build, format version 3), in files or NATS "
        "JetStream.",
        epilog=f"{SOURCES_HELP} {MORE_TOOLS_HELP}",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, json_flag: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text, epilog=SOURCES_HELP)
        if json_flag:
            sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        return sub

    ls = command(
        "ls",
        "list the runs of one or more sources, each by its backend's own rule (a directory: fold every journal; "
        "JetStream: the meta record and the last record); with several sources each row also names its source",
    )
    ls.add_argument("sources", nargs="*", metavar="SOURCE")
    ls.add_argument(
        "--status",
        action="append",
        type=status_list,
        metavar="STATUS[,STATUS...]",
        help="only runs with one of these statuses (open, completed, suspended, error, budget, max_iterations, "
        "invalid, or any other terminal reason); may be given again",
    )
    ls.add_argument(
        "--since",
        type=moment_value,
        metavar="TIME",
        help="only runs active at or after TIME (their last activity: 'updated', else 'created'); TIME is an "
        "ISO 8601 date or time (UTC unless it says otherwise) or a duration back from now (90s, 30m, 2h, 1d)",
    )
    ls.add_argument(
        "--until", type=moment_value, metavar="TIME", help="only runs created at or before TIME (as for --since)"
    )
    ls.add_argument(
        "--agent",
        type=text_value,
        metavar="NAME",
        help="only runs of this agent, as the newest runtime's listing filters: a run that names no agent (every "
        "August run) is kept whatever NAME is",
    )
    ls.add_argument("--prefix", type=text_value, metavar="TEXT", help="only runs whose id starts with TEXT")
    ls.add_argument("--where", type=text_value, metavar="EXPR", help=WHERE_HELP)
    ls.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="one page of at most N runs, ordered as the newest runtime pages a listing (a directory: by creation, "
        "then id; a stream: by the meta message's stream sequence); the next page's cursor is said on stderr",
    )
    ls.add_argument(
        "--cursor", type=text_value, metavar="CURSOR", help="the page after this cursor (from a --limit listing)"
    )
    ls.add_argument(
        "--generation",
        choices=["newest", "august"],
        help="only runs written by this build: newest (format version 1) or august (format version 3)",
    )
    ls.add_argument(
        "--sort",
        choices=LS_SORT_KEYS,
        help="order the runs: status by what needs attention first (invalid, error, open, suspended, budget, "
        "max_iterations, completed), created and updated newest first, last_seq and records biggest first, "
        "run A to Z (default: the listing's own order)",
    )
    ls.add_argument(
        "--wide",
        action="store_true",
        help="whole run ids, reasons and prompts, whatever the width (the table fits the terminal, or 120 columns "
        "off a terminal)",
    )
    ls.add_argument(
        "--watch",
        action="store_true",
        help="list again whenever a run changes (a journal written, a stream's messages), until Ctrl-C",
    )
    ls.set_defaults(handler=_handler("journaltools.cli._follow", "cmd_ls"))

    show = command(
        "show",
        "fold one run and show its conversation, pending calls, open deferrals, counters, segments and resume "
        "position (a value over 20,000 characters cut with a note; --json holds it whole); RUN may be left out when "
        "SOURCE is one journal file",
    )
    show.add_argument("targets", nargs="*", metavar="[SOURCE] [RUN]")
    show.add_argument("--lenient", action="store_true", help="fold past problems and list them instead of refusing")
    show.add_argument(
        "--anthropic", action="store_true", help="show the messages as Anthropic Messages API input instead"
    )
    show.add_argument(
        "--tail",
        type=positive_int,
        metavar="N",
        help="show only the last N messages of the conversation (and the turn in flight)",
    )
    show.add_argument(
        "--from-seq",
        type=non_negative_int,
        metavar="SEQ",
        help="show the conversation from the message of record SEQ on (the seq findings and endings name)",
    )
    show.add_argument(
        "--follow",
        action="store_true",
        help="show the run, then each record as it is journaled (a message, a call and its answer, a deferral, a "
        "claim, a terminal) until the run ends or Ctrl-C",
    )
    show.set_defaults(handler=_handler("journaltools.cli._follow", "cmd_show"))

    stats = command(
        "stats",
        "what a run cost, as the newest runtime's 'session stats' reports it: tokens per model response and in "
        "total, the wall clock, and a row per tool (calls, kinds, dispatched, not run, unanswered, errors, time); "
        "--json prints exactly the runtime's document",
    )
    add_run_targets(stats)
    add_prices(stats, "add the run's cost after the runtime's account (with --json: a cost object)")
    stats.set_defaults(handler=_handler("journaltools.cli._analysis", "cmd_stats"))

    query = command(
        "query",
        "the tool calls of a run, each paired with the record that answered it, as the newest runtime's "
        "'session query' selects them; --json prints exactly the runtime's document",
    )
    add_run_targets(query)
    query.add_argument(
        "--tool",
        action="append",
        type=text_value,
        metavar="NAME",
        help="only the calls to this tool; repeat to select several tools",
    )
    query.add_argument("--iteration", type=int, metavar="N", help="only the calls made at this loop iteration")
    query.add_argument("--errors", action="store_true", help="only the calls whose answer is an error")
    query.add_argument("--calls-only", action="store_true", help="print the calls without their answers")
    query.add_argument(
        "--results-only", action="store_true", help="print only the answers, leaving out calls nothing has answered"
    )
    query.add_argument(
        "--input-match",
        type=text_value,
        metavar="PATTERN",
        help="only the calls whose input JSON matches this regular expression (Go's syntax, as the runtime's)",
    )
    query.add_argument(
        "--output-match",
        type=text_value,
        metavar="PATTERN",
        help="only the calls whose answer matches this regular expression (Go's syntax, as the runtime's)",
    )
    query.set_defaults(handler=_handler("journaltools.cli._analysis", "cmd_query"))

    search = command(
        "search",
        "the runs of a source that match every filter given, latest activity first, as the newest runtime's "
        "'session search' finds them; --json prints exactly the runtime's document",
    )
    search.add_argument("source", nargs="?", metavar="SOURCE")
    search.add_argument(
        "--identity",
        type=text_value,
        metavar="AGENT",
        help="only the runs of this agent; a run journaled before the agent was recorded names none and is left "
        "out (and counted)",
    )
    search.add_argument("--model", type=text_value, metavar="MODEL", help="only the runs run against this model")
    search.add_argument(
        "--caller", type=text_value, metavar="CALLER", help="only the runs a channel recorded this caller for"
    )
    search.add_argument(
        "--status",
        choices=SEARCH_STATUSES,
        metavar="STATUS",
        help=f"only the runs with this status: {', '.join(SEARCH_STATUSES)}",
    )
    search.add_argument(
        "--since",
        type=text_value,
        metavar="WHEN",
        help="only the runs created at or after WHEN: a duration ago (24h, 7d), a date (2006-01-02, local "
        "midnight) or an RFC 3339 time",
    )
    search.add_argument(
        "--until", type=text_value, metavar="WHEN", help="only the runs created before WHEN (as for --since)"
    )
    search.add_argument(
        "--match",
        type=text_value,
        metavar="PATTERN",
        help="only the runs whose prompt matches this regular expression (Go's syntax, as the runtime's)",
    )
    search.add_argument("--where", type=text_value, metavar="EXPR", help=WHERE_HELP)
    search.set_defaults(handler=_handler("journaltools.cli._analysis", "cmd_search"))

    audit = command(
        "audit",
        "check every record and run of one or more sources; findings are data, not failures. Given one file "
        "source and one JetStream source, also compare their listings (listing_* findings)",
    )
    audit.add_argument("sources", nargs="*", metavar="SOURCE")
    add_fail_on(audit)
    audit.add_argument(
        "--parquet",
        type=output_path,
        metavar="DIR",
        help="write runs, segments, messages, tool_calls, responses and findings",
    )
    audit.add_argument("--records", action="store_true", help="with --parquet: write the records table too")
    audit.add_argument("--quiet", action="store_true", help="no progress bar")
    audit.add_argument(
        "--where",
        type=text_value,
        metavar="EXPR",
        help="audit only the runs this filter expression keeps: their findings and, with --parquet, their rows of "
        "every table (docs/filter.md; as for ls --where)",
    )
    audit.add_argument("--task-store", metavar="URL", help="fill runs.task_state from this task store")
    audit.add_argument("--turn-store", metavar="URL", help="add this turn-checkpoint store's findings (see 'turns')")
    add_stuck_after(audit, "with --turn-store: see 'turns'")
    add_prices(audit, "add cost columns to runs and responses (--parquet) and a no_price finding per unpriced run")
    audit.set_defaults(handler=_command("cmd_audit"))

    turns = command(
        "turns",
        "analyse a turn-checkpoint store: calls requested or uncertain, records stuck in a phase or waiting for an "
        "acknowledgement, owner-index problems; findings are data, not failures",
    )
    turns.add_argument(
        "store",
        metavar="STORE",
        help="an agent-harness-go state directory, blobs:DIR, or nats://host:port/BUCKET[?prefix=...]",
    )
    add_stuck_after(turns, "how long a record may stay in one phase or wait for its acknowledgement (90s, 30m, 2h...)")
    add_fail_on(turns)
    turns.set_defaults(handler=_command("cmd_turns"))

    tasks = command(
        "tasks",
        "list the fisk-ai task records of a task store: state, request kind, times, outcome (answered, error, "
        "waiting) told by the result message; records the runtime cannot read are findings, not failures",
    )
    tasks.add_argument("store", metavar="STORE", help="a fisk-ai task directory or nats://host:port/BUCKET")
    add_fail_on(tasks)
    tasks.set_defaults(handler=_command("cmd_tasks"))

    compare = command(
        "compare",
        "compare two listings (typically a directory and a JetStream stream) run by run; each difference is "
        "classified by cause: documented, summary_rule (both expected), discrepancy, or a run missing on one side "
        "(the table names the side; --json says missing_a or missing_b)",
    )
    compare.add_argument("source_a", metavar="SOURCE_A")
    compare.add_argument("source_b", metavar="SOURCE_B")
    compare.add_argument(
        "--fail-on",
        choices=["discrepancy", "missing"],
        help="exit 1 if a discrepancy exists ('missing': also a run listed on one side only)",
    )
    compare.add_argument(
        "--wide",
        action="store_true",
        help="whole run ids and each explanation on one line (the table fits the terminal, or 120 columns off one)",
    )
    compare.set_defaults(handler=_command("cmd_compare"))

    migrate = command(
        "migrate",
        "copy journals between backends with their bytes unchanged, then verify; a journal that cannot be "
        "copied faithfully is refused and named on stderr; exit 1 if any was refused or verification failed",
    )
    migrate.add_argument("source", metavar="SOURCE")
    migrate.add_argument("dest", metavar="DEST")
    migrate.add_argument(
        "--skip-invalid",
        action="store_true",
        help="exit 0 although journals the runtime would refuse were left behind (a failed verification or a "
        "destination holding different records still exits 1)",
    )
    migrate.set_defaults(handler=_command("cmd_migrate"))

    gate = command(
        "gate",
        "the runtime's resume decision for a candidate configuration; the verdict is printed either way, exit 1 "
        "when the run may not be resumed",
    )
    gate.add_argument("targets", nargs="+", metavar="[SOURCE] RUN")
    gate.add_argument(
        "--config",
        required=True,
        metavar="FILE",
        help="JSON file: the candidate's fingerprint fields (provider, model, system as the list of system "
        "blocks or system_hash, tools_hash, thinking_mode, reasoning_effort, max_tokens, max_iterations) and "
        "interactive; its JSON Schema: journaltools schema --input gate-config",
    )
    gate.add_argument(
        "--force", action="store_true", help="accept a changed model, system prompt, thinking mode or effort"
    )
    gate.add_argument("--follow-up", action="store_true", help="a new prompt follows: a completed run may resume")
    gate.set_defaults(handler=_command("cmd_gate"))

    answer = command("answer", "answer a deferred call with one tool_result record, as the runtime's supply path does")
    answer.add_argument("targets", nargs="+", metavar="[SOURCE] RUN CALL_ID")
    answer.add_argument("--result", required=True, type=text_value, metavar="TEXT", help="the result text")
    answer.add_argument("--is-error", action="store_true", help="mark the result as an error")
    answer.set_defaults(handler=_command("cmd_answer"))

    grep = command(
        "grep",
        "find text in every run: prompts, user and assistant messages, thinking, tool inputs (their raw JSON) and "
        "tool results; one line per matching text (run, seq, where, call, a snippet around the first match)",
    )
    grep.add_argument(
        "pattern",
        type=text_value,
        metavar="SOURCE|PATTERN",
        help="the text to find (a regular expression with -E); a source may come first, as in every command",
    )
    grep.add_argument("sources", nargs="*", metavar="SOURCE|PATTERN")
    grep.add_argument("-i", "--ignore-case", action="store_true", help="fold case as Unicode does (É matches é)")
    grep.add_argument("-E", "--regex", action="store_true", help="PATTERN is an RE2 regular expression")
    grep.add_argument(
        "--where",
        action="append",
        type=text_value,
        metavar="PLACE[,PLACE...]",
        help="only these texts: prompt, user, assistant, thinking, tool_input, tool_result (may be given again)",
    )
    grep.add_argument(
        "--context",
        type=non_negative_int,
        default=40,
        metavar="N",
        help="characters of the snippet each side of the first match (default 40)",
    )
    grep.set_defaults(handler=_handler("journaltools.cli._more", "cmd_grep"))

    diff = command(
        "diff",
        "compare two runs (SOURCE RUN_A RUN_B), one run in two sources (SOURCE_A RUN SOURCE_B RUN: a file and "
        "its JetStream copy, say) or two process runs of one run (SOURCE RUN --segments I J): the fingerprint "
        "and what the resume gate says of B's for A, the first call where they diverge, tokens and times per "
        "turn, calls only in one",
    )
    diff.add_argument("targets", nargs="*", metavar="[SOURCE] RUN_A RUN_B")
    diff.add_argument(
        "--cohort",
        action="append",
        metavar="EXPR",
        help="compare two sets of runs of SOURCE instead (give it twice: A, then B; each a filter expression as "
        "ls --where takes it): endings and their shares, tool calls and errors by tool, tokens and wall clock per "
        "run (median and p90), findings by code, and the runs that moved most",
    )
    diff.add_argument(
        "--segments",
        nargs=2,
        type=segment_number,
        metavar=("I", "J"),
        help="compare process runs I and J of one run (numbered from 0, as show and the segments table number them)",
    )
    diff.add_argument("--lenient", action="store_true", help="fold past problems instead of refusing a journal")
    diff.set_defaults(handler=_handler("journaltools.cli._more", "cmd_diff"))

    report = command(
        "report",
        "write one run as one self-contained HTML file to read offline or send on: why it ended or what it waits "
        "for (its pending calls), the timeline of its turns and tool calls with their durations (none for an "
        "undated August journal), its process runs, its findings and its conversation in pages, in light and dark. "
        "Nothing in it reaches the network, journal text is escaped, the conversation token is never in it. The "
        f"file stays under --max-size (default {REPORT_MAX_SIZE_TEXT}): a value over 20,000 characters is cut "
        "with a note saying how many more it had, and messages past the bound are left out with a note naming the "
        "seq to read on from (show --from-seq). RUN may be left out when SOURCE is one journal file. With --all, "
        "every run of SOURCE as one offline site: -o DIR gets index.html (every run with its status, why it "
        "stopped, prompt, tokens and times, status chips and a search box) and each run's report in DIR/runs/, "
        "linked both ways, with deep links to a message (runs/RUN.html#seq-12); --zip makes it one .zip",
        json_flag=False,
    )
    report.add_argument("targets", nargs="*", metavar="[SOURCE] [RUN]")
    report.add_argument(
        "-o",
        "--output",
        required=True,
        type=output_path,
        metavar="FILE",
        help="the HTML file to write (replaced; - for standard output); with --all the site's folder, or with "
        "--zip the .zip file",
    )
    report.add_argument("--all", action="store_true", help="every run of SOURCE as one offline site (see above)")
    report.add_argument("--zip", action="store_true", help="with --all: write the site as one .zip file")
    report.add_argument(
        "--max-size",
        type=byte_size,
        default=REPORT_MAX_SIZE_TEXT,
        metavar="SIZE",
        help=f"the file's size bound in bytes, or with k or M (default {REPORT_MAX_SIZE_TEXT}; at least 200k)",
    )
    report.add_argument(
        "--strict",
        action="store_true",
        help="refuse a journal the runtime would refuse, instead of reporting it as far as it reads (invalid)",
    )
    add_prices(report, "add the run's cost and each model turn's, as the notebook's conversation shows them")
    report.set_defaults(handler=_handler("journaltools.cli._report", "cmd_report"))

    from journaltools.cli._export import EXPORT_HELP, add_export_arguments

    export = command("export", EXPORT_HELP, json_flag=False)
    add_export_arguments(export)
    export.set_defaults(handler=_handler("journaltools.cli._export", "cmd_export"))

    samples = command("samples", "write the sample journals into a directory", json_flag=False)
    samples.add_argument("directory", type=output_path, metavar="DIR")
    samples.set_defaults(handler=_command("cmd_samples"))

    schema = command(
        "schema",
        "print a JSON Schema: by default the records' (what journaltools checks records with); --input NAME for a "
        "file or URL you write, --output NAME for a command's --json document",
        json_flag=False,
    )
    which = schema.add_mutually_exclusive_group()
    which.add_argument("--input", choices=INPUT_NAMES, metavar="NAME", help=f"one of: {', '.join(INPUT_NAMES)}")
    which.add_argument("--output", choices=OUTPUT_NAMES, metavar="NAME", help=f"one of: {', '.join(OUTPUT_NAMES)}")
    schema.set_defaults(handler=_command("cmd_schema"))
    return parser
