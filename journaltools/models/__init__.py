"""The published shapes of what people hand journaltools and of the documents it hands back, as pydantic models
with their JSON Schemas (``journaltools schema --input NAME`` / ``--output NAME``).

Inputs (``journaltools.models.inputs``) are validated by their model: ``gate --config`` (``gate-config``), the
options of a ``nats://`` source (``nats-source``) and a price table (``--prices``, ``prices``). A value that breaks
one is refused with the journaltools error of that input, in one line naming the field and the reason, the same line
in Python and on the command line.

Outputs (``journaltools.models.outputs``, and ``analysis_documents`` for the analyses, registered by command in
``documents``) describe the ``--json`` documents of ``ls``, ``show``, ``audit``, ``compare``, ``gate``, ``migrate``,
``answer``, ``stats``, ``query`` and ``search``. The commands' own code stays the producer (their bytes keep the
journal's spelling of raw JSON); the models only describe and check them.

This module never imports pydantic: the names below are plain data, so the command line can offer them in its
``--help`` while ``import journaltools`` and ``load()`` never pay for pydantic. The schema functions import the
models when called.
"""

from __future__ import annotations

from typing import Any, Final

#: ``schema --input NAME``: what a person writes for journaltools.
INPUT_NAMES: Final = ("gate-config", "nats-source", "prices")
#: ``schema --output NAME``: the command whose ``--json`` document the schema describes.
OUTPUT_NAMES: Final = (
    "ls",
    "show",
    "audit",
    "compare",
    "gate",
    "migrate",
    "answer",
    "stats",
    "query",
    "search",
    "grep",
    "diff",
)

_DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"


def input_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the input ``name`` (one of ``INPUT_NAMES``); ``KeyError`` for another name."""
    from journaltools.models.inputs import INPUT_MODELS

    schema = INPUT_MODELS[name].model_json_schema()
    return {"$schema": _DRAFT, **schema}


def output_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the ``--json`` document of the command ``name`` (one of ``OUTPUT_NAMES``)."""
    from journaltools.models.documents import output_adapter

    schema = output_adapter(name).json_schema()
    return {"$schema": _DRAFT, **schema, "title": f"journaltools {name} --json"}
