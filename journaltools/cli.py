"""The ``journaltools`` command line: a thin layer that parses arguments, calls the library and
turns ``JournalError`` into exit status 1 with the message on stderr (INTERFACES.md).

Exit status: 0 success; 1 the request was refused or failed; 2 bad usage (``InvalidSource`` too: a source
that cannot be one as written, such as a port out of range). Whatever happens, stderr gets one line per
problem and never a traceback; ``--debug`` adds the traceback of an unexpected error. Human-readable output
shows journal content's control characters escaped (``for_terminal``); ``--json`` output is exact JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

from journaltools._terminal import for_terminal
from journaltools.backends.base import Backend
from journaltools.backends.oserrors import storage_error
from journaltools.backends.registry import open_source
from journaltools.backends.scan import DEFAULT_MAX_LINE_BYTES
from journaltools.errors import FoldError, InvalidSource, JournalError
from journaltools.fold import fold, text_of
from journaltools.listing import status_of_fold
from journaltools.protocol.findings import Finding


def _emit_json(document: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], wide: Sequence[str] = ()) -> None:
    """A plain aligned table; cells are cut at 60 characters except in the ``wide`` columns (put those last)."""

    def cell(value: Any, column: str) -> str:
        text = "-" if value is None else str(value)
        text = for_terminal(text.replace("\n", " "), newlines=False)
        return text if len(text) <= 60 or column in wide else text[:57] + "..."

    cells = [[cell(row.get(column), column) for column in columns] for row in rows]
    widths = [max([len(column)] + [len(line[i]) for line in cells]) for i, column in enumerate(columns)]
    print("  ".join(column.upper().ljust(width) for column, width in zip(columns, widths, strict=True)).rstrip())
    for line in cells:
        print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())


def _say(text: str = "") -> None:
    """Print a line of human-readable output that may hold journal content (newlines kept, controls escaped)."""
    print(for_terminal(text))


def _note(command: str, text: str) -> None:
    """One line on stderr: a warning or a finding worth seeing even with ``--json``."""
    print(f"journaltools {command}: {for_terminal(text, newlines=False)}", file=sys.stderr)


def _open(url: str, command: str, *, create: bool = False) -> Backend:
    """``open_source``, saying so when ``embedded`` is a throwaway server that lives only for this command."""
    if url == "embedded":
        what = "the data ends with this command" if create else "it starts empty in every command"
        _note(command, f"warning: 'embedded' is a throwaway server: {what}; use embedded:DIR to keep the data in DIR")
    return open_source(url, create=create)


#: Beyond this many, files that are merely not journals are summed up in one line (``audit`` lists each).
NOT_JOURNALS_SHOWN = 5


def _note_findings(command: str, findings: Sequence[Finding]) -> None:
    minor = [finding for finding in findings if finding.severity == "info"]
    for finding in findings:
        if finding.severity != "info" or len(minor) <= NOT_JOURNALS_SHOWN:
            _note(command, f"{finding.severity}: {finding.code}: {finding.message}")
    if len(minor) > NOT_JOURNALS_SHOWN:
        first = minor[0].message.partition(":")[0]
        _note(
            command,
            f"info: {len(minor)} entries (such as {first}) are not journals and were not read; audit lists them",
        )


def cmd_ls(args: argparse.Namespace) -> int:
    rows = []
    several = len(args.sources) > 1
    for url in args.sources:
        with _open(url, "ls") as backend:
            _note_findings("ls", backend.source_findings())
            for summary in backend.listing():
                _note_findings("ls", summary.findings)
                rows.append({**summary.to_json(), "source": backend.url} if several else summary.to_json())
    if args.json:
        _emit_json(rows)
    else:
        print_table(
            rows, ["run", "status", "created", "last_seq", "records", "model", *(["source"] if several else [])]
        )
    return 0


def _ending_text(document: dict[str, Any]) -> str | None:
    end = document.get("end_reason")
    if end is None:
        return None
    if end["kind"] == "error":
        return f"ended by a fatal {end['where']} error at seq {end['seq']}: {end['message']}"
    return f"cancelled by {end['by']} at seq {end['seq']}: {end['reason']}"


def _print_conversation(document: dict[str, Any]) -> None:
    fold_status = document.get("fold_status")
    says = f" (read leniently, the fold says {fold_status})" if fold_status not in (None, document["status"]) else ""
    _say(f"run {document['run']}: {document['status']}{says}")
    ending = _ending_text(document)
    if ending is not None:
        _say(ending)
    if document.get("stop_reason") is not None:
        _say(f"last stop reason: {document['stop_reason']}")
    counters = ", ".join(f"{key} {value}" for key, value in document["counters"].items())
    _say(f"counters: {counters}")
    resume = document["resume"]
    _say(f"resume: last seq {resume['last_seq']}, waiting for {resume['waiting_for'] or 'nothing'}")
    for index, message in enumerate(document["messages"]):
        content = message["content"]
        _say(f"\n[{index}] {message['role']}")
        if isinstance(content, str):
            _say(f"  {content}")
            continue
        for block in content:
            if block["type"] == "text":
                _say(f"  {block['text']}")
            elif block["type"] == "tool_use":
                _say(f"  -> {block['name']}({json.dumps(block['input'])}) [{block['id']}]")
            elif block["type"] == "tool_result":
                flag = " (error)" if block.get("is_error") else ""
                _say(f"  <- {block['tool_use_id']}{flag}: {text_of(block['content'])}")
    for call in document["pending"]:
        state = f"deferred ({call['deferred']})" if call["deferred"] else "not yet run"
        if call["approval"]:
            state += f", {call['approval']}d"
        _say(f"\npending: {call['name']}({json.dumps(call['input'])}) [{call['id']}]: {state}")


def cmd_show(args: argparse.Namespace) -> int:
    with _open(args.source, "show") as backend:
        read = backend.read_run(args.run, strict=not args.lenient)
    try:
        result = fold(read.records, strict=not args.lenient, run=args.run)
    except FoldError as error:
        # "No records" alone hides why when the reader dropped the journal's only line as a torn tail.
        dropped = next((finding for finding in read.findings if finding.code == "torn_tail"), None)
        if error.code != "empty_journal" or dropped is None:
            raise
        raise FoldError(error.run, error.seq, error.code, f"{error.rule}: {dropped.message}") from None
    document = result.to_json()
    if args.lenient:
        # ``status`` is what ``ls`` says of the run; the lenient fold's own verdict stays beside it.
        refused = not read.complete or any(finding.severity == "error" for finding in read.findings)
        document["fold_status"] = document["status"]
        document["status"] = "invalid" if refused else status_of_fold(result)
        document["findings"] = [finding.to_json() for finding in read.findings + result.findings]
    if args.json:
        _emit_json(document)
    else:
        _print_conversation(document)
        for finding in document.get("findings", []):
            seq = "-" if finding["seq"] is None else finding["seq"]
            _say(f"{finding['severity']}: seq {seq}: {finding['code']}: {finding['message']}")
    return 0


class _StreamedFindings:
    """An audit's findings printed as they come, so memory stays flat however many there are: one JSON array
    written element by element, or an aligned table (lines in a fixed layout past ``TABLE_LIMIT``)."""

    TABLE_LIMIT = 10_000
    COLUMNS = ("run", "seq", "code", "severity", "message")

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.count = 0
        self._held: list[dict[str, Any]] | None = []

    def add(self, finding: Finding) -> None:
        row = finding.to_json()
        self.count += 1
        if self.as_json:
            prefix = b"[\n  " if self.count == 1 else b",\n  "
            sys.stdout.buffer.write(prefix + orjson.dumps(row))
            return
        if self._held is not None:
            self._held.append(row)
            if len(self._held) <= self.TABLE_LIMIT:
                return
            held, self._held = self._held, None
            for early in held:
                self._line(early)
            return
        self._line(row)

    def _line(self, row: dict[str, Any]) -> None:
        cells = ["-" if row[c] is None else str(row[c]) for c in self.COLUMNS]
        print(for_terminal("  ".join(cells).replace("\n", " "), newlines=False))

    def finish(self) -> None:
        if self.as_json:
            sys.stdout.buffer.write(b"[]\n" if self.count == 0 else b"\n]\n")
            sys.stdout.flush()
        elif self._held is not None:
            print_table(self._held, list(self.COLUMNS), wide=["message"])


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return value


def cmd_audit(args: argparse.Namespace) -> int:
    from journaltools.audit import audit_sources

    printer = _StreamedFindings(args.json)
    result = audit_sources(
        args.sources,
        parquet=args.parquet,
        include_records=args.records,
        quiet=args.quiet,
        max_line_bytes=args.max_line_bytes,
        keep_findings=False,
        on_finding=printer.add,
        task_store=args.task_store,
        turn_store=args.turn_store,
        stuck_after=args.stuck_after,
    )
    printer.finish()
    if not args.json:
        print(f"\n{result.runs} runs, {result.records} records, {printer.count} findings", file=sys.stderr)
    if args.parquet and not args.quiet:
        print(f"Parquet tables written to {args.parquet}", file=sys.stderr)
    if args.fail_on and result.fails(args.fail_on):
        return 1
    return 0


def cmd_turns(args: argparse.Namespace) -> int:
    from journaltools.protocol.findings import at_least
    from journaltools.turnjournal.analysis import audit_turns

    result = audit_turns(args.store, stuck_after=args.stuck_after)
    document = result.to_json()
    if args.json:
        _emit_json(document)
    else:
        columns = ["workspace_id", "task_id", "revision", "code", "severity", "message"]
        print_table(document["findings"], columns, wide=["message"])
        print(
            f"\n{document['records']} records ({document['active']} active), {document['tool_calls']} tool calls, "
            f"{len(document['findings'])} findings",
            file=sys.stderr,
        )
    if args.fail_on and any(at_least(finding.severity, args.fail_on) for finding in result.turn_findings):
        return 1
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from journaltools.protocol.findings import at_least
    from journaltools.tasks.analysis import audit_tasks

    result = audit_tasks(args.store)
    document = result.to_json()
    if args.json:
        _emit_json(document)
    else:
        columns = ["id", "state", "request_kind", "submitted", "completed", "seconds_to_answer", "outcome", "error"]
        rows = [row if row["valid"] else {**row, "id": row["key"], "state": "unreadable"} for row in document["tasks"]]
        print_table(rows, columns, wide=["error"])
        for finding in result.findings:
            _note("tasks", f"{finding.severity}: {finding.code}: {finding.message}")
        print(f"\n{len(rows)} task records, {len(result.findings)} findings", file=sys.stderr)
    if args.fail_on and any(at_least(finding.severity, args.fail_on) for finding in result.findings):
        return 1
    return 0


def _config_problem(config: Any) -> str | None:
    """Why a candidate configuration cannot be gated, or None (a fingerprint plus ``system``, ``reminder``)."""
    if not isinstance(config, dict):
        return "must be a JSON object of fingerprint fields plus 'system'"
    if "system" in config and not isinstance(config["system"], str):
        return "'system' must be the system prompt as text"
    if "reminder" in config and not isinstance(config["reminder"], str):
        return "'reminder' must be text (it is appended to the prompt for the runner, never compared)"
    tools = config.get("tools", {})
    if not isinstance(tools, dict) or not all(isinstance(v, str) for v in tools.values()):
        return "'tools' must be an object of tool name -> sha256 of its schema"
    if not isinstance(config.get("budget", {}), dict):
        return "'budget' must be an object (max_turns, max_tokens, max_cost_usd)"
    return None


def cmd_gate(args: argparse.Namespace) -> int:
    from journaltools.protocol.fingerprint import resume_gate

    try:
        config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"journaltools gate: cannot read --config {args.config}: {exc}", file=sys.stderr)
        return 2
    problem = _config_problem(config)
    if problem is not None:
        print(f"journaltools gate: --config {args.config}: {problem}", file=sys.stderr)
        return 2
    with _open(args.source, "gate") as backend:
        read = backend.read_run(args.run)
    folded = fold(read.records, run=args.run)
    assert folded.meta is not None  # a strict fold of a non-empty journal has its meta
    gate = resume_gate(folded.meta.fingerprint, config, folded, override_blocking=args.override_blocking)
    document = gate.to_json()
    if args.json:
        _emit_json(document)
    else:
        _say(f"run {args.run}: {'resumable' if gate.resumable else 'NOT resumable'}")
        print_table(
            [
                {**row, "stored": json.dumps(row["stored"]), "candidate": json.dumps(row["candidate"])}
                for row in document["fields"]
            ],
            ["field", "class", "verdict", "stored", "candidate", "why"],
        )
        if gate.system is not None:
            reminder = len(config.get("reminder") or "")
            print(
                f"system prompt for the runner: {len(gate.system)} characters "
                f"(the prompt, then a reminder of {reminder} characters, which no verdict depends on)"
            )
    if gate.resumable:
        return 0
    refused = "; ".join(f"{field.field}: {field.why}" for field in gate.fields if field.verdict == "refused")
    _note("gate", f"run {args.run!r} is not resumable: {refused}")
    return 1


def cmd_answer(args: argparse.Namespace) -> int:
    from journaltools.ops.answer import answer_call

    with _open(args.source, "answer") as backend:
        answered = answer_call(backend, args.run, args.call_id, args.result, is_error=args.is_error)
    if args.json:
        _emit_json(answered.to_json())
    else:
        _say(f"run {answered.run}: call {answered.call} answered at seq {answered.seq}")
    return 0


def cmd_samples(args: argparse.Namespace) -> int:
    from journaltools.samples import write_samples

    runs = write_samples(args.directory)
    print(f"wrote {len(runs)} sample journals to {args.directory}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from journaltools.protocol.records import record_json_schema

    _emit_json(record_json_schema())
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from journaltools.ops.migrate import migrate

    with _open(args.source, "migrate") as source, _open(args.dest, "migrate", create=True) as dest:
        report = migrate(source, dest)
    if args.json:
        _emit_json(report.to_json())
    else:
        print(
            f"migrated {report.runs} runs, {report.records} records ({report.copied} copied, "
            f"{report.skipped} already there); verified: {'yes' if report.verified else 'NO'}"
        )
    # Refusals and failed verifications go to stderr in both modes: --json keeps stdout one document.
    for refusal in report.refused:
        word = "skipped" if args.skip_invalid and refusal.invalid_source else "refused"
        _note("migrate", f"{word} {refusal.run}: {refusal.code}: {refusal.message}")
    for run, message in report.mismatches:
        _note("migrate", f"verification failed for {run}: {message}")
    return 1 if report.failed(skip_invalid=args.skip_invalid) else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from journaltools.compare import FAIL_ON, compare_listings, comparison_rows

    with _open(args.source_a, "compare") as a, _open(args.source_b, "compare") as b:
        # Name the sides by backend kind; two sources of one kind go by their URLs.
        label_a, label_b = (a.kind, b.kind) if a.kind != b.kind else (a.url, b.url)
        table = compare_listings(a.listing(), b.listing(), label_a=label_a, label_b=label_b)
    rows = comparison_rows(table)
    if args.json:
        _emit_json(rows)
    else:
        print_table(rows, ["run", "status_a", "status_b", "verdict", "explanation"], wide=["explanation"])
    failing = [row["run"] for row in rows if args.fail_on and row["verdict"] in FAIL_ON[args.fail_on]]
    if failing:
        shown = ", ".join(failing[:10]) + (f" and {len(failing) - 10} more" if len(failing) > 10 else "")
        _note("compare", f"{len(failing)} run(s) fail --fail-on {args.fail_on}: {shown}")
        return 1
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="journaltools",
        description="Read, fold, audit and compare append-only agent-run journals (files or NATS JetStream).",
        epilog="SOURCE is a directory, file:///path, a journal file (run.jsonl, .jsonl.gz, .jsonl.zst), a quoted glob "
        "('logs/2026-*/*.jsonl'), nats://host:port/STREAM, 'embedded' (a throwaway local server) or embedded:DIR "
        "(a local server keeping its data in DIR).",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    parser.add_argument("--version", action="version", version=f"journaltools {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, json_flag: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if json_flag:
            sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        return sub

    ls = command(
        "ls",
        "list the runs of one or more sources (file: fold every run; JetStream: two-record summary); with several "
        "sources each row also names its source",
    )
    ls.add_argument("sources", nargs="+", metavar="SOURCE")
    ls.set_defaults(handler=cmd_ls)

    show = command("show", "fold one run and show its conversation, pending calls, counters and resume position")
    show.add_argument("source")
    show.add_argument("run")
    show.add_argument("--lenient", action="store_true", help="fold past problems and list them instead of refusing")
    show.set_defaults(handler=cmd_show)

    audit = command(
        "audit",
        "validate every record and run of one or more sources; findings are data, not failures. Given one file "
        "source and one JetStream source, also compare their listings (listing_* findings)",
    )
    audit.add_argument("sources", nargs="+", metavar="SOURCE")
    audit.add_argument("--fail-on", choices=["error", "warning"], help="exit 1 if a finding this severe exists")
    audit.add_argument("--parquet", metavar="DIR", help="write runs, messages, tool_calls and findings as Parquet")
    audit.add_argument("--records", action="store_true", help="with --parquet: write the records table too")
    audit.add_argument("--quiet", action="store_true", help="no progress bar")
    audit.add_argument(
        "--max-line-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help="a longer line is a line_too_long finding, skipped unread (default 64 MiB)",
    )
    audit.add_argument("--task-store", metavar="URL", help="fill runs.task_state from this task store")
    audit.add_argument("--turn-store", metavar="URL", help="add this turnjournal store's findings (see 'turns')")
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
        "compare two listings (typically file vs JetStream) run by run; each difference is classified by cause: "
        "documented, summary_rule (both expected), discrepancy, missing_a or missing_b",
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
        "copy runs between backends with record bytes unchanged (records that break the schema included), then "
        "verify; a journal that cannot be copied faithfully is refused and named on stderr; exit 1 if any run "
        "was refused or verification failed",
    )
    migrate.add_argument("source")
    migrate.add_argument("dest")
    migrate.add_argument(
        "--skip-invalid",
        action="store_true",
        help="exit 0 although invalid source journals were refused (a failed verification or a destination "
        "holding different records still exits 1)",
    )
    migrate.set_defaults(handler=cmd_migrate)

    gate = command(
        "gate",
        "the resume gate for a candidate configuration; the verdict is printed either way, exit 1 when the run "
        "is not resumable",
    )
    gate.add_argument("source")
    gate.add_argument("run")
    gate.add_argument(
        "--config",
        required=True,
        help="JSON file: the fingerprint fields, 'system' as plain text and an optional 'reminder' (appended to "
        "the prompt for the runner, never compared)",
    )
    gate.add_argument("--override-blocking", action="store_true", help="accept changed blocking (sampling) fields")
    gate.set_defaults(handler=cmd_gate)

    answer = command("answer", "answer a deferred call with one tool_result record")
    answer.add_argument("source")
    answer.add_argument("run")
    answer.add_argument("call_id", metavar="CALL_ID")
    answer.add_argument("--result", required=True, help="the result text")
    answer.add_argument("--is-error", action="store_true", help="mark the result as an error")
    answer.set_defaults(handler=cmd_answer)

    samples = command("samples", "write the sample journals into a directory", json_flag=False)
    samples.add_argument("directory", metavar="DIR")
    samples.set_defaults(handler=cmd_samples)

    schema = command("schema", "print the JSON Schema of the records", json_flag=False)
    schema.set_defaults(handler=cmd_schema)
    return parser


def _fail(args: argparse.Namespace, message: str, status: int) -> int:
    if args.debug:
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
    _quiet_streams()
    try:
        return int(args.handler(args))
    except InvalidSource as exc:
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
    except OSError as exc:  # a path no backend maps (a --config file, say): still one line naming it
        return _fail(args, str(storage_error(exc, exc.filename or "?", f"complete {args.command}")), 1)
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        hint = "" if args.debug else "; run it again with --debug for the traceback"
        return _fail(args, f"unexpected error: {detail}{hint}, and please report it", 1)


if __name__ == "__main__":
    sys.exit(main())
