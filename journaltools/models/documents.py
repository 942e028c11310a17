"""Every ``--json`` document by the command that prints it, and the validator of each."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from pydantic import TypeAdapter

from journaltools.models.analysis_documents import (
    CohortDiffDocument,
    DiffDocument,
    GrepDocument,
    QueryDocument,
    SearchDocument,
    StatsDocument,
)
from journaltools.models.document_base import FindingDocument
from journaltools.models.outputs import (
    AnswerDocument,
    ComparisonRow,
    GateDocument,
    ListingRow,
    MigrateDocument,
    ShowDocument,
)

OUTPUT_DOCUMENTS: Final[dict[str, Any]] = {
    "ls": list[ListingRow],
    "show": ShowDocument,
    "audit": list[FindingDocument],
    "compare": list[ComparisonRow],
    "gate": GateDocument,
    "migrate": MigrateDocument,
    "answer": AnswerDocument,
    "stats": StatsDocument,
    "query": QueryDocument,
    "search": SearchDocument,
    "grep": GrepDocument,
    "diff": DiffDocument | CohortDiffDocument,
}


@cache
def output_adapter(name: str) -> TypeAdapter[Any]:
    """The validator of the ``--json`` document of ``name``: ``output_adapter("show").validate_json(text)``.
    ``KeyError`` for a name that is not in ``OUTPUT_DOCUMENTS``."""
    return TypeAdapter(OUTPUT_DOCUMENTS[name])
