"""Compare-and-swap buckets on JetStream key-value: what the NATS task store and the NATS turn store write through.

A bucket ``B`` is the stream ``KV_B`` with subjects ``$KV.B.<key>`` (the layout every NATS client and the ``nats``
CLI use for key-value); the value of a key is the last message on its subject, and its **revision** is that
message's stream sequence. ``0`` means "no value".

Writes are conditional, so this is a real multi-writer compare-and-swap: ``put(key, data, expected_revision)``
publishes with ``Nats-Expected-Last-Subject-Sequence: expected_revision`` (0: the key must be absent), and exactly
one of several writers that read the same revision succeeds; the others get ``None``. Each logical write carries
a ``Nats-Msg-Id`` made once and reused on every retry: when a retry after a lost ack is rejected, the key is read
back, and a stored message with our id is our write (adopted, its revision returned). A write that lost its
ack and was then overwritten by a second writer that had read it comes back as ``None``: the caller re-reads and
sees a revision past its own, so it never believes a write that was not made.

Reads ask the stream leader (``STREAM.MSG.GET``), never a direct get: on a replicated bucket a follower may lag
behind, and a compare-and-swap caller must see the latest revision anyone wrote.

NATS errors are mapped here, once: timeouts, no responders and 503s (a leader election, a server restarting) are
retried until ``operation_timeout``; anything else becomes a ``SourceError`` naming the bucket and the key.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs

import nats.js.errors
import orjson
from nats.aio.client import Client

from journaltools._base.aio import map_bounded, run_sync
from journaltools.errors import InvalidSource, JournalError, SourceError
from journaltools.sources.nats import (
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    EXPECTED_STREAM,
    MSG_ID,
    CheckedClient,
    JetStreamOptions,
    connect_client,
    parse_replicas,
    retry_transient,
    server_display,
    split_server_url,
)

T = TypeVar("T")

_BUCKET_NAME = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
#: Key-value keys: subject tokens of these characters, never starting or ending with a dot.
_KEY = re.compile(r"^[-/_=A-Za-z0-9]+(\.[-/_=A-Za-z0-9]+)*$")
#: The publish was rejected because the key's last revision is not the expected one.
_WRONG_LAST_SEQUENCE = frozenset({10071, 10164})
_NO_MESSAGE = 10037
_STREAM_NOT_FOUND = 10059
KV_OPERATION = "KV-Operation"
#: The duplicate window of a bucket journaltools creates: a retried write within it is recognised by its id.
DUPLICATE_WINDOW_NS = 120 * 1_000_000_000


@dataclass(frozen=True, slots=True)
class BucketLocation:
    """A bucket on a server: ``nats://host:port/BUCKET[?replicas=3]``; other query parameters are the store's."""

    servers: str
    bucket: str
    replicas: int = 1
    parameters: Mapping[str, str] = field(default_factory=dict)

    @property
    def stream(self) -> str:
        return f"KV_{self.bucket}"

    @property
    def display_url(self) -> str:
        """The URL without credentials."""
        return f"{server_display(self.servers)}/{self.bucket}"


def parse_bucket_url(url: str, default_bucket: str, parameters: Sequence[str] = ()) -> BucketLocation:
    """``nats://[user:pass@]host:port/BUCKET[?replicas=N]`` plus the store's own ``parameters`` (e.g. ``prefix``).

    A URL that cannot name a bucket is ``InvalidSource`` (bad usage)."""
    parsed, shown = split_server_url(url, "BUCKET")
    bucket = parsed.path.strip("/") or default_bucket
    if not _BUCKET_NAME.fullmatch(bucket):
        raise InvalidSource(f"{shown!r}: bucket name {bucket!r} must be 1-200 characters of [A-Za-z0-9_-]")
    query = {name: values[-1] for name, values in parse_qs(parsed.query).items()}
    unknown = sorted(set(query) - {"replicas", *parameters})
    if unknown:
        known = ", ".join(["replicas", *parameters])
        raise InvalidSource(f"{shown!r}: unknown parameter {unknown[0]!r} (known: {known})")
    replicas = parse_replicas(url, query.pop("replicas", "1"))
    return BucketLocation(f"{parsed.scheme}://{parsed.netloc}", bucket, replicas, query)


def validate_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise JournalError(f"key-value key {key!r} must be dot-separated tokens of [-/_=A-Za-z0-9]")
    return key


def bucket_config_for(location: BucketLocation, history: int = 1) -> dict[str, Any]:
    """The stream journaltools creates for a bucket: the standard key-value layout, kept forever, on disk."""
    return {
        "name": location.stream,
        "subjects": [f"$KV.{location.bucket}.>"],
        "retention": "limits",
        "storage": "file",
        "num_replicas": location.replicas,
        "max_msgs_per_subject": history,
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "discard": "new",
        "allow_direct": True,
        "allow_rollup_hdrs": True,
        "deny_delete": True,
        "deny_purge": False,
        "duplicate_window": DUPLICATE_WINDOW_NS,
    }


