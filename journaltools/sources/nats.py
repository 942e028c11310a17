"""Reaching a NATS server: ``nats://`` URLs, connection options, connecting, and what NATS errors mean.

Everything that speaks to NATS goes through here: the journal backend (``sources.jetstream``), the task store
and the turn-checkpoint store on key-value buckets (``natskv``). A URL is parsed once into a
``JetStreamLocation``, credentials never reach a message (``JetStreamLocation.display_url``), and nats-py's
exceptions are mapped in one place: ``classify_nats_error`` for requests (slot taken, transient, fatal) and
``connect_error`` for connecting (refused, unreachable, unknown host, timed out, authentication, TLS: each a
``ConnectFailed`` naming the URL, reported at the first failed attempt rather than after the connect timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import re
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar
from urllib.parse import ParseResult, parse_qs

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.protocol.parser import Parser

from journaltools._base.urls import masked, parse_url
from journaltools.errors import (
    ConnectFailed,
    InvalidSource,
    JournalError,
    ServerNotAnswering,
    SourceError,
    StreamFull,
)

T = TypeVar("T")
C = TypeVar("C", bound="CheckedClient")

# nats-py logs what its read loop cannot handle (a link that drops mid-message) with a traceback, and with no
# handler configured Python's last-resort handler prints it on stderr, between journaltools' own lines, for a
# failure journaltools reports itself. A handler of nothing on nats-py's logger silences only that fallback: an
# application that configures logging still gets these records through its own handlers.
logging.getLogger("nats").addHandler(logging.NullHandler())

#: The stream a source without a path names, and the prefix a created stream gets (the runtime's documentation's).
DEFAULT_STREAM = "FISK_SESSIONS"
DEFAULT_PREFIX = "fisk.sessions"

#: Rejections that mean "the slot journal.R.N already holds a message".
SLOT_TAKEN_CODES = frozenset({10071, 10077})  # wrong last sequence; maximum messages per subject exceeded
#: JetStream's "store failed": the server refused to grow the stream (discard new), whichever limit said so.
STORE_FAILED = 10077
#: The description the server gives a 10077 for each limit of a stream (the store's ``ErrMax*`` errors).
STREAM_LIMIT_DESCRIPTIONS = {
    "maximum messages exceeded": "max_msgs",
    "maximum bytes exceeded": "max_bytes",
    "maximum messages per subject exceeded": "max_msgs_per_subject",
}
MSG_ID = "Nats-Msg-Id"
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"
#: The subject filter the expected last subject sequence is checked on (nats.go's ``WithExpectLastSequenceForSubject``).
EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"
#: JetStream's "wrong last sequence": the only rejection an append disambiguates by reading the target subject.
WRONG_LAST_SEQUENCE = 10071
EXPECTED_STREAM = "Nats-Expected-Stream"

_STREAM_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")


# -- where ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JetStreamLocation:
    """A stream on a server: ``nats://host:port/STREAM``. An existing stream is bound as the runtime binds it (its
    prefix comes from its one ``<prefix>.>`` subject); ``?create=1`` creates a missing one with ``?prefix=``
    (default ``fisk.sessions``) and ``?replicas=`` copies. ``prefix`` None: not given, take the stream's."""

    servers: str
    stream: str = DEFAULT_STREAM
    prefix: str | None = None
    replicas: int = 1
    create: bool = False

    @property
    def display_url(self) -> str:
        """The source URL without credentials."""
        query = f"?prefix={self.prefix}" if self.prefix is not None else ""
        return f"{server_display(self.servers)}/{self.stream}{query}"


#: The query parameters of a ``nats://`` source URL (the fields of ``models.inputs.NatsSourceParameters``).
SOURCE_URL_PARAMETERS = ("create", "prefix", "replicas")


def parse_nats_url(url: str) -> JetStreamLocation:
    """``nats://[user:pass@]host:port/STREAM[?create=1][&prefix=fisk.sessions][&replicas=3]`` → the journals.

    The query is checked by its model (``journaltools schema --input nats-source``); a parameter given twice
    counts by its last value, as before."""
    # pydantic is imported here, where a NATS source is opened (nats-py is loaded by then too), never by a load
    # of files.
    from journaltools.models.inputs import NatsSourceParameters, validated

    parsed, shown = split_server_url(url, "STREAM")
    stream = parsed.path.strip("/") or DEFAULT_STREAM
    _check_stream(url, stream)
    query = {name: values[-1] for name, values in parse_qs(parsed.query, keep_blank_values=True).items()}
    try:
        parameters = validated(NatsSourceParameters, query, InvalidSource, key_word="parameter")
    except InvalidSource as exc:
        raise InvalidSource(f"{shown!r}: {exc}") from None
    return JetStreamLocation(
        f"{parsed.scheme}://{parsed.netloc}", stream, parameters.prefix, parameters.replicas, parameters.create
    )


