"""TimeTravel: a slider over a run's seqs showing the fold of the prefix up to that record.

``TimeTravelModel`` folds prefixes lazily (and caches them), so stepping through a long run costs one fold
per position visited, not one per record up front. ``status_changes()`` finds the moments a run's status
moved, to step straight to where it went wrong. Every snapshot carries the banner of its prefix: why the run
had ended by then (the fatal error or the cancel), or what it was waiting for. Statuses follow the listing's
rule (an error finding so far makes the prefix ``invalid``), as in ``ls`` and ConversationView.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from journaltools.fold import FoldResult, fold, text_of
from journaltools.listing import status_of_fold
from journaltools.protocol.records import RawRecord
from journaltools.widgets._html import Banner, as_text, esc, long_text, status_badge, themed
from journaltools.widgets._why import banner_for


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The fold of ``records[: index + 1]``: what a reader would have seen right after record ``seq``."""

    index: int
    seq: int
    record_type: str
    status: str
    waiting_for: str | None
    pending: list[dict[str, Any]]
    last_messages: list[tuple[str, str]]
    counters: dict[str, int]
    findings: list[str]
    record_text: str
    banner: Banner | None = None
    stop_reason: str | None = None


@dataclass(slots=True)
class TimeTravelModel:
    run: str | None
    records: Sequence[RawRecord]
    last_n: int = 3
    _cache: dict[int, FoldResult] = field(default_factory=dict)

    @property
    def seqs(self) -> list[int]:
        return [record.seq or 0 for record in self.records]

    def __len__(self) -> int:
        return len(self.records)

    def fold_at(self, index: int) -> FoldResult:
        if not 0 <= index < len(self.records):
            raise IndexError(f"no record at position {index} (the run has {len(self.records)})")
        if index not in self._cache:
            self._cache[index] = fold(self.records[: index + 1], strict=False, run=self.run)
        return self._cache[index]

    def index_of_seq(self, seq: int) -> int:
        return self.seqs.index(seq)

    def snapshot(self, index: int) -> Snapshot:
        result = self.fold_at(index)
        record = self.records[index]
        last = [(str(m["role"]), _message_text(m["content"])) for m in result.messages[-self.last_n :]]
        status = status_of_fold(result)
        return Snapshot(
            index=index,
            seq=record.seq or 0,
            record_type=record.type or "?",
            status=status,
            waiting_for=result.resume.waiting_for,
            pending=[call.to_json() for call in result.pending],
            last_messages=last,
            counters=result.counters.to_json(),
            findings=[f"seq {f.seq}: {f.code}: {f.message}" for f in result.findings],
            record_text=as_text(record.body),
            banner=banner_for(result, status),
            stop_reason=result.stop_reason,
        )

    def status_changes(self) -> list[tuple[int, str, str]]:
        """``(seq, before, after)`` for every record after which the status differs from the one before."""
        changes: list[tuple[int, str, str]] = []
        previous: str | None = None
        for index in range(len(self.records)):
            status = status_of_fold(self.fold_at(index))
            if previous is not None and status != previous:
                changes.append((self.records[index].seq or 0, previous, status))
            previous = status
        return changes

    def snapshot_html(self, index: int) -> str:
        snap = self.snapshot(index)
        pending = "".join(
            f"<li><code>{esc(call['name'])}</code> {esc(call['id'])} — deferred: {esc(call['deferred'] or 'no')}, "
            f"approval: {esc(call['approval'] or 'none')}{long_text(as_text(call['input']), 200)}</li>"
            for call in snap.pending
        )
        messages = "".join(
            f'<div class="jt-msg jt-msg-{esc(role)}"><span class="jt-role">{esc(role)}</span>'
            f"{long_text(text, 300)}</div>"
            for role, text in snap.last_messages
        )
        findings = "".join(f"<li>{esc(text)}</li>" for text in snap.findings)
        banner = snap.banner.to_html() if snap.banner is not None else ""
        return themed(
            f"<div class='jt-snapshot'>{banner}<h4 style='margin:2px 0'>after seq {snap.seq} "
            f"(<code>{esc(snap.record_type)}</code>): {status_badge(snap.status)} waiting for "
            f"<b>{esc(snap.waiting_for or 'nothing')}</b></h4>"
            f"<div>record seq {snap.seq}:</div>{long_text(snap.record_text, 300)}"
            f"<div>pending batch: {len(snap.pending)}</div><ul>{pending}</ul>"
            f"<div>last messages:</div>{messages or '<i>none yet</i>'}"
            + (f"<div>findings so far:</div><ul class='jt-findings'>{findings}</ul>" if findings else "")
            + "</div>"
        )


def _message_text(content: Any) -> str:
    """A message as text: its text blocks, then one line per tool call or tool result (results with content)."""
    if isinstance(content, str):
        return content
    text = text_of(content)
    lines = [text] if text else []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            lines.append(f"[tool_use {block.get('name')} {block.get('id')}] {as_text(block.get('input'))}")
        elif block.get("type") == "tool_result":
            error = " ERROR" if block.get("is_error") else ""
            lines.append(f"[tool_result {block.get('tool_use_id')}{error}] {as_text(block.get('content'))}")
    return "\n".join(lines)


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
            button = w.Button(description=f"seq {seq}: {before} → {after}", tooltip="step to this change")
            button.layout.width = "auto"
            button.on_click(lambda _button, seq=seq: self.show(self.model.index_of_seq(seq)))
            jumps.append(button)
        self.changes = w.HBox(
            [w.HTML(themed("<span class='jt-muted'>status changes:</span>")), *(jumps or [w.Label("none")])]
        )
        self.widget = w.VBox([*([note] if note else []), w.HBox([*steps, self.slider]), self.changes, self.output])
        self.widget.add_class("jt")
        self.show(len(model) - 1)

    @classmethod
    def from_source(cls, url: str, run: str) -> TimeTravel:
        from journaltools.backends.registry import open_source
        from journaltools.widgets._why import finding_text

        with open_source(url) as backend:
            read = backend.read_run(run, strict=False)
        note = "; ".join(finding_text(f) for f in read.findings if f.severity == "error")
        if note:
            note += f" — the snapshots fold the {len(read.records)} records that parse"
        return cls(TimeTravelModel(run, read.records), reader_note=note)

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
