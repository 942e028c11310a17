"""Notebook widgets (ipywidgets 8). Each widget is a pure, testable ``...Model`` plus a thin view over it.

Journal content is untrusted: everything shown is HTML-escaped, and long values are cut with a "show all".
"""

from journaltools.exports.conversation import ConversationModel
from journaltools.widgets.audit import AuditSummary, AuditSummaryModel
from journaltools.widgets.comparison import ListingComparison, ListingComparisonModel
from journaltools.widgets.conversation import ConversationView
from journaltools.widgets.rundiff import RunDiff, RunDiffModel
from journaltools.widgets.runs import RunBrowser
from journaltools.widgets.runs_model import RunBrowserModel, load_source
from journaltools.widgets.timetravel import TimeTravel, TimeTravelModel
from journaltools.widgets.turns import TurnCheckpoints, TurnCheckpointsModel

__all__ = [
    "AuditSummary",
    "AuditSummaryModel",
    "ConversationModel",
    "ConversationView",
    "ListingComparison",
    "ListingComparisonModel",
    "RunBrowser",
    "RunBrowserModel",
    "RunDiff",
    "RunDiffModel",
    "TimeTravel",
    "TimeTravelModel",
    "TurnCheckpoints",
    "TurnCheckpointsModel",
    "load_source",
]