def split_server_url(url: str, path_name: str) -> tuple[ParseResult, str]:
    """``url`` parsed, and shown without credentials, once its scheme, host and port are known to be usable:
    the part every ``nats://`` URL shares (``path_name`` says what its path names, for the message)."""
    parsed = parse_url(url)
    shown = masked(url)
    if parsed.scheme not in ("nats", "tls", "ws", "wss"):
        raise InvalidSource(f"{shown!r}: not a nats:// URL")
    if "@" in parsed.path or "@" in parsed.query or "@" in parsed.fragment:
        # The user or password holds a "/", "?" or "#", which ends the authority: the host would be read from
        # the password. Refused before anything (a connection, a message) could use those parts.
        raise InvalidSource(f"{shown!r}: the user or password holds '/', '?' or '#'; percent-encode it (%2F, %3F, %23)")
    if not parsed.hostname:
        raise InvalidSource(f"{shown!r}: no server host (nats://host:port/{path_name})")
    try:
        port = parsed.port
    except ValueError:
        port = 0
    if port == 0:
        raise InvalidSource(f"{shown!r}: the port must be a number from 1 to 65535")
    return parsed, shown


def server_display(servers: str) -> str:
    """``scheme://host[:port]`` of a server URL, without credentials."""
    parsed = parse_url(servers)
    try:
        port = f":{parsed.port}" if parsed.port else ""
    except ValueError:
        raise InvalidSource(f"{masked(servers)!r}: the port must be a number from 1 to 65535") from None
    return f"{parsed.scheme}://{parsed.hostname or 'localhost'}{port}"


#: JetStream keeps at most five copies of a stream.
MAX_REPLICAS = 5


