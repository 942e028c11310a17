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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from journaltools._terminal import for_terminal
from journaltools.backends.oserrors import storage_error
from journaltools.backends.registry import open_source
from journaltools.errors import FoldError, InvalidSource, JournalError
from journaltools.folding import FoldResult, fold
from journaltools.folding.state import COUNTER_NAMES
from journaltools.protocol.blocks import Block
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.findings import Finding

if TYPE_CHECKING:
    from journaltools.backends.base import Backend, RunRead


class UsageError(Exception):
    """Bad usage found after parsing (a run that must be named, a bad ``--config``): exit 2, one line."""


# -- output ------------------------------------------------------------------------------------------------------


def _emit_json(document: Any) -> None:
    # msgspec, not the json module: the journal's raw JSON (tool inputs, provider blocks) is spliced in as the
    # runtime wrote it, so a number like 1e3 or an integer beyond 64 bits keeps its spelling.
    encoded = msgspec.json.encode(document)
    try:
        text = msgspec.json.format(encoded, indent=2)
    except RecursionError:
        # msgspec's formatter recurses (about 1,000 levels); a tool input the runtime accepts nests up to 10,000.
        # Such a document is written compact: indenting 10,000 levels would write some 400 MB of spaces.
        text = encoded
    sys.stdout.buffer.write(text + b"\n")
    sys.stdout.flush()


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], wide: Sequence[str] = ()) -> None:
    """A plain aligned table; cells are cut at 60 characters except in the ``wide`` columns (put those last)."""

    def cell(value: Any, column: str) -> str:
        text = for_terminal(_text(value), newlines=False)
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


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as every ``--json`` output shows it (``source`` included, unlike ``Finding.to_json``)."""
    return {
        "run": finding.run,
        "seq": finding.seq,
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "source": finding.source,
    }


#: Beyond this many, files that are merely not journals are summed up in one line (``audit`` lists each).
NOT_JOURNALS_SHOWN = 5


def _where(finding: Finding) -> str:
    """``run R seq N: `` for a finding about a journal (the message itself may not name them)."""
    if finding.run is None:
        return ""
    return f"run {finding.run} seq {'-' if finding.seq is None else finding.seq}: "


def _note_findings(command: str, findings: Sequence[Finding]) -> None:
    minor = [finding for finding in findings if finding.severity == "info"]
    for finding in findings:
        if finding.severity != "info" or len(minor) <= NOT_JOURNALS_SHOWN:
            _note(command, f"{finding.severity}: {_where(finding)}{finding.code}: {finding.message}")
    if len(minor) > NOT_JOURNALS_SHOWN:
        _note(command, f"info: {len(minor)} entries are not journals and were not read; audit lists them")


# -- sources -----------------------------------------------------------------------------------------------------


def _default_source() -> str:
    """The runtime's own journal directory: what every command reads when no source is given."""
    from journaltools.backends.registry import default_source

    return str(default_source())


def _open(url: str, command: str, *, create: bool = False) -> Backend:
    """``open_source``, saying so when ``embedded`` is a throwaway server that lives only for this command."""
    if url == "embedded":
        what = "the data ends with this command" if create else "it starts empty in every command"
        _note(command, f"warning: 'embedded' is a throwaway server: {what}; use embedded:DIR to keep the data in DIR")
    return open_source(url, create=create)


def _is_source(text: str) -> bool:
    """Whether a positional argument names a source rather than a run. A run id is one token of letters,
    digits, ``_`` and ``-``; anything with a scheme, a path that exists or a glob is a source."""
    return (
        "://" in text
        or text == "embedded"
        or text.startswith("embedded:")
        or any(char in text for char in "/\\*?[")
        or os.path.lexists(text)
    )


def _source_and_rest(command: str, words: Sequence[str], names: Sequence[str]) -> tuple[str, list[str]]:
    """Split ``[SOURCE] NAME...``: the source is optional (the runtime's directory), the names are not."""
    if len(words) == len(names) + 1:
        return words[0], list(words[1:])
    if len(words) == len(names):
        if words and _is_source(words[0]):
            raise UsageError(f"{words[0]!r} looks like a source; give {' '.join(names)} after it")
        return _default_source(), list(words)
    wanted = " ".join(names)
    raise UsageError(f"expected [SOURCE] {wanted}, got {len(words)} argument(s)")


def _only_run(backend: Backend) -> str:
    """The run of a source holding exactly one (a journal file given alone)."""
    runs = backend.list_runs()
    if len(runs) != 1:
        raise UsageError(f"{backend.url} holds {len(runs)} runs: name the one to show")
    return runs[0]


# -- ls ----------------------------------------------------------------------------------------------------------

