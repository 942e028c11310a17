"""The client's header parser gives nats-py's dictionary for every header block."""

from hypothesis import given
from hypothesis import strategies as st
from nats.aio.client import Client

from journaltools.sources.nats import JournalClient

pieces = st.sampled_from(
    [b"Nats-Subject", b"Nats-Sequence", b"x", b":", b": ", b"\r\n", b"\r", b"\n", b" ", b"\t", b"\x1c", b"\x0b",
     b"\xff", b"\xe2\x82", b"\xe2\x82\xac", b"\xc2\xa0", b"journal.run-1.5", b"42", b"", b"a b", b"\x85"]
)  # fmt: skip


@given(st.lists(pieces, max_size=40).map(b"".join))
def test_the_header_parser_is_nats_pys(block: bytes) -> None:
    assert JournalClient._parse_header_lines(block) == Client._parse_header_lines(block)


def test_the_client_is_used_by_nats_py() -> None:
    assert "_parse_header_lines" in vars(Client), "nats-py renamed its header parser: the override is dead"