def parse_replicas(url: str, text: str) -> int:
    """The ``replicas=`` of a URL: how many copies of a stream or bucket a cluster keeps (1 to 5)."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_REPLICAS:
        raise InvalidSource(f"{masked(url)!r}: replicas={text!r} must be a whole number from 1 to {MAX_REPLICAS}")
    return int(text)


def _check_stream(url: str, stream: str) -> None:
    if not _STREAM_NAME.fullmatch(stream):
        raise InvalidSource(f"{masked(url)!r}: stream name {stream!r} must be 1-255 characters of [A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class JetStreamOptions:
    """Tunables. The defaults suit the CLI and notebooks; tests shorten the timeouts."""

    request_timeout: float = 5.0
    """How long a request waits while nothing at all arrives on the connection: a publish waiting for its ack, a
    direct get, a batch of a run read. Bytes still arriving (this reply's or others' ahead of it on a slow link)
    are progress, not a timeout; a silence this long is answered with a ping, and no answer to that either is
    ``ServerNotAnswering``."""
    operation_timeout: float = 30.0
    """How long one operation (an append, a read) retries transient failures before it gives up."""
    connect_timeout: float = 5.0
    reconnect_wait: float = 0.25
    read_batch: int = 4096
    """Messages per direct-get batch when reading a run."""
    read_batch_bytes: int = 1 << 20
    """Bytes per direct-get batch (the server ends a batch at this size): a batch of large records on a slow
    link is a few seconds of transfer, and a batch broken off is asked again from where it stopped."""
    concurrency: int = 64
    """Requests in flight at once when listing or reading many runs."""
    subjects_page_limit: int | None = None
    """Use at most this many subjects of each stream-info page (tests lower it to exercise paging)."""


# -- the one place NATS errors are mapped ------------------------------------------------------------


class Failure(Enum):
    SLOT_TAKEN = "slot_taken"
    STREAM_FULL = "stream_full"
    TRANSIENT = "transient"
    FATAL = "fatal"


_TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TimeoutError,  # nats.errors.TimeoutError and asyncio.TimeoutError are both TimeoutError
    nats.errors.NoRespondersError,
    nats.js.errors.NoStreamResponseError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
    ConnectionError,
)


def stream_limit(exc: BaseException) -> str | None:
    """The stream limit a 10077 rejection names (``max_msgs``, ``max_bytes``, ``max_msgs_per_subject``), else None.

    The server gives all three the same code and tells them apart only by the description, so that is what is
    matched (case and a ``nats:`` prefix aside, which some servers and clients add)."""
    if not isinstance(exc, nats.js.errors.APIError) or exc.err_code != STORE_FAILED:
        return None
    text = (exc.description or "").strip().lower().removeprefix("nats:").strip()
    return STREAM_LIMIT_DESCRIPTIONS.get(text)


def classify_nats_error(exc: BaseException) -> Failure:
    """What a nats-py exception means to a journal.

    10071 and a 10077 for the per-subject limit mean the slot is taken (nats-py raises 10077 as
    ``ServiceUnavailableError``; it is not transient here: retrying can never empty a slot). A 10077 for
    ``max_msgs`` or ``max_bytes`` means the stream is full (``StreamFull``): the whole stream refuses new
    messages, not this slot, and nothing but the operator can make room. Other 503s, timeouts and a reconnecting
    or briefly unanswered server are transient. Anything else is fatal and becomes a ``SourceError``.
    """
    if isinstance(exc, nats.js.errors.APIError):
        if stream_limit(exc) in ("max_msgs", "max_bytes"):
            return Failure.STREAM_FULL
        if exc.err_code in SLOT_TAKEN_CODES:
            return Failure.SLOT_TAKEN
        if exc.code in (503, 408):
            return Failure.TRANSIENT
        return Failure.FATAL
    if isinstance(exc, _TRANSIENT_ERRORS):
        return Failure.TRANSIENT
    return Failure.FATAL


_UNREACHABLE = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN, errno.EADDRNOTAVAIL})


def _connect_errno(exc: OSError) -> int | None:
    """The errno of a failed connect; asyncio joins the errors of every address tried into one message."""
    if exc.errno is not None:
        return exc.errno
    numbers = [int(n) for n in re.findall(r"\[Errno (\d+)\]", str(exc))]
    if errno.ECONNREFUSED in numbers:
        return errno.ECONNREFUSED
    return numbers[0] if numbers else None


def connect_error(exc: BaseException, url: str, timeout: float) -> ConnectFailed:
    """What a failed connection attempt means, for the user: the one place connection errors are mapped.

    ``url`` must already be free of credentials (``JetStreamLocation.display_url``).
    """
    text = str(exc)
    if isinstance(exc, (PlainTransportRefused, TlsHandshakeFailed)):
        return ConnectFailed(url, "TLS failed", text, "the URL asks for TLS and the server did not speak it")
    if isinstance(exc, ssl.SSLError):
        reason = getattr(exc, "reason", None) or text  # aiohttp's SSL errors subclass SSLError without it
        return ConnectFailed(
            url, "TLS failed", reason, "check that the server's certificate is trusted and names the host"
        )
    if isinstance(exc, socket.gaierror):
        return ConnectFailed(url, "unknown host", exc.strerror or text, "check the host name in the URL")
    if isinstance(exc, TimeoutError):
        return ConnectFailed(
            url, "timed out", f"no answer within {timeout:g}s", "check the host, the port and any firewall between"
        )
    if isinstance(exc, OSError):
        code = _connect_errno(exc)
        if code == errno.ECONNREFUSED:
            return ConnectFailed(
                url, "connection refused", "nothing listens on that port", "start the server or fix the port in the URL"
            )
        if code in _UNREACHABLE:
            return ConnectFailed(url, "unreachable", os.strerror(code), "check the address and the network route")
        return ConnectFailed(url, "failed", exc.strerror or text or type(exc).__name__, "check the URL")
    lowered = text.lower()
    if isinstance(exc, nats.errors.AuthorizationError) or "authorization" in lowered or "authentication" in lowered:
        return ConnectFailed(
            url, "authentication failed", "the server refused the credentials", "check the user and password (or token)"
        )
    if "tls" in lowered or "ssl" in lowered:
        return ConnectFailed(url, "TLS failed", text, "use tls:// for a TLS server and check its certificate")
    if "expecting info" in lowered or "info message" in lowered:
        return ConnectFailed(url, "not a NATS server", text, "check the port: something else answers there")
    return ConnectFailed(url, "failed", text or type(exc).__name__, "check the URL and the server")


def describe_nats_error(exc: BaseException) -> str:
    if isinstance(exc, nats.js.errors.APIError):
        return f"{exc.description or type(exc).__name__} (code {exc.code}, err_code {exc.err_code})"
    return str(exc) or type(exc).__name__


async def retry_transient(
    what: str,
    attempt: Callable[[], Awaitable[T]],
    *,
    where: str,
    options: JetStreamOptions,
    closed: Callable[[], bool],
    passthrough: tuple[type[Exception], ...] = (),
    slot_taken_passes: bool = False,
    answering: Callable[[], Awaitable[bool]] | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, retrying transient failures (with back-off) until
    ``options.operation_timeout`` or until ``closed()``: the one retry loop of every NATS request.

    Journal errors and the ``passthrough`` types propagate as they are, and so does a slot-taken rejection
    when ``slot_taken_passes`` (the caller decides what it means); any other failure becomes a
    ``SourceError`` naming ``where`` and what was being done. After a timeout, ``answering`` (when given) asks
    whether the server still answers at all: when it does not, retrying for the rest of the operation timeout (and
    then again for every other run of the command) would only postpone ``ServerNotAnswering``, so that is raised.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.operation_timeout
    delay = 0.02
    while True:
        try:
            return await attempt()
        except Exception as exc:
            if isinstance(exc, (JournalError, *passthrough)):
                raise
            failure = classify_nats_error(exc)
            if isinstance(exc, TimeoutError) and answering is not None and not await answering():
                raise ServerNotAnswering(where, what, options.request_timeout) from None
            if failure is Failure.TRANSIENT and not closed() and loop.time() + delay < deadline:
                await asyncio.sleep(delay)  # back off: a server restarting, a leader being elected
                delay = min(delay * 2, 0.5)
                continue
            if failure is Failure.SLOT_TAKEN and slot_taken_passes:
                raise
            if failure is Failure.STREAM_FULL:
                raise StreamFull(where, what, stream_limit(exc) or "max_msgs") from None
            raise SourceError(f"{where}: {what} failed: {describe_nats_error(exc)}") from exc


# -- the client --------------------------------------------------------------------------------------------

#: What ``bytes.strip()`` strips, for the same stripping on decoded text.
_ASCII_SPACE = " \t\n\r\x0b\x0c"


async def connect_client(client: C, servers: str, display_url: str, opts: JetStreamOptions) -> C:
    """``client`` connected to ``servers``, or ``ConnectFailed`` naming ``display_url`` and why, at the first failure
    (nats-py alone would retry the first connection forever). The one way journaltools connects to NATS."""
    loop = asyncio.get_running_loop()
    first_failure: asyncio.Future[BaseException] = loop.create_future()

    async def quiet(*args: object) -> None:  # nats-py logs every reconnect attempt by default
        return None

    async def on_error(exc: BaseException) -> None:
        # nats-py retries the first connection forever; the first failure is the answer we give.
        if not first_failure.done():
            first_failure.set_result(exc)

    connecting = asyncio.ensure_future(
        client.connect(
            servers=[servers],
            name="journaltools",
            allow_reconnect=True,
            max_reconnect_attempts=-1,
            reconnect_time_wait=opts.reconnect_wait,  # type: ignore[arg-type]  # nats-py says int
            connect_timeout=max(1, int(opts.connect_timeout)),
            error_cb=on_error,
            disconnected_cb=quiet,
            reconnected_cb=quiet,
            closed_cb=quiet,
        )
    )
    racing: set[asyncio.Future[Any]] = {connecting, first_failure}
    await asyncio.wait(racing, timeout=opts.connect_timeout, return_when=asyncio.FIRST_COMPLETED)
    failure: BaseException | None = None
    if connecting.done() and not connecting.cancelled():
        failure = connecting.exception()
    elif first_failure.done():
        failure = first_failure.result()
    else:
        failure = TimeoutError()
    if failure is not None and client.tls_handshake_pending and not isinstance(failure, ssl.SSLError):
        failure = TlsHandshakeFailed(failure)
    if failure is not None or not connecting.done():
        connecting.cancel()
        await asyncio.gather(connecting, return_exceptions=True)
        # A peer that went quiet half way through a TLS handshake can keep nats-py's close waiting for ever; the
        # connection failed either way, and the failure below is the answer.
        with contextlib.suppress(TimeoutError, nats.errors.Error, OSError):
            await asyncio.wait_for(client.close(), opts.connect_timeout)
        raise connect_error(failure or TimeoutError(), display_url, opts.connect_timeout) from None
    return client


#: The schemes that promise TLS: nothing, credentials above all, may cross the connection before it is TLS.
TLS_SCHEMES = frozenset({"tls", "wss"})


class PlainTransportRefused(nats.errors.Error):
    """A ``tls://`` or ``wss://`` connection that is not TLS when the client would send its CONNECT."""

    def __str__(self) -> str:
        return "the connection is not TLS; nothing was sent"


