"""OTLP JSON lines as the protobuf definitions read them (the export tests and the Phoenix test share this)."""

from __future__ import annotations

import base64
import json
from typing import Any

#: The fields the OTLP JSON encoding writes in hex, where proto3 JSON writes bytes in base64.
_HEX_IDS = ("traceId", "spanId", "parentSpanId")


def with_binary_ids(line: bytes) -> bytes:
    """One OTLP JSON line with its hex ids turned to base64, so a protobuf parse reads them as the bytes they are
    (and checks their real lengths)."""

    def convert(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: base64.b64encode(bytes.fromhex(value)).decode() if key in _HEX_IDS else convert(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [convert(item) for item in node]
        return node

    return json.dumps(convert(json.loads(line))).encode()
