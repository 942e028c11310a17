"""The commands other than ``show``: each parses nothing, calls the library and prints."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from journaltools._base.readable import shorten_end, shorten_middle
from journaltools._base.text import for_terminal
from journaltools.cli._options import where_of
from journaltools.cli._output import (
    UsageError,
    _emit_json,
    _note,
    _note_findings,
    _say,
    _text,
    finding_json,
    fitted_columns,
    human_duration,
    print_table,
)
from journaltools.cli._show import _compact, _fold_read
from journaltools.cli._sources import _default_source, _open, _source_and_rest
from journaltools.folding.phrases import attention_rank, shown_time
from journaltools.protocol.findings import Finding
from journaltools.sources.base import Backend
from journaltools.sources.listing import RunSummary
from journaltools.sources.liveness import SourceLocks, silent_for

if TYPE_CHECKING:
    from journaltools.tables.where import RunFilter

# -- ls ----------------------------------------------------------------------------------------------------------


def _shortened(text: str | None, limit: int | None = None) -> str | None:
    """``text`` on one line (its runs of white space one space), cut to ``limit`` characters when given."""
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if limit is None else shorten_end(flat, limit)


def _listing_rows(sources: Sequence[str], where: RunFilter | None = None) -> Iterator[dict[str, Any]]:
    """Every source's listing, one row at a time (with ``source`` when there are several); with ``where``, only
    the runs the filter keeps."""
    several = len(sources) > 1
    for url in sources:
        with _open(url, "ls") as backend:
            _note_findings("ls", backend.source_findings())
            kept = _kept_by(backend, where)
            alive = _Liveness.of(backend)
            for summary in backend.iter_listing():
                if kept is not None and summary.run not in kept:
                    continue
                _note_findings("ls", summary.findings)
                row = alive.row(summary)
                yield {**row, "source": backend.url} if several else row
            _note_findings("ls", backend.vanished_findings())


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


def _paged_rows(source: str, args: argparse.Namespace, where: RunFilter | None = None) -> Iterator[dict[str, Any]]:
    """One page of a source's listing, as the newest runtime's ``ListPage`` pages it; the cursor of the next page
    is said on standard error (``--cursor`` asks for it). With ``where``, the pages are of the runs it keeps."""
    from journaltools.sources.listing import list_page

    with _open(source, "ls") as backend:
        kept = _kept_by(backend, where)
        summaries = [summary for summary in backend.listing() if kept is None or summary.run in kept]
    page, cursor = list_page(
        summaries, limit=args.limit, cursor=args.cursor or "", agent=args.agent or "", prefix=args.prefix or ""
    )
    alive = _Liveness.of(backend)
    for summary in page:
        yield alive.row(summary)
    _note("ls", f"next page: --cursor {cursor}" if cursor else "no further page")


def _kept_by(backend: Backend, where: RunFilter | None) -> set[str] | None:
    """The runs of ``backend`` the filter keeps, judged on its runs table (None: no filter, every run)."""
    if where is None:
        return None
    from journaltools.tables.loader import kept_runs

    return kept_runs(backend, where)


def cmd_ls(args: argparse.Namespace) -> int:
    sources = args.sources or [_default_source()]
    several = len(sources) > 1
    if args.cursor and args.limit is None:
        raise UsageError("--cursor continues a paged listing: give --limit too")
    if args.limit is not None and several:
        raise UsageError("--limit pages one source's listing: name one source")
    where = where_of(args)
    listing = _paged_rows(sources[0], args, where) if args.limit is not None else _listing_rows(sources, where)
    rows = _kept_rows(listing, args)
    if args.sort:
        rows = iter(sorted(rows, key=_LS_SORTS[args.sort]))
    if args.json:
        _emit_json_array(rows)
        return 0
    listed = list(rows)  # the table's column widths need every row
    columns = ["run", "status", "writer", "why", "created", "updated", "silent", "last_seq", "records", "model"]
    columns += ["prompt"]
    columns += ["source"] if several else []
    shown = [
        {
            **row,
            "run": row["run"] if args.wide else shorten_middle(row["run"], RUN_SHOWN),
            "created": shown_time(row.get("created")),
            "updated": shown_time(row.get("updated")),
            "silent": _silent_text(row.get("silent_for")),
            "why": _shortened(row.get("why")),
            "prompt": _shortened(row.get("prompt")),
        }
        for row in listed
    ]
    width = None if args.wide else shutil.get_terminal_size((TABLE_WIDTH, 24)).columns
    columns, cuts = fitted_columns(shown, columns, width, flexible=LS_FLEXIBLE, droppable=LS_DROPPABLE)
    shown = [{**row, **{key: _shortened(row.get(key), limit) for key, limit in cuts.items()}} for row in shown]
    wide = columns if args.wide else ["why", "prompt", "source"]  # cut only where fitted_columns said
    print_table(shown, columns, wide=wide, labels={"why": "why it stopped"})
    for note in _file_time_notes(listed, args):
        _note("ls", note)
    return 0


def _file_time_notes(rows: Sequence[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """What a reader must know when ``updated`` is a file's modification time: which runs it is, that a directory
    whose file times are all one looks copied, and which filters or orders went by it."""
    by_file = [row for row in rows if row.get("updated_from") == "file"]
    if not by_file:
        return []
    notes = [
        f"updated: for {len(by_file)} run(s) whose journals date no record (the August build), 'updated' is the "
        "file's modification time, not a time the runtime journaled"
    ]
    seconds = {str(row.get("updated"))[:19] for row in by_file}
    if len(by_file) > 1 and len(seconds) == 1:
        notes.append(
            f"updated: all {len(by_file)} file times are the same second: the directory looks copied, so they say "
            "when it was copied, not when the runs ran"
        )
    used = [flag for flag, given in (("--since", args.since), ("--sort updated", args.sort == "updated")) if given]
    if used:
        notes.append(f"{' and '.join(used)} went by those file times for those runs")
    return notes


# -- ls: filters and orders (what a triage asks for: the failed runs of the last hour, worst first) ----------------

#: A run id longer than this is shortened in its middle in the table (``--json`` and ``--wide`` carry it whole).
RUN_SHOWN = 28
#: The table's width off a terminal (a pipe, a file): on a terminal, the terminal's.
TABLE_WIDTH = 120
#: The columns that give way first when the table is wider than the terminal, each down to this many characters.
LS_FLEXIBLE = {"prompt": 24, "why": 40, "source": 30}
#: Then the columns left out, in this order, until the table fits.
LS_DROPPABLE = ("records", "last_seq", "silent", "updated", "model", "prompt", "source")


@dataclass(frozen=True, slots=True)
class _Liveness:
    """Whether a process writes each run of a source now (its lock table read once per listing, never the runtime's
    lock), and the moment silences are counted to."""

    locks: SourceLocks
    now: datetime

    @classmethod
    def of(cls, backend: Backend) -> _Liveness:
        return cls(SourceLocks.of(backend), datetime.now(UTC))

    def row(self, summary: RunSummary) -> dict[str, Any]:
        """A listing row as ``ls --json`` prints it."""
        return {
            **summary.to_json(),
            "why": summary.why,
            "writer": self.locks.writer(summary.run),
            "silent_for": silent_for(summary.updated, self.now),
        }


def _silent_text(seconds: float | None) -> str | None:
    """How long a run has been silent, for a person (``--json`` keeps the seconds)."""
    return None if seconds is None else human_duration(int(seconds * 1e9))


def _activity(row: dict[str, Any]) -> datetime | None:
    """A listing row's last activity: ``updated`` (file mtime, last message time), else ``meta.created``."""
    return _moment_of(row.get("updated")) or _moment_of(row.get("created"))


