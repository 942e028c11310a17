"""Holding a ``--json`` document to its published schema (``journaltools schema --output NAME``), closed, and to its
pydantic model: what every test of a command's JSON output uses.

The published schemas accept keys they do not describe (more may be added, docs/interfaces.md); here they are
closed, so a key the command line prints and the model does not describe fails. ``UNDESCRIBED_KEYS_ALLOWED``
names the documents for which that is tolerated for now (empty: none).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from journaltools.cli import main
from journaltools.models import output_schema
from journaltools.models.documents import output_adapter

#: Documents whose undescribed keys pass this test (a key on its way into the model, say).
UNDESCRIBED_KEYS_ALLOWED: frozenset[str] = frozenset()


def closed(schema: Any) -> Any:
    """``schema`` with every object that lists its properties refusing any other key."""
    if isinstance(schema, dict):
        shut = {key: closed(value) for key, value in schema.items()}
        if "properties" in shut and shut.get("additionalProperties", True) is True:
            shut["additionalProperties"] = False
        return shut
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    return schema


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    schema = output_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema if name in UNDESCRIBED_KEYS_ALLOWED else closed(schema))


def hold_to_schema(name: str, text: str) -> Any:
    """The document ``text`` printed for ``name``, after checking it against the schema and the model."""
    document = json.loads(text)
    problem = jsonschema.exceptions.best_match(validator(name).iter_errors(document))
    if problem is not None:
        where = "/".join(map(str, problem.absolute_path))
        pytest.fail(f"{name} --json does not fit its schema at /{where}: {problem.message}")
    output_adapter(name).validate_json(text, strict=True)
    return document


def printed(capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == status, captured.err
    return captured.out


def journals(source: Path) -> Iterator[Path]:
    return iter(sorted(path for path in source.iterdir() if path.name.endswith((".json", ".json.gz", ".json.zst"))))
