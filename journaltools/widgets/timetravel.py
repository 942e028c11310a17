"""TimeTravel: a slider over a run's records showing the fold of the prefix up to each one.

``TimeTravelModel`` is the run's history (``folding.history``): it folds prefixes lazily and leniently (and caches
them), so stepping through a long run costs one fold per position visited, not one per record up front.
``status_changes()`` finds the moments the status moved, to step straight to where a run went wrong. Every
snapshot carries the banner of its prefix: why the run had stopped by then, or what it was waiting for.
The record shown is its typed value as JSON with the conversation token replaced by a digest and thinking
signatures left out: never the stored bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from journaltools.exports.html import Banner, esc, long_text, role_class, status_badge, themed
from journaltools.exports.why import banner_for, finding_text, pending_text
from journaltools.folding.history import Records, RunHistory
from journaltools.folding.texts import message_text


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The fold of ``records[: index + 1]``: what a reader would have seen right after record ``seq``."""

    index: int
    seq: int
    kind: str
    status: str
    waiting_for: str | None
    pending: list[str]
    last_messages: list[tuple[str, str]]
    counters: dict[str, int]
    findings: list[str]
    record_text: str
    banner: Banner
    stale_terminal: bool = False


class TimeTravelModel(RunHistory):
    """A run's history (``folding.history.RunHistory``) as snapshots: what a reader saw after each record."""

    #: The messages a snapshot shows, the last ones of its prefix's conversation.
    last_n = 3

    def snapshot(self, index: int) -> Snapshot:
        result = self.fold_at(index)
        state = result.state
        last = [(m.role, message_text(m)) for m in result.messages[-self.last_n :]]
        return Snapshot(
            index=index,
            seq=self.seq_at(index),
            kind=self.kind_at(index),
            status=result.status,
            waiting_for=result.waiting_for,
            pending=[pending_text(call) for call in result.pending_calls],
            last_messages=last,
            counters=state.counters.to_json() if state is not None else {},
            findings=[finding_text(f) for f in result.findings],
            record_text=self.record_text_at(index),
            banner=banner_for(result),
            stale_terminal=result.stale_terminal,
        )

    def snapshot_html(self, index: int) -> str:
        snap = self.snapshot(index)
        pending = "".join(f"<li>{esc(text)}</li>" for text in snap.pending)
        messages = "".join(
            f'<div class="jt-msg jt-msg-{role_class(role)}"><span class="jt-role">{esc(role)}</span>'
            f"{long_text(text, 300)}</div>"
            for role, text in snap.last_messages
        )
        findings = "".join(f"<li>{esc(text)}</li>" for text in snap.findings)
        counters = " · ".join(f"{esc(k.replace('_', ' '))} <b>{v:,}</b>" for k, v in snap.counters.items())
        return themed(
            f"<div class='jt-snapshot' data-seq='{snap.seq}'>{snap.banner.to_html()}<h4 style='margin:2px 0'>"
            f"after seq {snap.seq} (<code>{esc(snap.kind)}</code>): {status_badge(snap.status)} "
            f"{position_html(snap.status, snap.waiting_for)}</h4><div class='jt-counters'>{counters}</div>"
            f"<div>record:</div>{long_text(snap.record_text, 300)}"
            f"<div>pending calls: {len(snap.pending)}</div><ul>{pending}</ul>"
            f"<div>last messages:</div>{messages or '<i>none yet</i>'}"
            + (f"<div>findings so far:</div><ul class='jt-findings'>{findings}</ul>" if findings else "")
            + "</div>"
        )