class TlsHandshakeFailed(nats.errors.Error):
    """The TLS handshake a ``tls://`` URL asks for broke off (the peer hung up or went quiet)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__()
        self.cause = cause

    def __str__(self) -> str:
        why = str(self.cause) or type(self.cause).__name__
        return f"the server did not complete a TLS handshake ({why}); no credentials were sent"


def _transport_is_tls(transport: object) -> bool:
    """Whether nats-py's transport runs over TLS now (its TCP writer after ``start_tls``, or a WebSocket
    opened with an SSL context). Anything unknown counts as plain: refusing is the safe mistake."""
    writer = getattr(transport, "_io_writer", None)
    if isinstance(writer, asyncio.StreamWriter):
        return writer.get_extra_info("ssl_object") is not None
    return getattr(transport, "_using_tls", None) is True


class CheckedClient(Client):
    """nats-py's client that keeps the promise of a ``tls://`` or ``wss://`` URL.

    nats-py upgrades a TCP connection to TLS only when the server's INFO says ``tls_required``, so a server
    without TLS (or anyone on the path rewriting the INFO) would receive ``CONNECT {"user":…,"pass":…}`` in
    clear text. For those schemes this client upgrades whatever the INFO says (a plain server then fails the
    handshake: "TLS failed"), and checks the transport once more just before CONNECT is written, so no code
    path of nats-py, reconnects included, can send credentials over a plain connection.
    """

    #: The upgrade was forced and has not completed yet: a failure now is the TLS handshake's.
    tls_handshake_pending = False

    def _requires_tls(self) -> bool:
        server = self._current_server
        return server is not None and server.uri.scheme in TLS_SCHEMES

    async def _process_info(self, info: dict[str, Any], initial_connection: bool = False) -> None:
        if initial_connection and self._requires_tls():
            # nats-py reads this very dict right after, to decide whether to start TLS.
            info["tls_required"] = True
            self.tls_handshake_pending = True
        await super()._process_info(info, initial_connection)

    def _connect_command(self) -> bytes:
        if self._requires_tls() and not _transport_is_tls(self._transport):
            raise PlainTransportRefused()
        self.tls_handshake_pending = False
        return super()._connect_command()


class _CountingParser(Parser):
    """nats-py's protocol parser, counting what arrives: every byte the server sends passes through ``parse``."""

    received = 0
    last_received = 0.0

    async def parse(self, data: bytes = b"") -> None:
        if data:
            self.received += len(data)
            self.last_received = asyncio.get_running_loop().time()
        await super().parse(data)


