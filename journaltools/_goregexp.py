"""Go's regular expressions (``regexp``, RE2 syntax) for the runtime's ``--input-match``, ``--output-match`` and
``--match``, run by Python's ``re``.

The runtime compiles those flags with ``regexp.Compile``. Python's ``re`` reads the same text differently in ways
that change results: it accepts what Go refuses (backreferences, lookaround, possessive and atomic groups, ``\\Z``),
its ``$`` also matches before a final newline, its ``\\d``, ``\\s``, ``\\w`` and ``\\b`` are Unicode where Go's are
ASCII, ``\\12`` is a backreference where Go reads an octal escape, and it has no ``\\pL``, ``[[:alpha:]]``,
``\\Q...\\E``, ``\\z`` or ``(?U)``. So a pattern is parsed here by Go's grammar (``regexp/syntax`` with its Perl
flags), refused with Go's error text where Go refuses it, and written out as a Python pattern that matches the same
strings. Only whether a pattern matches is ever asked, so every group becomes a non-capturing one.

Not carried over: Unicode script classes (``\\p{Greek}``), which ``re`` cannot express without tables of its own:
they are refused with a message that says so, never silently read as something else.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Final

#: Go's bound on a repeat count (``{n,m}``).
MAX_REPEAT: Final = 1000
MAX_RUNE: Final = 0x10FFFF

_PERL_CLASSES: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "d": ((0x30, 0x39),),
    "s": ((0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
}
_POSIX_CLASSES: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "ascii": ((0x00, 0x7F),),
    "blank": ((0x09, 0x09), (0x20, 0x20)),
    "cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "digit": ((0x30, 0x39),),
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x09, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "word": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}
#: Go's general categories: a one-letter name is the union of its two-letter ones (``C`` without ``Cn``).
_CATEGORIES: Final = frozenset(
    [
        "L",
        "Lu",
        "Ll",
        "Lt",
        "Lm",
        "Lo",
        "M",
        "Mn",
        "Mc",
        "Me",
        "N",
        "Nd",
        "Nl",
        "No",
        "P",
        "Pc",
        "Pd",
        "Ps",
        "Pe",
        "Pi",
        "Pf",
        "Po",
        "S",
        "Sm",
        "Sc",
        "Sk",
        "So",
        "Z",
        "Zs",
        "Zl",
        "Zp",
        "C",
        "Cc",
        "Cf",
        "Co",
        "Cs",
    ]
)
_SIMPLE_ESCAPES: Final = {"a": 0x07, "f": 0x0C, "t": 0x09, "n": 0x0A, "r": 0x0D, "v": 0x0B}
_WORD: Final = "[0-9A-Za-z_]"
_WORD_BOUNDARY: Final = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_WORD_BOUNDARY: Final = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"


class GoRegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses; the text is Go's (``error parsing regexp: ...``) and, where Python
    would have read the pattern some other way, why."""


def _error(code: str, expression: str, why: str = "") -> GoRegexpError:
    said = f"error parsing regexp: {code}: `{expression}`"
    return GoRegexpError(f"{said} ({why})" if why else said)


@cache
def _category_ranges(name: str) -> tuple[tuple[int, int], ...]:
    """The code points of a general category (``L``: every ``L?``), as ranges, from Python's Unicode tables."""
    ranges: list[tuple[int, int]] = []
    start = -1
    for code in range(MAX_RUNE + 2):
        inside = code <= MAX_RUNE and unicodedata.category(chr(code)).startswith(name)
        if len(name) == 1 and inside and name == "C":
            inside = unicodedata.category(chr(code)) != "Cn"
        if inside and start < 0:
            start = code
        elif not inside and start >= 0:
            ranges.append((start, code - 1))
            start = -1
    return tuple(ranges)