def _moment_of(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:  # a created the runtime would not have written: such a run has no known time
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _kept_rows(rows: Iterable[dict[str, Any]], args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The rows ``--status``, ``--agent``, ``--prefix``, ``--generation``, ``--since`` and ``--until`` keep, as they
    come (a run without a known time is left out by a time bound: nothing says it falls inside)."""
    wanted = {status for chosen in args.status or () for status in chosen}
    for row in rows:
        if wanted and row["status"] not in wanted:
            continue
        # The runtime's ListFilter: a run with no agent matches any agent asked for (MatchesAgent).
        if args.agent and row.get("agent") and row["agent"] != args.agent:
            continue
        if args.prefix and not row["run"].startswith(args.prefix):
            continue
        if args.generation and row.get("generation") != args.generation:
            continue
        if args.since is not None:
            active = _activity(row)
            if active is None or active < args.since:
                continue
        if args.until is not None:
            created = _moment_of(row.get("created")) or _activity(row)
            if created is None or created > args.until:
                continue
        yield row


def _newest_first(key: str) -> Callable[[dict[str, Any]], Any]:
    def order(row: dict[str, Any]) -> Any:
        moment = _activity(row) if key == "updated" else _moment_of(row.get(key))
        # Unknown times last; then newest first, the run id breaking ties.
        return (moment is None, -(moment.timestamp() if moment is not None else 0.0), row["run"])

    return order


_LS_SORTS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "status": lambda row: (attention_rank(row["status"]), *_newest_first("updated")(row)),
    "created": _newest_first("created"),
    "updated": _newest_first("updated"),
    "last_seq": lambda row: (-int(row["last_seq"] or 0), row["run"]),
    "records": lambda row: (row["records"] is None, -int(row["records"] or 0), row["run"]),
    "run": lambda row: row["run"],
}
LS_SORT_KEYS = tuple(_LS_SORTS)


# -- audit -------------------------------------------------------------------------------------------------------


class _StreamedFindings:
    """An audit's findings printed as they come, so memory stays flat however many there are: one JSON array
    written element by element, or an aligned table (lines in a fixed layout past ``TABLE_LIMIT``)."""

    TABLE_LIMIT = 10_000
    COLUMNS = ("run", "seq", "code", "severity", "message")

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.count = 0
        #: ``degraded_analysis`` findings left out of the table.
        self.degraded = 0
        self._held: list[dict[str, Any]] | None = []

    def add(self, finding: Finding) -> None:
        row = finding_json(finding)
        if not self.as_json and finding.code == "degraded_analysis":
            # One per undated run: a directory of August journals would bury every problem under them. The table
            # counts them in one line (finish); --json lists each.
            self.degraded += 1
            return
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
        elif self._held:  # no findings: nothing on stdout (a header over no rows), the count is on stderr
            print_table(self._held, list(self.COLUMNS), wide=["message"])


def cmd_audit(args: argparse.Namespace) -> int:
    from journaltools.audits.sources import audit_sources

    where = where_of(args)
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
        prices=args.prices,
        where=where,
    )
    printer.finish()
    if not args.json:
        print(f"\n{result.runs} runs, {result.records} records, {printer.count} findings", file=sys.stderr)
        if result.cost is not None:
            money = f"{result.cost:,.6f}" + (f" {result.currency}" if result.currency else "")
            unknown = (
                f"; {result.unpriced_runs} run(s) have no cost (no price: see their no_price findings; or refused)"
                if result.unpriced_runs
                else ""
            )
            print(f"cost: {money} by your price table, over the runs that have one{unknown}", file=sys.stderr)
        if printer.degraded:
            print(
                f"{printer.degraded} run(s) lack fields the newest line writes (record times, meta.agent or result "
                "kinds), so their analysis is partial: untimed is not instant (degraded_analysis, info; --json "
                "lists each)",
                file=sys.stderr,
            )
    if args.parquet and not args.quiet:
        print(f"Parquet tables written to {args.parquet}", file=sys.stderr)
    if args.fail_on and result.fails(args.fail_on):
        return 1
    return 0


# -- turns (kept as it is: the turn stores are rewritten elsewhere) ----------------------------------------------


def cmd_turns(args: argparse.Namespace) -> int:
    from journaltools.audits.turns import audit_turns
    from journaltools.protocol.findings import at_least

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
    from journaltools.audits.tasks import audit_tasks
    from journaltools.protocol.findings import at_least

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
    from journaltools._base.durable import IrregularFile, read_regular_file

    try:
        return msgspec.json.decode(read_regular_file(path, follow_links=True))
    except IrregularFile as exc:
        raise UsageError(f"cannot read --config {path}: it is {exc.kind}, not a regular file") from None
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
    if args.input is not None or args.output is not None:
        from journaltools.models import input_schema, output_schema

        _emit_json(input_schema(args.input) if args.input is not None else output_schema(args.output))
        return 0
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
    from journaltools.audits.listings import FAIL_ON, compare_listings, comparison_rows

    with _open(args.source_a, "compare") as a, _open(args.source_b, "compare") as b:
        # Name the sides by backend kind; two sources of one kind go by their URLs in --json, and on the terminal
        # by A and B, each URL said once above the table rather than in every row.
        label_a, label_b = (a.kind, b.kind) if a.kind != b.kind else (a.url, b.url)
        name_a, name_b = (label_a, label_b) if a.kind != b.kind or args.json else ("A", "B")
        table = compare_listings(a.listing(), b.listing(), label_a=name_a, label_b=name_b)
    rows = comparison_rows(table)
    if args.json:
        _emit_json(rows)
    else:
        # On the terminal the sides go by their names (the JSON keeps the stable codes missing_a / missing_b); two
        # sources of one kind are A and B, named once above the table rather than in every header and row.
        if a.kind == b.kind:
            _say(f"A: {label_a}\nB: {label_b}\n")
        missing = {"missing_a": f"missing in {name_a}", "missing_b": f"missing in {name_b}"}
        width = None if args.wide else shutil.get_terminal_size((TABLE_WIDTH, 24)).columns
        named = [
            {
                **row,
                "run": row["run"] if args.wide else shorten_middle(row["run"], RUN_SHOWN),
                "verdict": missing.get(row["verdict"], row["verdict"]),
            }
            for row in rows
        ]
        print_table(
            named,
            ["run", "status_a", "status_b", "verdict", "explanation"],
            wide=["explanation"],
            labels={"status_a": name_a, "status_b": name_b},
            wrap=None if args.wide else "explanation",
            width=width,
        )
    failing = [row["run"] for row in rows if args.fail_on and row["verdict"] in FAIL_ON[args.fail_on]]
    if failing:
        shown = ", ".join(failing[:10]) + (f" and {len(failing) - 10} more" if len(failing) > 10 else "")
        _note("compare", f"{len(failing)} run(s) fail --fail-on {args.fail_on}: {shown}")
        return 1
    return 0
