"""The JetStream stream a run keyspace lives on: the settings the runtime requires, the prefix its one wildcard
subject gives, and the configuration journaltools creates when asked (REAL-SYSTEM.md E.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from journaltools.errors import (
    SourceError,
)

#: The smallest max message size the runtime accepts (``jetstream.go:70``).
RECORD_FLOOR_BYTES: Final = 4096


# -- the stream ---------------------------------------------------------------------------------------


def stream_config_for(stream: str, prefix: str, replicas: int = 1) -> dict[str, Any]:
    """The configuration a created stream gets: what the runtime's error message tells an operator to run
    (``nats stream add NAME --subjects '<prefix>.>' --max-msgs-per-subject=1 --discard=new --discard-per-subject``),
    file storage and no max age. Direct get is on so journaltools reads it at full speed; the runtime does not
    look at it."""
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
        "max_msg_size": -1,
        "allow_direct": True,
    }


def derive_prefix(stream: str, subjects: Sequence[str]) -> str:
    """The run keyspace of a stream: its one wildcard subject, which must be ``<prefix>.>`` (``jetstream.go:159-209``).

    Literal subjects belong to the operator and are ignored; no wildcard subject, several, or a malformed one is a
    ``SourceError`` saying which."""

    def wildcard(subject: str) -> bool:
        return any(token in ("*", ">") for token in subject.split("."))

    wildcards = [subject for subject in subjects if wildcard(subject)]
    if len(wildcards) != 1:
        found = ", ".join(wildcards) if wildcards else "none"
        raise SourceError(
            f"stream {stream!r} binds {len(wildcards)} wildcard subjects ({found}); "
            "it must bind exactly one, of the form <prefix>.>, for runs to live under"
        )
    tokens = wildcards[0].split(".")
    head = tokens[:-1]
    if tokens[-1] != ">" or not head or any(token in ("", "*", ">") for token in head):
        raise SourceError(f"stream {stream!r}: wildcard subject {wildcards[0]!r} must be a clean <prefix>.>")
    return ".".join(head)


def stream_problems(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(setting, why) for each of the runtime's checks the stream fails (``jetstream.go:216-234``), in its order."""
    problems: list[tuple[str, str]] = []
    per_subject = config.get("max_msgs_per_subject", 0)
    if per_subject != 1:
        problems.append(("max_msgs_per_subject", f"is {per_subject}, must be 1: each record subject is write-once"))
    if config.get("discard", "old") != "new":
        problems.append(("discard", "is 'old': a full stream would drop stored records; it must be 'new'"))
    if not config.get("discard_new_per_subject", False):
        problems.append(("discard_new_per_subject", "is off: a re-publish of a record must be refused"))
    max_age = int(config.get("max_age") or 0)
    if max_age:
        problems.append(("max_age", f"is {max_age / 1e9:g}s: stored runs would silently expire; it must be 0"))
    max_size = int(config.get("max_msg_size") or -1)
    if 0 < max_size < RECORD_FLOOR_BYTES:
        problems.append(("max_msg_size", f"is {max_size} bytes, below the {RECORD_FLOOR_BYTES}-byte record floor"))
    return problems
