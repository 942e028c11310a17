"""Go's regular expressions (``regexp``, RE2 syntax) for the runtime's ``--input-match``, ``--output-match`` and
``--match``, run by RE2 (the ``google-re2`` binding).

The runtime compiles those flags with ``regexp.Compile``, which is RE2: Go's syntax and linear-time matching, so a
pattern such as ``(a+)+$`` over untrusted journal text cannot take exponential time. RE2's default options are
Go's Perl flags (``$`` is the end of the text, ``\\d``/``\\w``/``\\b`` are ASCII, leftmost-first, ``(?imsU)``,
``\\pL`` and Unicode scripts, ``[[:alpha:]]``, ``\\Q...\\E``, ``\\z``, octal ``\\101``). Where the C++ library
accepts what Go refuses, the pattern is refused here as Go refuses it: ``\\C`` (one byte) and a capture name given
twice. A pattern with a character that is not UTF-8 is refused as Go refuses it, and a text's unpaired surrogates
(an escaped byte that is not UTF-8, or a lone ``\\ud800`` a JSON escape produced) read as U+FFFD, as Go reads the
byte. Only whether a pattern matches is ever asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

import re2

#: Why a construct other engines know is refused: RE2's words name it, these say it is not in Go's syntax.
_NOT_IN_GO: Final = (
    ("(?=", "Go's regular expressions have no lookahead"),
    ("(?!", "Go's regular expressions have no lookahead"),
    ("(?<=", "Go's regular expressions have no lookbehind"),
    ("(?<!", "Go's regular expressions have no lookbehind"),
    ("(?>", "Go's regular expressions have no atomic groups"),
    ("(?#", "Go's regular expressions have no comments"),
    ("\\Z", "Go writes the end of the text as \\z"),
    *((f"\\{digit}", "Go's regular expressions have no backreferences") for digit in "123456789"),
)
#: RE2's words for a refusal and Go's (``regexp/syntax.ErrorCode``), so the message reads as the runtime's does.
_GO_WORDS: Final = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "bad repetition operator": "invalid nested repetition operator",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "trailing \\": "trailing backslash at end of expression",
    "pattern too large - compile failed": "expression too large",
}
_SURROGATES: Final = range(0xD800, 0xE000)


class GoRegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses: ``error parsing regexp: ...`` naming what was refused and, for a
    construct of other engines, that Go does not have it."""


def _error(reason: str) -> GoRegexpError:
    """``reason`` as RE2 says it: what is wrong, then what was refused (``invalid perl operator: (?=``)."""
    code, _, refused = reason.partition(": ")
    why = next((why for construct, why in _NOT_IN_GO if refused.endswith(construct)), "")
    said = f"error parsing regexp: {_GO_WORDS.get(code, code)}" + (f": `{refused}`" if refused else "")
    return GoRegexpError(f"{said} ({why})" if why else said)


def _go_only_refusals(pattern: str) -> str | None:
    """What Go refuses in a pattern RE2 has accepted (so its syntax is sound): ``\\C`` outside ``\\Q...\\E`` and a
    capture name given twice. None when there is nothing."""
    names: set[str] = set()
    index = 0
    while index < len(pattern):
        if pattern.startswith("\\Q", index):
            end = pattern.find("\\E", index + 2)
            index = len(pattern) if end < 0 else end + 2
        elif pattern[index] == "\\":
            if pattern[index + 1 : index + 2] == "C":
                return "invalid escape sequence: \\C"
            index += 2
        elif pattern[index] == "[":
            index = _class_end(pattern, index)
        elif pattern.startswith(("(?P<", "(?<"), index):
            start = pattern.index("<", index) + 1
            end = pattern.index(">", start)
            name = pattern[start:end]
            if name in names:
                return f"duplicate capture group name: {name}"
            names.add(name)
            index = end + 1
        else:
            index += 1
    return None


def _class_end(pattern: str, start: int) -> int:
    """Just past the bracket class opened at ``start`` (a ``]`` first in it is a literal, as ``[:alpha:]`` is)."""
    index = start + 1
    index += pattern.startswith("^", index)
    index += pattern.startswith("]", index)
    while index < len(pattern) and pattern[index] != "]":
        if pattern[index] == "\\":
            index += 2
        elif pattern.startswith("[:", index) and ":]" in pattern[index + 2 :]:
            index = pattern.index(":]", index + 2) + 2
        else:
            index += 1
    return index + 1


def _go_text(text: str) -> bytes:
    """``text`` as UTF-8 for RE2, each unpaired surrogate read as U+FFFD."""
    if any(ord(char) in _SURROGATES for char in text):
        text = "".join("\ufffd" if ord(char) in _SURROGATES else char for char in text)
    return text.encode("utf-8")


class _Compiled(Protocol):
    def search(self, text: bytes) -> object | None: ...


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refusal to stderr; the refusal is raised instead
    return options


_OPTIONS: Final = _options()


@dataclass(frozen=True, slots=True)
class GoRegexp:
    """A pattern compiled by Go's rules: ``search(text)`` says whether Go's ``MatchString`` would match."""

    pattern: str
    compiled: _Compiled

    def search(self, text: str) -> bool:
        return self.compiled.search(_go_text(text)) is not None


def compile_go(pattern: str) -> GoRegexp:
    """Compile ``pattern`` as Go's ``regexp.Compile`` would; ``GoRegexpError`` when Go refuses it."""
    if any(ord(char) in _SURROGATES for char in pattern):
        raise _error(f"invalid UTF-8: {pattern!r}")
    try:
        compiled = re2.compile(pattern.encode("utf-8"), _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else b""
        raise _error(reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)) from None
    refused = _go_only_refusals(pattern)
    if refused is not None:
        raise _error(refused)
    return GoRegexp(pattern, compiled)


__all__ = ["GoRegexp", "GoRegexpError", "compile_go"]
