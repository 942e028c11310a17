from hypothesis import given
from hypothesis import strategies as st

from journaltools.protocol.sequence import AppendVerdict, check_append


@given(st.integers(0, 10**12), st.integers(1, 10**12))
def test_check_append_classifies_every_pair(last: int, seq: int) -> None:
    verdict = check_append(last, seq)
    if seq <= last:
        assert verdict is AppendVerdict.DUPLICATE
    elif seq == last + 1:
        assert verdict is AppendVerdict.NEXT
    else:
        assert verdict is AppendVerdict.GAP


@given(st.integers(0, 10**6))
def test_only_the_next_seq_is_next(last: int) -> None:
    assert check_append(last, last + 1) is AppendVerdict.NEXT
    assert check_append(last, last + 2) is AppendVerdict.GAP
    assert check_append(last + 1, last + 1) is AppendVerdict.DUPLICATE


def test_check_append_advances_nothing() -> None:
    last = 4
    check_append(last, 5)
    assert check_append(last, 5) is AppendVerdict.NEXT  # a torn write re-appends the same seq
