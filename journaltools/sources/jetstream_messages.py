"""The JetStream messages journaltools reads and the replies it waits for: stored messages with their server
time, direct-get replies, the one reply subscription every request goes through, the append nonce."""

from __future__ import annotations

import asyncio
import itertools
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import nats.errors
import nats.js.errors
import orjson
from nats.aio.msg import Msg
from nats.js.api import Header

from journaltools.sources.nats import (
    JournalClient,
    wait_with_progress,
)

# -- messages -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as the stream holds it, whichever way it was fetched."""

    subject: str
    sequence: int
    data: bytes
    headers: Mapping[str, str]
    time: datetime | None


_STREAM_TIME: Final = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)")


def parse_stream_time(text: str | None) -> datetime | None:
    """A server time (``2026-12-01T19:02:05.101095928Z``) as a UTC datetime, to the microsecond (Python's
    datetime holds no nanoseconds); None for a missing or unreadable one."""
    match = _STREAM_TIME.fullmatch(text or "")
    if match is None:
        return None
    head, fraction, zone = match.groups()
    micros = ((fraction or "") + "000000")[:6]
    stamp = datetime.fromisoformat(f"{head}.{micros}{'+00:00' if zone == 'Z' else zone}")
    return stamp.astimezone(UTC)


def ack_time(reply: str) -> datetime | None:
    """The server time in a consumer message's ack subject, to the microsecond as for direct gets (nats-py's
    ``metadata.timestamp`` goes through a float and can be a microsecond off)."""
    tokens = reply.split(".")
    token = tokens[7] if len(tokens) == 9 else tokens[9] if len(tokens) >= 11 else ""
    if not token.isdigit():
        return None
    nanos = int(token)
    return datetime.fromtimestamp(nanos // 1_000_000_000, UTC) + timedelta(microseconds=nanos % 1_000_000_000 // 1000)


def status_of(msg: Msg) -> str | None:
    """A status reply (``NATS/1.0 404``, ``204 EOB``…) carries a status header and no body."""
    if msg.data or not msg.headers:
        return None
    return msg.headers.get("Status")


def description_of(msg: Msg) -> str:
    headers = msg.headers or {}
    return str(headers.get(Header.DESCRIPTION, ""))


def header_of(msg: Msg, name: str) -> str | None:
    return (msg.headers or {}).get(name)


def from_direct(msg: Msg) -> StoredMessage:
    headers = msg.headers or {}
    return StoredMessage(
        headers.get("Nats-Subject", msg.subject),
        int(headers.get("Nats-Sequence") or 0),
        msg.data,
        headers,
        parse_stream_time(headers.get("Nats-Time-Stamp")),
    )


def new_nonce() -> str:
    """16 random bytes as 32 lowercase hex characters: one per opened journal (``jetstream.go:289-296``)."""
    return secrets.token_hex(16)


class PendingReply:
    """One request in progress: the reply that ends it and, for a batch, the messages before that reply."""

    def __init__(self, end: asyncio.Future[Msg], messages: list[Msg] | None) -> None:
        self.end = end
        self.messages = messages


class Replies:
    """Every request of a backend over one wildcard inbox subscription, made once, instead of a subscription (and
    its SUB and UNSUB round trips) per run read; each request has its own reply subject under the inbox.

    A request waits while anything arrives on the connection (``wait_with_progress``), not for a fixed time: on a
    slow link a batch still arriving, or a reply queued behind other replies, is not a timeout. A batch keeps the
    messages that arrived in the caller's list even when it is given up, so a retry asks from the next one."""

    def __init__(self, client: JournalClient, stream: str, timeout: float) -> None:
        self._client = client
        self._direct_subject = f"$JS.API.DIRECT.GET.{stream}"
        self._timeout = timeout
        self._inbox = ""
        self._pending: dict[str, PendingReply] = {}
        self._numbers = itertools.count()
        self._subscribing: asyncio.Lock | None = None

    async def _on_message(self, msg: Msg) -> None:
        pending = self._pending.get(msg.subject)
        if pending is None:
            return  # a reply to a request already given up
        if pending.messages is not None and status_of(msg) is None:
            pending.messages.append(msg)
        elif not pending.end.done():
            pending.end.set_result(msg)

    async def _ensure_subscribed(self) -> None:
        if self._inbox:
            return
        if self._subscribing is None:
            self._subscribing = asyncio.Lock()
        async with self._subscribing:
            if not self._inbox:
                inbox = self._client.new_inbox()
                await self._client.subscribe(f"{inbox}.*", cb=self._on_message)
                self._inbox = inbox

    async def _ask(
        self, subject: str, payload: bytes, headers: dict[str, str] | None, messages: list[Msg] | None
    ) -> Msg:
        await self._ensure_subscribed()
        reply = f"{self._inbox}.{next(self._numbers)}"
        pending = PendingReply(asyncio.get_running_loop().create_future(), messages)
        self._pending[reply] = pending
        try:
            await self._client.publish(subject, payload, reply=reply, headers=headers)
            end = await wait_with_progress(self._client, pending.end, self._timeout)
        finally:
            del self._pending[reply]
        if status_of(end) == "503":
            raise nats.errors.NoRespondersError  # nobody serves the subject now (a stream leader moving, say)
        return end

    async def request(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> Msg:
        """The one reply to a request (a JetStream API call, a publish's ack, a direct get)."""
        return await self._ask(subject, payload, headers, None)

    async def batch(self, start: int, subject_filter: str, size: int, max_bytes: int, into: list[Msg]) -> Msg:
        """Up to ``size`` messages (and about ``max_bytes``) on ``subject_filter`` from stream sequence ``start``,
        appended to ``into`` as they arrive; returns the status message that ends the batch."""
        request = orjson.dumps({"seq": start, "next_by_subj": subject_filter, "batch": size, "max_bytes": max_bytes})
        return await self._ask(self._direct_subject, request, None, into)
