"""Which source a command reads: the runtime's default directory, a URL, a journal file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from journaltools.sources.registry import open_source

if TYPE_CHECKING:
    from journaltools.sources.base import Backend, RunRead
from journaltools.cli._output import UsageError, _note

# -- sources -----------------------------------------------------------------------------------------------------


def _default_source() -> str:
    """The runtime's own journal directory: what every command reads when no source is given."""
    from journaltools.sources.registry import default_source

    return str(default_source())


def _open(url: str, command: str, *, create: bool = False) -> Backend:
    """``open_source``, saying so when ``embedded`` is a throwaway server that lives only for this command, and
    saying where it looked when no source was named and the runtime's own directory is not there."""
    from journaltools.errors import SourceError

    if url == "embedded":
        what = "the data ends with this command" if create else "it starts empty in every command"
        _note(command, f"warning: 'embedded' is a throwaway server: {what}; use embedded:DIR to keep the data in DIR")
    try:
        return open_source(url, create=create)
    except SourceError as error:
        if url != _default_source() or os.path.exists(url):
            raise
        raise SourceError(
            f"no SOURCE given, so the runtime's own directory was read, and {url} does not exist: name a source (a "
            "directory of journals, a journal file, nats://host:port/STREAM) or set XDG_STATE_HOME"
        ) from error


def names_a_source(text: str) -> bool:
    """Whether a word can only be a source: a URL, ``embedded``, or a path that exists."""
    return "://" in text or text == "embedded" or text.startswith("embedded:") or os.path.lexists(text)


def _is_source(text: str) -> bool:
    """Whether a positional argument names a source rather than a run. A run id is one token of letters,
    digits, ``_`` and ``-``; anything with a scheme, a path that exists or a glob is a source."""
    return names_a_source(text) or any(char in text for char in "/\\*?[")


def _source_and_rest(command: str, words: Sequence[str], names: Sequence[str]) -> tuple[str, list[str]]:
    """Split ``[SOURCE] NAME...``: the source is optional (the runtime's directory), the names are not."""
    if len(words) == len(names) + 1:
        return words[0], list(words[1:])
    if len(words) == len(names):
        if words and _is_source(words[0]):
            raise UsageError(f"{words[0]!r} looks like a source; give {' '.join(names)} after it")
        return _default_source(), list(words)
    wanted = " ".join(names)
    raise UsageError(f"expected [SOURCE] {wanted}, got {len(words)} argument(s)")


def _only_run(backend: Backend) -> str:
    """The run of a source holding exactly one (a journal file given alone)."""
    runs = backend.list_runs()
    if len(runs) != 1:
        raise UsageError(f"{backend.url} holds {len(runs)} runs: name the one to show")
    return runs[0]


#: How many candidates an ambiguous run name lists.
CANDIDATES_SHOWN = 5


def run_named(backend: Backend, name: str) -> str:
    """The run ``name`` names in ``backend``: its whole id, a unique prefix of one, or the shortened form ``ls``
    prints (its start and end around ``…``). An unknown name is ``RunNotFound``; an ambiguous one is bad usage
    naming the candidates."""
    from journaltools._base.readable import ELLIPSIS
    from journaltools.errors import RunNotFound

    runs = backend.list_runs()
    if name in runs:
        return name
    head, cut, tail = name.partition(ELLIPSIS)
    found = sorted(
        run
        for run in runs
        if run.startswith(head) and (not cut or run.endswith(tail)) and len(run) > len(head) + len(tail)
    )
    if not found:
        raise RunNotFound(name, backend.url)
    if len(found) > 1:
        shown = ", ".join(found[:CANDIDATES_SHOWN]) + (
            f" and {len(found) - CANDIDATES_SHOWN} more" if len(found) > CANDIDATES_SHOWN else ""
        )
        raise UsageError(f"{name!r} names {len(found)} runs of {backend.url}: {shown}; give more of the id")
    return found[0]


def read_named(backend: Backend, name: str | None, *, strict: bool) -> RunRead:
    """The run a command names (see ``run_named``), or the one run of a journal file when none is named."""
    from journaltools.errors import InvalidRunId, RunNotFound

    if name is None:
        return backend.read_run(_only_run(backend), strict=strict)
    try:
        return backend.read_run(name, strict=strict)
    except (RunNotFound, InvalidRunId):  # a prefix or a shortened id is no run's whole id: look it up
        return backend.read_run(run_named(backend, name), strict=strict)


def _source_and_optional_run(words: Sequence[str]) -> tuple[str, str | None]:
    """Split ``[SOURCE] [RUN]`` (``show``, ``report``): a lone word is the source when it looks like one (a journal
    file holding one run), else a run of the runtime's directory; None for a run left out."""
    if len(words) > 2:
        raise UsageError(f"expected [SOURCE] [RUN], got {len(words)} arguments")
    if len(words) == 2:
        return words[0], words[1]
    if len(words) == 1 and _is_source(words[0]):
        return words[0], None
    if len(words) == 1:
        return _default_source(), words[0]
    return _default_source(), None
