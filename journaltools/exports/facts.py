"""What the records say beyond the fold, for the views: per-record times, tokens per turn, call durations, prices.

The fold keeps the runtime's state, which has no times and sums the tokens. A post-mortem wants more: how long
each model turn and each tool call took, and what each turn cost. Those come from the records themselves:

- **times** exist only where the store keeps them: JetStream gives each message a server time (``StoredRecord.time``);
  a file journal has none per record, only the file's modification time (``RunRead.updated``). The journal itself
  holds two kinds of time: ``meta.created`` and each claim's ``claimed``. Nothing here invents a time: a duration
  is shown only between two records that both have one;
- **tokens** per turn are each assistant record's own counts (the runtime's counters are their sums);
- **cost** is computed only from a price table the user passes (``prices={model: {...}}``, a price file's path or
  a ``PriceTable``), by the one cost rule of ``journaltools.tables.prices``: journaltools ships no prices, since any
  bundled list would be presented as current long after it stopped being so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from journaltools.folding.facts import RunFacts
from journaltools.folding.phrases import shown_time
from journaltools.goencoding.time import go_time
from journaltools.tables.prices import PricesLike, PriceTable, TokenCounts, cost_of, prices_of

if TYPE_CHECKING:
    from journaltools.sources.base import RunRead

#: A user's price table as the widgets take it: model → price per million tokens of each tier (``input``,
#: ``output``, ``cache_read``, ``cache_create``), a price file's path, or a checked ``PriceTable``
#: (``journaltools.tables.prices``). Thinking tokens are inside ``output`` and priced with it.
Prices = PricesLike


def check_prices(prices: Prices | None) -> PriceTable | None:
    """``prices`` checked once, as a ``PriceTable`` (a misspelt tier would otherwise silently cost nothing)."""
    return prices_of(prices)


@dataclass(frozen=True, slots=True)
class Tokens(TokenCounts):
    """One turn's (or a run's) tokens as the widgets show and add them (``thinking`` is part of ``output``)."""

    def __add__(self, other: TokenCounts) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_create + other.cache_create,
            self.thinking + other.thinking,
        )

    def text(self) -> str:
        """``in 1,200 · cache read 800 · cache create 0 · out 300 (thinking 120)``."""
        return (
            f"in {self.input:,} · cache read {self.cache_read:,} · cache create {self.cache_create:,} · "
            f"out {self.output:,} (thinking {self.thinking:,})"
        )

    def cost(self, prices: Prices | None, model: str | None) -> float | None:
        """The total cost by the user's price table (``journaltools.tables.prices.cost_of``), or None when there is no
        table, no price for ``model``, or a count of a tier the table does not price."""
        table = prices_of(prices)
        return None if table is None else cost_of(table, model, self).total


def cost_text(cost: float | None) -> str:
    return "—" if cost is None else f"{cost:,.4f}"


def duration_text(seconds: float | None) -> str:
    """``850 ms``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min`` (``—`` for unknown)."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def time_text(value: datetime | None) -> str:
    """A time in the one spelling every face shows (``folding.phrases.shown_time``), ``—`` for unknown."""
    return shown_time(value) or "—"


