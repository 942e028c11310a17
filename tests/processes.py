"""Stopping a server a test started: asked to end, then killed if it does not within the grace period."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], grace: float = 30) -> None:
    """Terminate ``process`` and wait for it; kill it if it is still running after ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