class TimeTravel:
    """A slider over the run's seqs with step buttons and a jump to each status change; moving shows the fold
    of the prefix up to that record, with its banner (why the run had ended by then, or what it waited for)."""

    def __init__(self, model: TimeTravelModel, reader_note: str = "") -> None:
        import ipywidgets as w

        self.model = model
        self.output = w.HTML()
        note = w.HTML(themed(Banner("error", "Refused by the reader", reader_note).to_html())) if reader_note else None
        if len(model) == 0:
            self.slider = None
            self.output.value = themed(f"<p>Run <code>{esc(model.run)}</code> has no readable records.</p>")
            self.widget = w.VBox([*([note] if note else []), self.output])
            self.widget.add_class("jt")
            return
        self.slider = w.SelectionSlider(
            options=[(str(seq), index) for index, seq in enumerate(model.seqs)],
            value=len(model) - 1,
            description="seq",
            continuous_update=False,
        )
        self.slider.observe(lambda change: self.show(change["new"]), names="value")
        steps = []
        for label, tip, target in (
            ("first", "the first record", lambda: 0),
            ("previous", "one record back", lambda: self._index() - 1),
            ("next", "one record on", lambda: self._index() + 1),
            ("last", "the last record", lambda: len(self.model) - 1),
        ):
            button = w.Button(description=label, tooltip=tip, layout=w.Layout(width="auto"))
            button.on_click(lambda _button, target=target: self.show(target()))
            steps.append(button)
        jumps = []
        for seq, before, after in model.status_changes():
            label = f"seq {seq}: {before} → {after}"
            # A button never shrinks below its label, or a run of many changes cut each one to "open → comple…",
            # losing the status it changed to; the line wraps instead.
            button = w.Button(description=label, tooltip=f"step to this change ({label})")
            button.layout.width = "auto"
            button.layout.flex = "0 0 auto"
            button.on_click(lambda _button, seq=seq: self.show(self.model.index_of_seq(seq)))
            jumps.append(button)
        self.changes = w.HBox(
            [w.HTML(themed("<span class='jt-muted'>status changes:</span>")), *(jumps or [w.Label("none")])],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.changes.add_class("jt-status-changes")
        self.widget = w.VBox([*([note] if note else []), w.HBox([*steps, self.slider]), self.changes, self.output])
        self.widget.add_class("jt")
        self.show(len(model) - 1)

    @classmethod
    def from_records(cls, run: str | None, records: Records, reader_note: str = "") -> TimeTravel:
        return cls(TimeTravelModel(run, records), reader_note=reader_note)

    @classmethod
    def from_source(cls, url: str, run: str) -> TimeTravel:
        """Read ``run`` from a source (leniently) and step through it; the reader's refusal is shown on top."""
        from journaltools.sources.registry import open_source

        with open_source(url) as backend:
            read = backend.read_run(run, strict=False)
        records = [stored.record for stored in read.records]
        note = "; ".join(finding_text(f) for f in read.findings if f.severity == "error")
        if not read.complete and not note:
            note = "the reader refused this journal"
        if note:
            note += f" — the snapshots fold the {len(records)} records that parse"
        return cls(TimeTravelModel(run, records), reader_note=note)

    def _index(self) -> int:
        return int(self.slider.value) if self.slider is not None else 0

    def show(self, index: int) -> None:
        """Show the snapshot after the record at ``index`` (kept within the run)."""
        index = min(max(0, index), len(self.model) - 1)
        if self.slider is not None and self.slider.value != index:
            self.slider.value = index  # observed: comes back here
            return
        self.output.value = self.model.snapshot_html(index)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


#: What a resume of a run would do first, by ``FoldResult.waiting_for``.
_RESUME_STEP = {"model": "ask the model", "tools": "run its tools", "answer": "wait for an answer"}


def position_html(status: str, waiting_for: str | None) -> str:
    """Where the run stood: what an open run waits for, and for a run that ended, that it waits for nothing (a
    resume's first step is said as such, not as something the run is waiting on)."""
    if status in ("open", "invalid"):
        return f"waiting for <b>{esc(waiting_for or 'nothing')}</b>"
    step = _RESUME_STEP.get(waiting_for or "")
    return "ended" + (f"; a resume would first {esc(step)}" if step else "")
