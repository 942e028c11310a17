"""Small texts a person reads, shared by the command line and the widgets so both say the same thing.

- ``attention_rank``: statuses in the order a triage looks at them (what needs a person first), not A to Z;
- ``shorten_middle``: a long id cut in its middle, so both ends (where ids differ) stay readable;
- ``readable_json``: raw JSON with Go's ``\\u003e``-style string escapes shown as the characters they stand for;
- ``why_stopped``: one line on why a folded run stopped or what it waits for.

Nothing here is HTML or terminal-safe: the views escape what they show, the CLI passes it through
``for_terminal``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from journaltools._terminal import escaped_anywhere

if TYPE_CHECKING:
    from journaltools.folding import FoldResult

#: Statuses by how urgently a person should look: a journal the runtime refuses, a run that failed, runs that
#: have not ended or wait for someone, runs cut short by a limit, and last the ones that completed.
ATTENTION: Final = ("invalid", "error", "open", "suspended", "budget", "max_iterations", "completed")

#: What stands for the cut middle of a shortened id.
ELLIPSIS: Final = "…"


def attention_rank(status: str) -> int:
    """``status``'s place in ``ATTENTION`` (an unknown terminal reason sorts after ``max_iterations``, before
    ``completed``: it ended, but not as planned)."""
    if status in ATTENTION:
        rank = ATTENTION.index(status)
        return rank if status != "completed" else len(ATTENTION)
    return ATTENTION.index("completed")


def shorten_middle(text: str, limit: int = 28) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its start and end around ``…``: long run
    and task ids share prefixes (a date, a workspace) and differ at the end, so neither end may go."""
    if len(text) <= limit:
        return text
    keep = max(2, limit - 1)
    head = (keep + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (keep - head) :]


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


def why_stopped(result: FoldResult) -> str:
    """Why a folded run stopped, or what it waits for, in one line beside its status (so the status's word is
    not said again): the first error of an invalid journal, the last terminal's message, the deferred calls it
    waits on, the calls of a turn in flight, else the last stop reason. A run with no terminal and nothing in
    flight says "no ending recorded": its process may have died long ago, so it is not called running."""
    if result.status == "invalid":
        error = next((finding for finding in result.findings if finding.severity == "error"), None)
        if error is None:
            return "the journal breaks the protocol"
        where = f"seq {error.seq}: " if error.seq is not None else ""
        return f"{where}{error.code}: {error.message}"
    state = result.state
    parts: list[str] = []
    terminal = state.terminal if state is not None else None
    if terminal is not None and terminal.message and not result.stale_terminal:
        parts.append(terminal.message)
    deferred = sum(1 for call in result.pending_calls if call.deferred is not None)
    waiting = len(result.pending_calls) - deferred
    if deferred:
        parts.append(f"waiting for an answer to {deferred} deferred call{'s' if deferred != 1 else ''}")
    if waiting:
        parts.append(f"waiting for the results of {waiting} tool call{'s' if waiting != 1 else ''}")
    if result.stale_terminal:
        parts.append("a new turn follows the last terminal")
    if parts:
        return "; ".join(parts)
    stop = state.last_stop_reason if state is not None else ""
    if terminal is None:
        waits = "; waiting for the model" if result.waiting_for == "model" else ""
        return f"no ending recorded{waits}" + (f" (last stop reason: {stop})" if stop else "")
    return f"stop reason: {stop}" if stop else terminal.reason
