"""ConversationSurface: one folded run as one anywidget (``surface.Surface``), for marimo and any host of anywidget.

It draws what ``ConversationView`` draws, from the same model and the same functions (``ConversationModel``'s
``header_html`` and ``window_html``, ``conversation.window_label``): the header with its banner, a navigation bar
(earlier / later, "jump to" any process run, finding, the ending and the turn in flight), and one window of
messages. What it leaves to ``ConversationView`` (in the Jupyter hosts): following a run as it is written, the seq
box, and "show the rest" of a value cut short (a value is cut here as there, and says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.facts import Prices
from journaltools.exports.html import STYLE, Values, esc
from journaltools.widgets.conversation import window_label
from journaltools.widgets.surface import Surface, button


def conversation_html(model: ConversationModel, start: int, target: int | None = None) -> str:
    """The run's header, the navigation bar for the window from ``start``, and the window (``target``, a seq, is
    marked). The bar's buttons send ``messages`` (-1 or 1: the window before or after) and ``jump`` (a seq)."""
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
    return f'<div class="jt jt-conversation">{model.header_html()}{nav}{window}</div>'


class ConversationPlace:
    """Where a reader is in one run's conversation (the first message shown and the seq marked), moved by the
    navigation bar's actions: what both surfaces that show a conversation keep."""

    def __init__(self, model: ConversationModel) -> None:
        self.model = model
        self.start = 0
        self.target: int | None = None

    def act(self, action: str, argument: str) -> bool:
        """Move as ``action`` asks (``messages`` -1 or 1, ``jump`` to a seq); whether it was a navigation action."""
        model = self.model
        if action == "messages" and argument in ("-1", "1"):
            last = max(0, len(model.messages) - 1)
            self.start = min(max(0, self.start + int(argument) * model.page_size), last)
            self.target = None
        elif action == "jump" and argument.lstrip("-").isdigit():
            seq = int(argument)
            self.start, self.target = model.window_start(seq), model.anchor_seq(seq)
        else:
            return False
        return True

    def html(self) -> str:
        return conversation_html(self.model, self.start, self.target)


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
        return cls(ConversationModel.from_source(source, run, page_size=page_size, prices=prices))

    def act(self, action: str, argument: str) -> None:
        """What the page asked (``ConversationPlace.act``); the window is drawn again when it moved."""
        if self.place.act(action, argument):
            self.widget.html = self.place.html()

    def _display_(self) -> Any:
        return self.widget  # marimo shows the anywidget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
