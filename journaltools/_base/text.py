"""Journal content made safe for a terminal: control characters shown escaped, never sent raw.

Journals are untrusted. ``\\x1b]52;c;...\\x07`` would set the clipboard, ``\\x1b[2J`` clear the screen, a bare
``\\r`` overwrite what a line said and a bidirectional override reorder it. Human-readable output passes every
piece of journal text through ``for_terminal``; ``--json`` output stays exact (JSON escapes these itself).
"""

from __future__ import annotations

import re
from typing import Final

_NAMED: Final = {"\r": "\\r", "\t": "\\t", "\n": "\\n", "\b": "\\b", "\f": "\\f", "\v": "\\v"}

# Line and paragraph separators, the bidirectional controls (embeddings and overrides, isolates, and the marks:
# left-to-right, right-to-left and the Arabic letter mark, which reorder the neutral characters around them), and lone
# surrogates (which no terminal encoding can carry): escaped on every face, as are the C0 and C1 controls.
_UNSEEN: Final = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
# The C0 controls but newline, DEL and the C1 controls.
_UNSAFE: Final = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_UNSEEN}]")
_UNSAFE_OR_NEWLINE: Final = re.compile(f"[\x00-\x1f\x7f-\x9f{_UNSEEN}]")
# The same but tab as well: in a page, tabs and newlines are layout, and every other one of these is escaped.
_UNSAFE_IN_PAGE: Final = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_UNSEEN}]")


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


def escaped_anywhere(char: str) -> bool:
    """Whether ``for_terminal`` escapes ``char`` even in one line (what a display must not show decoded)."""
    return _UNSAFE_OR_NEWLINE.fullmatch(char) is not None


def for_page(text: str) -> str:
    """``text`` with the control characters ``for_terminal`` escapes escaped the same way, but for newlines and
    tabs: what the notebook widgets put in a page, so ESC, BEL or a C1 byte from a journal shows as ``\\x1b``
    there too instead of reaching the browser raw."""
    return _UNSAFE_IN_PAGE.sub(_escape, text)