@dataclass(slots=True)
class RecordFacts:
    """What the views show of one journal's records: the calls, responses and terminal of the one walk over them
    (``folding.facts.RunFacts``), with a time for each record where the journal or its store has one. Built by
    ``of``; every lookup answers None when the journal does not say."""

    #: The one walk over the records: each call and response, paired and timed by the runtime's rules.
    run: RunFacts = field(default_factory=RunFacts)
    #: seq → the record's own time (the newest line dates every record), else the store's (a JetStream message's).
    times: dict[int, datetime] = field(default_factory=dict)
    #: seq of each assistant record → its tokens, its loop iteration and its stop reason.
    turns: dict[int, Tokens] = field(default_factory=dict)
    iterations: dict[int, int] = field(default_factory=dict)
    stop_reasons: dict[int, str] = field(default_factory=dict)
    #: call id → seq of the assistant record that made it, and of the record that ended its wait (its deferral if
    #: it deferred, else its answer): a call's duration runs to that record, as the tables and ``stats`` time it.
    call_made: dict[str, int] = field(default_factory=dict)
    call_ended: dict[str, int] = field(default_factory=dict)
    #: Every seq in stored order (a turn's duration runs from the record before it).
    seqs: list[int] = field(default_factory=list)
    #: ``meta.created`` (the journal's own text) and when the run was updated: its last record's own time (the
    #: newest line), else the store's (a file's mtime, the last message's time).
    created: str | None = None
    updated: datetime | None = None
    #: ``file`` or ``jetstream`` when known: what the note about times names.
    store: str | None = None
    #: The seq of the last terminal record (what "the ending" names, even when a claim follows it).
    terminal_seq: int | None = None
    #: Whether the times are the records' own (the newest line's), not the store's.
    dated_by_records: bool = False
    #: seq → its place in ``seqs`` (the first, should a journal repeat one), so a lookup costs no scan.
    positions: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        run: RunFacts,
        times: Sequence[datetime | None] | None = None,
        updated: datetime | None = None,
        store: str | None = None,
    ) -> RecordFacts:
        """The facts of a run's walk (``RunFacts``, a folded run's); ``times`` the store's time of each record in
        stored order (a JetStream message's), ``updated`` the store's time of the run (a file's mtime)."""
        facts = cls(run=run, updated=updated, store=store, seqs=list(run.seqs), terminal_seq=run.terminal_seq)
        for position, seq in enumerate(facts.seqs):
            facts.positions.setdefault(seq, position)
            # The record's own time is what the runtime dated; a store's time stands in where the record has none.
            own = run.times.get(seq)
            when = go_time(own) if own else None
            if when is not None:
                facts.dated_by_records = True
            elif times is not None and position < len(times):
                when = times[position]
            if when is not None:
                facts.times[seq] = when
        facts.created = run.created
        for response in run.responses:
            facts.turns[response.seq] = Tokens(
                response.in_tokens,
                response.out_tokens,
                response.cache_read_tokens,
                response.cache_create_tokens,
                response.thinking_tokens,
            )
            facts.iterations[response.seq] = response.iteration
            facts.stop_reasons[response.seq] = response.stop_reason
        for call in run.calls:
            facts.call_made.setdefault(call.tool_use_id, call.made_seq)
            ended = call.deferred_seq if call.deferred_seq is not None else call.answered_seq
            if ended is not None:
                facts.call_ended.setdefault(call.tool_use_id, ended)
        # The newest line's listing dates a run by its last record's own time; only an undated last record (and
        # every August journal) is dated by the store.
        last_own = run.times.get(run.seqs[-1]) if run.seqs else None
        if last_own:
            facts.updated = facts.times.get(run.seqs[-1], facts.updated)
        return facts

    @property
    def has_times(self) -> bool:
        return bool(self.times)

    def last_heard(self) -> tuple[str, datetime] | None:
        """When the run was last heard from, and what says so: ``last activity`` for a record's time (its own, or
        its JetStream message's), ``file modified`` where a file's modification time is later (it may be when the
        journal was copied, not when the run ran); None when the store gave no time at all."""
        latest = max(self.times.values(), default=None)
        if self.updated is not None and (latest is None or self.updated > latest):
            return ("file modified" if self.store in (None, "file") else "last activity"), self.updated
        return None if latest is None else ("last activity", latest)

    def updated_label(self) -> str:
        """What ``updated`` is: the last record's own time, the stream's last message time, or a file's mtime."""
        if self.updated is not None and self.updated == self.times.get(self.seqs[-1] if self.seqs else -1):
            return "last record"
        return "file modified" if self.store in (None, "file") else "last stored"

    def times_note(self) -> str:
        """One plain sentence on where the times shown come from (or that there are none per record)."""
        if self.dated_by_records:
            return "times: each record's own time, as the runtime dated it (durations are between records)"
        if self.has_times:
            return "times: each record's JetStream message time (durations are between records)"
        if self.store == "file" or self.store is None:
            return (
                "this file journal keeps no time per record, so no turn or call durations "
                "(only meta.created, each claim's time and the file's mtime)"
            )
        return "times: the store gave no time per record"

    def between(self, first: int | None, last: int | None) -> float | None:
        """Seconds from record ``first`` to record ``last``; None when either is undated or the time runs backwards
        (two clocks, such as a resumed worker's): a duration is never negative."""
        if first is None or last is None or first not in self.times or last not in self.times:
            return None
        seconds = (self.times[last] - self.times[first]).total_seconds()
        return seconds if seconds >= 0 else None

    def before(self, seq: int) -> int | None:
        """The seq of the record stored just before ``seq``."""
        position = self.positions.get(seq)
        return self.seqs[position - 1] if position else None

    def turn_seconds(self, seq: int) -> float | None:
        """How long the model took for the turn recorded at ``seq``: from the record before it."""
        return self.between(self.before(seq), seq)

    def call_seconds(self, call_id: str) -> float | None:
        """How long the call took by the runtime's timing rule (the tables' ``duration``, ``stats``' time): the gap
        from the record just before the one that ended its wait (its deferral, else its answer) to that record."""
        ended = self.call_ended.get(call_id)
        return self.between(self.before(ended), ended) if ended is not None else None

    def total(self) -> Tokens:
        total = Tokens()
        for tokens in self.turns.values():
            total = total + tokens
        return total


def facts_of_read(read: RunRead, run: RunFacts | None = None) -> RecordFacts:
    """Per-record times (JetStream message times; none for a file), tokens per turn and call seqs of a read;
    ``run`` is its walk when a folded run has it already."""
    times = [stored.time for stored in read.records]
    store = "jetstream" if any(time is not None for time in times) else "file"
    walk = run if run is not None else RunFacts.of([stored.record for stored in read.records])
    return RecordFacts.of(walk, times, updated=read.updated, store=store)
