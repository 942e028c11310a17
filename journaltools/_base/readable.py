"""Small texts a person reads, shared by the command line and the widgets so both say the same thing.

- ``shorten_middle``: a long id cut in its middle, so both ends (where ids differ) stay readable;
- ``shown_part``: a value cut to ``SHOWN_CHARS`` characters, the bound every face shows of one value;
- ``readable_json``: raw JSON with Go's ``\\u003e``-style string escapes shown as the characters they stand for.

Nothing here is HTML or terminal-safe: the views escape what they show, the CLI passes it through
``for_terminal``.
"""

from __future__ import annotations

import re
from typing import Final

from journaltools._base.text import escaped_anywhere

#: What stands for the cut middle of a shortened id.
ELLIPSIS: Final = "…"


def shorten_middle(text: str, limit: int = 28) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its start and end around ``…``: long run
    and task ids share prefixes (a date, a workspace) and differ at the end, so neither end may go."""
    if len(text) <= limit:
        return text
    keep = max(2, limit - 1)
    head = (keep + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (keep - head) :]


def shorten_end(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its start and ``…``: a prompt, whose start is
    what tells runs apart."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS


#: At most this many characters of one value are shown by any face (show, the report, the widgets' pages): a
#: journal value can be megabytes, which no reader reads on a screen; each face says how much it cut.
SHOWN_CHARS: Final = 20_000


def shown_part(text: str) -> str:
    """``text`` cut to ``SHOWN_CHARS`` characters, saying how many more it had (plain text)."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]} … ({len(text) - SHOWN_CHARS:,} more characters of {len(text):,} not shown)"


# A JSON \u escape, or a surrogate pair of them, not preceded by another backslash escape (the lookbehind is on an
# even run of backslashes: "\\u0041" is a backslash and the letters u0041, not an escape).
_ESCAPE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|"
                            r"(?<!\\)((?:\\\\)*)\\u([0-9a-fA-F]{4})")  # fmt: skip


def _printable(char: str) -> bool:
    # Control characters, separators that break lines, bidirectional controls and lone surrogates stay escaped:
    # decoding them would change what the reader sees around them. So do the quote and the backslash, which
    # would make the shown JSON read differently.
    return char not in '"\\' and not escaped_anywhere(char)


def _decode(match: re.Match[str]) -> str:
    if match.group(2) is not None:
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        char = chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        prefix = match.group(1)
    else:
        char = chr(int(match.group(5), 16))
        prefix = match.group(4)
    return prefix + char if _printable(char) else match.group(0)


def readable_json(text: str) -> str:
    """JSON text with its ``\\uXXXX`` string escapes shown as the characters they stand for (Go writes ``<``,
    ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``): for display only, never for storing. Everything
    else keeps its spelling (numbers, ``\\n``, the escapes of control characters)."""
    return _ESCAPE.sub(_decode, text) if "\\u" in text else text
