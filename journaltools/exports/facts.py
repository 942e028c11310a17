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
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from journaltools.goencoding.time import go_time
from journaltools.protocol.kinds import Record
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
    """A time as ``2026-08-21 23:36:20 UTC`` (``—`` for unknown)."""
    if value is None:
        return "—"
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(slots=True)
class RecordFacts:
    """Facts of one journal's records: per-record times (JetStream only), tokens per turn, when each call was
    made and answered. Built by ``of``; every lookup answers None when the journal does not say."""

    #: seq → the store's time for that record (empty for a file journal).
    times: dict[int, datetime] = field(default_factory=dict)
    #: seq of each assistant record → its tokens, its loop iteration and its stop reason.
    turns: dict[int, Tokens] = field(default_factory=dict)
    iterations: dict[int, int] = field(default_factory=dict)
    stop_reasons: dict[int, str] = field(default_factory=dict)
    #: call id → seq of the assistant record that made it, and of the first record that answered it.
    call_made: dict[str, int] = field(default_factory=dict)
    call_answered: dict[str, int] = field(default_factory=dict)
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

    @classmethod
    def of(
        cls,
        records: Sequence[Record],
        times: Sequence[datetime | None] | None = None,
        updated: datetime | None = None,
        store: str | None = None,
    ) -> RecordFacts:
        facts = cls(updated=updated, store=store)
        for index, record in enumerate(records):
            seq = record.seq
            facts.seqs.append(seq)
            # The record's own time (the newest line dates every record) is what the runtime dated; a store's
            # time (a JetStream message's) stands in where the record has none.
            when = go_time(record.time) if record.time else None
            if when is not None:
                facts.dated_by_records = True
            elif times is not None and index < len(times):
                when = times[index]
            if when is not None:
                facts.times[seq] = when
            if record.meta is not None and record.kind == "meta":
                facts.created = str(record.meta.created) or None
            assistant = record.assistant if record.kind == "assistant" else None
            if assistant is not None:
                facts.turns[seq] = Tokens(
                    assistant.in_tokens,
                    assistant.out_tokens,
                    assistant.cache_read_tokens,
                    assistant.cache_create_tokens,
                    assistant.thinking_tokens,
                )
                facts.iterations[seq] = assistant.iteration
                facts.stop_reasons[seq] = assistant.stop_reason
                for block in assistant.message.content or ():
                    if block.tool_use is not None:
                        facts.call_made.setdefault(block.tool_use.id, seq)
            if record.kind == "terminal":
                facts.terminal_seq = seq
            result = record.tool_result if record.kind == "tool_result" else None
            if result is not None:
                facts.call_answered.setdefault(result.tool_use_id, seq)
        # The newest line's listing dates a run by its last record's own time; only an undated last record (and
        # every August journal) is dated by the store.
        last_own = facts.times.get(records[-1].seq) if records and records[-1].time else None
        if last_own is not None:
            facts.updated = last_own
        return facts

    @property
    def has_times(self) -> bool:
        return bool(self.times)

    def last_activity(self) -> datetime | None:
        """When the run was last heard from: its newest record time, or the store's "updated" (a file's mtime),
        whichever is later; None when the store gave no time at all."""
        known = [*self.times.values(), *([self.updated] if self.updated is not None else [])]
        return max(known) if known else None

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
        if first is None or last is None or first not in self.times or last not in self.times:
            return None
        return (self.times[last] - self.times[first]).total_seconds()

    def before(self, seq: int) -> int | None:
        """The seq of the record stored just before ``seq``."""
        try:
            index = self.seqs.index(seq)
        except ValueError:
            return None
        return self.seqs[index - 1] if index > 0 else None

    def turn_seconds(self, seq: int) -> float | None:
        """How long the model took for the turn recorded at ``seq``: from the record before it."""
        return self.between(self.before(seq), seq)

    def call_seconds(self, call_id: str) -> float | None:
        """From the record that made the call to the first that answered it."""
        return self.between(self.call_made.get(call_id), self.call_answered.get(call_id))

    def total(self) -> Tokens:
        total = Tokens()
        for tokens in self.turns.values():
            total = total + tokens
        return total


def facts_of_read(read: RunRead) -> RecordFacts:
    """Per-record times (JetStream message times; none for a file), tokens per turn and call seqs of a read."""
    times = [stored.time for stored in read.records]
    store = "jetstream" if any(time is not None for time in times) else "file"
    return RecordFacts.of([stored.record for stored in read.records], times, updated=read.updated, store=store)
