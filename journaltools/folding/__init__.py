"""The fold of a runstate journal, and the status, segments and findings a post-mortem reads from it."""

from journaltools.folding.fold import FoldResult, fold
from journaltools.folding.state import Counters, PendingCall, PendingTurn, RunState
from journaltools.folding.status import STATUSES, Segment, Status

__all__ = ["STATUSES", "Counters", "FoldResult", "PendingCall", "PendingTurn", "RunState", "Segment", "Status", "fold"]
