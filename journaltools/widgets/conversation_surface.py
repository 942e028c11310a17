"""ConversationSurface: one folded run as one anywidget (``surface.Surface``), for marimo and any host of anywidget.

It draws what ``ConversationView`` draws, from the same model and the same functions (``ConversationModel``'s
``header_html`` and ``window_html``, ``conversation.window_label``): the header with its banner, a navigation bar
(earlier / later, "jump to" any process run, finding, the ending and the turn in flight), a find bar that looks
through every page ("3 of 12", previous / next, Enter and Shift+Enter in the box), one window of messages, and the
report's keys (``conversation_places.JUMPS``: one key to the next error, pending call, deferral, approval or process
run; ``n`` / ``N`` through what was found; ``/`` to the find box). Find and the jumps are ``ConversationView``'s own
(``conversation_places.Found``, ``next_place``). What it leaves to ``ConversationView`` (in the Jupyter hosts):
following a run as it is written, the seq box, and "show the rest" of a value cut short (a value is cut here as
there, and says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.conversation_places import FIND_BOX_KEY, FIND_STEPS, JUMPS, Found, Target, next_place
from journaltools.exports.facts import Prices
from journaltools.exports.html import STYLE, Values, esc
from journaltools.widgets.conversation import opening, window_label
from journaltools.widgets.surface import Surface, button

#: The keys the page sends as ``key`` when pressed in the conversation outside a field (``surface.ESM``).
KEYS: Final = " ".join((*(key for key, _kind in JUMPS), *FIND_STEPS, FIND_BOX_KEY))
#: The find box's ``data-jt-key``, which ``FIND_BOX_KEY`` sends the keyboard to.
FIND_FIELD: Final = "conversation-find"


def find_bar_html(found: Found) -> str:
    """The find bar: the box (it sends ``find`` as it is typed in, ``found`` 1 or -1 on Enter or Shift+Enter), the
    previous and next buttons (``found``) and "n of m"."""
    nothing = not found.seqs
    return (
        '<div class="jt-pager jt-find-bar">'
        f'<input type="search" class="jt-field" data-jt-act="find" data-jt-key="{FIND_FIELD}" data-jt-enter="found" '
        f'placeholder="find in this run ({esc(FIND_BOX_KEY)})" aria-label="find in this run" '
        f'value="{esc(found.query)}">'
        + button("↑", "found", "-1", key="found:-1", title="the previous message found (Shift+Enter)", disabled=nothing)
        + button("↓", "found", "1", key="found:1", title="the next message found (Enter)", disabled=nothing)
        + f'<span class="jt-find-count" aria-live="polite">{esc(found.label())}</span></div>'
    )


def conversation_html(
    model: ConversationModel, start: int, target: int | None = None, found: Found | None = None, focus: str = ""
) -> str:
    """The run's header, the navigation bar for the window from ``start``, the find bar (what ``found`` found), and
    the window (``target``, a seq, is marked). The bar's buttons send ``messages`` (-1 or 1: the window before or
    after) and ``jump`` (a seq); a key of ``KEYS`` is sent as ``key``. ``focus`` names the element (its
    ``data-jt-key``) the keyboard is sent to once drawn."""
    total = len(model.messages)
    jumps = "".join(f'<option value="{target.seq}">{esc(target.label)}</option>' for target in model.targets())
    nav = (
        '<div class="jt-pager jt-conversation-nav">'
        + button("← earlier", "messages", "-1", key="earlier", title="the messages before these", disabled=start <= 0)
        + f'<span class="jt-page-label">{esc(window_label(model, start))}</span>'
        + button(
            "later →",
            "messages",
            "1",
            key="later",
            title="the messages after these",
            disabled=start + model.page_size >= total,
        )
        + f'<select class="jt-field" data-jt-act="jump" data-jt-key="jump" aria-label="jump to">'
        f'<option value="">jump to…</option>{jumps}</select></div>'
    )
    window = model.window_html(start, Values(), target)
    wanted = f' data-jt-focus="{esc(focus)}"' if focus else ""
    bar = find_bar_html(found if found is not None else Found())
    return (
        f'<div class="jt jt-conversation" data-jt-keys="{esc(KEYS)}"{wanted}>'
        f"{model.header_html()}{nav}{bar}{window}</div>"
    )


class ConversationPlace:
    """Where a reader is in one run's conversation (the first message shown and the seq marked), moved by the
    navigation bar's actions: what both surfaces that show a conversation keep."""

    def __init__(self, model: ConversationModel) -> None:
        self.model = model
        self.start = 0
        self.target: int | None = None
        self.found = Found()
        #: The place last reached by a key or "jump to": the next key goes on from there.
        self.here: Target | None = None
        self._targets = model.targets()
        self._focus = ""

    def act(self, action: str, argument: str) -> bool:
        """Move as ``action`` asks (``messages`` -1 or 1, ``jump`` to a seq, ``find`` a query, ``found`` -1 or 1
        through what it found, ``key`` a key of ``KEYS``); whether it was an action of the conversation."""
        model = self.model
        if action == "messages" and argument in ("-1", "1"):
            last = max(0, len(model.messages) - 1)
            self.start = min(max(0, self.start + int(argument) * model.page_size), last)
            self.target = None
        elif action == "jump" and argument.lstrip("-").isdigit():
            seq = int(argument)
            self.here = next((place for place in self._targets if place.seq == seq), Target("", seq))
            self.show_seq(seq)
        elif action == "find":
            self.found = Found(model, argument)
        elif action == "found" and argument in ("-1", "1"):
            self.step_found(int(argument))
        elif action == "key" and argument in KEYS.split():
            self.press(argument)
        else:
            return False
        return True

    def show_seq(self, seq: int) -> None:
        """Show the window that holds record ``seq``, its message marked."""
        self.start, self.target = self.model.window_start(seq), self.model.anchor_seq(seq)

    def step_found(self, step: int) -> int | None:
        """Show the next (``step`` 1) or previous (-1) message found, marked; its seq."""
        seq = self.found.step(step)
        if seq is not None:
            self.show_seq(seq)
        return seq

    def press(self, key: str) -> None:
        """What a key of ``KEYS`` does: step through what was found, give the find box the keyboard, or show the
        next place of its kind (``next_place``) after the place last reached."""
        if key in FIND_STEPS:
            self.step_found(FIND_STEPS[key])
        elif key == FIND_BOX_KEY:
            self._focus = FIND_FIELD
        else:
            place = next_place(self._targets, key, self.here)
            if place is not None:
                self.here = place
                self.show_seq(place.seq)

    def html(self) -> str:
        """The conversation as the page shows it; the keyboard is sent where a key asked it to go (once)."""
        focus, self._focus = self._focus, ""
        return conversation_html(self.model, self.start, self.target, self.found, focus)


class ConversationSurface:
    """One folded run on one anywidget: its header, a navigation bar and a window of messages (``widget``)."""

    def __init__(self, model: ConversationModel) -> None:
        self.place = ConversationPlace(model)
        self.widget = Surface(self.act, STYLE)
        self.widget.html = self.place.html()

    @property
    def model(self) -> ConversationModel:
        return self.place.model

    @classmethod
    def from_source(
        cls, source: str | Path, run: str, page_size: int = 50, prices: Prices | None = None
    ) -> ConversationSurface:
        """``run`` of ``source``, read and folded with every time its records keep."""
        with opening():  # as ``ConversationView.from_source`` opens one
            return cls(ConversationModel.from_source(source, run, page_size=page_size, prices=prices))

    def act(self, action: str, argument: str) -> None:
        """What the page asked (``ConversationPlace.act``); the window is drawn again when it moved."""
        if self.place.act(action, argument):
            self.widget.html = self.place.html()

    def _display_(self) -> Any:
        return self.widget  # marimo shows the anywidget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