def _negate(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    next_low = 0
    for low, high in sorted(ranges):
        if low > next_low:
            out.append((next_low, low - 1))
        next_low = max(next_low, high + 1)
    if next_low <= MAX_RUNE:
        out.append((next_low, MAX_RUNE))
    return out


def _class_text(ranges: list[tuple[int, int]], *, negate: bool = False) -> str:
    """A Python character class holding exactly ``ranges`` (every character escaped, so nothing reads as syntax),
    or, ``negate``, every character but those. A bracket's negation stays a ``[^...]``: under ``(?i)`` Go folds
    the class and then negates it, which is what Python does with ``[^...]`` and not with its complement."""
    if not ranges:
        return "(?s:.)" if negate else "(?!)"  # Python has no empty class
    parts = []
    for low, high in sorted(ranges):
        parts.append(_escaped(low) if low == high else f"{_escaped(low)}-{_escaped(high)}")
    return ("[^" if negate else "[") + "".join(parts) + "]"


def _escaped(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@dataclass(slots=True)
class _Flags:
    fold_case: bool = False
    multi_line: bool = False
    dot_nl: bool = False
    ungreedy: bool = False


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.names: set[str] = set()

    # -- helpers ---------------------------------------------------------------------------------------------------

    def _rest(self) -> str:
        return self.text[self.pos :]

    def _peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.text[index] if index < len(self.text) else ""

    # -- the grammar -----------------------------------------------------------------------------------------------

    def parse(self) -> str:
        out = self._alternation(_Flags(), top=True)
        return out

    def _alternation(self, flags: _Flags, *, top: bool) -> str:
        """Branches up to the closing ``)`` (consumed by the caller) or the end. Flags set by ``(?i)`` inside a
        group last to its end, across later branches too, as in Go."""
        branches: list[str] = []
        items: list[str] = []
        #: The text of the last repeat operator when the previous item was repeated (Go refuses ``a**``).
        last_repeat_start = -1
        can_repeat = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "|":
                self.pos += 1
                branches.append("".join(items))
                items, can_repeat, last_repeat_start = [], False, -1
                continue
            if char == ")":
                if top:
                    raise _error("unexpected )", self.text)
                break
            if char in "*+?" or (char == "{" and self._repeat_size() is not None):
                op_start = self.pos
                if char == "{":
                    size = self._repeat_size()
                    assert size is not None
                    low, high, length = size
                    self.pos += length
                else:
                    low, high = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[char]
                    self.pos += 1
                lazy = self._peek() == "?"
                if lazy:
                    self.pos += 1
                if last_repeat_start >= 0:
                    raise _error("invalid nested repetition operator", self.text[last_repeat_start : self.pos])
                if not can_repeat or not items:
                    raise _error("missing argument to repetition operator", self.text[op_start : self.pos])
                if low > MAX_REPEAT or high > MAX_REPEAT or (high >= 0 and high < low):
                    raise _error("invalid repeat count", self.text[op_start : self.pos])
                greedy = lazy == flags.ungreedy
                quantifier = (
                    "*"
                    if (low, high) == (0, -1)
                    else "+"
                    if (low, high) == (1, -1)
                    else "?"
                    if (low, high) == (0, 1)
                    else f"{{{low},}}"
                    if high < 0
                    else f"{{{low},{high}}}"
                )
                items[-1] = f"(?:{items[-1]}){quantifier}{'' if greedy else '?'}"
                last_repeat_start = op_start
                continue
            last_repeat_start = -1
            if char == "(":
                group = self._group(flags)
                if group is None:  # a flag-only group: nothing to repeat, flags changed for the rest
                    continue
                items.append(group)
                can_repeat = True
                continue
            items.append(self._atom(flags))
            can_repeat = True
        branches.append("".join(items))
        return "|".join(branches)

    def _repeat_size(self) -> tuple[int, int, int] | None:
        """``{n}``, ``{n,}`` or ``{n,m}`` at the cursor: (low, high or -1, length); None when ``{`` is a literal."""
        match = re.match(r"\{([0-9]+)(,([0-9]*))?\}", self.text[self.pos :])
        if match is None:
            return None
        low = int(match.group(1))
        if match.group(2) is None:
            high = low
        elif match.group(3) == "":
            high = -1
        else:
            high = int(match.group(3))
        # A count too large to hold is refused as Go refuses it, not taken as a literal.
        return min(low, MAX_REPEAT + 1), min(high, MAX_REPEAT + 1), match.end()

    def _group(self, flags: _Flags) -> str | None:
        start = self.pos
        if self._peek(1) != "?":
            self.pos += 1
            return self._close_group(start, flags)
        rest = self._rest()
        if rest.startswith("(?P<") or rest.startswith("(?<"):
            begin = 4 if rest.startswith("(?P<") else 3
            end = rest.find(">")
            lookbehind = rest.startswith(("(?<=", "(?<!"))
            why = "Go's regular expressions have no lookbehind" if lookbehind else ""
            if end < 0:
                raise _error("invalid named capture", rest, why)
            name = rest[begin:end]
            if not name or not all((c.isalnum() and c.isascii()) or c == "_" for c in name):
                raise _error("invalid named capture", rest[: end + 1], why)
            if name in self.names:
                raise _error("duplicate capture group name", name)
            self.names.add(name)
            self.pos += end + 1
            return self._close_group(start, flags)
        # Flags: (?i) (?-s) (?im-sU) (?i:...)
        self.pos += 2
        new = _Flags(flags.fold_case, flags.multi_line, flags.dot_nl, flags.ungreedy)
        sign = 1
        saw_flag = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in "imsU":
                value = sign > 0
                if char == "i":
                    new.fold_case = value
                elif char == "m":
                    new.multi_line = value
                elif char == "s":
                    new.dot_nl = value
                else:
                    new.ungreedy = value
                saw_flag = True
                continue
            if char == "-" and sign > 0:
                sign, saw_flag = -1, False
                continue
            if char in ":)" and (sign > 0 or saw_flag):
                if char == ")":
                    flags.fold_case, flags.multi_line = new.fold_case, new.multi_line
                    flags.dot_nl, flags.ungreedy = new.dot_nl, new.ungreedy
                    return None
                return self._close_group(start, new, opened=True)
            break
        said = self.text[start : self.pos]
        why = {
            "(?=": "Go's regular expressions have no lookahead",
            "(?!": "Go's regular expressions have no lookahead",
            "(?>": "Go's regular expressions have no atomic groups",
            "(?#": "Go's regular expressions have no comments",
            "(?P": "Go's regular expressions have no backreferences",
        }.get(said[:3], "")
        raise _error("invalid or unsupported Perl syntax", said, why)

    def _close_group(self, start: int, flags: _Flags, *, opened: bool = False) -> str:
        inner_flags = _Flags(flags.fold_case, flags.multi_line, flags.dot_nl, flags.ungreedy)
        inner = self._alternation(inner_flags, top=False)
        if self._peek() != ")":
            raise _error("missing closing )", self.text)
        self.pos += 1
        return f"(?:{inner})"

    def _atom(self, flags: _Flags) -> str:
        char = self.text[self.pos]
        if char == "[":
            return self._fold(self._bracket(), flags)
        if char == ".":
            self.pos += 1
            return "(?s:.)" if flags.dot_nl else "[^\\n]"
        if char == "^":
            self.pos += 1
            return "(?m:^)" if flags.multi_line else "\\A"
        if char == "$":
            self.pos += 1
            # Go's $ outside (?m) is the end of the text only; Python's would also match before a final newline.
            return "(?m:$)" if flags.multi_line else "\\Z"
        if char == "\\":
            return self._escape(flags)
        self.pos += 1
        return self._fold(_class_text([(ord(char), ord(char))]), flags)

    @staticmethod
    def _fold(text: str, flags: _Flags) -> str:
        return f"(?i:{text})" if flags.fold_case else text

    def _escape(self, flags: _Flags) -> str:
        start = self.pos
        if self.pos + 1 >= len(self.text):
            raise _error("trailing backslash at end of expression", "")
        char = self.text[self.pos + 1]
        if char == "Q":
            end = self.text.find("\\E", self.pos + 2)
            literal = self.text[self.pos + 2 : end if end >= 0 else len(self.text)]
            self.pos = end + 2 if end >= 0 else len(self.text)
            return "".join(self._fold(_class_text([(ord(c), ord(c))]), flags) for c in literal)
        anchors = {"A": "\\A", "z": "\\Z", "b": _WORD_BOUNDARY, "B": _NOT_WORD_BOUNDARY}
        if char in anchors:
            self.pos += 2
            return anchors[char]
        ranges = self._class_escape()
        if ranges is not None:
            return self._fold(_class_text(ranges), flags)
        code = self._char_escape(start)
        return self._fold(_class_text([(code, code)]), flags)

    def _class_escape(self) -> list[tuple[int, int]] | None:
        """``\\d``, ``\\D`` ... and ``\\pL``, ``\\p{Lu}``, ``\\PL``, ``\\p{^L}`` at the cursor, as ranges."""
        char = self._peek(1)
        if char.lower() in _PERL_CLASSES:
            self.pos += 2
            ranges = list(_PERL_CLASSES[char.lower()])
            return _negate(ranges) if char.isupper() else ranges
        if char not in "pP":
            return None
        start = self.pos
        negate = char == "P"
        if self._peek(2) == "{":
            end = self.text.find("}", self.pos + 3)
            if end < 0:
                raise _error("invalid character class range", self.text[start:])
            name = self.text[self.pos + 3 : end]
            self.pos = end + 1
        else:
            name = self._peek(2)
            if not name:
                raise _error("invalid character class range", self.text[start:])
            self.pos += 3
        if name.startswith("^"):
            negate, name = not negate, name[1:]
        said = self.text[start : self.pos]
        if name == "Any":
            ranges = [(0, MAX_RUNE)]
        elif name in _CATEGORIES:
            ranges = list(_category_ranges(name))
        elif name[:1].isupper() and name.isalpha():
            raise _error(
                "invalid character class range",
                said,
                "journaltools matches Unicode general categories such as \\p{L}, not scripts",
            )
        else:
            raise _error("invalid character class range", said)
        return _negate(ranges) if negate else ranges

    def _char_escape(self, start: int) -> int:
        """One escaped character at the cursor (``\\n``, ``\\x41``, ``\\x{263a}``, ``\\101``, ``\\.``)."""
        char = self._peek(1)
        self.pos += 2
        if char in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[char]
        if char in "01234567":
            digits = char
            # A lone non-zero digit is a backreference, which Go does not have; \0 and two or three digits are octal.
            while len(digits) < 3 and self._peek() in tuple("01234567") and self._peek():
                digits += self._peek()
                self.pos += 1
            if char != "0" and len(digits) == 1:
                raise _error(
                    "invalid escape sequence",
                    self.text[start : self.pos],
                    "Go's regular expressions have no backreferences",
                )
            return int(digits, 8)
        if char == "x":
            if self._peek() == "{":
                end = self.text.find("}", self.pos)
                digits = self.text[self.pos + 1 : end] if end >= 0 else ""
                if end < 0 or not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise _error("invalid escape sequence", self.text[start : (end + 1 if end >= 0 else None)])
                self.pos = end + 1
                code = int(digits, 16)
                if code > MAX_RUNE:
                    raise _error("invalid escape sequence", self.text[start : self.pos])
                return code
            digits = self.text[self.pos : self.pos + 2]
            if len(digits) < 2 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _error("invalid escape sequence", self.text[start : self.pos + len(digits)])
            self.pos += 2
            return int(digits, 16)
        if char.isascii() and not char.isalnum():
            return ord(char)
        why = "Go's regular expressions have no backreferences" if char in "89" else ""
        if char == "Z":
            why = "Go writes the end of the text as \\z"
        raise _error("invalid escape sequence", self.text[start : self.pos], why)

    def _bracket(self) -> str:
        start = self.pos
        self.pos += 1
        negate = self._peek() == "^"
        if negate:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.pos >= len(self.text):
                raise _error("missing closing ]", self.text[start:])
            char = self.text[self.pos]
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.text.startswith("[:", self.pos):
                end = self.text.find(":]", self.pos + 2)
                if end >= 0:
                    name = self.text[self.pos + 2 : end]
                    said = self.text[self.pos : end + 2]
                    wanted = _POSIX_CLASSES.get(name.removeprefix("^"))
                    if wanted is None:
                        raise _error("invalid character class range", said)
                    ranges += _negate(list(wanted)) if name.startswith("^") else wanted
                    self.pos = end + 2
                    continue
            if char == "\\":
                escaped = self._class_escape()
                if escaped is not None:
                    ranges += escaped
                    continue
            low_start = self.pos
            low = self._class_char()
            high = low
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.pos += 1
                high = self._class_char()
                if high < low:
                    raise _error("invalid character class range", self.text[low_start : self.pos])
            ranges.append((low, high))
        return _class_text(ranges, negate=negate)

    def _class_char(self) -> int:
        if self.pos >= len(self.text):
            raise _error("missing closing ]", self.text)
        char = self.text[self.pos]
        if char == "\\":
            if self.pos + 1 >= len(self.text):
                raise _error("trailing backslash at end of expression", "")
            return self._char_escape(self.pos)
        self.pos += 1
        return ord(char)


def translate(pattern: str) -> str:
    """The Python pattern that matches what Go's ``regexp.Compile(pattern)`` matches; ``GoRegexpError`` (Go's
    text) when Go refuses the pattern."""
    if any("\ud800" <= char <= "\udfff" for char in pattern):
        raise _error("invalid UTF-8", pattern)
    return _Parser(pattern).parse()


@dataclass(frozen=True, slots=True)
class GoRegexp:
    """A pattern compiled by Go's rules: ``search(text)`` says whether Go's ``MatchString`` would match."""

    pattern: str
    compiled: re.Pattern[str]

    def search(self, text: str) -> bool:
        return self.compiled.search(text) is not None


def compile_go(pattern: str) -> GoRegexp:
    """Compile ``pattern`` as Go's ``regexp.Compile`` would; ``GoRegexpError`` when Go refuses it."""
    translated = translate(pattern)
    try:
        compiled = re.compile(translated)
    except re.error as exc:  # a gap in the translation, never the user's pattern: still one line
        raise _error("expression journaltools cannot run", pattern, str(exc)) from None
    return GoRegexp(pattern, compiled)


__all__ = ["GoRegexp", "GoRegexpError", "compile_go", "translate"]
