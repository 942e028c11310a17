"""Following a run in a JetStream stream: an ordered consumer on the run's subjects, from the message after the last
one read, that rides out a server restart without losing or repeating a record.

The run is read whole first (``JetStreamBackend.read_run_async``); its messages' stream sequences say where the
consumer starts. Every message is then taken by its stream sequence: one at or below the last taken is a repeat
(a consumer recreated after a restart may deliver again) and is dropped, so nothing is shown twice. nats-py
recreates an ordered consumer whose heartbeats stop (``HEARTBEAT_SECONDS``); should that fail too (the server was
still down when it tried), a follower that has heard nothing for ``STALL_SECONDS`` asks the stream for the last
message on the run's subjects and, when the stream holds more than was taken, subscribes again from the message
after the last taken, so nothing is lost. Bodies are decoded and their findings worded by the backend's own reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

import nats.errors
from nats.js.api import ConsumerConfig, DeliverPolicy

from journaltools._base.aio import run_sync
from journaltools.errors import JournalError
from journaltools.protocol.findings import Finding
from journaltools.sources.base import Backend, RunRead
from journaltools.sources.follower import Change, Follower
from journaltools.sources.jetstream_messages import StoredMessage, ack_time

if TYPE_CHECKING:
    from nats.js.client import JetStreamContext

    from journaltools.sources.jetstream import JetStreamBackend

#: The consumer's idle heartbeat: nats-py recreates an ordered consumer that misses two.
HEARTBEAT_SECONDS = 0.5
#: Silence after which the follower asks the stream itself whether records are waiting.
STALL_SECONDS = 2.0


class StreamFollower(Follower):
    """One run's subjects followed (see the module doc)."""

    def __init__(self, backend: Backend, run: str) -> None:
        from journaltools.sources.jetstream import JetStreamBackend

        assert isinstance(backend, JetStreamBackend)
        self.backend: JetStreamBackend = backend
        self.run = run
        #: The stream sequence of the last message taken.
        self.last = 0
        self._subscription: JetStreamContext.PushSubscription | None = None
        self._findings: list[Finding] = []
        self._complete = True
        self._heard = time.monotonic()

    # -- the blocking face ---------------------------------------------------------------------------------------

    def start(self) -> RunRead:
        return run_sync(self.start_async())

    def wait(self, timeout: float) -> Change:
        return run_sync(self.wait_async(timeout))

    def close(self) -> None:
        run_sync(self.aclose())

    # -- the async core ------------------------------------------------------------------------------------------

    async def start_async(self) -> RunRead:
        read = await self.backend.read_run_async(self.run, strict=False)
        self.last = max((stored.position for stored in read.records), default=0)
        self._findings, self._complete = list(read.findings), read.complete
        await self._subscribe()
        return read

    async def _subscribe(self) -> None:
        await self._unsubscribe()
        config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self.last + 1)
        self._subscription = await self.backend._nc.jetstream().subscribe(
            self.backend.run_filter(self.run),
            stream=self.backend.stream,
            ordered_consumer=True,
            idle_heartbeat=HEARTBEAT_SECONDS,
            config=config,
        )
        self._heard = time.monotonic()

    async def _unsubscribe(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def wait_async(self, timeout: float) -> Change:
        messages = await self._messages(timeout)
        if messages:
            self._heard = time.monotonic()
        elif time.monotonic() - self._heard >= STALL_SECONDS:
            await self._check_stalled()
        fresh = []
        for message in messages:
            if message.sequence <= self.last:
                continue  # delivered again by a recreated consumer: already taken
            self.last = message.sequence
            fresh.append(message)
        if not fresh:
            return Change()
        read = self.backend._decode(self.run, fresh, strict=False)
        refused = self._complete and not read.complete
        self._findings += read.findings
        self._complete = self._complete and read.complete
        notices = [f"{finding.code}: {finding.message}" for finding in read.findings if finding.severity == "error"]
        if refused:
            notices.append("the run is refused from here on, as the runtime refuses it: the run is invalid")
        return Change(
            list(read.records),
            list(self._findings) if read.findings else None,
            self._complete if refused else None,
            notices,
        )

    async def _messages(self, timeout: float) -> list[StoredMessage]:
        """What the consumer delivered within ``timeout`` seconds, every message already waiting included."""
        subscription = self._subscription
        if subscription is None:
            await self._resubscribe_later(timeout)
            return []
        taken: list[StoredMessage] = []
        wait = timeout
        while True:
            try:
                msg = await subscription.next_msg(timeout=wait)
            except (TimeoutError, nats.errors.TimeoutError):
                return taken
            except nats.errors.Error:
                # The connection or the subscription went (a server restart): subscribe again from what was taken.
                await self._resubscribe_later(timeout)
                return taken
            taken.append(_stored(msg))
            wait = 0.01

    async def _resubscribe_later(self, timeout: float) -> None:
        try:
            await self._subscribe()
        except (nats.errors.Error, JournalError, OSError):
            await asyncio.sleep(min(timeout, 0.5))

    async def _check_stalled(self) -> None:
        """Subscribe again when the stream holds a message on the run's subjects past the last one taken."""
        self._heard = time.monotonic()
        try:
            last = await self.backend._get_last(self.backend.run_filter(self.run))
        except (nats.errors.Error, JournalError, OSError):
            return
        if last is not None and last.sequence > self.last:
            await self._resubscribe_later(STALL_SECONDS)

    async def aclose(self) -> None:
        await self._unsubscribe()


def _stored(msg: Any) -> StoredMessage:
    meta = msg.metadata
    return StoredMessage(msg.subject, meta.sequence.stream, msg.data, msg.headers or {}, ack_time(msg.reply))


def stream_position(backend: Backend) -> tuple[int, int]:
    """The stream's message count and last sequence: they move whenever any run gains a record."""
    from journaltools.sources.jetstream import JetStreamBackend

    assert isinstance(backend, JetStreamBackend)
    info = run_sync(backend._api(f"STREAM.INFO.{backend.stream}", b""))
    state = info.get("state") or {}
    return int(state.get("messages") or 0), int(state.get("last_seq") or 0)


__all__ = ["HEARTBEAT_SECONDS", "STALL_SECONDS", "StreamFollower", "stream_position"]
