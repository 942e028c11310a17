"""Every request the JetStream backend makes of the server, in one place: ``$JS.API`` calls, direct and leader
gets, batched reads and ordered consumers, the stream's subject counts paged past the server's limit, and the
retries of transient failures around each (``retry_transient``)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import nats.errors
import nats.js.errors
import orjson
from nats.aio.msg import Msg

from journaltools.errors import (
    SourceError,
)
from journaltools.sources.jetstream_messages import (
    Replies,
    StoredMessage,
    ack_time,
    description_of,
    from_direct,
    header_of,
    parse_stream_time,
    status_of,
)
from journaltools.sources.nats import (
    JetStreamOptions,
    JournalClient,
    retry_transient,
)

T = TypeVar("T")

#: The server's page size for subject details in one stream-info response (``JSMaxSubjectDetails``).
SERVER_SUBJECTS_PAGE: Final = 100_000


class StreamRequests:
    """The requests of a bound stream; ``JetStreamBackend`` is one. What it asks with is set when the stream is
    bound: the connection, the stream's name and options, and whether it serves direct gets."""

    _nc: JournalClient
    _replies: Replies
    _closed: bool
    options: JetStreamOptions
    stream: str
    url: str
    direct: bool

    async def _retrying(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        passthrough: tuple[type[Exception], ...] = (),
    ) -> T:
        """``attempt`` with transient failures retried (``retry_transient``); a fenced publish is the caller's."""
        return await retry_transient(
            what,
            attempt,
            where=self.url,
            options=self.options,
            closed=lambda: self._closed,
            passthrough=passthrough,
            slot_taken_passes=True,
            answering=self._answering,
        )

    async def _answering(self) -> bool:
        """Whether the server still answers, asked after a request met a silent connection: a ping, and anything
        at all arriving meanwhile counts. A client that is reconnecting is left to the retries (a server
        restarting); only a connection that looks up and says nothing is a server that stopped answering."""
        client = self._nc
        if not client.is_connected:
            return True
        seen = client.received_bytes
        try:
            await client.flush(timeout=self.options.request_timeout)  # type: ignore[arg-type]  # nats-py says int
        except Exception:
            return client.received_bytes != seen or not client.is_connected
        return True

    async def _api(self, endpoint: str, payload: bytes, *, what: str = "") -> dict[str, Any]:
        """One ``$JS.API`` request; an error reply is raised as nats-py's ``APIError`` (then mapped)."""

        async def attempt() -> dict[str, Any]:
            reply = await self._replies.request(f"$JS.API.{endpoint}", payload)
            body: dict[str, Any] = orjson.loads(reply.data)
            if "error" in body:
                nats.js.errors.APIError.from_error(body["error"])  # raises the matching APIError subclass
            return body

        return await self._retrying(what or endpoint, attempt, passthrough=(nats.js.errors.NotFoundError,))

    async def _get_last(self, subject_filter: str) -> StoredMessage | None:
        """The last message on a subject (wildcards allowed), or None."""
        if not self.direct:
            return await self._message_get({"last_by_subj": subject_filter})

        async def attempt() -> StoredMessage | None:
            reply = await self._replies.request(
                f"$JS.API.DIRECT.GET.{self.stream}", orjson.dumps({"last_by_subj": subject_filter})
            )
            status = status_of(reply)
            if status is None:
                return from_direct(reply)
            if status == "404":
                return None
            raise nats.js.errors.APIError(code=int(status), description=description_of(reply))

        return await self._retrying(f"direct get of {subject_filter}", attempt)

    async def _message_get(self, request: dict[str, Any]) -> StoredMessage | None:
        """One message by the stream leader's message get (``STREAM.MSG.GET``: no direct get needed)."""
        try:
            reply = await self._api(f"STREAM.MSG.GET.{self.stream}", orjson.dumps(request), what="message get")
        except nats.js.errors.NotFoundError:
            return None
        stored = reply["message"]
        headers = JournalClient._parse_header_lines(base64.b64decode(stored["hdrs"])) if stored.get("hdrs") else {}
        data = base64.b64decode(stored.get("data") or b"")
        return StoredMessage(
            stored["subject"], int(stored["seq"]), data, headers, parse_stream_time(stored.get("time"))
        )

    async def _consume(self, subject_filter: str, expected: int) -> list[StoredMessage]:
        """``expected`` messages on ``subject_filter`` through an ordered consumer (a stream without direct get).

        How many to wait for comes from the stream's subject counts, not from the consumer (a new consumer's
        pending count is not always there yet); a fetch that brings nothing within the request timeout ends it,
        as the runtime's reader ends on five quiet seconds."""
        messages: list[StoredMessage] = []
        if not expected:
            return messages
        subscription = await self._nc.jetstream().subscribe(subject_filter, ordered_consumer=True, stream=self.stream)
        try:
            while len(messages) < expected:
                try:
                    msg = await subscription.next_msg(timeout=self.options.request_timeout)
                except nats.errors.TimeoutError:
                    break
                meta = msg.metadata
                stamp = ack_time(msg.reply)
                messages.append(StoredMessage(msg.subject, meta.sequence.stream, msg.data, msg.headers or {}, stamp))
                if meta.num_pending == 0:
                    break
        finally:
            await subscription.unsubscribe()
        return messages

    async def _get_all(self, subject_filter: str, expected: int) -> list[StoredMessage]:
        """Every message on ``subject_filter`` in stream order."""
        if not self.direct:
            return await self._retrying(f"reading {subject_filter}", lambda: self._consume(subject_filter, expected))

        # Batch by batch, each with its own retries: a run that takes minutes to arrive on a slow link is many
        # batches that each make progress, and a batch broken off is asked again from the message after the last
        # one that arrived, never from its start.
        messages: list[StoredMessage] = []

        async def attempt() -> tuple[Msg, int]:
            start = messages[-1].sequence + 1 if messages else 1
            received: list[Msg] = []
            try:
                final = await self._replies.batch(
                    start, subject_filter, self.options.read_batch, self.options.read_batch_bytes, received
                )
            finally:
                messages.extend(from_direct(msg) for msg in received)
            status = status_of(final)
            if status not in ("204", "404"):
                raise nats.js.errors.APIError(code=int(status or 0), description=description_of(final))
            return final, len(received)

        while True:
            final, arrived = await self._retrying(f"reading {subject_filter}", attempt)
            if status_of(final) == "404":  # nothing (more) on the filter
                return messages
            pending = int(header_of(final, "Nats-Num-Pending") or 0)
            if pending == 0 or not arrived:
                return messages

    async def _subject_counts(self, subject_filter: str) -> dict[str, int]:
        """Every subject on ``subject_filter`` with its message count, paged past the server's page limit.

        The server sends at most ``SERVER_SUBJECTS_PAGE`` subjects per stream-info response, sorted, with the
        ``total``; this asks again with ``offset`` until ``total`` is covered. ``subjects_page_limit`` makes it
        use fewer subjects of each page (tests use it to page over a small stream).
        """
        subjects: dict[str, int] = {}
        offset = 0
        limit = self.options.subjects_page_limit
        while True:
            request = orjson.dumps({"subjects_filter": subject_filter, "offset": offset})
            info = await self._api(f"STREAM.INFO.{self.stream}", request, what="listing subjects")
            page: dict[str, int] = (info.get("state") or {}).get("subjects") or {}
            keys = sorted(page)
            if limit is not None:
                keys = keys[:limit]
            for key in keys:
                subjects[key] = page[key]
            offset += len(keys)
            total = info.get("total")
            if total is None:  # a server that does not page: refuse to truncate silently
                if len(page) >= SERVER_SUBJECTS_PAGE:
                    raise SourceError(
                        f"{self.url}: the server sent {len(page)} subjects without paging information; "
                        "the listing would be truncated"
                    )
                return subjects
            if not keys or offset >= int(total):
                return subjects
