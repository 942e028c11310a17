"""The turnjournal CAS store on JetStream key-value: ``nats://host:port/BUCKET[?prefix=turnjournal&replicas=3]``.

``NatsBlobStore`` gives ``CASStore`` the blob contract it needs over one bucket (``journaltools.natskv``): a
blob's version is its key's revision, ``put`` is a conditional publish, so writers on many hosts share one
store and exactly one of them advances each record revision and each owner-index revision.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from journaltools.backends.nats_connection import JetStreamOptions
from journaltools.natskv import CasBucket, parse_bucket_url
from journaltools.turnjournal.stores import CASStore, validate_prefix

DEFAULT_BUCKET = "TURNS"
DEFAULT_PREFIX = "turnjournal"


class NatsBlobStore:
    """The ``CasBlobs`` contract over one key-value bucket."""

    def __init__(self, bucket: CasBucket) -> None:
        self.bucket = bucket
        self.url = bucket.url

    def get(self, key: str) -> tuple[bytes, int] | None:
        stored = self.bucket.get(key)
        return (stored.data, stored.revision) if stored is not None else None

    def put(self, key: str, data: bytes, expected_version: int) -> int | None:
        return self.bucket.put(key, data, expected_version)

    def keys(self, prefix: str) -> list[str]:
        return self.bucket.keys(prefix)

    def get_many(self, keys: list[str]) -> dict[str, tuple[bytes, int]]:
        return {key: (stored.data, stored.revision) for key, stored in self.bucket.get_many(keys).items()}

    def close(self) -> None:
        self.bucket.close()


def _now() -> datetime:
    return datetime.now(UTC)


def open_nats_turn_store(
    url: str,
    *,
    create: bool = False,
    options: JetStreamOptions | None = None,
    max_retries: int = 16,
    now: Callable[[], datetime] = _now,
) -> CASStore:
    """A ``CASStore`` over the bucket of ``url`` (``create=True``: create the bucket if it is missing)."""
    location = parse_bucket_url(url, DEFAULT_BUCKET, parameters=("prefix",))
    prefix = validate_prefix(location.parameters.get("prefix", DEFAULT_PREFIX))  # before anything is created
    bucket = CasBucket.open(location, create=create, options=options)
    try:
        return CASStore(NatsBlobStore(bucket), prefix=prefix, max_retries=max_retries, now=now)
    except BaseException:
        bucket.close()
        raise


__all__ = ["DEFAULT_BUCKET", "DEFAULT_PREFIX", "NatsBlobStore", "open_nats_turn_store"]