def check_bucket_config(location: BucketLocation, config: Mapping[str, Any]) -> None:
    """Refuse a bucket whose values could expire or vanish, or that is not a key-value bucket at all."""

    def refuse(why: str) -> None:
        raise SourceError(f"{location.display_url}: bucket {location.bucket!r} refused: {why}")

    if f"$KV.{location.bucket}.>" not in (config.get("subjects") or []):
        refuse(f"stream {location.stream!r} does not hold the subjects $KV.{location.bucket}.>: not a key-value bucket")
    if config.get("max_age", 0):
        refuse(f"max_age is {int(config['max_age']) / 1e9:g}s: stored values would silently expire")
    if config.get("storage", "file") != "file":
        refuse(f"storage is {config.get('storage')!r}: every value is lost when the server stops")
    if int(config.get("max_msgs_per_subject", 0)) < 1:
        refuse("max_msgs_per_subject (history) must be at least 1")
    if config.get("discard", "old") != "new" and (
        int(config.get("max_bytes", -1)) > 0 or config.get("max_msgs", -1) > 0
    ):
        refuse("discard is 'old' with a size limit: reaching it would delete stored values")


@dataclass(frozen=True, slots=True)
class Versioned:
    """A key's value and its revision."""

    data: bytes
    revision: int


@dataclass(frozen=True, slots=True)
class _Stored:
    """The last message on a key's subject as the leader holds it (a delete marker has ``deleted``)."""

    data: bytes
    revision: int
    headers: Mapping[str, str]

    @property
    def deleted(self) -> bool:
        return self.headers.get(KV_OPERATION) in ("DEL", "PURGE")


def _parse_headers(encoded: str | None) -> dict[str, str]:
    if not encoded:
        return {}
    lines = base64.b64decode(encoded).decode("utf-8", "replace").split("\r\n")[1:]  # skip "NATS/1.0"
    headers = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip()] = value.strip()
    return headers


