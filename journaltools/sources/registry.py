"""Sources by URL (INTERFACES.md): a directory or ``file://`` URL, a single journal file, a glob of journal
files, ``nats://host:port/STREAM``, ``embedded`` or ``embedded:DIR``; no source at all is the runtime's default
journal directory (``default_source``).

One small table maps a scheme to the function that opens its backend; the JetStream backend is
imported only when a NATS source is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from journaltools._base.urls import file_url_path, parse_url
from journaltools.errors import InvalidSource, SourceError
from journaltools.folding.facts import RunFacts
from journaltools.sources.base import Backend

Opener = Callable[[str, bool], Backend]


def _open_file(url: str, create: bool) -> Backend:
    """A directory of journals, one journal file (``<id>.json``, ``.json.gz``, ``.json.zst``) or a glob."""
    from journaltools.sources.file import FileBackend, has_glob, open_journal_files
    from journaltools.sources.scan import journal_name_parts

    path = file_url_path(url) if url.startswith("file://") else url
    if not path:
        raise InvalidSource(f"{url!r}: an empty path is not a source (give a directory, use . for this one)")
    if has_glob(path):
        return open_journal_files(path)
    if journal_name_parts(os.path.basename(path)) is not None and not os.path.isdir(path):
        if not os.path.lexists(path):
            raise SourceError(f"{path}: no such journal file; check the path")
        return open_journal_files(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise SourceError(f"{path}: neither a directory of journals nor a journal file (<run id>.json)")
    return FileBackend(Path(path), create=create)


def _open_nats(url: str, create: bool) -> Backend:
    from journaltools.sources.jetstream import open_jetstream_source

    return open_jetstream_source(url, create=create)


_OPENERS: dict[str, Opener] = {
    "file": _open_file,
    "nats": _open_nats,
    "tls": _open_nats,
    "ws": _open_nats,
    "wss": _open_nats,
    "embedded": _open_nats,
}


def register_scheme(scheme: str, opener: Opener) -> None:
    _OPENERS[scheme] = opener


def scheme_of(url: str) -> str:
    if url == "embedded" or url.startswith("embedded:"):
        return "embedded"
    try:
        parsed = parse_url(url)
    except InvalidSource:
        if os.path.lexists(url):  # a path that merely looks like a malformed URL
            return "file"
        raise
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # a bare path (or a Windows drive letter)
        return "file"
    if parsed.scheme not in _OPENERS and os.path.lexists(url):  # a path that merely contains a colon
        return "file"
    return parsed.scheme


def default_source() -> Path:
    """The runtime's own journal directory when nothing else is configured (``runstate.DefaultDir``):
    ``$XDG_STATE_HOME/fisk-ai/runs`` when the variable is set at all (as the runtime, even when relative), else
    ``~/.local/state/fisk-ai/runs``."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if state else Path.home() / ".local" / "state"
    return base / "fisk-ai" / "runs"


def open_source(url: str | Path | None = None, *, create: bool = False) -> Backend:
    """Open a source (None: ``default_source()``). ``create`` makes a missing directory (file) or stream
    (JetStream) instead of refusing.

    Raises ``InvalidSource`` for a source that cannot be one as written (bad usage), and another
    ``SourceError`` for one that cannot be used now; the backend's ``close`` stops whatever opening started.
    """
    if url is None:
        url = default_source()
    text = os.fspath(url)
    scheme = scheme_of(text)
    opener = _OPENERS.get(scheme)
    if opener is None:
        raise InvalidSource(
            f"{text!r}: unknown source scheme {scheme!r} "
            "(use a directory, a journal file or glob, file://, nats://, embedded or embedded:DIR)"
        )
    return opener(text, create)


def run_facts(source: str | os.PathLike[str] | None, run: str) -> RunFacts:
    """The facts of a run's records as the runtime's ``Store.Records`` returns them: read without folding,
    refused when a line does not decode (what ``Store.Records`` refuses). ``source`` None: the runtime's own
    directory."""
    with open_source(os.fspath(source) if source is not None else default_source()) as backend:
        read = backend.read_run(run, strict=True)
    return RunFacts.of(read.typed())
