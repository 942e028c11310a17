"""The JetStream backend (PROTOCOL.md section 5): the record with seq N of run R is the one message on ``journal.R.N``.

Append-only is enforced by the server, not by politeness: the stream keeps one message per subject and discards
new messages per subject, so a stored record can never be replaced; a stream whose settings would let a record
be replaced or expire is refused (``check_stream_config``).

Writing. A writer appends ``last + 1`` only, through CheckAppend, publishing to the literal subject
``journal.R.N`` with ``Nats-Expected-Last-Subject-Sequence: 0`` (the slot must be empty: constant cost) and a
``Nats-Msg-Id`` made once per logical write and reused on every retry. ``last_seq`` moves only after the ack.
A rejection (err_code 10071 wrong last sequence, or 10077 maximum messages per subject, which nats-py reports as
"service unavailable") means the slot is taken; the writer reads the slot back: our message id means the ack was
lost and the record is ours (adopted), seq 1 means another writer created the run at the same time
(``ConcurrentCreate``), anything else means another writer moved the tail (``AnotherWriter``). Transient failures
(timeouts, a server restarting, no responders) are retried with the same message id until the operation times out.

Reading. A run is read with batched direct gets (``$JS.API.DIRECT.GET`` with ``next_by_subj: journal.R.*`` and
``batch``): no consumer is created, one request returns up to a batch of messages. This was picked by
measurement (``benchmarks/bench_jetstream.py``, 2 cores): draining a 20,000-record run without decoding, raw
batched direct get ran at ~38,000 records/s against ~15,000 for nats-py's ordered consumer and ~16,000 for an
ack-less pull consumer; over 200 short runs read one after another it was ~2x both, because it creates and
deletes no consumer per run. Batches of 4,096 beat 1,024 by ~40% and 16,384 adds nothing.
Messages are atomic, so there is no torn tail on JetStream: any body that does not parse is corruption.

Listing. A census finds the runs from the subjects ``journal.*.1`` (stream info with ``subjects_filter``,
paged with ``offset`` past the server's 100,000 subjects per response, where nats-py's ``stream_info`` would
stop silently), so its cost follows the number of runs. It then checks that the runs' message counts add up to
the stream's: when they do not (a run whose seq 1 is missing, another subject in the stream), or when runs are
short enough that listing every subject under ``journal.>`` is cheaper (``LIST_EVERY_SUBJECT_UP_TO``), every
subject is listed instead, so no run is ever missed. Each run is summarized from two records: ``journal.R.1``
and the last message on ``journal.R.*`` (``listing.summarize_two_records``).

All I/O is ``async def`` on journaltools' one background loop; the connection lives there and ``aclose`` drains it.
URLs, connecting and the mapping of NATS errors to the journaltools error tree live in ``nats_connection``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import uuid
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import Header

from journaltools.aio import map_bounded, run_sync
from journaltools.backends.base import (
    AppendResult,
    AppendVerdictTaken,
    Backend,
    JournalWriter,
    RunRead,
    RunSummary,
    prepare_raw_record,
    prepare_record,
)
from journaltools.backends.nats_connection import (
    DEFAULT_PREFIX,
    DEFAULT_STREAM,
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    EXPECTED_STREAM,
    MSG_ID,
    Failure,
    JetStreamLocation,
    JetStreamOptions,
    JournalClient,
    classify_nats_error,
    connect_client,
    parse_nats_url,
    retry_transient,
)
from journaltools.errors import (
    AnotherWriter,
    ConcurrentCreate,
    CorruptJournal,
    InvalidSource,
    RunNotFound,
    SequenceGap,
    SlowReads,
    SourceError,
    StreamConfigRefused,
)
from journaltools.listing import summarize_by_fold, summarize_two_records
from journaltools.protocol.findings import Finding
from journaltools.protocol.records import LineNotJson, RawRecord, decode_record
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.protocol.sequence import AppendVerdict, check_append

T = TypeVar("T")
A = TypeVar("A")

#: The server's page size for subject details in one stream-info response (``JSMaxSubjectDetails``).
SERVER_SUBJECTS_PAGE = 100_000
#: Records per run on average up to which a census lists every subject rather than counting run by run:
#: measured on a local server, a counting request costs about 130 us and a listed subject about 2 us.
LIST_EVERY_SUBJECT_UP_TO = 32


# -- the stream ---------------------------------------------------------------------------------------


def stream_config_for(stream: str, prefix: str, replicas: int = 1) -> dict[str, Any]:
    """The configuration journaltools creates a stream with (``replicas`` > 1 needs a JetStream cluster)."""
    return {
        "name": stream,
        "subjects": [f"{prefix}.>"],
        "retention": "limits",
        "storage": "file",
        "num_replicas": replicas,
        "max_msgs_per_subject": 1,
        "discard": "new",
        "discard_new_per_subject": True,
        "max_age": 0,
        "allow_direct": True,
        "allow_rollup_hdrs": False,
        "deny_delete": True,
        "deny_purge": True,
    }


def check_stream_config(stream: str, config: Mapping[str, Any], prefix: str = DEFAULT_PREFIX) -> None:
    """Refuse a stream whose settings would let a stored record be replaced, expire or go unread.

    Raises ``StreamConfigRefused`` naming the first offending setting and why it matters.
    """

    def refuse(setting: str, why: str) -> None:
        raise StreamConfigRefused(stream, setting, why)

    if config.get("max_age", 0):
        seconds = int(config["max_age"]) / 1e9
        refuse("max_age", f"set to {seconds:g}s: stored runs would silently expire; journals must have no maximum age")
    if config.get("retention", "limits") != "limits":
        refuse(
            "retention",
            f"{config.get('retention')!r} deletes messages once consumed; journals need 'limits' retention",
        )
    if config.get("max_msgs_per_subject") != 1:
        refuse(
            "max_msgs_per_subject",
            f"is {config.get('max_msgs_per_subject')}, must be 1: the slot journal.R.N holds exactly one record",
        )
    if config.get("discard", "old") != "new":
        refuse("discard", "is 'old': reaching a limit would delete the oldest records; it must be 'new'")
    if not config.get("discard_new_per_subject", False):
        refuse(
            "discard_new_per_subject",
            "is off: a second message on journal.R.N would replace the stored record instead of being rejected",
        )
    if config.get("storage", "file") != "file":
        refuse("storage", f"is {config.get('storage')!r}: memory storage loses every record when the server stops")
    if config.get("allow_rollup_hdrs", False):
        refuse("allow_rollup_hdrs", "is on: a Nats-Rollup header would purge stored records")
    if config.get("allow_msg_ttl", False):
        refuse("allow_msg_ttl", "is on: a Nats-TTL header would make stored records expire")
    if config.get("subject_delete_marker_ttl"):
        refuse("subject_delete_marker_ttl", "is set: delete markers come with expiring records")
    if config.get("allow_msg_counter", False):
        refuse("allow_msg_counter", "is on: a counter stream folds messages together instead of keeping them")
    if config.get("subject_transform"):
        refuse("subject_transform", "is set: records would not be stored on the subject they were appended to")
    subjects = config.get("subjects") or []
    if f"{prefix}.>" not in subjects and ">" not in subjects:
        refuse("subjects", f"{subjects!r} do not capture {prefix}.>: records would not be stored in this stream")


# -- helpers over messages ----------------------------------------------------------------------------


def _status_of(msg: Msg) -> str | None:
    """A status reply (``NATS/1.0 404``, ``204 EOB``…) carries a status header and no body."""
    if msg.data or not msg.headers:
        return None
    return msg.headers.get("Status")


def _description_of(msg: Msg) -> str:
    headers = msg.headers or {}
    return str(headers.get(Header.DESCRIPTION, ""))


def _header(msg: Msg, name: str) -> str | None:
    return (msg.headers or {}).get(name)


def _stream_sequence(msg: Msg) -> int:
    value = _header(msg, "Nats-Sequence")
    return int(value) if value is not None else 0


def new_msg_id(run: str, seq: int) -> str:
    """A message id unique to one logical write (ids are matched stream-wide, so never run and seq alone)."""
    return f"{run}.{seq}.{uuid.uuid4().hex}"


class _Batch:
    """One batched direct get in progress: its messages, and the status message that ends it."""

    def __init__(self, end: asyncio.Future[Msg]) -> None:
        self.messages: list[Msg] = []
        self.end = end


class _DirectReplies:
    """Batched direct gets over one wildcard inbox subscription, made once, instead of a subscription (and its
    SUB and UNSUB round trips) per run read; each request has its own reply subject under the inbox."""

    def __init__(self, client: Client, stream: str, timeout: float) -> None:
        self._client = client
        self._request_subject = f"$JS.API.DIRECT.GET.{stream}"
        self._timeout = timeout
        self._inbox = ""
        self._batches: dict[str, _Batch] = {}
        self._numbers = itertools.count()
        self._subscribing: asyncio.Lock | None = None

    async def _on_message(self, msg: Msg) -> None:
        batch = self._batches.get(msg.subject)
        if batch is None:
            return  # a reply to a request already given up
        if _status_of(msg) is None:
            batch.messages.append(msg)
        elif not batch.end.done():
            batch.end.set_result(msg)

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

    async def batch(self, start: int, subject_filter: str, size: int) -> tuple[list[Msg], Msg]:
        """Up to ``size`` messages on ``subject_filter`` from stream sequence ``start``, and the end status."""
        await self._ensure_subscribed()
        reply = f"{self._inbox}.{next(self._numbers)}"
        batch = _Batch(asyncio.get_running_loop().create_future())
        self._batches[reply] = batch
        try:
            request = orjson.dumps({"seq": start, "next_by_subj": subject_filter, "batch": size})
            await self._client.publish(self._request_subject, request, reply=reply)
            end = await asyncio.wait_for(batch.end, self._timeout)
        finally:
            del self._batches[reply]
        return batch.messages, end


# -- the writer ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """The logical write in progress: its seq, its bytes and the message id every retry reuses."""

    seq: int
    raw: bytes
    msg_id: str


def _record_of(msg: Msg) -> RawRecord | None:
    """The record a message holds; None for one that does not parse (its run's summary is "invalid")."""
    try:
        return decode_record(msg.data, _stream_sequence(msg))
    except LineNotJson:
        return None


class JetStreamJournalWriter(JournalWriter):
    """Appends to one run. No lock is taken: a second writer is refused at its first append behind another."""

    def __init__(self, backend: JetStreamBackend, run: str, last_seq: int) -> None:
        self.run = run
        self.last_seq = last_seq
        self._backend = backend
        self._pending: PendingWrite | None = None
        self._closed = False

    def _prepare(self, record: bytes | dict[str, Any]) -> RawRecord:
        if self._closed:
            raise ValueError(f"writer for run {self.run!r} is closed")
        return prepare_record(self.run, self.last_seq, record)

    def _pending_for(self, seq: int, raw: bytes) -> PendingWrite:
        pending = self._pending
        if pending is None or pending.seq != seq or pending.raw != raw:
            pending = PendingWrite(seq, raw, new_msg_id(self.run, seq))
            self._pending = pending
        return pending

    def msg_id_for(self, record: bytes | dict[str, Any]) -> str:
        """The message id the next append of ``record`` will use (the same on every retry of that write).

        Lets a caller (or a test) see what a lost ack looks like: a message stored with this id before
        ``append`` is adopted as ours.
        """
        parsed = self._prepare(record)
        seq = parsed.seq
        assert seq is not None  # prepare_record validated the envelope
        if check_append(self.last_seq, seq) is not AppendVerdict.NEXT:
            raise ValueError(f"run {self.run!r}: seq {seq} is not the next append after {self.last_seq}")
        return self._pending_for(seq, parsed.raw).msg_id

    async def append_async(self, record: bytes | dict[str, Any]) -> AppendResult:
        return await self._store(self._prepare(record))

    async def append_raw_async(self, record: bytes) -> AppendResult:
        if self._closed:
            raise ValueError(f"writer for run {self.run!r} is closed")
        return await self._store(prepare_raw_record(self.run, record))

    async def _store(self, parsed: RawRecord) -> AppendResult:
        """CheckAppend, then publish into the empty slot; ``last_seq`` moves only after the ack."""
        seq = parsed.seq
        assert seq is not None  # both prepare functions refuse a record without an integer seq
        verdict = check_append(self.last_seq, seq)
        if verdict is AppendVerdict.DUPLICATE:
            return AppendResult(seq, AppendVerdictTaken.DUPLICATE)
        if verdict is AppendVerdict.GAP:
            raise SequenceGap(self.run, self.last_seq, seq)
        pending = self._pending_for(seq, parsed.raw)
        outcome = await self._backend.store_record_async(self.run, pending)
        self.last_seq = seq  # only now: the server acknowledged (or already held) the record
        self._pending = None
        return AppendResult(seq, outcome)

    async def aclose(self) -> None:
        self._closed = True


# -- the backend --------------------------------------------------------------------------------------


class JetStreamBackend(Backend):
    """Journals in one JetStream stream. Open with ``open_jetstream_source`` (or ``open_async``)."""

    kind = "jetstream"

    def __init__(self, client: Client, location: JetStreamLocation, options: JetStreamOptions) -> None:
        self._nc = client
        self.location = location
        self.options = options
        self.stream = location.stream
        self.prefix = location.prefix
        self.url = location.display_url
        self._closed = False
        self._replies = _DirectReplies(client, location.stream, options.request_timeout)
        self.direct = True  # set from the stream's configuration when it is opened
        self._subjects: list[str] = []
        self.on_close: list[Callable[[], None]] = []
        """Called (in a worker thread) once the connection is closed: what opening the source started, such as
        an embedded server, stops with it."""

    # -- opening and closing ---------------------------------------------------------------------

    @classmethod
    async def open_async(
        cls, location: JetStreamLocation, *, create: bool = False, options: JetStreamOptions | None = None
    ) -> JetStreamBackend:
        """Connect, then create (``create=True``) or verify the stream. Refuses an unsafe stream."""
        opts = options or JetStreamOptions()
        client = await connect_client(JournalClient(), location.servers, location.display_url, opts)
        backend = cls(client, location, opts)
        try:
            await backend._ensure_stream(create)
        except BaseException:
            await backend.aclose()
            raise
        return backend

    async def _ensure_stream(self, create: bool) -> None:
        try:
            info = await self._api(f"STREAM.INFO.{self.stream}", b"")
        except nats.js.errors.NotFoundError:
            if not create:
                raise SourceError(f"{self.url}: stream {self.stream!r} does not exist") from None
            config = stream_config_for(self.stream, self.prefix, self.location.replicas)
            info = await self._api(f"STREAM.CREATE.{self.stream}", orjson.dumps(config), what="create the stream")
        config = info.get("config") or {}
        check_stream_config(self.stream, config, self.prefix)
        self._subjects = list(config.get("subjects") or [])
        self.direct = bool(config.get("allow_direct", False))
        if not self.direct:
            warnings.warn(
                SlowReads(
                    f"{self.url}: the stream does not allow direct get; journaltools reads it through consumers "
                    "and message gets, more slowly (turn allow_direct on to read at full speed)"
                ),
                stacklevel=2,
            )

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._nc.is_connected:
                try:
                    await self._nc.drain()
                except Exception:  # a drain that fails (server gone) still has to close the connection
                    await self._nc.close()
            else:
                await self._nc.close()
        finally:
            for stop in reversed(self.on_close):
                await asyncio.to_thread(stop)
            self.on_close.clear()

    # -- subjects --------------------------------------------------------------------------------

    def subject(self, run: str, seq: int | str) -> str:
        return f"{self.prefix}.{validate_run_id(run)}.{seq}"

    def _slot_of(self, subject: str) -> tuple[str, int] | None:
        """``journal.R.N`` → (R, N); None for a subject that is not a record slot."""
        head = self.prefix + "."
        if not subject.startswith(head):
            return None
        run, _, number = subject[len(head) :].partition(".")
        if not is_valid_run_id(run) or not (number.isascii() and number.isdigit()):
            return None
        return run, int(number)

    # -- requests (every NATS call goes through these) ---------------------------------------------

    async def _retrying(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        passthrough: tuple[type[Exception], ...] = (),
    ) -> T:
        """``attempt`` with transient failures retried (``retry_transient``); a taken slot is the caller's."""
        return await retry_transient(
            what,
            attempt,
            where=self.url,
            options=self.options,
            closed=lambda: self._closed,
            passthrough=passthrough,
            slot_taken_passes=True,
        )

    async def _api(self, endpoint: str, payload: bytes, *, what: str = "") -> dict[str, Any]:
        """One ``$JS.API`` request; an error reply is raised as nats-py's ``APIError`` (then mapped)."""

        async def attempt() -> dict[str, Any]:
            reply = await self._nc.request(f"$JS.API.{endpoint}", payload, timeout=self.options.request_timeout)
            body: dict[str, Any] = orjson.loads(reply.data)
            if "error" in body:
                nats.js.errors.APIError.from_error(body["error"])  # raises the matching APIError subclass
            return body

        return await self._retrying(what or endpoint, attempt, passthrough=(nats.js.errors.NotFoundError,))

    async def _get_last(self, subject_filter: str) -> Msg | None:
        """The last message on a subject (wildcards allowed) by direct get, or None."""
        if not self.direct:
            return await self._message_get({"last_by_subj": subject_filter})

        async def attempt() -> Msg | None:
            reply = await self._nc.request(
                f"$JS.API.DIRECT.GET.{self.stream}",
                orjson.dumps({"last_by_subj": subject_filter}),
                timeout=self.options.request_timeout,
            )
            status = _status_of(reply)
            if status is None:
                return reply
            if status == "404":
                return None
            raise nats.js.errors.APIError(code=int(status), description=_description_of(reply))

        return await self._retrying(f"direct get of {subject_filter}", attempt)

    async def _message_get(self, request: dict[str, Any]) -> Msg | None:
        """One message by the stream leader's message get (``STREAM.MSG.GET``: no direct get needed), as a
        message that carries the headers a direct get adds (``Nats-Subject``, ``Nats-Sequence``)."""
        try:
            reply = await self._api(f"STREAM.MSG.GET.{self.stream}", orjson.dumps(request), what="message get")
        except nats.js.errors.NotFoundError:
            return None
        stored = reply["message"]
        headers = JournalClient._parse_header_lines(base64.b64decode(stored["hdrs"])) if stored.get("hdrs") else {}
        headers.update({"Nats-Subject": stored["subject"], "Nats-Sequence": str(stored["seq"])})
        data = base64.b64decode(stored.get("data") or b"")
        return Msg(self._nc, subject=stored["subject"], data=data, headers=headers)

    async def _consume(self, subject_filter: str) -> list[Msg]:
        """Every message on ``subject_filter`` through an ordered consumer (a stream without direct get).

        How many to wait for comes from the stream's subjects on the filter (one message per subject), not
        from the consumer: a new consumer's pending count is not always there yet.
        """
        expected = sum((await self._subject_counts(subject_filter)).values())
        messages: list[Msg] = []
        if not expected:
            return messages
        subscription = await self._nc.jetstream().subscribe(subject_filter, ordered_consumer=True, stream=self.stream)
        try:
            while len(messages) < expected:
                msg = await subscription.next_msg(timeout=self.options.request_timeout)
                headers = dict(msg.headers or {})
                headers.update({"Nats-Subject": msg.subject, "Nats-Sequence": str(msg.metadata.sequence.stream)})
                messages.append(Msg(self._nc, subject=msg.subject, data=msg.data, headers=headers))
                if msg.metadata.num_pending == 0:
                    break
        finally:
            await subscription.unsubscribe()
        return messages

    async def _get_batch(self, subject_filter: str) -> list[Msg]:
        """Every message on ``subject_filter`` in stream order, by batched direct gets (no consumer)."""
        if not self.direct:
            return await self._retrying(f"reading {subject_filter}", lambda: self._consume(subject_filter))

        async def attempt() -> list[Msg]:
            messages: list[Msg] = []
            start = 1
            while True:
                batch, final = await self._replies.batch(start, subject_filter, self.options.read_batch)
                messages.extend(batch)
                status = _status_of(final)
                if status == "404":  # nothing (more) on the filter
                    return messages
                if status != "204":
                    raise nats.js.errors.APIError(code=int(status or 0), description=_description_of(final))
                pending = int(_header(final, "Nats-Num-Pending") or 0)
                if pending == 0 or not batch:
                    return messages
                start = _stream_sequence(batch[-1]) + 1

        return await self._retrying(f"reading {subject_filter}", attempt)

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

    async def _run_slots(self) -> dict[str, list[int]]:
        """run → the seqs of its stored slots, from every subject of the stream: a cost that follows the
        number of records (the census's fallback)."""
        slots: dict[str, list[int]] = {}
        for subject in await self._subject_counts(f"{self.prefix}.>"):
            slot = self._slot_of(subject)
            if slot is not None:
                slots.setdefault(slot[0], []).append(slot[1])
        return slots

    async def _first_and_count(self, run: str) -> tuple[Msg | None, int]:
        """The first message on ``journal.R.*`` and how many there are, from one direct get of a batch of one
        (its end-of-batch status says how many messages are pending after it)."""

        async def attempt() -> tuple[Msg | None, int]:
            batch, final = await self._replies.batch(1, self.subject(run, "*"), 1)
            if _status_of(final) == "404" or not batch:
                return None, 0
            return batch[0], 1 + int(_header(final, "Nats-Num-Pending") or 0)

        return await self._retrying(f"counting the records of {run}", attempt)

    async def census_async(self) -> dict[str, int]:
        """Every run with its number of stored records, at a cost that follows the number of runs.

        Runs are found from the subjects ``journal.*.1`` (one per run). Where the stream holds few records
        per run (``LIST_EVERY_SUBJECT_UP_TO`` on average) every subject is listed, which then costs less than
        a request per run; otherwise each run is counted with one request. The per-run counts are held to the
        stream's own message count: if they fall short (a run whose seq 1 is missing, or a stream that holds
        other subjects too) every subject is listed after all, which finds every run.
        """
        return (await self._census())[0]

    async def _census(self) -> tuple[dict[str, int], dict[str, Msg]]:
        """The census, and the first message of each run where counting fetched it anyway."""
        if self.direct:
            firsts = [self._slot_of(subject) for subject in await self._subject_counts(f"{self.prefix}.*.1")]
            runs = sorted(slot[0] for slot in firsts if slot is not None and slot[1] == 1)
            info = await self._api(f"STREAM.INFO.{self.stream}", b"", what="stream info")
            stored = int((info.get("state") or {}).get("messages") or 0)
            only_journals = self._subjects == [f"{self.prefix}.>"]
            if runs and only_journals and stored == len(runs):
                # Every message is some run's seq 1, so each run holds exactly one record: nothing to count.
                return dict.fromkeys(runs, 1), {}
            if runs and stored > LIST_EVERY_SUBJECT_UP_TO * len(runs):
                counted = await map_bounded(runs, self._first_and_count, self.options.concurrency)
                counts = {run: count for run, (_, count) in zip(runs, counted, strict=True)}
                if only_journals and sum(counts.values()) == stored:
                    first_messages = {run: msg for run, (msg, _) in zip(runs, counted, strict=True) if msg is not None}
                    return counts, first_messages
        every = {run: len(seqs) for run, seqs in sorted((await self._run_slots()).items())}
        return every, {}

    # -- writing ---------------------------------------------------------------------------------

    async def open_writer_async(self, run: str) -> JetStreamJournalWriter:
        """A writer positioned after the last stored record of ``run`` (0 for a new run)."""
        last = await self._get_last(self.subject(run, "*"))
        last_seq = 0
        if last is not None:
            slot = self._slot_of(_header(last, "Nats-Subject") or "")
            if slot is None:
                raise CorruptJournal(run, _stream_sequence(last), "the last message is not on a record subject")
            last_seq = slot[1]
        return JetStreamJournalWriter(self, run, last_seq)

    async def store_record_async(self, run: str, write: PendingWrite) -> AppendVerdictTaken:
        """Publish one record into its empty slot; decide a rejection by reading the slot back."""
        subject = self.subject(run, write.seq)

        async def publish() -> bool:
            headers = {MSG_ID: write.msg_id, EXPECTED_LAST_SUBJECT_SEQUENCE: "0", EXPECTED_STREAM: self.stream}
            reply = await self._nc.request(subject, write.raw, timeout=self.options.request_timeout, headers=headers)
            ack: dict[str, Any] = orjson.loads(reply.data)
            if "error" in ack:
                try:
                    nats.js.errors.APIError.from_error(ack["error"])
                except nats.js.errors.APIError as exc:
                    if classify_nats_error(exc) is Failure.SLOT_TAKEN:
                        return False
                    raise
            if ack.get("stream") != self.stream:
                raise SourceError(f"{self.url}: {subject} was stored by stream {ack.get('stream')!r}")
            return not ack.get("duplicate", False)

        for _ in range(5):
            stored = await self._retrying(f"append of {subject}", publish)
            if stored:
                return AppendVerdictTaken.STORED
            held = await self._get_last(subject)
            if held is None:
                continue  # rejected, yet the slot reads empty: ask the server again
            if _header(held, MSG_ID) == write.msg_id:
                return AppendVerdictTaken.ADOPTED  # our message: only the ack was lost
            if write.seq == 1:
                raise ConcurrentCreate(run, 1, f"another writer created run {run!r} at the same time")
            raise AnotherWriter(
                run,
                write.seq,
                f"another writer already stored seq {write.seq} (message id {_header(held, MSG_ID)!r}); "
                "this writer's view of the run is stale and it must stop",
            )
        raise SourceError(f"{self.url}: {subject}: the server rejects the append but the slot reads empty")

    # -- reading ---------------------------------------------------------------------------------

    def _decode(self, run: str, messages: list[Msg], strict: bool) -> RunRead:
        """Messages are atomic, so a body that does not parse is corruption, never a torn tail; leniently
        the run comes back with every message that parses and one finding per message that does not."""
        records: list[RawRecord] = []
        findings: list[Finding] = []
        for msg in messages:
            position = _stream_sequence(msg)
            try:
                records.append(decode_record(msg.data, position))
            except LineNotJson as exc:
                where = f"{self.url} subject {_header(msg, 'Nats-Subject')}, stream sequence {position}"
                corrupt = CorruptJournal(run, position, f"message does not parse: {exc}", where)
                if strict:
                    raise corrupt from None
                findings.append(Finding.of(run, None, "corrupt_line", str(corrupt), self.url))
        return RunRead(run, records, findings, self.url, complete=not findings)

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        messages = await self._get_batch(self.subject(run, "*"))
        if not messages:
            raise RunNotFound(run, self.url)
        return self._decode(run, messages, strict)

    async def read_runs_async(self, runs: list[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        """Several runs, in the order asked, a few at a time."""
        wanted = runs if runs is not None else await self.list_runs_async()

        async def one(run: str) -> RunRead:
            return await self.read_run_async(run, strict=strict)

        return await map_bounded(wanted, one, max(1, self.options.concurrency // 2))

    async def list_runs_async(self) -> list[str]:
        return list(await self.census_async())

    def run_census(self) -> dict[str, int]:
        """Every run with its number of stored records (the blocking face of ``census_async``)."""
        return run_sync(self.census_async())

    async def _record_at(self, subject_filter: str) -> RawRecord | None:
        msg = await self._get_last(subject_filter)
        return _record_of(msg) if msg is not None else None

    async def listing_async(self) -> list[RunSummary]:
        """The two-record summary of every run: ``journal.R.1`` and the last message on ``journal.R.*``."""
        census, first_messages = await self._census()

        async def summarize(run: str) -> RunSummary:
            held = first_messages.get(run)  # the first in stream order: seq 1 unless written out of order
            if held is not None and _header(held, "Nats-Subject") == self.subject(run, 1):
                first = _record_of(held)
            else:
                first = await self._record_at(self.subject(run, 1))
            last = first if census[run] == 1 and first is not None else await self._record_at(self.subject(run, "*"))
            return summarize_two_records(run, first, last)

        return await map_bounded(list(census), summarize, self.options.concurrency)

    async def listing_by_fold_async(self) -> list[RunSummary]:
        """The file backend's listing rule over this stream: read and fold every run (the expensive way)."""
        reads = await self.read_runs_async(strict=False)
        return [summarize_by_fold(read.run, read.records, read.complete, read.findings) for read in reads]

    def listing_by_fold(self) -> list[RunSummary]:
        return run_sync(self.listing_by_fold_async())


# -- opening a source ---------------------------------------------------------------------------------


async def open_jetstream_source_async(
    url: str, create: bool = False, options: JetStreamOptions | None = None
) -> JetStreamBackend:
    if url == "embedded" or url.startswith("embedded:"):
        return await _open_embedded(url, options)
    return await JetStreamBackend.open_async(parse_nats_url(url), create=create, options=options)


async def _open_embedded(url: str, options: JetStreamOptions | None) -> JetStreamBackend:
    """``embedded`` (a throwaway server) or ``embedded:DIR`` (a server on the store in DIR), always creating its
    stream; closing the backend gives its lease on the server back, which stops the server if it was the last."""
    from journaltools.embedded import lease_server

    store = url.partition(":")[2]
    if url.startswith("embedded:") and not store.strip():
        raise InvalidSource(
            f"{url!r}: no directory after 'embedded:' (embedded:DIR keeps the server's store in DIR; "
            "embedded alone starts a throwaway server)"
        )
    lease = await asyncio.to_thread(lease_server, os.path.expanduser(store) if store else None)
    try:
        location = JetStreamLocation(lease.server.url, DEFAULT_STREAM, DEFAULT_PREFIX)
        backend = await JetStreamBackend.open_async(location, create=True, options=options)
    except BaseException:
        await asyncio.to_thread(lease.release)
        raise
    backend.on_close.append(lease.release)
    return backend


def open_jetstream_source(url: str, create: bool = False, options: JetStreamOptions | None = None) -> JetStreamBackend:
    """Open ``nats://host:port/STREAM`` or ``embedded`` (a local server journaltools starts and stops)."""
    return run_sync(open_jetstream_source_async(url, create, options))


__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_STREAM",
    "SERVER_SUBJECTS_PAGE",
    "Failure",
    "JetStreamBackend",
    "JetStreamJournalWriter",
    "JetStreamLocation",
    "JetStreamOptions",
    "JournalClient",
    "PendingWrite",
    "check_stream_config",
    "classify_nats_error",
    "open_jetstream_source",
    "open_jetstream_source_async",
    "parse_nats_url",
    "stream_config_for",
]