class CasBucket:
    """One key-value bucket, compare-and-swap only. Open with ``open_async`` (or ``open``); close with
    ``aclose``/``close``. Every method has a blocking face (``get``) over its async core (``get_async``)."""

    def __init__(self, client: Client, location: BucketLocation, options: JetStreamOptions) -> None:
        self._nc = client
        self.location = location
        self.options = options
        self.url = location.display_url
        self._closed = False

    # -- opening and closing ---------------------------------------------------------------------

    @classmethod
    async def open_async(
        cls,
        location: BucketLocation,
        *,
        create: bool = False,
        history: int = 1,
        options: JetStreamOptions | None = None,
    ) -> CasBucket:
        """Connect, then create (``create=True``) or verify the bucket. Refuses a bucket whose values could expire."""
        opts = options or JetStreamOptions()
        client = await connect_client(CheckedClient(), location.servers, location.display_url, opts)
        bucket = cls(client, location, opts)
        try:
            await bucket._ensure(create, history)
        except BaseException:
            await bucket.aclose()
            raise
        return bucket

    @classmethod
    def open(
        cls,
        location: BucketLocation,
        *,
        create: bool = False,
        history: int = 1,
        options: JetStreamOptions | None = None,
    ) -> CasBucket:
        return run_sync(cls.open_async(location, create=create, history=history, options=options))

    async def _ensure(self, create: bool, history: int) -> None:
        stream = self.location.stream
        info = await self._api(f"STREAM.INFO.{stream}", b"", "reading the bucket", missing_ok=True)
        if info is None:
            if not create:
                raise SourceError(f"{self.url}: bucket {self.location.bucket!r} does not exist")
            config = bucket_config_for(self.location, history)
            info = await self._api(f"STREAM.CREATE.{stream}", orjson.dumps(config), "creating the bucket")
            assert info is not None
        check_bucket_config(self.location, info.get("config") or {})

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._nc.drain() if self._nc.is_connected else await self._nc.close()
        except Exception:  # a drain that fails (server gone) still has to close the connection
            await self._nc.close()

    def close(self) -> None:
        run_sync(self.aclose())

    def __enter__(self) -> CasBucket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests (every NATS call goes through these) ---------------------------------------------

    def _subject(self, key: str) -> str:
        return f"$KV.{self.location.bucket}.{validate_key(key)}"

    async def _retrying(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """``attempt`` with transient failures retried (``retry_transient``)."""
        return await retry_transient(what, attempt, where=self.url, options=self.options, closed=lambda: self._closed)

    async def _api(
        self, endpoint: str, payload: bytes, what: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        """One ``$JS.API`` request; None for "not found" when ``missing_ok``."""

        async def attempt() -> dict[str, Any] | None:
            reply = await self._nc.request(f"$JS.API.{endpoint}", payload, timeout=self.options.request_timeout)
            body: dict[str, Any] = orjson.loads(reply.data)
            error = body.get("error")
            if error is not None:
                if missing_ok and error.get("err_code") in (_NO_MESSAGE, _STREAM_NOT_FOUND):
                    return None
                nats.js.errors.APIError.from_error(error)  # raises the matching APIError subclass
            return body

        return await self._retrying(what, attempt)

    async def _last(self, key: str) -> _Stored | None:
        request = orjson.dumps({"last_by_subj": self._subject(key)})
        body = await self._api(f"STREAM.MSG.GET.{self.location.stream}", request, f"reading {key!r}", missing_ok=True)
        if body is None:
            return None
        message = body["message"]
        data = base64.b64decode(message["data"]) if message.get("data") else b""
        return _Stored(data, int(message["seq"]), _parse_headers(message.get("hdrs")))

    # -- the compare-and-swap contract ---------------------------------------------------------------

    async def get_async(self, key: str) -> Versioned | None:
        """The key's value and revision, or None when it has none (never written, or deleted)."""
        stored = await self._last(key)
        if stored is None or stored.deleted:
            return None
        return Versioned(stored.data, stored.revision)

    async def put_async(
        self, key: str, data: bytes, expected_revision: int, *, msg_id: str | None = None
    ) -> int | None:
        """Store ``data`` if the key's revision is ``expected_revision`` (0: the key has no value); returns the new
        revision, or None when another writer holds a different revision.

        ``msg_id`` names this logical write (made here when not given): a caller that lost track of a write (its
        process lost the answer) and repeats it with the same id gets the revision it stored, not a conflict.
        """
        subject = self._subject(key)
        msg_id = msg_id or uuid.uuid4().hex
        expected = expected_revision
        for _ in range(3):  # at most: a delete marker in the way of a create, then the write
            outcome = await self._publish(subject, data, expected, msg_id)
            if outcome is not None:
                return outcome
            stored = await self._last(key)
            if stored is not None and stored.headers.get(MSG_ID) == msg_id:
                return stored.revision  # our write: only its ack was lost
            if expected_revision == 0 and stored is not None and stored.deleted and stored.revision != expected:
                expected = stored.revision  # "absent" after a delete: create over the delete marker
                continue
            return None
        return None

    async def _publish(self, subject: str, data: bytes, expected: int, msg_id: str) -> int | None:
        headers = {
            EXPECTED_LAST_SUBJECT_SEQUENCE: str(expected),
            MSG_ID: msg_id,
            EXPECTED_STREAM: self.location.stream,
        }

        async def attempt() -> int | None:
            reply = await self._nc.request(subject, data, timeout=self.options.request_timeout, headers=headers)
            ack: dict[str, Any] = orjson.loads(reply.data)
            error = ack.get("error")
            if error is not None:
                if error.get("err_code") in _WRONG_LAST_SEQUENCE:
                    return None
                nats.js.errors.APIError.from_error(error)
            return int(ack["seq"])  # a "duplicate" ack names the sequence our earlier attempt stored

        return await self._retrying(f"writing {subject}", attempt)

    async def keys_async(self, prefix: str = "") -> list[str]:
        """Every key starting with ``prefix`` that has a message (a deleted key too: ``get`` says None for it),
        sorted. A prefix ending in a dot is asked of the server as a subject filter; the listing pages past the
        server's limit of subjects per stream-info response, so a large bucket is never cut short."""
        head = f"$KV.{self.location.bucket}."
        subject_filter = f"{head}{prefix}>" if prefix == "" or prefix.endswith(".") else f"{head}>"
        keys: set[str] = set()
        offset = 0
        while True:
            request = orjson.dumps({"subjects_filter": subject_filter, "offset": offset})
            info = await self._api(f"STREAM.INFO.{self.location.stream}", request, "listing keys")
            assert info is not None
            page: dict[str, int] = (info.get("state") or {}).get("subjects") or {}
            keys.update(subject[len(head) :] for subject in page if subject[len(head) :].startswith(prefix))
            offset += len(page)
            total = info.get("total")
            if not page or total is None or offset >= int(total):
                return sorted(keys)

    async def get_many_async(self, keys: Sequence[str]) -> dict[str, Versioned]:
        """The keys that have values, a few requests in flight at once."""
        values = await map_bounded(list(keys), self.get_async, max(1, self.options.concurrency // 4))
        return {key: value for key, value in zip(keys, values, strict=True) if value is not None}

    # -- the blocking face -------------------------------------------------------------------------

    def get(self, key: str) -> Versioned | None:
        return run_sync(self.get_async(key))

    def put(self, key: str, data: bytes, expected_revision: int, *, msg_id: str | None = None) -> int | None:
        return run_sync(self.put_async(key, data, expected_revision, msg_id=msg_id))

    def keys(self, prefix: str = "") -> list[str]:
        return run_sync(self.keys_async(prefix))

    def get_many(self, keys: Sequence[str]) -> dict[str, Versioned]:
        return run_sync(self.get_many_async(keys))


__all__ = [
    "BucketLocation",
    "CasBucket",
    "Versioned",
    "bucket_config_for",
    "check_bucket_config",
    "parse_bucket_url",
    "validate_key",
]
