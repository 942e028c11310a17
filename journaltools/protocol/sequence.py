"""CheckAppend: the one sequence rule both backends share (PROTOCOL.md section 3)."""

from __future__ import annotations

from enum import Enum


class AppendVerdict(Enum):
    DUPLICATE = "duplicate"
    NEXT = "next"
    GAP = "gap"


def check_append(last: int, seq: int) -> AppendVerdict:
    """Classify ``seq`` against the last durably stored sequence ``last``.

    Deliberately advances nothing: the caller moves ``last`` only after the record is durable
    (file: after fsync, JetStream: after the ack), so a torn write re-appends the same seq.
    """
    if seq <= last:
        return AppendVerdict.DUPLICATE
    if seq == last + 1:
        return AppendVerdict.NEXT
    return AppendVerdict.GAP
