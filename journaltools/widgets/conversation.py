"""ConversationView: one folded run, paged so that thousands of messages never freeze the notebook.

The view draws ``exports.conversation.ConversationModel`` (the same model the offline report draws): the header,
a navigation bar whose "jump to" reaches any process run, finding, the ending and the turn in flight on any page,
a find bar that looks through every page, one window of messages rendered at a time, and the rest of any value cut
short, on demand. The report's keys work in it (``conversation_keys``): one key to the next error, pending call,
deferral, approval or process run, ``n`` / ``N`` through what was found, ``/`` to the find box.

A run still being written can be followed (``from_source(..., follow=)``, on by default for an open run; see
``widgets.live``): a "live" badge, each new message added below those shown (the window already drawn is not drawn
again, so its scroll position stays), the turn in flight and the header's banner redrawn as they change, until the
run ends or the view is closed.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from journaltools._base.perf import paused_gc
from journaltools.exports.conversation import ConversationModel
from journaltools.exports.conversation_places import FIND_STEPS, Found, Target, next_place
from journaltools.exports.facts import Prices, RecordFacts
from journaltools.exports.html import RenderBudget, Values, esc, themed
from journaltools.folding import FoldResult
from journaltools.folding.run import FoldedRun
from journaltools.widgets.conversation_keys import FIND_BAR, KEY_ACTIONS, SCRIPT, key_of
from journaltools.widgets.live import LiveUpdate, RunFollow, badge_html, is_open


class ConversationView:
    """The header, a navigation bar (previous / next, a jump to a seq, to the ending, the turn in flight, each
    process run and each finding), a window of messages, and the rest of any value cut short, on demand."""

    CHUNK = 200_000

    def __init__(self, model: ConversationModel) -> None:
        import ipywidgets as w

        self.model = model
        self.start = 0
        self.values = Values()
        # The model changes on a follow's thread while a click pages through it: one at a time.
        self._lock = threading.RLock()
        self._changed = threading.Condition()
        #: The follow of the run shown, while there is one (``follow``).
        self.live: RunFollow | None = None
        self._on_update: Callable[[LiveUpdate], None] | None = None
        self.badge = w.HTML()
        self.badge.layout.display = "none"
        self.header = w.HTML()
        self.previous = w.Button(description="← earlier", tooltip="the messages before these")
        self.following = w.Button(description="later →", tooltip="the messages after these")
        self.previous.on_click(lambda _b: self.show_window(self.start - self.model.page_size))
        self.following.on_click(lambda _b: self.show_window(self.start + self.model.page_size))
        # The label sizes to its text (a fixed-width label cut "(page 2 of 9)" to "(pag").
        self.page_label = w.Label(layout=w.Layout(width="auto", flex="0 0 auto"))
        self.page_label.add_class("jt-page-label")
        self._targets: list[Target] = []
        #: The place last reached by a key or "jump to": the next key goes on from there.
        self._here: Target | None = None
        self.jump = w.Dropdown(options=[("jump to…", -1)], value=-1, layout=w.Layout(width="22em"))
        self.jump.observe(self._on_jump, names="value")
        self.seq_box = w.BoundedIntText(
            value=0,
            min=0,
            max=1,
            description="seq",
            layout=w.Layout(width="12em"),
            style={"description_width": "2.5em"},
        )
        self.seq_button = w.Button(description="go", tooltip="show the message of this record seq")
        self.seq_button.layout.width = "4em"
        self.seq_button.on_click(lambda _b: self.jump_to_seq(int(self.seq_box.value)))
        # The seq box and its "go" wrap together: a button alone on a line says nothing.
        seq_group = w.HBox([self.seq_box, self.seq_button])
        seq_group.add_class("jt-seq-group")
        nav = w.HBox([self.badge, self.previous, self.page_label, self.following, self.jump, seq_group])
        nav.add_class("jt-pager")
        nav.add_class("jt-conversation-nav")
        # Find looks through every message of the run, on any page (``conversation_places.find_seqs``); Enter (or
        # leaving the box) finds, the arrows step through what it found.
        self.find_box = w.Text(placeholder="find in this run", continuous_update=False, layout=w.Layout(width="16em"))
        self.find_box.observe(lambda _change: self.find(self.find_box.value), names="value")
        self.find_label = w.Label(layout=w.Layout(width="auto", flex="0 0 auto"))
        self.find_previous = w.Button(description="↑", tooltip="the previous message found")
        self.find_next = w.Button(description="↓", tooltip="the next message found")
        for button in (self.find_previous, self.find_next):
            button.layout.width = "3em"
        self.find_previous.on_click(lambda _b: self.step_found(-1))
        self.find_next.on_click(lambda _b: self.step_found(1))
        self._found = Found()
        find_bar = w.HBox([self.find_box, self.find_previous, self.find_next, self.find_label])
        find_bar.add_class("jt-pager")
        find_bar.add_class(FIND_BAR)
        # A key pressed in the view comes back through ``keys`` (``conversation_keys.SCRIPT``).
        self.keys = w.Text(continuous_update=True)
        self.keys.add_class(KEY_ACTIONS)
        self.keys.layout.display = "none"
        self.keys.observe(self._on_key, names="value")
        key_script = w.HTML(SCRIPT)
        key_script.layout.display = "none"
        self.body = w.HTML()
        self.rest_choice = w.Dropdown(options=[], description="", layout=w.Layout(width="28em"))
        self.rest_button = w.Button(description="show the rest", tooltip="the next part of the value chosen")
        self.rest_button.on_click(lambda _b: self.show_rest())
        self.rest = w.HTML()
        self._rest_at: dict[str, int] = {}
        rest_label = w.HTML(themed("<b>the rest of a value</b> (cut to keep the page small):"))
        self.rest_bar = w.VBox([w.HBox([rest_label, self.rest_choice, self.rest_button]), self.rest])
        # A followed view draws messages added below the window ``tail`` and the turn in flight in ``in_flight``.
        self.tail = w.VBox()
        self.in_flight = w.HTML()
        self.widget = w.VBox(
            [self.header, nav, find_bar, self.body, self.tail, self.in_flight, self.rest_bar, self.keys, key_script]
        )
        self.widget.add_class("jt-conversation")
        # Closing the widget (``close()``, or the kernel's ``Widget.close_all()``) ends the follow with it.
        self.widget.observe(self._on_comm, names="comm")
        self.show_model(model)

    def show_model(self, model: ConversationModel) -> None:
        """Show another run in the same widgets (a view already on the page can take the focus at once); a
        follow of the run shown before stops."""
        self.stop_following()
        with self._lock:
            self.model = model
            self._here = None
            self._show_header()
            self.show_window(0)
            self.find(self.find_box.value)  # what was found was the other run's

    def _show_header(self) -> None:
        model = self.model
        self.header.value = themed(model.header_html())
        self._targets = model.targets()
        options = [("jump to…", -1), *((t.label, i) for i, t in enumerate(self._targets))]
        if list(self.jump.options) != options:
            self.jump.options = options
            self.jump.value = -1
        self.seq_box.max = max(1, int(model.header["last_seq"]))

    def focus(self) -> None:
        """Give the keyboard focus to the navigation bar under the header: the browser scrolls it into view,
        and with it the run's header above and its first messages below."""
        self.seq_button.focus()

    @classmethod
    def from_fold(
        cls,
        result: FoldResult,
        page_size: int = 50,
        status: str | None = None,
        facts: RecordFacts | None = None,
        prices: Prices | None = None,
    ) -> ConversationView:
        return cls(ConversationModel.from_fold(result, page_size=page_size, status=status, facts=facts, prices=prices))

    @classmethod
    def from_source(
        cls,
        source: str | Path,
        run: str,
        page_size: int = 50,
        prices: Prices | None = None,
        follow: bool | None = None,
    ) -> ConversationView:
        """``run`` of ``source``, read and folded, with every time its records keep (see
        ``ConversationModel.from_source``). ``follow``: update the view in place as the run is written, on a
        thread, until it ends or the view is closed; None (the default) follows a run that is still open (not
        ended, not refused) whose journal can be followed (a plain file, a stream)."""
        with opening():
            return cls._opened(source, run, page_size, prices, follow)

    @classmethod
    def _opened(
        cls, source: str | Path, run: str, page_size: int, prices: Prices | None, follow: bool | None
    ) -> ConversationView:
        from journaltools.errors import JournalError

        if follow is False:
            return cls(ConversationModel.from_source(source, run, page_size=page_size, prices=prices))
        try:
            live = RunFollow.open(source, run)
        except JournalError:
            if follow:
                raise
            # A journal that cannot be followed (a compressed file): shown as read.
            return cls(ConversationModel.from_source(source, run, page_size=page_size, prices=prices))
        model = ConversationModel.from_folded(live.folded, page_size=page_size, prices=prices, updated=live.updated)
        view = cls(model)
        if follow or is_open(live.folded):
            view.follow(live, arranged=model)  # arranged once, not again
        else:
            live.close()
        return view

    @property
    def pager_text(self) -> str:
        return self.page_label.value  # type: ignore[no-any-return]

    def show_page(self, number: int) -> None:
        self.show_window(number * self.model.page_size)

    def show_window(self, start: int, target: int | None = None) -> None:
        """Show ``page_size`` messages from ``start`` (kept in range); mark ``target`` (a seq)."""
        with self._lock:
            model = self.model
            start = min(max(0, start), max(0, len(model.messages) - 1))
            self.start = start
            self.values = Values()
            followed = self.live is not None
            self.body.value = model.window_html(start, self.values, target, pending=not followed)
            self._clear_tail()
            self.in_flight.value = self._in_flight_html() if followed else ""
            total = len(model.messages)
            # The box reads the seq of the first message shown (what "go" would show again), not a stale 0.
            self.seq_box.value = min(int(self.seq_box.max), model.messages[start].seq) if total else 0
            self.rest_choice.options = []
            self._rest_at = {}
            self.rest.value = ""
            self._show_place()

    def _show_place(self) -> None:
        """The pager's label and buttons, the seq box and the chooser of values cut short, for the window shown."""
        model, start = self.model, self.start
        total = len(model.messages)
        self.page_label.value = window_label(model, start)
        self.previous.disabled = start <= 0
        self.following.disabled = start + model.page_size >= total
        choices = [(label, key) for key, label in self.values.labels.items()]
        if list(self.rest_choice.options) != choices:  # a followed view's new messages may add values cut short
            chosen = self.rest_choice.value
            self.rest_choice.options = choices
            self.rest_choice.value = chosen if chosen in self.values.labels else next(iter(self.values.labels), None)
        self.rest_bar.layout.display = "" if self.values.texts else "none"

    def _clear_tail(self) -> None:
        added, self.tail.children = self.tail.children, ()
        for piece in added:
            piece.close()

    def _in_flight_html(self) -> str:
        model = self.model
        if model.pending is None or self.start + model.page_size < len(model.messages):
            return ""
        return themed(model.pending_html())

    # -- following the run as it is written ----------------------------------------------------------------------

    @property
    def is_following(self) -> bool:
        """Whether the view is following its run (a thread adds what is journaled)."""
        live = self.live
        return live is not None and not live.stopped.is_set()

    def follow(
        self,
        live: RunFollow,
        on_update: Callable[[LiveUpdate], None] | None = None,
        arranged: ConversationModel | None = None,
    ) -> None:
        """Follow ``live``'s run in this view (it stops following whatever it followed before): the window is
        drawn again with the run as ``live`` read it (``arranged``, when the caller arranged it already), then each
        change is added in place on ``live``'s thread. ``on_update`` is told of each change too (the run browser
        updates the run's row)."""
        self.stop_following()
        with self._lock:
            self.live, self._on_update = live, on_update
            self.model = arranged if arranged is not None else self._arranged(live.folded, live.updated)
            self._show_header()
            self.show_window(self.start)
            self.badge.value = themed(badge_html(True))
            self.badge.layout.display = ""
        live.start(lambda update: self._take(live, update), lambda reason: self._stopped(live, reason))

    def _arranged(self, folded: FoldedRun, updated: datetime | None) -> ConversationModel:
        """``folded`` as this view shows a run: its page size, value limit, prices and anchors."""
        model = self.model
        return ConversationModel.from_folded(
            folded, page_size=model.page_size, limit=model.limit, prices=model.prices, updated=updated, uid=model.uid
        )

    def stop_following(self, timeout: float = 5.0) -> bool:
        """Stop following (the thread is joined, up to ``timeout`` seconds); True when no thread is left."""
        live = self.live
        if live is None:
            return True
        done = live.close(timeout)
        with self._lock:
            if self.live is live:
                self.live = None
                self.badge.value, self.badge.layout.display = "", "none"
        return done

    def _take(self, live: RunFollow, update: LiveUpdate) -> None:
        """A change of the followed run (on its thread): arranged, then shown in place."""
        model = self._arranged(update.folded, update.updated)
        with self._lock:
            if self.live is not live:
                return  # a follow stopped while this change was arranged
            self._grow(model)
            on_update = self._on_update
        if on_update is not None:
            on_update(update)
        with self._changed:
            self._changed.notify_all()

    def _grow(self, model: ConversationModel) -> None:
        """Show ``model``, the run with more records: the messages new in the window are added below it; the
        window is drawn again only if a message already shown changed."""
        old, start = self.model, self.start
        self.model = model
        self._show_header()
        size = model.page_size
        shown = old.messages[start : start + size]
        if model.messages[start : start + len(shown)] != shown:
            self.show_window(start)
            return
        added = model.messages[start + len(shown) : start + size]
        if added:
            budget = RenderBudget()
            html = "".join(
                model.message_html(m, self.values, budget, calls_shown=m.paired_from is None or m.paired_from >= start)
                for m in added
            )
            piece = _html(f'<div class="jt jt-added">{html}</div>')
            self.tail.children = (*self.tail.children, piece)
        self.in_flight.value = self._in_flight_html()
        self._show_place()

    def _stopped(self, live: RunFollow, reason: str) -> None:
        with self._lock:
            if self.live is live:
                self.badge.value = themed(badge_html(False, reason))
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until ``condition()`` holds (asked after each change the follow brings and when it stops), up to
        ``timeout`` seconds; whether it holds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._holds(condition):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def _holds(self, condition: Callable[[], bool]) -> bool:
        # Asked under the view's lock: a change is shown whole (model, header, messages, the turn in flight) before
        # anything reads it, so a condition on one part never sees the others still as they were.
        with self._lock:
            return condition()

    def close(self) -> None:
        """Stop following and close the widget, with every widget inside it."""
        self.stop_following()
        _close_tree(self.widget)

    def _on_comm(self, change: dict[str, Any]) -> None:
        if change["new"] is None and self.live is not None:
            # Not joined here: this may run on the follow's own thread, or inside a kernel message handler.
            self.live.close(timeout=0)

    def jump_to_seq(self, seq: int) -> None:
        """Show the window that starts at the message of record ``seq`` (the turn in flight for its seqs)."""
        self.show_window(self.model.window_start(seq), target=self.model.anchor_seq(seq))
        self.seq_box.value = min(max(0, seq), int(self.seq_box.max))  # the seq asked for, not the window's first

    def find(self, query: str) -> list[int]:
        """Find the messages holding every word of ``query`` (any case, any page) and say how many; the first is
        shown by ``step_found``. The seqs found, in journal order."""
        with self._lock:
            self._found = Found(self.model, query)
            self.find_label.value = self._found.label()
            self.find_previous.disabled = self.find_next.disabled = not self._found.seqs
        return self._found.seqs

    def step_found(self, step: int) -> int | None:
        """Show the next (``step`` 1) or previous (-1) message found, marked, and say which it is ("3 of 12")."""
        with self._lock:
            seq = self._found.step(step)
            if seq is not None:
                self.jump_to_seq(seq)
                self.find_label.value = self._found.label()
            return seq

    def jump_next(self, key: str) -> Target | None:
        """Show the next place of the kind ``key`` reaches (``conversation_places.JUMPS``: "e" the next error...)
        after the place last reached, marked, as "jump to" shows it; the place, or None when the run has none."""
        with self._lock:
            place = next_place(self._targets, key, self._here)
            if place is not None:
                self._here = place
                self.jump_to_seq(place.seq)
            return place

    def act(self, action: str, argument: str) -> None:
        """What the page asks (``conversation_keys.SCRIPT``): ``key`` with a key pressed in the view. Anything else
        is let go."""
        if action != "key":
            return
        if argument in FIND_STEPS:
            self.step_found(FIND_STEPS[argument])
        else:
            self.jump_next(argument)

    def _on_key(self, change: dict[str, Any]) -> None:
        key = key_of(str(change["new"]))
        if key is not None:
            self.act("key", key)

    def _on_jump(self, change: dict[str, Any]) -> None:
        index = int(change["new"])
        if index < 0:
            return
        self._here = self._targets[index]
        self.jump_to_seq(self._here.seq)
        self.jump.value = -1  # so the same place can be chosen again

    def show_rest(self) -> None:
        """The next ``CHUNK`` characters of the value chosen, after what is already shown of it."""
        key = self.rest_choice.value
        if key is None:
            return
        shown = self._rest_at.get(key, 0)
        if shown == 0:
            from journaltools.exports.html import SENT_CHARS

            shown = SENT_CHARS
        chunk = self.values.chunk(key, shown, self.CHUNK)
        total = len(self.values.texts.get(key, ""))
        end = shown + len(chunk)
        self._rest_at[key] = end
        left = f"{total - end:,} characters left: press again for more" if end < total else "the end of the value"
        self.rest.value = themed(
            f'<div class="jt-muted">characters {shown + 1:,}-{end:,} of {total:,}; {esc(left)}</div>'
            f'<pre class="jt-pre jt-rest">{esc(chunk)}</pre>'
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


#: Objects an open may leave for the collector before it collects them itself, at its end.
COLLECT_AFTER: Final = 100_000


@contextmanager
def opening() -> Iterator[None]:
    """Open a run with the collector paused; if the open made many objects, collect them once at its end.

    Opening a long run makes a few objects per record and frees none of them: with the collector on, it scanned all
    the process holds again and again while they were made (a third of a 100,000-record run's open). Left to itself
    once resumed, it scans them twice more, as young objects and then as older ones, the second time inside a page a
    few clicks later (137 ms under load); and when they grow the process by more than a quarter, they make a full
    collection due, which came inside a page too (184 ms). So the open runs them itself, at its end, once: the full
    collection when it is due (``collection_due``), else the young one that moves them to the oldest generation."""
    collecting = gc.isenabled()
    held = sys.getallocatedblocks()
    with paused_gc():
        yield
        # While still paused: once it resumes, the next object made would have it scan these as young ones first.
        if collecting and gc.get_count()[0] > COLLECT_AFTER:
            gc.collect(2 if collection_due(held, sys.getallocatedblocks()) else 1)


def collection_due(held: int, holds: int) -> bool:
    """Whether CPython's rule would soon run a full collection after the process grew from ``held`` memory blocks to
    ``holds``: once what survived since the last one is a quarter of what that one kept. Blocks stand in for objects
    (the count of objects costs a walk over all of them, as much as the collection); in a process holding far more
    than the open made, a full collection is left to CPython, which may never need one."""
    return (holds - held) * 4 > held


def window_label(model: ConversationModel, start: int) -> str:
    """Which messages a window from ``start`` shows, and which page that is (every view of a conversation says it
    alike): "messages 51-100 of 230 (page 2 of 5)"."""
    total = len(model.messages)
    last = min(total, start + model.page_size)
    aligned = start % model.page_size == 0
    page = f"page {start // model.page_size + 1} of {model.page_count}" if aligned else "from a jump"
    shown = f"messages {start + 1:,}-{last:,} of {total:,}" if total else "no messages"
    in_flight = " + the turn in flight" if model.pending is not None and last >= total else ""
    return f"{shown}{in_flight} ({page})"


def _html(value: str) -> Any:
    import ipywidgets as w

    return w.HTML(value)


def _close_tree(widget: Any) -> None:
    """Close ``widget``, its children and their layouts and styles. ipywidgets closes only the box it is asked to:
    the rest stay registered for the kernel's lifetime, and with them this view and the whole run it holds."""
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if part is not None:
            part.close()
    widget.close()
