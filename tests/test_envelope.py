"""The envelope rule's two checkers agree: the scalar ``check_envelope`` and the column-wise ``envelope_mask``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from journaltools.protocol.envelope import SEQ_MAX, check_envelope, envelope_mask, seq_array, timestamp_mask

RUN = "run-1"

kinds = st.one_of(st.none(), st.just(""), st.sampled_from(["user", "assistant", "note", "x"]), st.text(max_size=5))
runs = st.one_of(st.none(), st.just(RUN), st.sampled_from(["run-2", "bad run", "", "-x"]), st.text(max_size=6))
seqs = st.one_of(
    st.none(),
    st.integers(-3, 5),
    st.sampled_from([SEQ_MAX, SEQ_MAX + 1, -(1 << 63), 1 << 80]),
    st.integers(),
)
good_ts = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}Z".format,
    st.integers(0, 9999),
    st.integers(1, 12),
    st.integers(1, 31),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 60),
    st.sampled_from(["", ".1", ".123456", ".123456789", ".1234567890"]),
)


def damaged(stamp: str, where: int, char: str) -> str:
    where %= len(stamp) + 1
    return stamp[:where] + char + stamp[where + 1 :]


stamps = st.one_of(
    st.none(),
    good_ts,
    st.builds(damaged, good_ts, st.integers(0, 40), st.sampled_from(["x", "1", "", "-", "\uff11", "Z", " "])),
    st.text(max_size=30),
)
optionals = st.sampled_from([{}, {"optional": True}, {"optional": False}])


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for name, strategy in (("type", kinds), ("run", runs), ("seq", seqs), ("ts", stamps)):
        if draw(st.booleans()) or name == "run":
            body[name] = draw(strategy)
    body.update(draw(optionals))
    return body


@given(st.lists(envelopes(), min_size=1, max_size=30))
def test_the_column_checker_agrees_with_the_record_checker(bodies: list[dict[str, Any]]) -> None:
    mask = envelope_mask(
        pa.array([b.get("type") for b in bodies], pa.string()),
        seq_array([b.get("seq") for b in bodies]),
        pa.array([b.get("ts") for b in bodies], pa.string()),
        np.array([b.get("run") == RUN for b in bodies]),
    )
    assert mask.tolist() == [check_envelope(b, expected_run=RUN) is None for b in bodies]


@given(st.lists(good_ts, min_size=1, max_size=20), st.data())
def test_the_fast_timestamp_check_is_the_pattern(values: list[str], data: st.DataObject) -> None:
    # Every string 27 bytes long takes the numpy route; damage some and compare with the regex route.
    stamps = [v if len(v) == 27 else "2026-11-29T10:00:00.123456Z" for v in values]
    stamps = [data.draw(st.sampled_from([s, damaged(s, data.draw(st.integers(0, 26)), "x")])) for s in stamps]
    fast = timestamp_mask(pa.array(stamps, pa.string()))
    slow = timestamp_mask(pa.array([*stamps, "not 27 bytes"], pa.string()))[:-1]  # forces RE2
    assert (
        fast.tolist()
        == slow.tolist()
        == [check_envelope({"type": "x", "run": RUN, "seq": 1, "ts": s}) is None for s in stamps]
    )


def test_messages_name_the_field() -> None:
    base = {"type": "user", "run": RUN, "seq": 2, "ts": "2026-11-29T10:00:00Z"}
    assert check_envelope(base, RUN) is None
    cases = {
        "seq: the integer 100000000000000000000000000000 is out of range": {"seq": 10**29},
        "seq: 1e+29 is not an integer": {"seq": 1e29},
        "seq: 0 is not >= 1": {"seq": 0},
        "seq: True is not an integer": {"seq": True},
        "ts: 'yesterday'": {"ts": "yesterday"},
        "run: 'a b' is not a valid run id": {"run": "a b"},
        "type: missing": {"type": None},
        "optional: must be true when present": {"optional": "yes"},
    }
    for message, change in cases.items():
        finding = check_envelope({**base, **change}, RUN)
        assert finding is not None and finding.message.startswith(message), (message, finding)
    mismatch = check_envelope({**base, "run": "run-2"}, RUN)
    assert mismatch is not None and mismatch.code == "run_mismatch"