#: ``prompt`` is cut to this many characters in the table; ``--json`` carries it whole.
PROMPT_SHOWN = 40


def _shortened(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _listing_rows(sources: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Every source's listing, one row at a time (with ``source`` when there are several)."""
    several = len(sources) > 1
    for url in sources:
        with _open(url, "ls") as backend:
            _note_findings("ls", backend.source_findings())
            for summary in backend.iter_listing():
                _note_findings("ls", summary.findings)
                row = summary.to_json()
                yield {**row, "source": backend.url} if several else row


def _emit_json_array(rows: Iterable[Any]) -> None:
    """A JSON array written element by element as the rows come: ``ls --json`` of a million runs never holds
    them all (each element indented as ``_emit_json`` indents a whole document)."""
    out = sys.stdout.buffer
    separator = b"[\n  "
    for row in rows:
        element = msgspec.json.format(msgspec.json.encode(row), indent=2).replace(b"\n", b"\n  ")
        out.write(separator + element)
        separator = b",\n  "
    out.write(b"[]\n" if separator == b"[\n  " else b"\n]\n")
    out.flush()


def cmd_ls(args: argparse.Namespace) -> int:
    sources = args.sources or [_default_source()]
    several = len(sources) > 1
    if args.json:
        _emit_json_array(_listing_rows(sources))
        return 0
    rows = list(_listing_rows(sources))  # the table's column widths need every row
    shown = [{**row, "prompt": _shortened(row["prompt"], PROMPT_SHOWN)} for row in rows]
    columns = ["run", "status", "created", "updated", "last_seq", "records", "model", "prompt"]
    print_table(shown, [*columns, *(["source"] if several else [])], wide=["prompt", "source"])
    return 0


# -- show --------------------------------------------------------------------------------------------------------


def go_value(value: Any) -> msgspec.Raw:
    """A typed wire value as the exact JSON Go's encoder writes for it: the ``messages`` of ``show --json`` are
    the neutral messages exactly as the runtime serializes them. Raw JSON fields may hold bytes that are not
    UTF-8 (a tool input the runtime kept verbatim); those are shown as U+FFFD, as Go prints them."""
    return _utf8(encode_go_json(value))


def _utf8(encoded: bytes) -> msgspec.Raw:
    try:
        encoded.decode("utf-8")
    except UnicodeDecodeError:
        encoded = encoded.decode("utf-8", "replace").encode()
    return msgspec.Raw(encoded)


def show_document(
    result: FoldResult, read_findings: Sequence[Finding] = (), *, refused: bool = False
) -> dict[str, Any]:
    """The ``show --json`` document of one fold: the runtime's state in snake_case, plus what journaltools
    reads from it (status, segments, pending calls, findings). Never the conversation token.

    ``refused``: the reader refused the journal (lenient reads only), so the status is ``invalid`` whatever
    the fold of the lines that decoded says."""
    state = result.state
    pending = state.pending if state is not None else None
    counters = state.counters.to_json() if state is not None else dict.fromkeys(COUNTER_NAMES, 0)
    return {
        "run": result.run,
        "status": "invalid" if refused else result.status,
        "prompt": state.prompt if state is not None else None,
        "interactive": state.interactive if state is not None else None,
        "caller": state.caller if state is not None else None,
        "fingerprint": go_value(state.fingerprint) if state is not None else None,
        "messages": go_value(state.messages) if state is not None else [],
        "message_seqs": result.message_seqs,
        "pending": None
        if pending is None
        else {
            "assistant": go_value(pending.assistant),
            "iteration": pending.iteration,
            "stop_reason": pending.stop_reason,
            "seq": pending.seq,
            "results": go_value(list(pending.results)),
            "answered": sorted(pending.answered, key=str.encode),
            "deferred": {call: go_value(deferred) for call, deferred in sorted(pending.deferred.items())},
        },
        "pending_calls": [
            {
                "id": call.id,
                "name": call.name,
                "input": _raw_json(call.input),
                "deferred": None
                if call.deferred is None
                else {"note": call.deferred.note, "handle": call.deferred.handle},
                "call_approved": call.call_approved,
            }
            for call in result.pending_calls
        ],
        "open_deferrals": [go_value(deferred) for deferred in pending.open_deferrals()] if pending is not None else [],
        "counters": counters,
        "resume": {
            "last_seq": result.last_seq,
            "next_iteration": state.next_iteration if state is not None else 0,
            "last_stop_reason": state.last_stop_reason if state is not None else "",
            "waiting_for": result.waiting_for,
        },
        "approvals": state.approvals if state is not None else None,
        "call_approvals": go_value(state.call_approvals) if state is not None else None,
        "memory_revisions": state.memory_revisions if state is not None else None,
        "terminal": go_value(state.terminal) if state is not None else None,
        "stale_terminal": result.stale_terminal,
        "segments": [asdict(segment) for segment in result.segments],
        "findings": [finding_json(finding) for finding in [*read_findings, *result.findings]],
    }


def _raw_json(raw: bytes) -> msgspec.Raw:
    """A tool input as the journal holds it (Go's ``null`` for an empty one)."""
    return _utf8(raw) if raw else msgspec.Raw(b"null")


def _fold_read(read: RunRead, *, strict: bool) -> FoldResult:
    try:
        return fold(read.typed(), run=read.run, strict=strict)
    except FoldError as error:
        # "No records" alone hides why when the reader dropped the journal's only line as a torn tail.
        dropped = next((finding for finding in read.findings if finding.code == "torn_tail"), None)
        if error.code != "empty_journal" or dropped is None:
            raise
        raise FoldError(error.run, error.seq, error.code, f"{error.rule}: {dropped.message}") from None


def cmd_show(args: argparse.Namespace) -> int:
    words = args.targets
    if len(words) > 2:
        raise UsageError(f"expected [SOURCE] [RUN], got {len(words)} arguments")
    if len(words) == 2:
        source, run = words
    elif len(words) == 1 and _is_source(words[0]):
        source, run = words[0], None
    elif len(words) == 1:
        source, run = _default_source(), words[0]
    else:
        source, run = _default_source(), None
    strict = not args.lenient
    with _open(source, "show") as backend:
        read = backend.read_run(run if run is not None else _only_run(backend), strict=strict)
    result = _fold_read(read, strict=strict)
    document = show_document(result, read.findings, refused=not read.complete)
    if args.anthropic:
        from journaltools.protocol.blocks import to_anthropic

        document["messages"] = to_anthropic(result.messages)
    if args.json:
        _emit_json(document)
    else:
        _print_run(document, result)
    return 0


def _print_run(document: dict[str, Any], result: FoldResult) -> None:
    _say(f"run {document['run']}: {document['status']}")
    terminal = result.state.terminal if result.state is not None else None
    if terminal is not None:
        said = f": {terminal.message}" if terminal.message else ""
        _say(f"ended: {terminal.reason}{said}")
    if document["stale_terminal"]:
        _say("a new turn follows the last terminal: the status names the previous turn's ending")
    resume = document["resume"]
    _say(
        f"resume: last seq {resume['last_seq']}, next iteration {resume['next_iteration']}, "
        f"last stop reason {resume['last_stop_reason'] or '-'}, waiting for {resume['waiting_for'] or 'nothing'}"
    )
    _say("counters: " + ", ".join(f"{key} {value}" for key, value in document["counters"].items()))
    if len(document["segments"]) > 1:
        _say("")
        print_table(
            document["segments"],
            ["index", "first_seq", "last_seq", "claimed_by", "claimed_at", "ending", "llm_calls", "tool_calls"],
        )
    seqs = result.message_seqs
    for index, message in enumerate(result.messages):
        # Labelled by the record's seq, the number every finding and ending names.
        seq = seqs[index] if index < len(seqs) else "?"
        _say(f"\n[seq {seq}] {message.role}")
        for block in message.content or ():
            _say(_block_line(block))
    pending = result.state.pending if result.state is not None else None
    if pending is not None:
        # Nothing of a turn in flight is in the committed messages yet: show what the model said, thought and
        # asked for last (what a post-mortem of a stuck run opens it for), thinking in full.
        _say(
            f"\n[seq {pending.seq}] assistant, turn in flight (not committed): iteration {pending.iteration}, "
            f"stop reason {pending.stop_reason or '-'}"
        )
        for block in pending.assistant.content or ():
            if block.thinking is not None and block.thinking.text:
                _say("  thinking: " + block.thinking.text.replace("\n", "\n    "))
            else:
                _say(_block_line(block))
        for done in pending.results:
            flag = " (error)" if done.is_error else ""
            _say(f"  <- {done.tool_use_id}{flag}: {done.content}")
    for call in result.pending_calls:
        deferred = call.deferred
        state = "not yet run" if deferred is None else "deferred"
        if deferred is not None and deferred.note:
            state += f" ({deferred.note})"
        if deferred is not None and deferred.handle:
            state += f" [handle {deferred.handle}]"
        if call.call_approved:
            state += ", approved once"
        shown = call.input.decode("utf-8", "replace")
        _say(f"\npending: {call.name}({shown}) [{call.id}]: {state}")
    if document["approvals"]:
        _say("\nstanding approvals: " + ", ".join(document["approvals"]))
    if document["findings"]:
        _say("")
    for finding in document["findings"]:
        seq = "-" if finding["seq"] is None else finding["seq"]
        _say(f"{finding['severity']}: seq {seq}: {finding['code']}: {finding['message']}")


def _compact(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _block_line(block: Block) -> str:
    if block.text is not None:
        return f"  {block.text.text}"
    if block.thinking is not None:
        return f"  (thinking, {len(block.thinking.text)} characters)"
    if block.tool_use is not None:
        call = block.tool_use
        return f"  -> {call.name}({bytes(call.input).decode('utf-8', 'replace')}) [{call.id}]"
    if block.tool_result is not None:
        done = block.tool_result
        flag = " (error)" if done.is_error else ""
        return f"  <- {done.tool_use_id}{flag}: {done.content}"
    if block.provider is not None:
        return f"  ({block.provider.kind} block)"
    return "  (empty block)"


# -- audit -------------------------------------------------------------------------------------------------------


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
        row = finding_json(finding)
        self.count += 1
        if self.as_json:
            prefix = b"[\n  " if self.count == 1 else b",\n  "
            sys.stdout.buffer.write(prefix + msgspec.json.encode(row))
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
        print(for_terminal("  ".join(_text(row[column]) for column in self.COLUMNS), newlines=False))

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
        args.sources or [_default_source()],
        parquet=args.parquet,
        records=args.records,
        progress=False if args.quiet else None,
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


# -- turns (kept as it is: the turn stores are rewritten elsewhere) ----------------------------------------------


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


# -- gate and answer ---------------------------------------------------------------------------------------------


def _read_config(path: str) -> Any:
    try:
        return msgspec.json.decode(Path(path).read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read --config {path}: {exc.strerror or exc}") from None
    except msgspec.DecodeError as exc:
        raise UsageError(f"--config {path} is not JSON: {exc}") from None


def cmd_gate(args: argparse.Namespace) -> int:
    from journaltools.errors import InvalidConfig
    from journaltools.ops.gate import Candidate, resume_gate

    source, (run,) = _source_and_rest("gate", args.targets, ["RUN"])
    try:
        candidate = Candidate.from_config(_read_config(args.config))
    except InvalidConfig as exc:  # a wrong field in the file is bad usage, not a refusal of the run
        raise UsageError(f"--config {args.config}: {exc}") from None
    with _open(source, "gate") as backend:
        read = backend.read_run(run)
    state = _fold_read(read, strict=True).state
    assert state is not None  # a strict fold that returns has folded a meta record
    gate = resume_gate(state, candidate, force=args.force, follow_up=args.follow_up)
    document = gate.to_json()
    if args.json:
        _emit_json(document)
    else:
        _say(f"run {run}: {'resumable' if document['resumable'] else 'NOT resumable'}")
        rows = [
            {**row, "stored": _compact(row["stored"]), "candidate": _compact(row["candidate"])}
            for row in document["fields"]
        ]
        print_table(rows, ["field", "class", "verdict", "stored", "candidate"])
        for warning in document["warnings"]:
            _say(f"warning: {warning}")
    if document["resumable"]:
        return 0
    _note("gate", f"run {run!r} is not resumable: {document['refusal']}")
    return 1


def cmd_answer(args: argparse.Namespace) -> int:
    from journaltools.ops.answer import answer_call

    source, (run, call_id) = _source_and_rest("answer", args.targets, ["RUN", "CALL_ID"])
    with _open(source, "answer") as backend:
        answered = answer_call(backend, run, call_id, args.result, is_error=args.is_error)
    if args.json:
        _emit_json(answered.to_json())
    else:
        _say(f"run {answered.run}: call {answered.call} answered at seq {answered.seq}")
    return 0


# -- samples, schema, migrate, compare ---------------------------------------------------------------------------


def cmd_samples(args: argparse.Namespace) -> int:
    from journaltools.samples import write_samples

    runs = write_samples(args.directory)
    print(f"wrote {len(runs)} sample journals to {args.directory}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from journaltools.protocol.schemas import record_schemas

    _emit_json(record_schemas())
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from journaltools.ops.migrate import migrate

    with _open(args.source, "migrate") as source, _open(args.dest, "migrate", create=True) as dest:
        report = migrate(source, dest)
    document = report.to_json()
    if args.json:
        _emit_json(document)
    else:
        verified = "yes" if document["verified"] else "NO"
        print(f"migrated {document['runs']} runs, {document['records']} records; verified: {verified}")
    # Refusals go to stderr in both modes: --json keeps stdout one document.
    for refusal in document["refused"]:
        _note("migrate", f"refused {refusal['run']}: {refusal['code']}: {refusal['message']}")
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
        "interactive",
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

    schema = command("schema", "print the record JSON Schemas journaltools checks records with", json_flag=False)
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
