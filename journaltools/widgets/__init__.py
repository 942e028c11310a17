"""Notebook widgets (ipywidgets 8). Each widget is a pure, testable ``...Model`` plus a thin view over it.

Journal content is untrusted: everything shown is HTML-escaped, and long values are cut with a "show all".

Each name is imported when first used: a cell that shows the run browser does not wait for the turn checkpoints'
audit to import pandas (a quarter of a second of its first render).
"""

from typing import TYPE_CHECKING

from journaltools._base.lazy import lazy_names

if TYPE_CHECKING:
    from journaltools.exports.conversation import ConversationModel
    from journaltools.widgets.audit import AuditSummary, AuditSummaryModel
    from journaltools.widgets.comparison import ListingComparison, ListingComparisonModel
    from journaltools.widgets.conversation import ConversationView
    from journaltools.widgets.rundiff import RunDiff, RunDiffModel
    from journaltools.widgets.runs import RunBrowser
    from journaltools.widgets.runs_model import RunBrowserModel, load_source
    from journaltools.widgets.timetravel import TimeTravel, TimeTravelModel
    from journaltools.widgets.turns import TurnCheckpoints, TurnCheckpointsModel

_LAZY = {
    "AuditSummary": "journaltools.widgets.audit",
    "AuditSummaryModel": "journaltools.widgets.audit",
    "ConversationModel": "journaltools.exports.conversation",
    "ConversationView": "journaltools.widgets.conversation",
    "ListingComparison": "journaltools.widgets.comparison",
    "ListingComparisonModel": "journaltools.widgets.comparison",
    "RunBrowser": "journaltools.widgets.runs",
    "RunBrowserModel": "journaltools.widgets.runs_model",
    "RunDiff": "journaltools.widgets.rundiff",
    "RunDiffModel": "journaltools.widgets.rundiff",
    "TimeTravel": "journaltools.widgets.timetravel",
    "TimeTravelModel": "journaltools.widgets.timetravel",
    "TurnCheckpoints": "journaltools.widgets.turns",
    "TurnCheckpointsModel": "journaltools.widgets.turns",
    "load_source": "journaltools.widgets.runs_model",
}

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

__getattr__, __dir__ = lazy_names("journaltools.widgets", _LAZY, __all__, globals())
