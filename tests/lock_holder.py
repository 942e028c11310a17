"""Holding a run's lock from another process, and a guard that fails any lock call or records every path opened:
the liveness tests' tools (the runtime's lock must be read from the kernel's table, never opened)."""

from __future__ import annotations

import builtins
import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from journaltools.sources.liveness import PROC_LOCKS

HOLDER = """
import fcntl, sys
with open(sys.argv[1], "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    print("held", flush=True)
    sys.stdin.readline()
    fcntl.flock(lock, fcntl.LOCK_UN)
    print("released", flush=True)
    sys.stdin.readline()
"""

needs_proc_locks = pytest.mark.skipif(not PROC_LOCKS.exists(), reason="the kernel's lock table is Linux's /proc/locks")


def never_locking(monkeypatch: pytest.MonkeyPatch, lock: Path) -> list[str]:
    """Refuse any lock call, and record every path opened: the lock file must never be among them."""
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("journaltools took, tested or waited on a lock")

    def watched_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else str(file))
        return real_open(file, *args, **kwargs)

    def watched_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    for name in ("flock", "lockf"):
        monkeypatch.setattr(fcntl, name, refuse)
    monkeypatch.setattr(builtins, "open", watched_open)
    monkeypatch.setattr(os, "open", watched_os_open)
    return opened
