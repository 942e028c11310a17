"""``show --follow`` and ``ls --watch``: a run, and a listing, as they change.

``show --follow`` prints the run as ``show`` does, then one line (or a few) per record as it is journaled: a message,
a call and its answer with its duration, a deferral, a claim, a terminal, each with the time from its append to its
display where that can be known (the record's own time; on JetStream the server's time of an undated record). The
run is folded incrementally (``folding.incremental``), so the thousandth record costs what the first did. The follow
ends with exit 0 when the run ends (a terminal is journaled) or at Ctrl-C, and with exit 1 and a line saying why
when the journal is deleted, replaced or cut short. Journal content is escaped for the terminal as ``show``
escapes it; the conversation token is never shown.

``ls --watch`` prints the listing again whenever a run changes (a file journal is written, a stream gains
messages), until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from journaltools._base.readable import shown_part
from journaltools.cli._output import UsageError, _say, human_duration
from journaltools.cli._show import _first_shown, _print_run, _times_line, show_document
from journaltools.cli._show import cmd_show as show_once
from journaltools.cli._sources import _only_run, _open, _source_and_optional_run, read_named, run_named
from journaltools.folding.effects import record_effects
from journaltools.folding.phrases import shown_time

if TYPE_CHECKING:
    from journaltools.folding.incremental import IncrementalRun
    from journaltools.folding.run import FoldedRun
    from journaltools.sources.base import Backend
    from journaltools.sources.follow import Change, Follower

#: The longest a follower waits before looking again (Ctrl-C is seen at once whatever it is).
WAIT_SECONDS = 0.5


def cmd_show(args: argparse.Namespace) -> int:
    """``show``, and with ``--follow`` each record after it as it is journaled."""
    if not args.follow:
        return show_once(args)
    return cmd_show_follow(args)


def cmd_show_follow(args: argparse.Namespace) -> int:
    if args.json or args.anthropic:
        raise UsageError("--follow prints the run as it is written; --json and --anthropic show it once")
    source, name = _source_and_optional_run(args.targets)
    try:
        with _open(source, "show") as backend:
            return _show_and_follow(backend, name, args)
    except KeyboardInterrupt:
        _say("\n(stopped following)")
        return 0
    finally:
        sys.stdout.flush()


def _show_and_follow(backend: Backend, name: str | None, args: argparse.Namespace) -> int:
    from journaltools.folding.incremental import IncrementalRun
    from journaltools.sources.follow import open_follower

    strict = not args.lenient
    run = _only_run(backend) if name is None else run_named(backend, name)
    follower = open_follower(backend, run)
    try:
        read = follower.start()
        if strict and not read.complete:
            read_named(backend, run, strict=True)  # raises what show raises for this journal
        incremental = IncrementalRun.of(read, strict=strict)
        folded = incremental.folded
        result = folded.result
        document = show_document(result, read.findings, refused=not read.complete)
        _print_run(
            document,
            result,
            first=_first_shown(result, args.tail, args.from_seq),
            times=_times_line(read, result),
            record_times={record.seq: record.time for record in read.typed() if record.time},
        )
        return _follow(follower, incremental, folded)
    finally:
        follower.close()


#: How long a follow stays after a terminal for what the runtime writes right after it (its memory revisions).
LINGER_SECONDS = 0.5


def _follow(follower: Follower, incremental: IncrementalRun, folded: FoldedRun) -> int:
    printer = _ChangePrinter(incremental, folded)
    _say(f"\n--- following {follower.run} as it is written (status {folded.status}; Ctrl-C to stop) ---")
    sys.stdout.flush()
    while True:
        change = follower.wait(WAIT_SECONDS)
        ended = printer.show(change)
        if change.gone is not None:
            _say(f"! {shown_part(change.gone)}: stopped following")
            return 1
        if ended is not None:
            # The runtime journals its memory revisions just after the terminal: shown too, then the follow ends.
            printer.show(follower.wait(LINGER_SECONDS))
            _say(f"run ended: {ended}" + (f" (status {printer.status})" if printer.status != ended else ""))
            return 0


class _ChangePrinter:
    """Prints what each change did: notices, one entry per record, new fold findings, a changed status."""

    def __init__(self, incremental: IncrementalRun, folded: FoldedRun) -> None:
        self.incremental = incremental
        self.status = folded.status
        self.fold_findings = len(folded.result.findings)

    def show(self, change: Change) -> str | None:
        """Print ``change``; the reason of a terminal it holds, else None."""
        for notice in change.notices:
            _say(f"! {shown_part(notice)}")
        if not (change.records or change.findings is not None or change.complete is not None):
            return None
        incremental = self.incremental
        folded = incremental.append(change.records, findings=change.findings, complete=change.complete)
        ended = None
        for effect in record_effects(change.records, incremental.facts):
            head, *rest = effect.lines
            _say(shown_part(head) + _lag_text(effect.journaled_ns))
            for line in rest:
                _say(line)
            ended = effect.ending if effect.ending is not None else ended
        findings = folded.result.findings
        for finding in findings[self.fold_findings :]:
            seq = "-" if finding.seq is None else finding.seq
            _say(f"{finding.severity}: seq {seq}: {finding.code}: {shown_part(finding.message)}")
        self.fold_findings = len(findings)
        if folded.status != self.status:
            _say(f"status: {self.status} -> {folded.status}")
            self.status = folded.status
        sys.stdout.flush()
        return ended


def _lag_text(journaled_ns: int | None, now: Callable[[], int] = time.time_ns) -> str:
    """``  (shown 40ms after it was journaled)``; nothing when the append time is not known (an undated file
    record)."""
    if journaled_ns is None:
        return ""
    lag = now() - journaled_ns
    if lag < 0:
        return "  (journaled by a clock ahead of this one)"
    return f"  (shown {human_duration(lag)} after it was journaled)"


# -- ls --watch --------------------------------------------------------------------------------------------------


def cmd_ls(args: argparse.Namespace) -> int:
    """``ls``, and with ``--watch`` the listing again each time a run changes."""
    from journaltools.cli._commands import cmd_ls as list_once

    if not getattr(args, "watch", False):
        return list_once(args)
    if args.json:
        raise UsageError("--watch redraws a table; --json lists once")
    from journaltools.sources.follow import SourceWatch

    watches = [SourceWatch.of(source) for source in (args.sources or [None])]
    drawn = False
    try:
        while True:
            if sys.stdout.isatty():
                sys.stdout.write("\x1b[H\x1b[2J")  # the listing redrawn in place
            elif drawn:
                _say("\n=== the runs changed ===")
            list_once(args)
            drawn = True
            _say(f"\n(watching since {shown_time(_now_text())}: redrawn when a run changes; Ctrl-C to stop)")
            sys.stdout.flush()
            while not any(watch.changed(WAIT_SECONDS) for watch in watches):
                pass
    except KeyboardInterrupt:
        return 0
    finally:
        for watch in watches:
            watch.close()


def _now_text() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat()
