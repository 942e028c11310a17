"""The JetStream backend as the runtime binds it (REAL-SYSTEM.md E, ``internal/runstate/jetstream``).

Binding. ``nats://host:port/STREAM`` names an **existing** stream; its one wildcard subject ``<prefix>.>`` gives the
run keyspace (``derive_prefix``). Run R's meta record is the one message on ``<prefix>.R._meta``, its record seq N >= 2
the one on ``<prefix>.R.N``. The runtime refuses to bind a stream whose settings would let a record be replaced or
expire (``stream_problems``); journaltools reads such a stream with a ``stream_config`` warning naming the setting
and refuses to write to it (``StreamConfigRefused``). ``?create=1`` and ``embedded`` create a missing stream the way
the runtime's documentation tells an operator to (``stream_config_for``).

Writing. One random nonce per opened journal; each append publishes with ``Nats-Msg-Id: <nonce>-<seq>`` and the
run-wide fence (``Nats-Expected-Last-Subject-Sequence`` = the run's tail stream sequence as this writer last saw
it, on the filter ``<prefix>.R.>``), so any record another writer appended makes this one's next publish fail. A
10071 rejection (wrong last sequence) is resolved by reading the last message on the target subject: our message id
means our earlier publish landed and only its ack was lost (adopted); seq 1 means another writer created the run at
the same time (``ConcurrentCreate``); anything else means another writer holds the run (``AnotherWriter``).
Transient failures (timeouts, a server restarting) are retried with the same message id, so a retry never stores a
record twice: the server's duplicate window answers it with the first copy's sequence.

Reading. A run's messages come by batched direct gets on ``<prefix>.R.>`` (no consumer, one request per batch),
or through an ordered consumer on a stream without direct get (the runtime's own streams have it off); the count to
wait for is the sum of the run's subject counts, as the runtime's reader has it. Messages are atomic, so a body that
does not decode is corruption wherever it is (no torn-tail rule); records are sorted by their body's seq, and each
carries its message's server time.

Listing. Runs come from the subjects ``<prefix>.*._meta`` (stream info filtered and paged past the server's
100,000 subjects per response), so the cost follows the number of runs; each is summarized from two records, the
meta subject's message and the last message on ``<prefix>.R.>`` (``listing.summarize_stream``).

All I/O is ``async def`` on journaltools' one background loop. URLs, connecting and the mapping of NATS errors to
the journaltools error tree live in ``sources.nats``.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client

from journaltools._base.aio import map_bounded, run_sync
from journaltools.errors import (
    AnotherWriter,
    ConcurrentCreate,
    CorruptJournal,
    InvalidSource,
    RunExists,
    RunNotFound,
    ServerNotAnswering,
    SlowReads,
    SourceError,
    StreamConfigRefused,
    StreamFull,
)
from journaltools.protocol.findings import Finding
from journaltools.protocol.journal import BadLine, read_stream_bodies
from journaltools.protocol.kinds import UINT64_MAX, Meta
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.sources.base import (
    AppendOutcome,
    Backend,
    RunRead,
    StoredRecord,
    meta_record,
)
from journaltools.sources.jetstream_messages import (
    Replies,
    StoredMessage,
)
from journaltools.sources.jetstream_requests import SERVER_SUBJECTS_PAGE, StreamRequests
from journaltools.sources.jetstream_stream import derive_prefix, stream_config_for, stream_problems
from journaltools.sources.jetstream_writer import JetStreamJournalWriter
from journaltools.sources.listing import RunSummary, summarize_stream
from journaltools.sources.nats import (
    DEFAULT_PREFIX,
    DEFAULT_STREAM,
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT,
    MSG_ID,
    WRONG_LAST_SEQUENCE,
    Failure,
    JetStreamLocation,
    JetStreamOptions,
    JournalClient,
    classify_nats_error,
    connect_client,
    describe_nats_error,
    parse_nats_url,
    stream_limit,
)
from journaltools.sources.scan import JournalTooLarge, max_journal_records, too_large_read

META_TOKEN: Final = "_meta"


async def _close_connection(connection: Client) -> None:
    """Close ``connection``, also when its link is already gone: nats-py then waits on the transport's close
    waiter, which asyncio may have cancelled with the lost connection. That cancellation is not ours (our own task
    was not cancelled), and the connection is closed, so it ends the close instead of escaping it."""
    try:
        await connection.close()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise


# -- the backend --------------------------------------------------------------------------------------


def seq_of_token(token: str) -> int | None:
    """The record seq a subject's last token names, as the runtime's ``parseSeqToken`` reads it (``jetstream.go``):
    ``_meta`` is 1, anything else ``strconv.ParseUint(token, 10, 64)``, so ASCII digits within uint64, leading zeros
    allowed (``002`` is seq 2, as ``2`` is: the runtime opens a writer at seq 2 on either and never reports it, so
    neither does ``subject_seq_mismatch``, which is for a subject naming another seq than its body). None for any
    other token (no sign, no ``_``, no other digits)."""
    if token == META_TOKEN:
        return 1
    if not (token.isascii() and token.isdigit()) or len(token.lstrip("0")) > 20:  # int() of it stays small
        return None
    value = int(token)
    return value if value <= UINT64_MAX else None


class JetStreamBackend(StreamRequests, Backend):
    """Journals in one JetStream stream. Open with ``open_jetstream_source`` (or ``open_async``)."""

    kind = "jetstream"

    def __init__(self, client: JournalClient, location: JetStreamLocation, options: JetStreamOptions) -> None:
        self._nc = client
        self.location = location
        self.options = options
        self.stream = location.stream
        self.prefix = location.prefix or DEFAULT_PREFIX  # replaced by the stream's own when it is bound
        self.url = location.display_url
        self._closed = False
        self._replies = Replies(client, location.stream, options.request_timeout)
        self.direct = True  # set from the stream's configuration when it is bound
        self.problems: list[tuple[str, str]] = []
        """The runtime's stream checks this stream fails: read with a warning, never written."""
        self.limits: dict[str, int] = {}
        """The operator's limits on the stream as bound (``max_msgs``, ``max_bytes``, ``max_msgs_per_subject``;
        only those set), for saying which one a refused append ran into."""
        self.on_close: list[Callable[[], None]] = []
        """Called (in a worker thread) once the connection is closed: what opening the source started, such as
        an embedded server, stops with it."""

    # -- opening and closing ---------------------------------------------------------------------

    @classmethod
    async def open_async(
        cls, location: JetStreamLocation, *, create: bool = False, options: JetStreamOptions | None = None
    ) -> JetStreamBackend:
        """Connect, then bind the stream (creating it when asked). Refuses a stream without a run keyspace."""
        opts = options or JetStreamOptions()
        client = await connect_client(JournalClient(), location.servers, location.display_url, opts)
        backend = cls(client, location, opts)
        try:
            await backend._bind(create or location.create)
        except BaseException:
            await backend.aclose()
            raise
        return backend

    async def _bind(self, create: bool) -> None:
        try:
            info = await self._api(f"STREAM.INFO.{self.stream}", b"")
        except nats.js.errors.NotFoundError:
            if not create:
                prefix = self.location.prefix or DEFAULT_PREFIX
                raise SourceError(
                    f"{self.url}: stream {self.stream!r} does not exist; create it with "
                    f"nats stream add {self.stream} --subjects '{prefix}.>' --max-msgs-per-subject=1 "
                    "--discard=new --discard-per-subject (or add ?create=1 to the URL)"
                ) from None
            config = stream_config_for(self.stream, self.location.prefix or DEFAULT_PREFIX, self.location.replicas)
            info = await self._api(f"STREAM.CREATE.{self.stream}", orjson.dumps(config), what="create the stream")
        config = info.get("config") or {}
        prefix = derive_prefix(self.stream, list(config.get("subjects") or []))
        if self.location.prefix is not None and self.location.prefix != prefix:
            raise SourceError(
                f"{self.url}: stream {self.stream!r} keeps runs under {prefix}.>, not {self.location.prefix}.>; "
                "drop ?prefix= to bind it as it is"
            )
        self.prefix = prefix
        self.problems = stream_problems(config)
        self.limits = {
            name: int(config[name])
            for name in ("max_msgs", "max_bytes", "max_msgs_per_subject")
            if isinstance(config.get(name), int) and config[name] > 0
        }
        self.direct = bool(config.get("allow_direct", False))
        if not self.direct:
            warnings.warn(
                SlowReads(
                    f"{self.url}: the stream does not allow direct get; journaltools reads it through consumers "
                    "and message gets, more slowly (turn allow_direct on to read at full speed)"
                ),
                stacklevel=2,
            )

    def source_findings(self) -> list[Finding]:
        """One ``stream_config`` warning per runtime check the stream fails (its records may change or expire),
        and one ``invalid_run_id`` error per meta subject whose run token is not a valid run id (the runtime's
        listing skips those without a word; here they are never silently absent)."""
        findings = [
            Finding.of(None, None, "stream_config", f"stream {self.stream!r}: {setting} {why}", self.url)
            for setting, why in self.problems
        ]
        findings.extend(run_sync(self._invalid_run_subjects_async()))
        return findings

    async def _invalid_run_subjects_async(self) -> list[Finding]:
        subjects = await self._subject_counts(f"{self.prefix}.*.{META_TOKEN}")
        head, tail = self.prefix + ".", "." + META_TOKEN
        return [
            Finding.of(
                None,
                None,
                "invalid_run_id",
                f"subject {subject!r}: run token {subject[len(head) : -len(tail)]!r} is not a valid run id "
                "(1-128 characters of [A-Za-z0-9_-]); its run is not read",
                self.url,
            )
            for subject in sorted(subjects)
            if self._run_of_meta_subject(subject) is None
        ]

    def _seq_mismatch(self, run: str, msg: StoredMessage, body_seq: int) -> Finding | None:
        """A ``subject_seq_mismatch`` finding when the subject a record is stored under names another seq than
        its body: the runtime sorts a read by the body's seq and opens a writer at the subject's, so such a run
        reads one way and appends another."""
        subject_seq = self.seq_of_subject(msg.subject)
        if subject_seq == body_seq:
            return None
        message = (
            f"{msg.subject} (stream sequence {msg.sequence}) holds a record whose body says seq {body_seq}: "
            "the subjects and the bodies disagree"
        )
        return Finding.of(run, body_seq, "subject_seq_mismatch", message, self.url)

    def _refuse_writes(self) -> None:
        if self.problems:
            setting, why = self.problems[0]
            raise StreamConfigRefused(self.stream, setting, f"{why}; the runtime refuses to bind it, so no write")

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._nc.is_connected:
                try:
                    await self._nc.drain()
                except Exception:  # a drain that fails (server gone) still has to close the connection
                    await _close_connection(self._nc)
            else:
                await _close_connection(self._nc)
        finally:
            for stop in reversed(self.on_close):
                await asyncio.to_thread(stop)
            self.on_close.clear()

    # -- subjects (jetstream.go:251-284) ---------------------------------------------------------

    def subject(self, run: str, seq: int) -> str:
        """Where record ``seq`` of ``run`` lives: ``_meta`` for seq 1, the decimal seq otherwise."""
        return f"{self.prefix}.{validate_run_id(run)}.{META_TOKEN if seq == 1 else seq}"

    def run_filter(self, run: str) -> str:
        return f"{self.prefix}.{validate_run_id(run)}.>"

    def seq_of_subject(self, subject: str) -> int | None:
        """``<prefix>.R._meta`` → 1, ``<prefix>.R.N`` → N; None for a subject that is not a record's."""
        head = self.prefix + "."
        if not subject.startswith(head):
            return None
        run, _, token = subject[len(head) :].partition(".")
        if not is_valid_run_id(run):
            return None
        return seq_of_token(token)

    def _run_of_meta_subject(self, subject: str) -> str | None:
        head, tail = self.prefix + ".", "." + META_TOKEN
        if not (subject.startswith(head) and subject.endswith(tail)):
            return None
        run = subject[len(head) : -len(tail)]
        return run if is_valid_run_id(run) else None

    # -- writing (jetstream.go:299-365, :599-652) -------------------------------------------------

    async def create_journal_async(self, run: str, meta: Meta | bytes) -> JetStreamJournalWriter:
        """A new run: its meta subject must be empty; seq 1 is published fenced on an empty run (tail 0)."""
        self._refuse_writes()
        if await self._get_last(self.subject(run, 1)) is not None:
            raise RunExists(run, self.url)
        writer = JetStreamJournalWriter(self, run, 0, 0)
        if isinstance(meta, bytes):
            await writer.append_raw_async(meta)
        else:
            await writer.append_async(meta_record(meta))
        return writer

    async def open_writer_async(self, run: str) -> JetStreamJournalWriter:
        """Resume ``run``: last seq from the subject of its last message, the fence from that message's sequence."""
        self._refuse_writes()
        last = await self._get_last(self.run_filter(run))
        if last is None:
            raise RunNotFound(run, self.url)
        seq = self.seq_of_subject(last.subject)
        if seq is None:
            raise CorruptJournal(
                run, last.sequence, f"{last.subject} is not a record subject", self.url, "stream sequence"
            )
        (read,) = read_stream_bodies([last.data])
        if not isinstance(read, BadLine) and read.record.seq != seq:
            # The next seq would come from the subject and the duplicate check from it too: an append of a
            # seq the bodies never reached would be acknowledged as a duplicate without being stored.
            why = (
                f"{last.subject} holds a record whose body says seq {read.record.seq}: the subjects and the "
                "bodies disagree, so no append could be placed safely"
            )
            raise CorruptJournal(run, last.sequence, why, self.url, "stream sequence")
        return JetStreamJournalWriter(self, run, seq, last.sequence)

    async def publish_record_async(
        self, writer: JetStreamJournalWriter, seq: int, raw: bytes
    ) -> tuple[int, AppendOutcome]:
        """Publish one record behind the writer's fence: (its stream sequence, how it was stored)."""
        run = writer.run
        subject = self.subject(run, seq)
        msg_id = writer.msg_id(seq)
        headers = {
            MSG_ID: msg_id,
            EXPECTED_LAST_SUBJECT_SEQUENCE: str(writer.tail),
            EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT: self.run_filter(run),
        }

        async def publish() -> tuple[int, bool]:
            reply = await self._replies.request(subject, raw, headers)
            ack: dict[str, Any] = orjson.loads(reply.data)
            if "error" in ack:
                nats.js.errors.APIError.from_error(ack["error"])
            if ack.get("stream") != self.stream:
                raise SourceError(f"{self.url}: {subject} was stored by stream {ack.get('stream')!r}")
            # A duplicate ack names the first copy: a retry whose first attempt had landed.
            return int(ack["seq"]), bool(ack.get("duplicate", False))

        what = f"append of {subject}"
        try:
            sequence, duplicate = await self._retrying(what, publish)
        except StreamFull as full:
            # The server refused to grow the stream (discard new): say which of the operator's limits it is, with
            # its value, rather than a store failure code.
            raise StreamFull(self.url, what, full.limit, self.limits.get(full.limit)) from None
        except nats.js.errors.APIError as exc:
            per_subject = stream_limit(exc) == "max_msgs_per_subject"
            if exc.err_code != WRONG_LAST_SEQUENCE and not per_subject:
                raise SourceError(f"{self.url}: {what} failed: {describe_nats_error(exc)}") from None
            return await self._resolve_fenced(writer, seq, subject, msg_id, per_subject=per_subject)
        return sequence, AppendOutcome.ADOPTED if duplicate else AppendOutcome.STORED

    async def _resolve_fenced(
        self, writer: JetStreamJournalWriter, seq: int, subject: str, msg_id: str, *, per_subject: bool = False
    ) -> tuple[int, AppendOutcome]:
        """A 10071 (or a per-subject 10077): read the target subject to tell a lost ack from another writer
        (``jetstream.go:628-652``)."""
        held = await self._get_last(subject)
        if held is not None and held.headers.get(MSG_ID) == msg_id:
            return held.sequence, AppendOutcome.ADOPTED  # our message: only the ack was lost
        if held is None and per_subject:
            # The per-subject limit refused a slot that reads empty: no writer holds it, the limit itself is the
            # cause (an operator's stream whose subjects are counted some other way), so say that.
            value = self.limits.get("max_msgs_per_subject")
            raise StreamFull(self.url, f"append of {subject}", "max_msgs_per_subject", value)
        if seq == 1:
            raise ConcurrentCreate(writer.run, 1, f"another writer created run {writer.run!r} at the same time")
        raise AnotherWriter(
            writer.run,
            seq,
            f"another writer appended to run {writer.run!r} after stream sequence {writer.tail}; "
            "this writer's view of the run is stale and it must stop",
        )

    # -- reading (jetstream.go:519-575) -----------------------------------------------------------

    def _decode(self, run: str, messages: list[StoredMessage], strict: bool) -> RunRead:
        """Messages are atomic, so a body that does not decode is corruption, never a torn tail
        (``read_stream_bodies``); leniently the run comes back with every message that decodes and one finding
        per message that does not. The one place a stream read's findings are worded."""
        records: list[StoredRecord] = []
        findings: list[Finding] = []
        complete = True
        for msg, read in zip(messages, read_stream_bodies(msg.data for msg in messages), strict=True):
            if isinstance(read, BadLine):
                where = f"{self.url} subject {msg.subject}"
                why = f"body does not decode: {read.reason}"
                corrupt = CorruptJournal(run, msg.sequence, why, where, "stream sequence")
                if strict:
                    raise corrupt
                complete = False
                findings.append(
                    Finding.of(run, self.seq_of_subject(msg.subject), "corrupt_line", str(corrupt), self.url)
                )
                continue
            records.append(StoredRecord(read.record, msg.data, msg.sequence, msg.time, read.noncanonical))
            mismatch = self._seq_mismatch(run, msg, read.record.seq)
            if mismatch is not None:
                findings.append(mismatch)
            if read.noncanonical is not None:
                message = f"{msg.subject} is not what the Go encoder writes: {read.noncanonical}"
                findings.append(Finding.of(run, read.record.seq, "noncanonical_line", message, self.url))
        records.sort(key=lambda stored: stored.record.seq)  # the runtime sorts by the body's seq
        times = [msg.time for msg in messages if msg.time is not None]
        updated = max(times) if times else None
        last_seq = records[-1].record.seq if records else 0
        return RunRead(run, records, findings, self.url, complete, updated, last_seq)

    async def read_run_async(self, run: str, *, strict: bool = True) -> RunRead:
        counts = await self._subject_counts(self.run_filter(run))
        if self.subject(run, 1) not in counts:
            raise RunNotFound(run, self.url)
        total, limit = sum(counts.values()), max_journal_records()
        if total > limit:
            # The stream says how many messages the run holds before any is fetched: past the bound, none is.
            too_large = JournalTooLarge(limit, compressed=False, records=total)
            return too_large_read(run, too_large, source=self.url, where=self.url, strict=strict, updated=None)
        messages = await self._get_all(self.run_filter(run), total)
        return self._decode(run, messages, strict)

    async def read_runs_async(self, runs: Sequence[str] | None = None, *, strict: bool = True) -> list[RunRead]:
        """Several runs, in the order asked, a few at a time."""
        wanted = list(runs) if runs is not None else await self.list_runs_async()

        async def one(run: str) -> RunRead:
            return await self.read_run_async(run, strict=strict)

        return await map_bounded(wanted, one, max(1, self.options.concurrency // 2))

    async def list_runs_async(self) -> list[str]:
        """Every run with a meta subject, sorted: one stream-info page per 100,000 runs."""
        subjects = await self._subject_counts(f"{self.prefix}.*.{META_TOKEN}")
        return sorted(run for run in map(self._run_of_meta_subject, subjects) if run is not None)

    def _stored(self, msg: StoredMessage | None) -> tuple[StoredRecord | None, str | None]:
        if msg is None:
            return None, None
        (read,) = read_stream_bodies([msg.data])
        if isinstance(read, BadLine):
            return None, f"{msg.subject} (stream sequence {msg.sequence}) does not decode: {read.reason}"
        return StoredRecord(read.record, msg.data, msg.sequence, msg.time, read.noncanonical), None

    async def listing_async(self) -> list[RunSummary]:
        """The JetStream rule (``jetstream.go:382-475``): each run from its meta message and its last message."""

        async def summarize(run: str) -> RunSummary:
            meta_msg = await self._get_last(self.subject(run, 1))
            meta, problem = self._stored(meta_msg)
            try:
                last_msg = await self._get_last(self.run_filter(run))
            except ServerNotAnswering:
                raise  # the server, not this run: one answer for the whole listing
            except SourceError:
                last_msg = None  # the runtime keeps what the meta record gave: listed open
            # The two records read are checked against their subjects (the rule itself does not look).
            checked = [(meta_msg, meta)]
            held: tuple[int, int] | None = None
            if last_msg is not None and meta is not None and last_msg.sequence == meta.position:
                last: StoredRecord | None = meta
                # The meta message is the run's last: a run of one record, or records published out of seq order
                # (a copy made subject by subject). What the stream holds tells them apart.
                seqs = [self.seq_of_subject(subject) for subject in await self._subject_counts(self.run_filter(run))]
                if len(seqs) > 1:
                    held = (len(seqs), max(seq or 0 for seq in seqs))
            else:
                # A last message that does not decode is listed open, as the runtime lists it.
                last, _ = self._stored(last_msg)
                checked.append((last_msg, last))
            findings = [
                finding
                for msg, stored in checked
                if msg is not None and stored is not None
                for finding in [self._seq_mismatch(run, msg, stored.record.seq)]
                if finding is not None
            ]
            return summarize_stream(run, meta, last, problem=problem, findings=findings, held=held)

        return await map_bounded(await self.list_runs_async(), summarize, self.options.concurrency)


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
    from journaltools.sources.embedded import lease_server

    store = url.partition(":")[2]
    if url.startswith("embedded:") and not store.strip():
        raise InvalidSource(
            f"{url!r}: no directory after 'embedded:' (embedded:DIR keeps the server's store in DIR; "
            "embedded alone starts a throwaway server)"
        )
    lease = await asyncio.to_thread(lease_server, os.path.expanduser(store) if store else None)
    try:
        location = JetStreamLocation(lease.server.url, DEFAULT_STREAM, None)
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
    "StoredMessage",
    "classify_nats_error",
    "derive_prefix",
    "open_jetstream_source",
    "open_jetstream_source_async",
    "parse_nats_url",
    "seq_of_token",
    "stream_config_for",
    "stream_problems",
]
