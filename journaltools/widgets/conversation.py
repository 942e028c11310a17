"""ConversationView: one folded run, paged so that thousands of messages never freeze the notebook.

The view draws ``exports.conversation.ConversationModel`` (the same model the offline report draws): the header,
a navigation bar whose "jump to" reaches any process run, finding, the ending and the turn in flight on any page,
one window of messages rendered at a time, and the rest of any value cut short, on demand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journaltools.exports.conversation import ConversationModel, Target
from journaltools.exports.facts import Prices, RecordFacts
from journaltools.exports.html import Values, esc, themed
from journaltools.folding import FoldResult


class ConversationView:
    """The header, a navigation bar (previous / next, a jump to a seq, to the ending, the turn in flight, each
    process run and each finding), a window of messages, and the rest of any value cut short, on demand."""

    CHUNK = 200_000

    def __init__(self, model: ConversationModel) -> None:
        import ipywidgets as w

        self.model = model
        self.start = 0
        self.values = Values()
        self.header = w.HTML()
        self.previous = w.Button(description="← earlier", tooltip="the messages before these")
        self.following = w.Button(description="later →", tooltip="the messages after these")
        self.previous.on_click(lambda _b: self.show_window(self.start - self.model.page_size))
        self.following.on_click(lambda _b: self.show_window(self.start + self.model.page_size))
        # The label sizes to its text (a fixed-width label cut "(page 2 of 9)" to "(pag").
        self.page_label = w.Label(layout=w.Layout(width="auto", flex="0 0 auto"))
        self.page_label.add_class("jt-page-label")
        self._targets: list[Target] = []
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
        nav = w.HBox([self.previous, self.page_label, self.following, self.jump, seq_group])
        nav.add_class("jt-pager")
        nav.add_class("jt-conversation-nav")
        self.body = w.HTML()
        self.rest_choice = w.Dropdown(options=[], description="", layout=w.Layout(width="28em"))
        self.rest_button = w.Button(description="show the rest", tooltip="the next part of the value chosen")
        self.rest_button.on_click(lambda _b: self.show_rest())
        self.rest = w.HTML()
        self._rest_at: dict[str, int] = {}
        rest_label = w.HTML(themed("<b>the rest of a value</b> (cut to keep the page small):"))
        self.rest_bar = w.VBox([w.HBox([rest_label, self.rest_choice, self.rest_button]), self.rest])
        self.widget = w.VBox([self.header, nav, self.body, self.rest_bar])
        self.widget.add_class("jt-conversation")
        self.show_model(model)

    def show_model(self, model: ConversationModel) -> None:
        """Show another run in the same widgets (a view already on the page can take the focus at once)."""
        self.model = model
        self.header.value = themed(model.header_html())
        self._targets = model.targets()
        self.jump.options = [("jump to…", -1), *((t.label, i) for i, t in enumerate(self._targets))]
        self.jump.value = -1
        self.seq_box.max = max(1, int(model.header["last_seq"]))
        self.show_window(0)

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
        cls, source: str | Path, run: str, page_size: int = 50, prices: Prices | None = None
    ) -> ConversationView:
        """``run`` of ``source``, read and folded, with every time its records keep (see
        ``ConversationModel.from_source``)."""
        return cls(ConversationModel.from_source(source, run, page_size=page_size, prices=prices))

    @property
    def pager_text(self) -> str:
        return self.page_label.value  # type: ignore[no-any-return]

    def show_page(self, number: int) -> None:
        self.show_window(number * self.model.page_size)

    def show_window(self, start: int, target: int | None = None) -> None:
        """Show ``page_size`` messages from ``start`` (kept in range); mark ``target`` (a seq)."""
        model = self.model
        total = len(model.messages)
        start = min(max(0, start), max(0, total - 1))
        self.start = start
        self.values = Values()
        self.body.value = model.window_html(start, self.values, target)
        last = min(total, start + model.page_size)
        aligned = start % model.page_size == 0
        page = f"page {start // model.page_size + 1} of {model.page_count}" if aligned else "from a jump"
        shown = f"messages {start + 1:,}-{last:,} of {total:,}" if total else "no messages"
        in_flight = " + the turn in flight" if model.pending is not None and last >= total else ""
        self.page_label.value = f"{shown}{in_flight} ({page})"
        # The box reads the seq of the first message shown (what "go" would show again), not a stale 0.
        self.seq_box.value = min(int(self.seq_box.max), model.messages[start].seq) if total else 0
        self.previous.disabled = start <= 0
        self.following.disabled = start + model.page_size >= total
        self.rest_choice.options = [(label, key) for key, label in self.values.labels.items()]
        self.rest_choice.value = next(iter(self.values.labels), None)
        self._rest_at = {}
        self.rest.value = ""
        self.rest_bar.layout.display = "" if self.values.texts else "none"

    def jump_to_seq(self, seq: int) -> None:
        """Show the window that starts at the message of record ``seq`` (the turn in flight for its seqs)."""
        self.show_window(self.model.window_start(seq), target=self.model.anchor_seq(seq))
        self.seq_box.value = min(max(0, seq), int(self.seq_box.max))  # the seq asked for, not the window's first

    def _on_jump(self, change: dict[str, Any]) -> None:
        index = int(change["new"])
        if index < 0:
            return
        self.jump_to_seq(self._targets[index].seq)
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
