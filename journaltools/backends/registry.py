"""Sources by URL (INTERFACES.md): a directory or ``file://`` URL, ``nats://host:port/STREAM``, or ``embedded``.

One small table maps a scheme to the function that opens its backend; the JetStream backend is
imported only when a NATS source is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from journaltools.backends.base import Backend
from journaltools.errors import SourceError

Opener = Callable[[str, bool], Backend]


def _open_file(url: str, create: bool) -> Backend:
    from journaltools.backends.file import FileBackend

    path = unquote(urlparse(url).path) if url.startswith("file://") else url
    return FileBackend(Path(path), create=create)


def _open_nats(url: str, create: bool) -> Backend:
    from journaltools.backends.jetstream import open_jetstream_source

    return open_jetstream_source(url, create=create)


_OPENERS: dict[str, Opener] = {"file": _open_file, "nats": _open_nats, "embedded": _open_nats}


def register_scheme(scheme: str, opener: Opener) -> None:
    _OPENERS[scheme] = opener


def scheme_of(url: str) -> str:
    if url == "embedded" or url.startswith("embedded:"):
        return "embedded"
    parsed = urlparse(url)
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # a bare path (or a Windows drive letter)
        return "file"
    return parsed.scheme


def open_source(url: str | Path, *, create: bool = False) -> Backend:
    """Open a source. ``create`` makes a missing directory (file) or stream (JetStream) instead of refusing."""
    text = str(url)
    scheme = scheme_of(text)
    opener = _OPENERS.get(scheme)
    if opener is None:
        raise SourceError(f"{text!r}: unknown source scheme {scheme!r} (use a directory, file://, nats:// or embedded)")
    return opener(text, create)
