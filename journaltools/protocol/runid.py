"""Run ids become file names and NATS subject tokens, so they are validated before either."""

from __future__ import annotations

import re

from journaltools.errors import InvalidRunId

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


#: Run ids already found valid: a journal repeats its run id in every record, so the regex runs once per run.
_known_valid: set[str] = set()
_KNOWN_LIMIT = 1 << 12


def is_valid_run_id(run: object) -> bool:
    if type(run) is not str:
        return False
    if run in _known_valid:
        return True
    if _RUN_ID.fullmatch(run) is None:
        return False
    if len(_known_valid) >= _KNOWN_LIMIT:
        _known_valid.clear()
    _known_valid.add(run)
    return True


def validate_run_id(run: object) -> str:
    """Return ``run`` if it is 1-128 characters of ``[A-Za-z0-9_-]`` starting with a letter or digit."""
    if not isinstance(run, str):
        raise InvalidRunId(run, "not a string")
    if _RUN_ID.fullmatch(run) is None:
        raise InvalidRunId(run, "must be 1-128 characters of [A-Za-z0-9_-], starting with a letter or digit")
    return run
