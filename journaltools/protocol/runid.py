"""Run ids become file names and NATS subject tokens, so they are validated before either."""

from __future__ import annotations

import re

from journaltools.errors import InvalidRunId

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def is_valid_run_id(run: object) -> bool:
    return isinstance(run, str) and _RUN_ID.fullmatch(run) is not None


def validate_run_id(run: object) -> str:
    """Return ``run`` if it is 1-128 characters of ``[A-Za-z0-9_-]`` starting with a letter or digit."""
    if not isinstance(run, str):
        raise InvalidRunId(run, "not a string")
    if _RUN_ID.fullmatch(run) is None:
        raise InvalidRunId(run, "must be 1-128 characters of [A-Za-z0-9_-], starting with a letter or digit")
    return run
