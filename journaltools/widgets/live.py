"""Following a run in the notebook: its journal watched on a thread, the views that show it updated in place.

``RunFollow`` reads a run once through a follower (``sources.follow``: a watched file; ``sources.follow_stream``: an
ordered consumer on a stream), folds it as it grows (``folding.incremental``: each record costs what the first did)
and, on a daemon thread, hands every change to whoever listens (``ConversationView``, the run browser's pane and its
row) until the run ends (a terminal, and what the runtime journals right after it), its journal goes (deleted,
replaced, cut short), or the view closes. It never writes and never takes the runtime's lock.

The run browser's part is ``runs_live.BrowserLive``. Widgets' traits changed on these threads are sent by the kernel;
each view guards its own state with a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from journaltools.errors import JournalError
from journaltools.exports.html import esc
from journaltools.folding.effects import record_effects
from journaltools.folding.incremental import IncrementalRun
from journaltools.folding.run import FoldedRun
from journaltools.sources.base import Backend
from journaltools.sources.follow import Change, Follower, open_follower

#: The longest a follower waits before looking again, and so the longest closing a followed view waits for it.
WAIT_SECONDS = 0.25
#: How long a follow stays after a terminal for what the runtime journals right after it (its memory revisions).
LINGER_SECONDS = 0.5


def is_open(folded: FoldedRun) -> bool:
    """Whether the run may still be written: a journal the reader kept whole whose last process run has not ended
    (what ``follow=None`` follows)."""
    if folded.status == "invalid":
        return False
    segments = folded.result.segments
    return not segments or segments[-1].ending == "running"


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    """What one look at a followed journal brought: the run as it now stands, when the store last wrote it (a
    record's own time, a stream message's, or when a file was seen to grow), lines for a person, and a terminal's
    reason when one was journaled."""

    folded: FoldedRun
    updated: datetime | None
    notices: list[str] = field(default_factory=list)
    ended: str | None = None


class RunFollow:
    """One run, read whole now and followed on a daemon thread once ``start``ed (see the module doc). ``folded``
    is the run as last read; ``stopped`` is set when the thread has ended, and ``reason`` then says why."""

    def __init__(self, backend: Backend, run: str, *, owns_backend: bool = False) -> None:
        self.backend = backend
        self.run = run
        self.owns_backend = owns_backend
        self.follower: Follower = open_follower(backend, run)
        try:
            read = self.follower.start()
        except BaseException:
            self.follower.close()
            raise
        self.incremental = IncrementalRun.of(read)
        self.updated = read.updated
        self.reason: str | None = None
        self.stopped = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    @classmethod
    def open(cls, source: str | Path, run: str) -> RunFollow:
        """``run`` of the source at ``source`` (a URL or a directory), the source closed with the follow."""
        from journaltools.sources.registry import open_source

        backend = open_source(source)
        try:
            return cls(backend, run, owns_backend=True)
        except BaseException:
            backend.close()
            raise

    @property
    def folded(self) -> FoldedRun:
        return self.incremental.folded

    @property
    def following(self) -> bool:
        return self._thread is not None and not self.stopped.is_set()

    def start(self, on_update: Callable[[LiveUpdate], None], on_stop: Callable[[str], None]) -> None:
        """Follow on a daemon thread: ``on_update`` for each change, ``on_stop`` once with why it stopped."""
        self._thread = threading.Thread(
            target=self._follow, args=(on_update, on_stop), name=f"journaltools-follow-{self.run}", daemon=True
        )
        self._thread.start()

    def close(self, timeout: float = 5.0) -> bool:
        """Stop following and wait up to ``timeout`` seconds for the thread to end (it ends within about
        ``WAIT_SECONDS``); True when it has. A follow never started closes its follower and source here."""
        self._stop.set()
        thread = self._thread
        if thread is None:
            self._release()
            return True
        if thread is not threading.current_thread():
            thread.join(timeout)
        return not thread.is_alive()

    def _follow(self, on_update: Callable[[LiveUpdate], None], on_stop: Callable[[str], None]) -> None:
        reason = "closed"
        try:
            while not self._stop.is_set():
                change = self.follower.wait(WAIT_SECONDS)
                if self._stop.is_set():
                    break
                update = self._take(change)
                if update is not None:
                    on_update(update)
                if change.gone is not None:
                    reason = f"stopped following: {change.gone}"
                    break
                if update is not None and update.ended is not None:
                    if not self._stop.wait(0):
                        after = self._take(self.follower.wait(LINGER_SECONDS))
                        if after is not None:
                            on_update(after)
                    reason = f"the run ended ({update.ended}): no longer following"
                    break
        except (JournalError, OSError) as error:
            reason = f"following stopped: {error}"
        finally:
            self._release()
            self.reason = reason
            self.stopped.set()
            on_stop(reason)

    def _take(self, change: Change) -> LiveUpdate | None:
        if not (change.records or change.findings is not None or change.complete is not None or change.notices):
            return None
        incremental = self.incremental
        folded = incremental.append(change.records, findings=change.findings, complete=change.complete)
        ended = None
        for effect in record_effects(change.records, incremental.facts):
            ended = effect.ending if effect.ending is not None else ended
        times = [stored.time for stored in change.records if stored.time is not None]
        if times:
            self.updated = times[-1]
        elif change.records and self.backend.kind != "jetstream":
            self.updated = datetime.now(UTC)  # the file was seen to grow just now: its modification time, near enough
        return LiveUpdate(folded, self.updated, list(change.notices), ended)

    def _release(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.follower.close()
        if self.owns_backend:
            self.backend.close()


def badge_html(following: bool, note: str = "") -> str:
    """The badge above a followed view: ``live`` while its run is followed, else why it no longer is."""
    if following:
        return (
            '<span class="jt-status jt-tone-ok jt-live" title="following the run as it is written: new messages are '
            'added below, the banner changes when it ends">live</span>'
        )
    if not note:
        return ""
    return f'<span class="jt-status jt-tone-muted jt-live-stopped">{esc(note)}</span>'


__all__ = ["LiveUpdate", "RunFollow", "badge_html", "is_open"]