class JournalClient(CheckedClient):
    """nats-py's client with a faster parser for message headers (every record read carries about eight), and a
    count of the bytes received (``received_bytes``, ``last_received``): a request times out on a connection
    that went quiet, not on a slow one (``wait_with_progress``).

    nats-py's own parser decodes each line and checks each character of each header name in a Python
    generator. This one decodes the block once and gives the same dictionary for every header block (a
    property test holds it to nats-py's), in about half the time. Should a later nats-py stop calling this
    static method, the client is simply nats-py's.
    """

    def __init__(self) -> None:
        super().__init__()
        self._counting = _CountingParser(self)
        self._ps = self._counting

    @property
    def received_bytes(self) -> int:
        """Bytes received from the server on this client's connections so far."""
        return self._counting.received

    @property
    def last_received(self) -> float:
        """The loop time anything last arrived from the server (0 before anything did)."""
        return self._counting.last_received

    @staticmethod
    def _parse_header_lines(raw: bytes) -> dict[str, str]:
        headers: dict[str, str] = {}
        for line in raw.decode("utf-8", "replace").split("\r\n"):
            name, separator, value = line.partition(":")
            if separator:
                name = name.strip(_ASCII_SPACE)
                # nats-py skips a name that is not ASCII or holds whitespace (as str.isspace says).
                if name.isascii() and (not name or name.split() == [name]):
                    headers[name] = value.strip(_ASCII_SPACE)
        return headers


async def wait_with_progress(client: JournalClient, future: asyncio.Future[T], quiet: float) -> T:
    """``future``'s result, or ``TimeoutError`` once nothing has arrived on ``client``'s connection for ``quiet``
    seconds. A fixed timeout fails on a slow link however well it is going (a 4 MB batch at 1 Mbit/s takes 32 s):
    while bytes arrive, whether this reply's or those queued ahead of it, the server is answering. Each pass
    either ends or waits until ``quiet`` after the latest arrival, so a silent link ends it within ``quiet``."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while True:
        remaining = max(started, client.last_received) + quiet - loop.time()
        if remaining <= 0:
            future.cancel()
            raise TimeoutError(f"nothing arrived from the server for {quiet:g}s")
        done, _ = await asyncio.wait({future}, timeout=remaining)
        if done:
            return future.result()
