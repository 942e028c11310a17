"""Hypothesis strategies for real-format journals of both generations (the August build's version 3, the newest
line's version 1).

``valid_runs()`` draws whole runs from the same run model the corpus generator uses
(``journaltools.testing.generate.build_run``), answering its choices from ``draw``: process lifetimes with claims,
parallel calls answered in any order, tool errors, remote results, deferrals answered later, decisions,
allow-once approvals, crashes mid-batch, every terminal reason and memory revisions after a terminal. Every
run folds strictly without an error finding, and shrinks towards a short, plain run.

``damaged_journals()`` draws a valid run's bytes and breaks them the ways journals break: a torn tail, a
resume glued onto a torn tail, a corrupt interior line, a noncanonical line, blank lines, CRLF endings.
``record_lines()`` draws single lines, canonical or not, for the fast path vs the exact reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hypothesis import strategies as st

from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import AUGUST, Generation
from journaltools.protocol.kinds import Claim, Terminal, make_record
from journaltools.samples.builder import JournalBuilder
from journaltools.testing.generate import build_run
from tests.builders import CLAIMANT, CLAIMED, case_variant_keys, corrupt_line, resumed_after_torn_tail, torn_tail

#: Lone surrogates cannot be encoded to UTF-8 (the runtime's strings are UTF-8), so no text holds one.
_NO_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
texts = st.text(st.characters(codec="utf-8", exclude_categories=_NO_SURROGATES), max_size=40)
#: Text blocks the runtime writes are never empty.
prose = st.text(st.characters(codec="utf-8", exclude_categories=_NO_SURROGATES), min_size=1, max_size=40)


class DrawnChoices:
    """``generate.Choices`` answered by hypothesis, so a failing run shrinks: towards small integers, False,
    and short texts."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def chance(self, probability: float) -> bool:
        # A draw of 0 (where shrinking goes) is False; the upper part of the range has the asked weight.
        return self.draw(st.integers(0, 999)) >= 1000 - int(probability * 1000)

    def words(self, median: int, cap: int) -> str:
        return self.draw(
            st.text(st.characters(codec="utf-8", exclude_categories=_NO_SURROGATES), max_size=min(cap, 40))
        )


@st.composite
def valid_runs(
    draw: st.DrawFn, run: str = "gen-run", max_records: int = 40, generation: Generation = AUGUST
) -> JournalBuilder:
    """A journal ``generation``'s runtime could have written, of up to about ``max_records`` records (it may run a
    little over: a run ends where its last process run ends)."""
    return build_run(
        DrawnChoices(draw),
        run_id=run,
        created_ns=draw(st.integers(1_700_000_000, 1_900_000_000)) * 1_000_000_000 + draw(st.integers(0, 10**9 - 1)),
        target_records=draw(st.integers(1, max_records)),
        zone_minutes=draw(st.sampled_from([0, 60, 120, -300, 330])),
        generation=generation,
    )


Damage = Literal["torn_tail", "resumed_after_torn_tail", "corrupt_interior", "noncanonical", "blank_lines", "crlf"]


@dataclass(frozen=True)
class DamagedJournal:
    """A journal's bytes after ``damage``, and the records a writer wrote before it happened."""

    journal: JournalBuilder
    damage: Damage
    data: bytes
    #: The 1-based line the damage is on (for corruption and noncanonical lines), else None.
    line: int | None = None


@st.composite
def damaged_journals(draw: st.DrawFn, run: str = "gen-run") -> DamagedJournal:
    built = draw(valid_runs(run, max_records=20))
    data = built.journal_bytes()
    count = len(built.records)
    damage: Damage = draw(
        st.sampled_from(
            ["torn_tail", "resumed_after_torn_tail", "corrupt_interior", "noncanonical", "blank_lines", "crlf"]
        )
    )
    if damage == "torn_tail" or (damage in ("resumed_after_torn_tail", "corrupt_interior") and count < 2):
        return DamagedJournal(built, "torn_tail", torn_tail(data, draw(st.floats(0.05, 0.95))))
    if damage == "resumed_after_torn_tail":
        # Go's resume continues from the last record that parses, so its claim takes the torn record's seq; a
        # record after the claim makes the glued line an interior one (alone at the end it is a torn tail).
        seq = built.records[-1].seq
        resumed = [
            make_record(seq, Claim(by=CLAIMANT, claimed=CLAIMED)),
            make_record(seq + 1, Terminal(reason="error")),
        ]
        return DamagedJournal(built, damage, resumed_after_torn_tail(data, resumed), line=count)
    if damage == "corrupt_interior":
        number = draw(st.integers(2, count - 1)) if count > 2 else 1
        return DamagedJournal(built, damage, corrupt_line(data, number), line=number)
    lines = data.split(b"\n")
    if damage == "noncanonical":
        number = draw(st.integers(1, count))
        lines[number - 1] = case_variant_keys(lines[number - 1])
        return DamagedJournal(built, damage, b"\n".join(lines), line=number)
    if damage == "blank_lines":
        number = draw(st.integers(1, count))
        lines.insert(number - 1, draw(st.sampled_from([b"", b"   ", b"\t"])))
        return DamagedJournal(built, damage, b"\n".join(lines))
    return DamagedJournal(built, damage, data.replace(b"\n", b"\r\n"))


@st.composite
def record_lines(draw: st.DrawFn) -> bytes:
    """One record's line: as the runtime writes it, or respelled in a way the Go decoder still reads (or not)."""
    built = draw(valid_runs(max_records=8))
    line = encode_record(draw(st.sampled_from(built.records)))
    variant = draw(st.sampled_from(["canonical", "case", "spaces", "unknown_key", "truncated", "trailing"]))
    if variant == "case":
        return case_variant_keys(line)
    if variant == "spaces":
        return line.replace(b'":', b'": ', 1)
    if variant == "unknown_key":
        return line[:-1] + b',"extra":1}'
    if variant == "truncated":
        return line[: draw(st.integers(1, len(line) - 1))]
    if variant == "trailing":
        return line + b"x"
    return line


__all__ = ["DamagedJournal", "DrawnChoices", "damaged_journals", "prose", "record_lines", "texts", "valid_runs"]
