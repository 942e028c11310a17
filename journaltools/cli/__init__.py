"""The ``journaltools`` command line: a thin layer that parses arguments, calls the library and turns
``JournalError`` into exit status 1 with one line on stderr (docs/interfaces.md).

Exit status: 0 success; 1 the request was refused or failed; 2 bad usage (``InvalidSource`` too: a source
that cannot be one as written, such as a port out of range). Whatever happens, stderr gets one line per
problem and never a traceback; ``--debug`` adds the traceback of an unexpected error. Human-readable output
shows journal content's control characters escaped (``for_terminal``); ``--json`` output is exact JSON.

``meta.conversation_token`` is a credential: nothing here ever reads it, so no output can hold it.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
from collections.abc import Sequence
from datetime import timedelta

from journaltools._terminal import for_terminal
from journaltools.backends.oserrors import storage_error
from journaltools.cli._commands import (
    cmd_answer,
    cmd_audit,
    cmd_compare,
    cmd_gate,
    cmd_ls,
    cmd_migrate,
    cmd_samples,
    cmd_schema,
    cmd_tasks,
    cmd_turns,
)
from journaltools.cli._output import UsageError
from journaltools.cli._show import cmd_show
from journaltools.errors import InvalidSource, JournalError, install_warning_format
from journaltools.models import INPUT_NAMES, OUTPUT_NAMES

# -- the parser --------------------------------------------------------------------------------------------------


def _version() -> str:
    """The installed distribution's version (the package's own when it runs from a source tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("journaltools")
    except PackageNotFoundError:
        from journaltools import __version__

        return __version__


