"""Journal content made safe for a terminal: control characters shown escaped, never sent raw.

Journals are untrusted. ``\\x1b]52;c;...\\x07`` would set the clipboard, ``\\x1b[2J`` clear the screen, a bare
``\\r`` overwrite what a line said and a bidirectional override reorder it. Human-readable output passes every
piece of journal text through ``for_terminal``; ``--json`` output stays exact (JSON escapes these itself).
"""

from __future__ import annotations

import re
from typing import Final

_NAMED: Final = {"\r": "\\r", "\t": "\\t", "\n": "\\n", "\b": "\\b", "\f": "\\f", "\v": "\\v"}

# C0 controls but newline, DEL, C1 controls, line and paragraph separators, bidirectional embeddings,
# overrides and isolates, and lone surrogates (which no terminal encoding can carry).
_UNSAFE: Final = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_OR_NEWLINE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# The same but tab as well: in a page, tabs and newlines are layout, and every other one of these is escaped.
_UNSAFE_IN_PAGE: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def for_terminal(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control character escaped (``\\x1b``, ``\\u009b``, ``\\r``); newlines are kept
    when ``newlines`` (multi-line message text) and escaped otherwise (one table cell, one error line)."""
    return (_UNSAFE if newlines else _UNSAFE_OR_NEWLINE).sub(_escape, text)


def for_page(text: str) -> str:
    """``text`` with the control characters ``for_terminal`` escapes escaped the same way, but for newlines and
    tabs: what the notebook widgets put in a page, so ESC, BEL or a C1 byte from a journal shows as ``\\x1b``
    there too instead of reaching the browser raw."""
    return _UNSAFE_IN_PAGE.sub(_escape, text)
