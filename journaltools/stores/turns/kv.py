"""The CAS turn store on JetStream key-value: ``nats://host:port/BUCKET[?prefix=...&replicas=N]``.

``NatsBlobStore`` gives ``CASStore`` the runtime's blob contract over one bucket (``journaltools.stores.natskv``):
``create`` is a publish with "the key must be absent"; ``compare_and_swap`` reads the key, compares the whole value
with the one expected, and publishes with "the revision must still be the one read", so of several writers on many hosts
exactly one swaps each value. Keys are the runtime's (``<prefix>/workspaces/<seg>/tasks/<seg>``, ``<prefix>/index``);
the default prefix is ``agent-harness/turn-executions/v2``.
"""

from __future__ import annotations

from typing import Final

from journaltools.errors import InvalidSource
from journaltools.sources.nats import JetStreamOptions
from journaltools.stores.natskv import CasBucket, parse_bucket_url, validate_key
from journaltools.stores.turns.cas import CASStore, normalize_prefix
from journaltools.stores.turns.contract import DEFAULT_PREFIX, Clock

DEFAULT_BUCKET: Final = "TURNS"
#: Swap attempts while the value stays the one expected but its revision moves (another writer wrote the same
#: bytes again): each lost attempt re-reads; the bound only guards against a writer rewriting it forever.
MAX_SWAP_ATTEMPTS: Final = 8


class NatsBlobStore:
    """The ``BlobStore`` contract over one key-value bucket."""

    def __init__(self, bucket: CasBucket) -> None:
        self.bucket = bucket
        self.url = bucket.url

    def read(self, key: str) -> bytes | None:
        stored = self.bucket.get(key)
        return stored.data if stored is not None else None

    def create(self, key: str, value: bytes) -> bool:
        return self.bucket.put(key, value, 0) is not None

    def compare_and_swap(self, key: str, expected: bytes, value: bytes) -> bool:
        for _ in range(MAX_SWAP_ATTEMPTS):
            stored = self.bucket.get(key)
            if stored is None or stored.data != expected:
                return False
            if self.bucket.put(key, value, stored.revision) is not None:
                return True
        return False

    def keys(self, prefix: str) -> list[str]:
        return self.bucket.keys(prefix)

    def close(self) -> None:
        self.bucket.close()


def open_nats_turn_store(
    url: str,
    *,
    create: bool = False,
    options: JetStreamOptions | None = None,
    max_retries: int = 0,
    now: Clock | None = None,
) -> CASStore:
    """A ``CASStore`` over the bucket of ``url`` (``create=True``: create the bucket if it is missing)."""
    location = parse_bucket_url(url, DEFAULT_BUCKET, parameters=("prefix",))
    prefix = normalize_prefix(location.parameters.get("prefix", DEFAULT_PREFIX))
    try:
        validate_key(f"{prefix}/index")  # before anything is created
    except Exception as exc:
        raise InvalidSource(
            f"{location.display_url}: prefix {prefix!r} cannot be part of a key-value key: {exc}"
        ) from None
    bucket = CasBucket.open(location, create=create, options=options)
    try:
        return CASStore(NatsBlobStore(bucket), prefix=prefix, max_retries=max_retries, now=now)
    except BaseException:
        bucket.close()
        raise


__all__ = ["DEFAULT_BUCKET", "MAX_SWAP_ATTEMPTS", "NatsBlobStore", "open_nats_turn_store"]
