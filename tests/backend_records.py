"""Small real-format records for the backend tests: a meta, user turns and a terminal, built from typed values."""

from __future__ import annotations

from journaltools.protocol.blocks import user_text
from journaltools.protocol.encode import encode_record
from journaltools.protocol.kinds import Fingerprint, Meta, Record, Terminal, User, make_record

FINGERPRINT = Fingerprint(
    provider="anthropic",
    model="claude-sonnet-4-6",
    system_hash="0" * 64,
    tools_hash="1" * 64,
    thinking_mode="off",
    max_tokens=1000,
    max_iterations=10,
)


def meta(run: str, prompt: str = "hello") -> Meta:
    return Meta(
        version=3, run_id=run, created="2026-08-21T09:14:03.512331907+02:00", fingerprint=FINGERPRINT, prompt=prompt
    )


def user(seq: int, text: str = "more") -> Record:
    return make_record(seq, User(message=user_text(text)))


def terminal(seq: int, reason: str = "completed") -> Record:
    return make_record(seq, Terminal(reason=reason))


def line(record: Record) -> bytes:
    return encode_record(record) + b"\n"
