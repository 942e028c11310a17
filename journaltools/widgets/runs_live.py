"""The run browser as its runs are written: the opened run's pane follows as a conversation view does
(``live.RunFollow``), and a second thread looks at the journals of the other open runs once every ``ROWS_SECONDS``
(a file's size and time, a stream's last sequence) and folds again only those that changed, so their rows' status,
reason and counts stay current.

It knows the browser and the view only by what it asks of them (``Browser``, ``FollowingView``), so the browser
that holds it is not among its imports."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from journaltools.errors import JournalError
from journaltools.folding.run import FoldedRun, fold_run
from journaltools.sources.base import Backend
from journaltools.widgets.live import LiveUpdate, RunFollow, is_open
from journaltools.widgets.runs_model import row_of_fold
from journaltools.widgets.runs_row import RunRow

#: How often the run browser looks at the journals of its open runs, and how many of them it follows at most.
ROWS_SECONDS = 1.0
ROWS_FOLLOWED = 200


class Browser(Protocol):
    """What the live part asks of the run browser."""

    def row_of(self, run: str) -> RunRow | None: ...
    def update_rows(self, rows: list[RunRow]) -> None: ...
    def open_rows(self, limit: int) -> list[RunRow]: ...


class FollowingView(Protocol):
    """What it asks of the opened run's conversation view."""

    @property
    def model(self) -> Any: ...
    def follow(self, live: RunFollow, on_update: Callable[[LiveUpdate], None] | None = None) -> None: ...


def live_row(row: RunRow, folded: FoldedRun) -> RunRow:
    """``row`` with what changes as a run is written (status, why, counts, last seq) read off ``folded``; the
    times and the task's state the runs table gave stay."""
    fresh = row_of_fold(row.run, folded.as_fold_result(), status=folded.status)
    return replace(
        row,
        status=fresh.status,
        reason=fresh.reason,
        llm_calls=fresh.llm_calls,
        tokens=fresh.tokens,
        pending_calls=fresh.pending_calls,
        last_seq=fresh.last_seq,
        segments=fresh.segments,
        stale_terminal=fresh.stale_terminal,
        token_parts=fresh.token_parts,
        search_text=fresh.search_text,
    )


class BrowserLive:
    """The run browser's live part: the opened run's pane and the rows of the open runs (see the module doc)."""

    def __init__(self, browser: Browser, backend: Backend | None, *, follow: bool = True) -> None:
        self.browser = browser
        self.backend = backend
        self.follow = follow and backend is not None
        self.pane: RunFollow | None = None
        self._stop = threading.Event()
        self._rows: threading.Thread | None = None
        self._seen: dict[str, object] = {}
        self._looked = threading.Condition()

    def opened(self, run: str | None, view: FollowingView | None) -> None:
        """The browser opened ``run`` in ``view`` (None: closed the pane): follow it while its run is open."""
        self._stop_pane()
        if run is None or view is None or not self.follow or self.backend is None:
            return
        segments = view.model.segments
        if view.model.status == "invalid" or (segments and segments[-1].ending != "running"):
            return  # an ended run (as the browser read it) is not read again to be followed
        try:
            follow = RunFollow(self.backend, run)
        except JournalError:
            return  # a journal that cannot be followed (a compressed file) is shown as read
        if not is_open(follow.folded):
            follow.close()
            return
        self.pane = follow
        view.follow(follow, on_update=lambda update: self._row_changed(run, update.folded))

    def _row_changed(self, run: str, folded: FoldedRun) -> None:
        row = self.browser.row_of(run)
        if row is not None:
            self.browser.update_rows([live_row(row, folded)])
        self._tell()

    def _stop_pane(self) -> None:
        pane, self.pane = self.pane, None
        if pane is not None:
            pane.close()

    def start_rows(self) -> None:
        """Keep the rows of open runs current on a daemon thread (nothing when the browser does not follow)."""
        if not self.follow or self._rows is not None:
            return
        self._rows = threading.Thread(target=self._watch_rows, name="journaltools-browser-rows-live", daemon=True)
        self._rows.start()

    def _watch_rows(self) -> None:
        while not self._stop.wait(ROWS_SECONDS):
            # A source that failed one look is looked at again the next time.
            with contextlib.suppress(JournalError, OSError):
                self.look_at_rows()
            self._tell()

    def _tell(self) -> None:
        with self._looked:
            self._looked.notify_all()

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until ``condition()`` holds (asked after each look at the rows and each change of the pane's run),
        up to ``timeout`` seconds; whether it holds."""
        deadline = time.monotonic() + timeout
        with self._looked:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._looked.wait(left)
        return True

    def look_at_rows(self) -> list[str]:
        """Fold again the open runs whose journals changed since the last look and update their rows; the runs
        updated. A run seen for the first time is only noted: its row was just loaded."""
        backend = self.backend
        if backend is None:
            return []
        followed = self.pane.run if self.pane is not None and self.pane.following else None
        rows = {row.run: row for row in self.browser.open_rows(ROWS_FOLLOWED) if row.run != followed}
        signatures = self._signatures(backend, list(rows))
        changed = [run for run, seen in signatures.items() if self._seen.setdefault(run, seen) != seen]
        fresh = []
        for run in changed:
            self._seen[run] = signatures[run]
            fresh.append(live_row(rows[run], fold_run(backend.read_run(run, strict=False))))
        if fresh:
            self.browser.update_rows(fresh)
        return [row.run for row in fresh]

    def _signatures(self, backend: Backend, runs: list[str]) -> dict[str, object]:
        if backend.kind == "jetstream":
            from journaltools.sources.follow_stream import stream_position

            position = stream_position(backend)
            return dict.fromkeys(runs, position)
        found: dict[str, object] = {}
        for journal in backend.local_journals(runs) or []:
            try:
                info = os.stat(journal.path)
            except OSError:
                continue
            found[journal.run] = (info.st_ino, info.st_size, info.st_mtime_ns)
        return found

    def close(self, timeout: float = 5.0) -> None:
        """Stop following the pane and the rows; wait up to ``timeout`` seconds for each thread."""
        self._stop.set()
        self._stop_pane()
        rows = self._rows
        if rows is not None and rows is not threading.current_thread():
            rows.join(timeout)


__all__ = ["ROWS_FOLLOWED", "ROWS_SECONDS", "Browser", "BrowserLive", "FollowingView", "live_row"]
