"""RunDiff: two runs (or a run's two copies, or two of its process runs) side by side, from ``jt.diff``.

``RunDiffModel`` (pure) holds a ``journaltools.analyses.rundiff.RunDiff`` and renders it: what each side is, the
fingerprint and the resume gate's word on it, the first call where the runs diverge (marked), then every pair of
calls turn by turn, A on the left and B on the right, each cell with the tool, its input and its result, and the
turns' tokens and times. Journal content is escaped (``esc``) and cut with a "show all"; the conversation token is
never read.
"""

from __future__ import annotations

from typing import Any

from journaltools.analyses.rundiff import diff
from journaltools.analyses.rundiff_values import DIVERGING, CallPair, Delta, DiffSide
from journaltools.analyses.rundiff_values import RunDiff as Comparison
from journaltools.exports.html import esc, id_html, long_text, status_badge, themed
from journaltools.folding.facts import CallFact

#: Characters of an input or a result shown before "show all".
CELL_LIMIT = 400


def _side_html(label: str, side: DiffSide) -> str:
    generation = side.folded.generation
    segment = f" process run {side.segment}" if side.segment is not None else ""
    dated = "dated" if side.dated else "undated"
    return (
        f'<div class="jt-diff-side"><b>{esc(label)}</b> {id_html(side.run)}{esc(segment)} '
        f'{status_badge(side.folded.status)} <span class="jt-muted">{esc(side.source)} · '
        f"{esc(generation.name if generation else 'unknown build')} · seq {side.first_seq}-{side.last_seq} · "
        f"{len(side.record_times)} records · {dated}</span></div>"
    )


def _call_cell(call: CallFact | None) -> str:
    if call is None:
        return '<td class="jt-diff-none"><i>no such call</i></td>'
    if call.answer is not None:
        error = " (error)" if call.answer.result.is_error else ""
        result = f"answered{error}: " + call.answer.result.content
    elif call.deferral is not None:
        result = f"deferred: {call.deferral.note}"
    else:
        result = "waiting for its result"
    raw = bytes(call.input).decode("utf-8", "replace")
    return (
        f"<td><code>{esc(call.tool)}</code> {id_html(call.tool_use_id, copy=False)}"
        f"{long_text(raw, limit=CELL_LIMIT)}{long_text(result, limit=CELL_LIMIT)}</td>"
    )


def _delta(delta: Delta, *, seconds: bool = False) -> str:
    def shown(value: int | None) -> str:
        if value is None:
            return "-"
        return f"{value / 1e9:.3f}s" if seconds else f"{value:,}"

    change = delta.delta
    sign = "" if change is None else (f"{change / 1e9:+.3f}s" if seconds else f"{change:+,}")
    return f'{esc(shown(delta.a))} / {esc(shown(delta.b))} <span class="jt-muted">{esc(sign)}</span>'


class RunDiffModel:
    """What differs between two sides, as HTML (``to_html``) and plain lines (``summary_lines``)."""

    def __init__(self, comparison: Comparison) -> None:
        self.comparison = comparison

    @classmethod
    def from_sources(
        cls,
        source: str,
        run_a: str,
        run_b: str | None = None,
        *,
        source_b: str | None = None,
        segments: tuple[int, int] | None = None,
        strict: bool = False,
    ) -> RunDiffModel:
        """``jt.diff`` of the arguments (lenient by default: a refused journal is compared as far as it reads)."""
        return cls(diff(source, run_a, run_b, source_b=source_b, segments=segments, strict=strict))

    def summary_lines(self) -> list[str]:
        return self.comparison.text_lines()

    def _verdict_html(self) -> str:
        result = self.comparison
        parts: list[str] = []
        if result.same_records:
            parts.append("the same records, byte for byte")
        if result.ending_differs:
            parts.append(f"ending: A {result.a.ending} · B {result.b.ending}")
        changes = result.fingerprint_changes
        parts.append(
            "fingerprint: the same"
            if not changes
            else "fingerprint: " + "; ".join(f"{change.field} {change.a!r} → {change.b!r}" for change in changes)
        )
        if result.gate is not None:
            gate = "resumable" if result.gate.resumable else f"NOT resumable: {result.gate.refusal}"
            parts.append(f"resume gate, B's fingerprint for A: {gate}")
        if not result.times_compared and result.times_note:
            parts.append(f"times: {result.times_note}")
        first = result.first_divergence
        recorded = sorted({name for pair in result.calls for name in pair.differs if name not in DIVERGING})
        if first is None:
            # kind and dispatched are flagged on the rows but make no divergence (only the newest line records them)
            also = f" (recorded differently: {', '.join(recorded)})" if recorded else ""
            parts.append(f"no call diverges{also}")
        else:
            what = ", ".join(name for name in first.differs if name in DIVERGING) or "a call only in one run"
            parts.append(f"first divergence: turn {first.turn} ({what})")
        tone = "jt-tone-ok" if result.identical else "jt-tone-warn"
        return f'<div class="jt-banner {tone}">' + "".join(f"<div>{esc(part)}</div>" for part in parts) + "</div>"

    def _row(self, pair: CallPair) -> str:
        first = pair is self.comparison.first_divergence
        marks = ", ".join(pair.differs) or ("only in A" if pair.b is None else "only in B" if pair.a is None else "")
        flag = "✖ first divergence: " if first else ""
        css = "jt-row jt-diff-first" if first else "jt-row"
        return (
            f'<tr class="{css}" data-turn="{pair.turn}"><td>{pair.turn}</td>{_call_cell(pair.a)}'
            f"{_call_cell(pair.b)}<td>{esc(flag + marks) or '='}</td></tr>"
        )

    def to_html(self) -> str:
        result = self.comparison
        calls = "".join(self._row(pair) for pair in result.calls)
        turns = "".join(
            f"<tr><td>{turn.turn}</td><td>{_delta(turn.calls)}</td><td>{_delta(turn.tokens['in_tokens'])}</td>"
            f"<td>{_delta(turn.tokens['out_tokens'])}</td><td>{_delta(turn.model_ns, seconds=True)}</td>"
            f"<td>{_delta(turn.tools_ns, seconds=True)}</td><td>{'differs' if turn.text_differs else '='}</td></tr>"
            for turn in result.turns
        )
        return themed(
            f'<div class="jt-diff">{_side_html("A", result.a)}{_side_html("B", result.b)}{self._verdict_html()}'
            '<table class="jt-table jt-diff-calls"><tr><th>turn</th><th>A</th><th>B</th><th>differs</th></tr>'
            f"{calls}</table>"
            '<table class="jt-table jt-diff-turns"><tr><th>turn</th><th>calls A / B</th><th>in tokens</th>'
            "<th>out tokens</th><th>model time</th><th>tool time</th><th>text</th></tr>"
            f"{turns}</table></div>"
        )


class RunDiff:
    """The comparison in a notebook: the model's page in one HTML widget."""

    def __init__(self, model: RunDiffModel) -> None:
        import ipywidgets as w

        self.model = model
        self.widget = w.HTML(model.to_html())

    @classmethod
    def from_sources(
        cls,
        source: str,
        run_a: str,
        run_b: str | None = None,
        *,
        source_b: str | None = None,
        segments: tuple[int, int] | None = None,
    ) -> RunDiff:
        return cls(RunDiffModel.from_sources(source, run_a, run_b, source_b=source_b, segments=segments))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
