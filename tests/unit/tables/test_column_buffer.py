"""``ColumnBuffer``: rows added in any pieces, flushed at any points, make the array Arrow makes of them at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.tables.columns import ColumnBuffer, rows_in_order
from journaltools.tables.schema import MESSAGES_SCHEMA, RESPONSES_SCHEMA, SEGMENTS_SCHEMA, TOOL_CALLS_SCHEMA

#: Every type a buffered column has, with values of it (None for a null).
VALUES = {
    pa.int64(): st.integers(-(1 << 63), (1 << 63) - 1),
    pa.uint64(): st.integers(0, (1 << 64) - 1),
    pa.bool_(): st.booleans(),
    pa.duration("ns"): st.integers(-(1 << 63), (1 << 63) - 1),
    pa.timestamp("us", tz="UTC"): st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    pa.string(): st.text(),
    pa.large_string(): st.text(),
    pa.dictionary(pa.int32(), pa.string()): st.sampled_from(["user", "assistant", "", "crashed", "ü"]),
}


def test_every_buffered_column_type_is_covered() -> None:
    buffered = {
        field.type
        for schema in (MESSAGES_SCHEMA, TOOL_CALLS_SCHEMA, RESPONSES_SCHEMA, SEGMENTS_SCHEMA)
        for field in schema
        if field.name != "run"
    }
    assert buffered <= set(VALUES)


@st.composite
def pieces(draw: st.DrawFn) -> tuple[pa.DataType, list[tuple[list[object], bool]]]:
    """A type and the rows to add in pieces, each followed or not by a flush."""
    arrow_type = draw(st.sampled_from(list(VALUES)))
    values = st.one_of(st.none(), VALUES[arrow_type])
    return arrow_type, draw(st.lists(st.tuples(st.lists(values, max_size=8), st.booleans()), max_size=6))


@settings(max_examples=150, deadline=None)
@given(pieces())
def test_rows_in_pieces_make_the_array_arrow_makes_of_them_at_once(drawn: tuple[pa.DataType, list]) -> None:
    arrow_type, parts = drawn
    buffer = ColumnBuffer(arrow_type)
    every: list[object] = []
    for rows, flush in parts:
        buffer.extend(rows)
        every.extend(rows)
        if flush:
            buffer.flush()
    assert len(buffer) == len(every)
    built = buffer.to_arrow()
    expected = pa.array(every, arrow_type)
    assert built.type == arrow_type
    assert built.equals(expected), (built, expected)


def test_native_style_appends_between_python_rows_keep_their_place() -> None:
    """What the native fold does to the bytearrays (after a flush) lands between the Python rows around it."""
    buffer = ColumnBuffer(pa.string())
    buffer.extend(["a", None])
    buffer.flush()
    values, valid, data = buffer.native()
    assert data is not None
    data += "né".encode()
    values += (len(data)).to_bytes(8, "little", signed=True)
    valid += b"\x01"
    buffer.extend(["z"])
    assert buffer.to_arrow().to_pylist() == ["a", None, "né", "z"]


@pytest.mark.parametrize("moment", [datetime(1, 1, 1, tzinfo=UTC), datetime(2026, 12, 2, 7, 0, 0, 123456, tzinfo=UTC)])
def test_times_keep_their_microseconds(moment: datetime) -> None:
    buffer = ColumnBuffer(pa.timestamp("us", tz="UTC"))
    buffer.extend([moment, None, moment + timedelta(microseconds=1)])
    assert buffer.to_arrow().to_pylist() == [moment, None, moment + timedelta(microseconds=1)]


@st.composite
def journals_of_two_kinds(draw: st.DrawFn) -> tuple[pa.DataType, list[tuple[list[object], bool]]]:
    """A type and the rows of journals in order, each tabled by one path or the other."""
    arrow_type = draw(st.sampled_from(list(VALUES)))
    values = st.one_of(st.none(), VALUES[arrow_type])
    return arrow_type, draw(st.lists(st.tuples(st.lists(values, max_size=5), st.booleans()), max_size=8))


@settings(max_examples=150, deadline=None)
@given(journals_of_two_kinds())
def test_rows_of_two_buffers_come_back_in_journal_order(drawn: tuple[pa.DataType, list]) -> None:
    """The builder's two buffers per column (the native fold's, the Python path's), joined in journal order, are
    the array Arrow makes of every journal's rows in turn."""
    arrow_type, journals = drawn
    first, second = ColumnBuffer(arrow_type), ColumnBuffer(arrow_type)
    every: list[object] = []
    places: list[int] = []
    firsts = sum(len(rows) for rows, in_first in journals if in_first)
    seen = [0, 0]
    for rows, in_first in journals:
        (first if in_first else second).extend(rows)
        every.extend(rows)
        start = seen[0] if in_first else firsts + seen[1]
        places.extend(range(start, start + len(rows)))
        seen[0 if in_first else 1] += len(rows)
    built = rows_in_order(first, second, np.asarray(places, np.int64))
    assert built.type == arrow_type
    assert built.equals(pa.array(every, arrow_type)), (built, every)
