"""Timestamps in the protocol's one format, with an injectable clock for reproducible journals."""

from __future__ import annotations

from datetime import UTC, datetime


def format_ts(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds, e.g. ``2026-11-29T10:00:00.123456Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_ts() -> str:
    return format_ts(datetime.now(UTC))
