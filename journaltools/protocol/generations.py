"""The two generations of fisk-ai's journals, and how a journal says which one wrote it.

fisk-ai's August build writes format version 3; its newest line numbered the format afresh as version 1 and added
fields (a time on every record, the agent, each tool call's provider kind and dispatch, terminal summaries). Each
build refuses the other's journals; journaltools reads both, each by its own build's rules. A journal's generation
is its meta record's ``version``: it decides how the other lines decode (the August decoder ignores the newest
fields as unknown keys), how the journal folds, and how it is listed.

A journal whose version neither build writes is refused by both; it is read by the newest line's rules (the
runtime people run today), folded leniently as that line folds, and reported ``version_mismatch``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Generation:
    """One build's format: its ``meta.version``, its name in tables and documents, and the rules in which it
    differs from the other builds, asked by name wherever a rule depends on the build (never ``is AUGUST``)."""

    #: ``newest`` or ``august``: what the ``generation`` column and ``--json`` documents hold.
    name: str
    version: int
    #: How a person names it.
    title: str
    #: Every record carries the time it was journaled (the newest line's ``PrepareRecord`` dates each one).
    dates_records: bool
    #: Records carry the newest line's fields: the meta's agent, each call's provider kind and dispatch, the
    #: terminals' summaries.
    extended_records: bool
    #: A record after a terminal reopens the run (the newest line's ``Ending``); the August build lists a run by
    #: its last terminal, whatever follows it.
    reopens_after_terminal: bool

    def __repr__(self) -> str:
        return f"Generation({self.name!r}, version={self.version})"


NEWEST: Final = Generation(
    "newest",
    1,
    "the newest line (format version 1)",
    dates_records=True,
    extended_records=True,
    reopens_after_terminal=True,
)
AUGUST: Final = Generation(
    "august",
    3,
    "the August build (format version 3)",
    dates_records=False,
    extended_records=False,
    reopens_after_terminal=False,
)
#: Every generation journaltools reads, newest first.
GENERATIONS: Final = (NEWEST, AUGUST)
_BY_VERSION: Final = {generation.version: generation for generation in GENERATIONS}
_BY_NAME: Final = {generation.name: generation for generation in GENERATIONS}


def generation_of_version(version: int) -> Generation | None:
    """The generation that writes ``meta.version`` ``version``; None for a version no build writes."""
    return _BY_VERSION.get(version)


def rules_for_version(version: int | None) -> Generation:
    """The rules a journal of ``meta.version`` ``version`` is read and folded by: its own build's, and the newest
    line's for a version neither build writes (or a journal without a readable meta record)."""
    return _BY_VERSION.get(version, NEWEST) if version is not None else NEWEST


def generation_named(name: str) -> Generation:
    """The generation called ``name`` (``newest`` or ``august``); KeyError for any other."""
    return _BY_NAME[name]


def unsupported_version(version: int) -> str:
    """The rule a journal of a version no build writes breaks, naming the versions journaltools reads."""
    supported = " and ".join(f"{g.version} ({g.title.split(' (')[0]})" for g in GENERATIONS)
    return f"unsupported snapshot version: snapshot version {version}, supported {supported}"


__all__ = [
    "AUGUST",
    "GENERATIONS",
    "NEWEST",
    "Generation",
    "generation_named",
    "generation_of_version",
    "rules_for_version",
    "unsupported_version",
]
