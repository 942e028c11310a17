"""Notebook widgets. Each widget is a pure, testable ``...Model`` plus a thin view over it: ipywidgets 8 views for
the Jupyter hosts (and static pages of embedded widgets), and for the run browser and the conversation an anywidget
view too (``RunBrowserSurface``, ``ConversationSurface``: marimo, and any host of anywidget), drawing the same HTML.

Journal content is untrusted: everything shown is HTML-escaped, and long values are cut with a "show all".
"""

from journaltools.exports.conversation import ConversationModel
from journaltools.widgets.audit import AuditSummary, AuditSummaryModel
from journaltools.widgets.cohorts import CohortDiffView
from journaltools.widgets.comparison import ListingComparison, ListingComparisonModel
from journaltools.widgets.conversation import ConversationView
from journaltools.widgets.conversation_surface import ConversationSurface
from journaltools.widgets.rundiff import RunDiff, RunDiffModel
from journaltools.widgets.runs import RunBrowser
from journaltools.widgets.runs_model import RunBrowserModel, load_source
from journaltools.widgets.runs_surface import RunBrowserSurface
from journaltools.widgets.timetravel import TimeTravel, TimeTravelModel
from journaltools.widgets.turns import TurnCheckpoints, TurnCheckpointsModel

__all__ = [
    "AuditSummary",
    "AuditSummaryModel",
    "CohortDiffView",
    "ConversationModel",
    "ConversationSurface",
    "ConversationView",
    "ListingComparison",
    "ListingComparisonModel",
    "RunBrowser",
    "RunBrowserModel",
    "RunBrowserSurface",
    "RunDiff",
    "RunDiffModel",
    "TimeTravel",
    "TimeTravelModel",
    "TurnCheckpoints",
    "TurnCheckpointsModel",
    "load_source",
]
