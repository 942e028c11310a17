"""Search the text of every run: prompts, messages, thinking, tool inputs and tool results (``journaltools grep``,
``jt.grep``).

The answer is one Arrow table, one row per piece of text that matches (``GREP_SCHEMA``): the run, the seq of the
record holding it, where in the record it is (``WHERE``), the call it belongs to, how often the pattern occurs in it
and a snippet around its first occurrence. Matching is Arrow compute (RE2, Unicode-aware, ``ignore_case`` by
Unicode case folding), never a Python loop per message.

Why it is fast: no run is folded, and most records are never decoded. A literal pattern is first looked for in the
journals' own lines, all of a batch of runs in one Arrow array: a canonical line (the Go encoder's bytes, which the
native scanner proves for a whole journal at once) holds a text as its JSON string, and Go escapes a string
character by character, so a text that contains the pattern has a line that contains the pattern's own escaped
spelling (or, for a tool input, which the line holds as raw JSON, its plain spelling). Only the records of lines that
pass are decoded, and their texts matched exactly. A line that is not canonical may spell a text any way JSON allows,
so its record is always decoded; so is every record for a regular expression, which no escaped spelling can stand
for. Tool inputs are searched as the raw JSON the journal holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from journaltools.errors import InvalidGrep
from journaltools.folding.texts import SearchableText, texts_of
from journaltools.protocol.encode import encode_go_json
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import ProvenRecords, decode_records

if TYPE_CHECKING:
    import pandas as pd

    from journaltools.sources.base import RunRead

#: Where a text sits: the run's prompt (the meta record), a user or assistant message's text, an assistant's
#: thinking, a tool call's input (raw JSON) or a tool result's content.
WHERE: Final = ("prompt", "user", "assistant", "thinking", "tool_input", "tool_result")

GREP_SCHEMA: Final = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("run", pa.string(), nullable=False),
        pa.field("seq", pa.uint64(), nullable=False),
        pa.field("where", pa.string(), nullable=False),
        pa.field("call_id", pa.string()),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("snippet", pa.large_string(), nullable=False),
    ],
    metadata={
        "description": "one row per matching text: seq = the record holding it, where = prompt, user, assistant, "
        "thinking, tool_input or tool_result, call_id = the tool_use id of a tool input or result, count = "
        "occurrences of the pattern in the text, snippet = the first occurrence with up to `context` characters "
        "each side"
    },
)

#: Characters RE2 reads as syntax: escaped, a literal pattern is matched as written.
_RE2_SYNTAX: Final = frozenset("\\.+*?()|[]{}^$")
#: Runs read from a source at a time: the lines of one batch are one Arrow array, so memory stays bounded.
BATCH_RUNS: Final = 1000
#: Characters kept each side of the first occurrence in a snippet.
CONTEXT: Final = 40


def re2_literal(text: str) -> str:
    """``text`` as an RE2 pattern that matches exactly it."""
    return "".join("\\" + char if char in _RE2_SYNTAX else char for char in text)


def _non_capturing(regex: str) -> str:
    """``regex`` with each capturing group made non-capturing (``(`` → ``(?:``, ``(?P<n>`` → ``(?:``), outside
    escapes, ``\\Q...\\E`` quotes and character classes; what it matches is unchanged."""
    out: list[str] = []
    index, length, in_class = 0, len(regex), False
    while index < length:
        char = regex[index]
        if char == "\\":
            if regex.startswith("\\Q", index):
                end = regex.find("\\E", index + 2)
                end = length if end < 0 else end + 2
                out.append(regex[index:end])
                index = end
                continue
            out.append(regex[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            # A "]" straight after "[" or "[^" is a member, not the end of the class.
            for prefix in ("^", "]"):
                if regex.startswith(prefix, index):
                    out.append(prefix)
                    index += 1
            continue
        elif char == "(":
            if regex.startswith("(?P<", index):
                out.append("(?:")
                index = regex.index(">", index) + 1
                continue
            out.append("(" if regex.startswith("(?", index) else "(?:")
            index += 1
            continue
        out.append(char)
        index += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Pattern:
    """What to look for: a literal text, or an RE2 regular expression with ``regex``."""

    text: str
    regex: bool = False
    ignore_case: bool = False

    def check(self) -> None:
        """Refuse an empty pattern or a regular expression RE2 cannot compile (``InvalidGrep``)."""
        if not self.text:
            raise InvalidGrep("the pattern is empty: it would match every text")
        if self.regex:
            try:
                pc.match_substring_regex(pa.array([""], pa.large_string()), self.text)
            except pa.ArrowInvalid as exc:
                raise InvalidGrep(f"not a regular expression RE2 reads: {self.text!r}: {exc}") from None

    @property
    def re2(self) -> str:
        return self.text if self.regex else re2_literal(self.text)

    @property
    def _groupless(self) -> str:
        return _non_capturing(self.text) if self.regex else re2_literal(self.text)

    # A literal goes to RE2 escaped too: RE2 finds a literal many times faster than Arrow's plain substring search.
    def matches(self, texts: pa.Array) -> pa.Array:
        return pc.match_substring_regex(texts, self.re2, ignore_case=self.ignore_case)

    def counts(self, texts: pa.Array) -> pa.Array:
        return pc.count_substring_regex(texts, self.re2, ignore_case=self.ignore_case)

    def snippets(self, texts: pa.Array, context: int) -> pa.Array:
        """The first occurrence in each text (each must hold one) with up to ``context`` characters each side.
        RE2 finds the occurrence and its bytes; only the few bytes around it are cut out here, per matching text."""
        texts = texts.cast(pa.large_string())
        if len(texts) == 0:
            return pa.array([], pa.large_string())
        flags = "(?si)" if self.ignore_case else "(?s)"
        starts = pc.find_substring_regex(texts, self.re2, ignore_case=self.ignore_case).to_numpy().tolist()
        # extract_regex takes named groups only: the pattern's own groups are made non-capturing.
        found = pc.struct_field(pc.extract_regex(texts, f"{flags}(?P<jt_match>{self._groupless})"), [0])
        lengths = pc.binary_length(found).to_numpy().tolist()
        offsets = np.frombuffer(texts.buffers()[1], np.int64)[texts.offset : texts.offset + len(texts) + 1].tolist()
        data = texts.buffers()[2].to_pybytes()
        # Enough bytes for ``context`` characters of up to four bytes, and one cut in two at the window's edge.
        window = 4 * context + 3
        shown: list[str] = []
        for begin, end, start, length in zip(offsets, offsets[1:], starts, lengths, strict=False):
            first, last = begin + start, begin + start + length
            before = data[max(begin, first - window) : first].decode("utf-8", "ignore")[-context:] if context else ""
            after = data[last : min(end, last + window)].decode("utf-8", "ignore")[:context]
            shown.append(before + data[first:last].decode("utf-8", "replace") + after)
        return pa.array(shown, pa.large_string())

    def line_spellings(self) -> list[str] | None:
        """What a canonical line holding a matching text must contain (any one of): the pattern as a JSON string
        spells it, and as raw JSON (a tool input) spells it. None for a regular expression, or a pattern whose
        characters a line may not hold as written (U+FFFD stands for invalid bytes, which Go writes escaped)."""
        if self.regex or "\ufffd" in self.text:
            return None
        escaped = encode_go_json(self.text)[1:-1].decode("utf-8")
        return [escaped] if escaped == self.text else [escaped, self.text]


@dataclass(slots=True)
class GrepResult:
    """Every matching text (``table``, ``GREP_SCHEMA``), how many runs were searched, and what the readers found
    that kept a journal from being read whole (its readable records were searched)."""

    pattern: Pattern
    where: tuple[str, ...]
    runs: int
    table: pa.Table
    findings: list[Finding] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return self.table.to_pandas(types_mapper=pd.ArrowDtype)

    def to_json(self) -> dict[str, Any]:
        """The ``grep --json`` document."""
        return {
            "pattern": self.pattern.text,
            "regex": self.pattern.regex,
            "ignore_case": self.pattern.ignore_case,
            "where": list(self.where),
            "runs": self.runs,
            "matches": self.table.to_pylist(),
        }


class _Batch:
    """The candidate records of a batch of reads, found from their lines (see the module doc)."""

    def __init__(self, pattern: Pattern) -> None:
        self.spellings = pattern.line_spellings()
        self.ignore_case = pattern.ignore_case
        #: (read, the record's index in it, its seq, its searchable texts) of every record to match exactly.
        self.candidates: list[tuple[int, int, int, list[SearchableText]]] = []
        self._chunks: list[bytes] = []
        #: Per chunk: its read, and the record index of each of its lines (None: line i is record i, and the
        #: journal was proven canonical whole, so its records are not decoded yet).
        self._chunk_reads: list[tuple[int, list[int] | None]] = []

    def add(self, number: int, read: RunRead) -> None:
        records = read.records
        if self.spellings is None:
            self.candidates.extend(
                (number, index, record.seq, texts_of(record)) for index, record in enumerate(read.typed())
            )
        elif isinstance(records, ProvenRecords):
            data = records.data
            self._chunks.append(data if data.endswith(b"\n") else data + b"\n")
            self._chunk_reads.append((number, None))
        else:
            canonical: list[int] = []
            for index, stored in enumerate(records):
                # A line the Go encoder would not write may spell a text in any way JSON allows: always matched.
                if stored.noncanonical is None and b"\n" not in stored.raw:
                    canonical.append(index)
                else:
                    self.candidates.append((number, index, stored.record.seq, texts_of(stored.record)))
            if canonical:
                self._chunks.append(b"".join(records[index].raw + b"\n" for index in canonical))
                self._chunk_reads.append((number, canonical))

    def filter_lines(self, reads: Sequence[RunRead]) -> None:
        """Add the records of the lines that hold a spelling of the pattern: one Arrow pass over every line, then
        one decode of the lines that pass (a proven line decodes straight into its record)."""
        if not self._chunks or self.spellings is None:
            return
        buffer, lines, offsets, line_chunk, first_line = _lines_array(self._chunks)
        either = "|".join(re2_literal(spelling) for spelling in self.spellings)
        hit = pc.match_substring_regex(lines, either, ignore_case=self.ignore_case)
        found = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
        proven: list[tuple[int, int]] = []
        proven_lines: list[bytes] = []
        starts = offsets.tolist()
        for line, chunk, position in zip(
            found.tolist(), line_chunk[found].tolist(), (found - first_line[line_chunk[found]]).tolist(), strict=True
        ):
            number, indices = self._chunk_reads[chunk]
            if indices is None:
                proven.append((number, position))
                proven_lines.append(buffer[starts[line] : starts[line + 1] - 1])
            else:
                index = indices[position]
                record = reads[number].records[index].record
                self.candidates.append((number, index, record.seq, texts_of(record)))
        if proven_lines:
            decoded = decode_records(proven_lines)
            self.candidates.extend(
                (number, position, record.seq, texts_of(record))
                for (number, position), record in zip(proven, decoded, strict=True)
            )


def _lines_array(chunks: Sequence[bytes]) -> tuple[bytes, pa.Array, np.ndarray, np.ndarray, np.ndarray]:
    """Every line of ``chunks`` (each ending in a newline) as one string array (over the joined bytes, returned
    with the lines' offsets), with each line's chunk and each chunk's first line. Invalid UTF-8 (a raw tool input
    may hold it) is replaced, chunk by chunk, as the exact match reads it."""
    buffer = b"".join(chunks)
    lines, offsets = _split(buffer)
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:
        chunks = [chunk.decode("utf-8", "replace").encode("utf-8") for chunk in chunks]
        buffer = b"".join(chunks)
        lines, offsets = _split(buffer)
    ends = offsets[1:] - 1
    chunk_ends = np.cumsum([len(chunk) for chunk in chunks])
    line_chunk = np.searchsorted(chunk_ends, ends, side="right")
    first_line = np.searchsorted(ends, np.concatenate(([0], chunk_ends[:-1])), side="left")
    return buffer, lines, offsets, line_chunk, first_line


def _split(buffer: bytes) -> tuple[pa.Array, np.ndarray]:
    """``buffer``'s newline-ended lines as strings, each with its newline, without copying a byte; and their
    offsets."""
    ends = np.flatnonzero(np.frombuffer(buffer, np.uint8) == 0x0A)
    offsets = np.empty(len(ends) + 1, np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    array = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(buffer))
    return array, offsets


def grep_reads(
    pattern: Pattern,
    reads: Sequence[RunRead],
    *,
    source: str = "",
    where: Iterable[str] | None = None,
    context: int = CONTEXT,
) -> pa.Table:
    """The matching texts of ``reads`` as a ``GREP_SCHEMA`` table (the pure core of ``grep``)."""
    wanted = _where(where)
    batch = _Batch(pattern)
    for number, read in enumerate(reads):
        batch.add(number, read)
    batch.filter_lines(reads)
    runs: list[str] = []
    seqs: list[int] = []
    places: list[str] = []
    calls: list[str | None] = []
    texts: list[str] = []
    for number, _, seq, found in sorted(batch.candidates, key=lambda candidate: candidate[:2]):
        for place, call, text in found:
            if place in wanted and text:
                runs.append(reads[number].run)
                seqs.append(seq)
                places.append(place)
                calls.append(call)
                texts.append(text)
    text_array = pa.array(texts, pa.large_string())
    keep = pattern.matches(text_array)
    kept = pc.filter(text_array, keep)
    columns = {
        "run": pc.filter(pa.array(runs, pa.string()), keep),
        "seq": pc.filter(pa.array(seqs, pa.uint64()), keep),
        "where": pc.filter(pa.array(places, pa.string()), keep),
        "call_id": pc.filter(pa.array(calls, pa.string()), keep),
        "count": pattern.counts(kept).cast(pa.int64()),
        "snippet": pattern.snippets(kept, context).cast(pa.large_string()),
    }
    source_column = pa.repeat(pa.scalar(source, pa.string()), len(kept))
    return pa.Table.from_arrays([source_column, *(columns[name] for name in GREP_SCHEMA.names[1:])], schema=GREP_SCHEMA)


def _where(where: Iterable[str] | None) -> tuple[str, ...]:
    if where is None:
        return WHERE
    chosen = tuple(dict.fromkeys(where))
    unknown = [place for place in chosen if place not in WHERE]
    if unknown or not chosen:
        raise InvalidGrep(f"where must name one or more of {', '.join(WHERE)}; not {', '.join(unknown) or '-'}")
    return chosen


def grep(
    pattern: str,
    sources: str | Sequence[str] | None = None,
    *,
    ignore_case: bool = False,
    regex: bool = False,
    where: Iterable[str] | None = None,
    context: int = CONTEXT,
) -> GrepResult:
    """Every text of every run of ``sources`` (the runtime's directory when None) that holds ``pattern``: a literal
    text, or an RE2 regular expression with ``regex``; ``ignore_case`` folds case as Unicode does. ``where``
    narrows the search to some of ``WHERE``. Journals are read leniently: the readable records of one the runtime
    would refuse are searched too, and the findings that say why are in ``findings``. Raises ``InvalidGrep``
    for an empty pattern, a bad regular expression or an unknown ``where``."""
    from journaltools.sources.registry import default_source, open_source

    wanted = Pattern(pattern, regex=regex, ignore_case=ignore_case)
    wanted.check()
    chosen = _where(where)
    if context < 0:
        raise InvalidGrep(f"context must be 0 or more characters, not {context}")
    urls = [str(default_source())] if sources is None else [sources] if isinstance(sources, str) else list(sources)
    tables: list[pa.Table] = []
    findings: list[Finding] = []
    runs = 0
    for url in urls:
        with open_source(url) as backend:
            findings.extend(finding for finding in backend.source_findings() if finding.severity == "error")
            names = backend.list_runs()
            for start in range(0, len(names), BATCH_RUNS):
                reads = backend.read_runs(names[start : start + BATCH_RUNS], strict=False)
                runs += len(reads)
                for read in reads:
                    findings.extend(finding for finding in read.findings if finding.severity == "error")
                tables.append(grep_reads(wanted, reads, source=backend.url, where=chosen, context=context))
    table = pa.concat_tables(tables) if tables else GREP_SCHEMA.empty_table()
    return GrepResult(wanted, chosen, runs, table, findings)


__all__ = ["BATCH_RUNS", "CONTEXT", "GREP_SCHEMA", "WHERE", "GrepResult", "Pattern", "grep", "grep_reads", "texts_of"]