def _add_stuck_after(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--stuck-after``, the same option (and default) for ``audit --turn-store`` and ``turns``."""
    parser.add_argument(
        "--stuck-after", type=_duration, default="1h", metavar="DURATION", help=f"{help_text} (default 1h)"
    )


def _duration(text: str) -> timedelta:
    """An argparse type: a bad duration is bad usage (exit 2), said by argparse."""
    from journaltools.turnjournal.analysis import parse_duration

    try:
        return parse_duration(text)
    except JournalError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


SOURCES_HELP = (
    "SOURCE is a directory of <id>.json journals (the runtime's layout), file:///path, one journal file (<id>.json, "
    "<id>.json.gz, <id>.json.zst), a quoted glob ('runs/*.json'), nats://host:port/STREAM (an existing stream, "
    "bound as the runtime binds it; ?create=1 creates it), 'embedded' (a throwaway local server) or embedded:DIR "
    "(a local server keeping its data in DIR). With no SOURCE, the runtime's own directory is read: "
    "$XDG_STATE_HOME/fisk-ai/runs, else ~/.local/state/fisk-ai/runs."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="journaltools",
        description="Read, fold, audit and compare the run journals of the fisk-ai agent runtime "
        "(runstate version 3, in files or NATS JetStream).",
        epilog=SOURCES_HELP,
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    parser.add_argument("--version", action="version", version=f"journaltools {_version()}")
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
    ls.set_defaults(handler=cmd_ls)

    show = command(
        "show",
        "fold one run and show its conversation, pending calls, open deferrals, counters, segments and resume "
        "position; RUN may be left out when SOURCE is one journal file",
    )
    show.add_argument("targets", nargs="*", metavar="[SOURCE] [RUN]")
    show.add_argument("--lenient", action="store_true", help="fold past problems and list them instead of refusing")
    show.add_argument(
        "--anthropic", action="store_true", help="show the messages as Anthropic Messages API input instead"
    )
    show.set_defaults(handler=cmd_show)

    audit = command(
        "audit",
        "check every record and run of one or more sources; findings are data, not failures. Given one file "
        "source and one JetStream source, also compare their listings (listing_* findings)",
    )
    audit.add_argument("sources", nargs="*", metavar="SOURCE")
    audit.add_argument("--fail-on", choices=["error", "warning"], help="exit 1 if a finding this severe exists")
    audit.add_argument("--parquet", metavar="DIR", help="write runs, segments, messages, tool_calls and findings")
    audit.add_argument("--records", action="store_true", help="with --parquet: write the records table too")
    audit.add_argument("--quiet", action="store_true", help="no progress bar")
    audit.add_argument("--task-store", metavar="URL", help="fill runs.task_state from this task store")
    audit.add_argument("--turn-store", metavar="URL", help="add this turn-checkpoint store's findings (see 'turns')")
    _add_stuck_after(audit, "with --turn-store: see 'turns'")
    audit.set_defaults(handler=cmd_audit)

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
    _add_stuck_after(turns, "how long a record may stay in one phase or wait for its acknowledgement (90s, 30m, 2h...)")
    turns.add_argument("--fail-on", choices=["error", "warning"], help="exit 1 if a finding this severe exists")
    turns.set_defaults(handler=cmd_turns)

    tasks = command(
        "tasks",
        "list the fisk-ai task records of a task store: state, request kind, times, outcome (answered, error, "
        "waiting) told by the result message; records the runtime cannot read are findings, not failures",
    )
    tasks.add_argument("store", metavar="STORE", help="a fisk-ai task directory or nats://host:port/BUCKET")
    tasks.add_argument("--fail-on", choices=["error", "warning"], help="exit 1 if a finding this severe exists")
    tasks.set_defaults(handler=cmd_tasks)

    compare = command(
        "compare",
        "compare two listings (typically a directory and a JetStream stream) run by run; each difference is "
        "classified by cause: documented, summary_rule (both expected), discrepancy, missing_a or missing_b",
    )
    compare.add_argument("source_a", metavar="SOURCE_A")
    compare.add_argument("source_b", metavar="SOURCE_B")
    compare.add_argument(
        "--fail-on",
        choices=["discrepancy", "missing"],
        help="exit 1 if a discrepancy exists ('missing': also a run listed on one side only)",
    )
    compare.set_defaults(handler=cmd_compare)

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
    migrate.set_defaults(handler=cmd_migrate)

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
    gate.set_defaults(handler=cmd_gate)

    answer = command("answer", "answer a deferred call with one tool_result record, as the runtime's supply path does")
    answer.add_argument("targets", nargs="+", metavar="[SOURCE] RUN CALL_ID")
    answer.add_argument("--result", required=True, metavar="TEXT", help="the result text")
    answer.add_argument("--is-error", action="store_true", help="mark the result as an error")
    answer.set_defaults(handler=cmd_answer)

    samples = command("samples", "write the sample journals into a directory", json_flag=False)
    samples.add_argument("directory", metavar="DIR")
    samples.set_defaults(handler=cmd_samples)

    schema = command(
        "schema",
        "print a JSON Schema: by default the records' (what journaltools checks records with); --input NAME for a "
        "file or URL you write, --output NAME for a command's --json document",
        json_flag=False,
    )
    which = schema.add_mutually_exclusive_group()
    which.add_argument("--input", choices=INPUT_NAMES, metavar="NAME", help=f"one of: {', '.join(INPUT_NAMES)}")
    which.add_argument("--output", choices=OUTPUT_NAMES, metavar="NAME", help=f"one of: {', '.join(OUTPUT_NAMES)}")
    schema.set_defaults(handler=cmd_schema)
    return parser


def _fail(args: argparse.Namespace, message: str, status: int, *, trace: bool = False) -> int:
    if args.debug and trace:
        traceback.print_exc()
    print(f"journaltools {args.command}: {for_terminal(message, newlines=False)}", file=sys.stderr)
    return status


def _quiet_streams() -> None:
    """Show what cannot be encoded escaped rather than failing (a terminal that is not UTF-8, say)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    install_warning_format(f"journaltools {args.command}")  # a journaltools warning is one line
    _quiet_streams()
    try:
        return int(args.handler(args))
    except (UsageError, InvalidSource) as exc:
        return _fail(args, str(exc), 2)
    except JournalError as exc:
        return _fail(args, str(exc), 1)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep the interpreter's final flush quiet too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return _fail(args, "interrupted", 130)
    except OSError as exc:  # a path no backend maps: still one line naming it
        return _fail(args, str(storage_error(exc, exc.filename or "?", f"complete {args.command}")), 1)
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        hint = "" if args.debug else "; run it again with --debug for the traceback"
        return _fail(args, f"unexpected error: {detail}{hint}, and please report it", 1, trace=True)


if __name__ == "__main__":
    sys.exit(main())
