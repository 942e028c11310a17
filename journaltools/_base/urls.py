"""Source and store URLs split into their parts, with a malformed one as bad usage rather than a crash.

``urllib.parse`` raises ``ValueError`` for a bracketed host it cannot read (``nats://[::1``,
``nats://[zz]:1/S``); every opener goes through ``parse_url`` so a user sees one line naming the URL.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import ParseResult, unquote, urlparse

from journaltools.errors import InvalidSource


def masked(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@``: messages never carry credentials.

    Everything from the scheme to the **last** ``@`` is masked: a password may hold ``/``, ``?`` or ``#``
    (``nats://alice:S3cret/x@host``), and stopping at the first of those would print the rest of it. Masking a
    little too much (an ``@`` in a path or query) only hides text that was never secret."""
    return _USERINFO.sub("***@", url)


#: From ``scheme://`` up to the last ``@``: greedy, so no character of a password survives.
_USERINFO: Final = re.compile(r"(?<=://).*@", re.DOTALL)


def parse_url(url: str) -> ParseResult:
    """The parts of ``url``; ``InvalidSource`` (naming the URL without credentials) when it cannot be split."""
    try:
        parsed = urlparse(url)
        _ = parsed.hostname  # reading the host is where some malformed hosts are noticed
    except ValueError as error:
        raise InvalidSource(f"{masked(url)!r}: not a valid URL ({error}); check the host part") from None
    return parsed


def file_url_path(url: str) -> str:
    """The local path a ``file://`` URL names.

    A host other than ``localhost`` is refused: the journals would be read from this machine's path of the same
    name, which is not what ``file://otherhost/path`` asks for."""
    parsed = parse_url(url)
    if parsed.netloc not in ("", "localhost"):
        raise InvalidSource(
            f"{masked(url)!r}: file:// URLs name this machine only (file:///path or file://localhost/path), "
            f"not host {parsed.netloc!r}"
        )
    return unquote(parsed.path)
