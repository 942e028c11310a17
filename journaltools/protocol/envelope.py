"""The envelope rule, written once: the ``type``, ``run``, ``seq``, ``ts`` and ``optional`` of every record.

- ``type``: a non-empty string;
- ``run``: a valid run id (``runid.RUN_ID_PATTERN``), and the run of the journal the record was read from;
- ``seq``: an integer from 1 to 2**63 - 1 (a bool is not an integer);
- ``ts``: an RFC 3339 UTC timestamp, each field in range (``TIMESTAMP_PATTERN``);
- ``optional``: absent, or a boolean (``false`` counts as absent).

Two checkers of the one rule stand side by side. ``check_envelope`` takes one parsed record and returns
the finding that refuses it, with the precise message. ``envelope_mask`` takes the envelope fields of many
records as columns (as the fast records path decodes them) and says, row by row, whether the rule holds;
it releases the interpreter for the per-row work. A row it rejects is handed to ``check_envelope`` for its
message. A hypothesis test holds the two to the same verdict on generated and damaged records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, TypeGuard

from journaltools.protocol.findings import Finding

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
from journaltools.protocol.runid import is_valid_run_id

SEQ_MAX: Final = (1 << 63) - 1

#: RFC 3339 UTC with each field in range (the day is not checked against its month). Written for both
#: Python's re and RE2: ``[0-9]`` rather than ``\d``, which in Python also matches other Unicode digits.
TIMESTAMP_PATTERN: Final = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    r"(\.[0-9]{1,9})?Z$"
)
_TIMESTAMP: Final = re.compile(TIMESTAMP_PATTERN)


def is_timestamp(value: object) -> bool:
    return isinstance(value, str) and _TIMESTAMP.fullmatch(value) is not None


def is_seq(value: object) -> TypeGuard[int]:
    return type(value) is int and 1 <= value <= SEQ_MAX


# -- one record ----------------------------------------------------------------------------------------


def _seq_problem(seq: object) -> str:
    if type(seq) is int:
        if seq > SEQ_MAX:
            return f"seq: the integer {seq} is out of range (at most 2**63 - 1)"
        return f"seq: {seq} is not >= 1"
    return f"seq: {seq!r} is not an integer"


def check_envelope(body: dict[str, Any], expected_run: str | None = None) -> Finding | None:
    """The finding for the first envelope field that breaks the rule, or None.

    ``expected_run``: the journal's run id (itself valid), which the record's must equal.
    """
    kind = body.get("type")
    raw_run = body.get("run")
    seq = body.get("seq")
    ts = body.get("ts")
    optional = body.get("optional", False)
    # The common case in one expression; the branches below only say which field broke the rule.
    if (
        type(kind) is str
        and kind
        and type(seq) is int
        and 0 < seq <= SEQ_MAX
        and type(ts) is str
        and _TIMESTAMP.fullmatch(ts) is not None
        and type(optional) is bool
        and (raw_run == expected_run if expected_run is not None else is_valid_run_id(raw_run))
    ):
        return None
    run = raw_run if is_valid_run_id(raw_run) else None
    good_seq = seq if is_seq(seq) else None
    if not isinstance(kind, str) or not kind:
        return Finding.of(run, good_seq, "schema_violation", "type: missing or not a non-empty string")
    if run is None:
        return Finding.of(None, good_seq, "schema_violation", f"run: {raw_run!r} is not a valid run id")
    if good_seq is None:
        return Finding.of(run, None, "schema_violation", _seq_problem(seq))
    if not is_timestamp(ts):
        return Finding.of(run, good_seq, "schema_violation", f"ts: {ts!r} is not an RFC 3339 UTC timestamp")
    if not isinstance(optional, bool):
        return Finding.of(run, good_seq, "schema_violation", "optional: must be true when present")
    if expected_run is not None and run != expected_run:
        return Finding.of(run, good_seq, "run_mismatch", f"record says run {run!r}, journal is {expected_run!r}")
    return None


# -- many records --------------------------------------------------------------------------------------

# The column checkers import numpy and pyarrow when first called: the scalar rule, which every reader and
# writer needs, keeps ``import journaltools`` free of them.

# "YYYY-MM-DDTHH:MM:SS.ffffffZ", the form writers use: byte positions of its digits and fixed characters.
_TS_WIDTH: Final = 27
_TS_DIGITS: Final = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 24, 25)
_TS_FIXED: Final = {4: ord("-"), 7: ord("-"), 10: ord("T"), 13: ord(":"), 16: ord(":"), 19: ord("."), 26: ord("Z")}


def timestamp_mask(strings: pa.Array) -> np.ndarray:
    """Per string: does it match ``TIMESTAMP_PATTERN``? Nulls do not.

    The usual case (every string 27 bytes) is checked byte-wise with numpy, about ten times cheaper
    than the regex; anything else goes through RE2.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(strings)
    if n and not strings.null_count and strings.type == pa.string():
        offsets = np.frombuffer(strings.buffers()[1], np.int32, count=n + 1, offset=strings.offset * 4)
        if (np.diff(offsets) == _TS_WIDTH).all():
            start = int(offsets[0])
            data = np.frombuffer(strings.buffers()[2], np.uint8, count=n * _TS_WIDTH, offset=start)
            chars = data.reshape(n, _TS_WIDTH)
            digits = chars[:, list(_TS_DIGITS)] - np.uint8(48)  # wraps below "0": a non-digit is then > 9
            ok = (digits <= 9).all(axis=1)
            for column, char in _TS_FIXED.items():
                ok &= chars[:, column] == char
            two = digits[:, 4:14].astype(np.int16)  # month, day, hour, minute, second: two digits each
            month, day, hour, minute, second = (two[:, 2 * i] * 10 + two[:, 2 * i + 1] for i in range(5))
            ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
            ok &= (hour <= 23) & (minute <= 59) & (second <= 60)
            return ok
    matched = pc.fill_null(pc.match_substring_regex(strings, TIMESTAMP_PATTERN), False)
    by_regex: np.ndarray = matched.to_numpy(zero_copy_only=False)
    return by_regex


def seq_array(seqs: Sequence[int | None]) -> pa.Array:
    """``seq`` values as int64; a value outside int64 (valid JSON, never a valid seq) becomes null."""
    import pyarrow as pa

    try:
        return pa.array(seqs, pa.int64())
    except (OverflowError, pa.ArrowInvalid):
        return pa.array([v if v is None or -SEQ_MAX <= v <= SEQ_MAX else None for v in seqs], pa.int64())


def envelope_mask(
    kinds: pa.Array, seqs: pa.Array, ts: pa.Array, runs_match: np.ndarray, ts_matches: np.ndarray | None = None
) -> np.ndarray:
    """Per row: does the envelope rule hold?

    ``kinds`` and ``ts`` are string columns (null where the field is missing or null), ``seqs`` an int64
    column from ``seq_array``, ``runs_match`` whether each row's run is its journal's (a valid run id
    itself). ``optional`` needs no column: the decoder only lets a boolean or an absent flag through.
    ``ts_matches``: ``timestamp_mask(ts)``, when the caller has it already.
    """
    import pyarrow.compute as pc

    ok: np.ndarray = pc.fill_null(pc.greater(pc.binary_length(kinds), 0), False).to_numpy(zero_copy_only=False)
    ok &= pc.fill_null(pc.greater_equal(seqs, 1), False).to_numpy(zero_copy_only=False)
    ok &= runs_match
    ok &= timestamp_mask(ts) if ts_matches is None else ts_matches
    return ok
