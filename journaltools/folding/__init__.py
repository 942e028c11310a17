"""The fold of a runstate journal, and the status, segments and findings a post-mortem reads from it."""

from journaltools.folding.fold import FoldResult, PendingCall, fold
from journaltools.folding.state import Counters, PendingTurn, RunState
from journaltools.folding.status import STATUSES, Segment, Status

__all__ = ["STATUSES", "Counters", "FoldResult", "PendingCall", "PendingTurn", "RunState", "Segment", "Status", "fold"]
