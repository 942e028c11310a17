"""A ``journaltools`` command run as a process whose output a test reads line by line as it comes.

``Watched.until(text)`` waits for the next line holding ``text`` (a reader thread queues the lines; the wait is on
the queue, never a sleep), so a test appends a record, then waits for the command to say it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO

from tests.paths import ROOT

#: Longest a test waits for a line it expects (a loaded machine, a server restarting).
LINE_TIMEOUT = 30.0


class Watched:
    def __init__(self, *argv: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "journaltools", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, text: str, timeout: float = LINE_TIMEOUT) -> list[str]:
        """The lines up to and including the next one holding ``text``."""
        seen: list[str] = []
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line holding {text!r} within {timeout}s; after: {seen}") from None
            if line is None:
                raise AssertionError(f"the command ended before a line holding {text!r}: {seen} {self.stderr()}")
            seen.append(line)
            self.lines.append(line)
            if text in line:
                return seen

    def rest(self, timeout: float = LINE_TIMEOUT) -> list[str]:
        """Every line until the command ends."""
        seen: list[str] = []
        while (line := self._queue.get(timeout=timeout)) is not None:
            seen.append(line)
            self.lines.append(line)
        return seen

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=LINE_TIMEOUT)

    def wait(self) -> int:
        return self.process.wait(timeout=LINE_TIMEOUT)

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def count_holding(lines: Sequence[str], text: str) -> int:
    return sum(1 for line in lines if text in line)
