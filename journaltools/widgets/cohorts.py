"""CohortDiff: two sets of runs side by side in the notebook, from ``analyses.cohorts.diff_cohorts``.

What ``journaltools diff SOURCE --cohort A --cohort B`` prints, as tables: who is in each cohort, how the runs ended
(counts, shares, the change in points), tokens and wall clock per run (median and p90), tool calls and their errors
by tool, findings by code, and the runs of each cohort farthest from the other's median, each a run id. The run
browser opens it on two filter expressions (``RunBrowser.compare_cohorts``). Journal text (a tool's name, a run id,
the expressions) is escaped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from journaltools.analyses.cohorts import CohortDiff, Spread, diff_cohorts
from journaltools.exports.facts import duration_text
from journaltools.exports.html import esc, id_html, themed
from journaltools.tables.schema import Tables


def _share(part: float) -> str:
    return f"{100 * part:.0f}%"


def _figure(value: float | None, seconds: bool) -> str:
    if value is None:
        return "—"
    return duration_text(value) if seconds else f"{value:,.0f}"


def _spread(spread: Spread, seconds: bool) -> str:
    return f"{_figure(spread.median, seconds)} / {_figure(spread.p90, seconds)} ({spread.runs:,} runs)"


def _table(caption: str, heads: list[str], rows: list[list[str]]) -> str:
    """A table whose cells are HTML already escaped."""
    if not rows:
        return ""
    head = "".join(f"<th>{esc(text)}</th>" for text in heads)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<h4>{esc(caption)}</h4><table class="jt-table jt-cohorts"><tr>{head}</tr>{body}</table>'


def cohort_diff_html(diff: CohortDiff) -> str:
    """The comparison as the notebook shows it (escaped; themed as every widget is)."""
    a, b = diff.a, diff.b
    parts = [
        f'<p class="jt-cohort-sides"><b>A</b> <code>{esc(a.expression)}</code> ({len(a.runs):,} runs) · '
        f"<b>B</b> <code>{esc(b.expression)}</code> ({len(b.runs):,} runs)</p>"
    ]
    endings = [
        [
            esc(name),
            f"{a.endings.get(name, 0):,} ({_share(a.share(name))})",
            f"{b.endings.get(name, 0):,} ({_share(b.share(name))})",
            f"{100 * (b.share(name) - a.share(name)):+.0f} points",
        ]
        for name in diff.endings()
    ]
    parts.append(_table("endings", ["ending", "A", "B", "change"], endings))
    spreads = [
        ["tokens", _spread(a.tokens, False), _spread(b.tokens, False)],
        ["wall clock", _spread(a.seconds, True), _spread(b.seconds, True)],
    ]
    parts.append(_table("per run: median / p90", ["", "A", "B"], spreads))
    tools = []
    for name in diff.tools():
        use_a, use_b = a.tools.get(name), b.tools.get(name)
        tools.append(
            [
                esc(name),
                f"{use_a.calls:,} ({use_a.errors:,} errors, {_share(use_a.error_share)})" if use_a else "—",
                f"{use_b.calls:,} ({use_b.errors:,} errors, {_share(use_b.error_share)})" if use_b else "—",
            ]
        )
    parts.append(_table("tool calls", ["tool", "A", "B"], tools))
    findings = [
        [esc(code), f"{a.findings.get(code, 0):,}", f"{b.findings.get(code, 0):,}"] for code in diff.finding_codes()
    ]
    parts.append(_table("findings", ["finding", "A", "B"], findings))
    moved = [
        [
            esc(standout.cohort),
            id_html(standout.run),
            esc(standout.measure),
            _figure(standout.value, standout.measure == "seconds"),
            _figure(standout.other_median, standout.measure == "seconds"),
        ]
        for standout in diff.standouts
    ]
    parts.append(_table("moved most: each cohort's runs farthest from the other's median", [
        "cohort", "run", "measure", "value", "other's median"], moved))  # fmt: skip
    return themed(f'<div class="jt-cohort-diff">{"".join(parts)}</div>')


class CohortDiffView:
    """The view: one HTML widget (a comparison is read, not clicked)."""

    def __init__(self, diff: CohortDiff) -> None:
        import ipywidgets as w

        self.diff = diff
        self.widget = w.HTML(cohort_diff_html(diff))

    @classmethod
    def from_source(cls, source: Tables | str | os.PathLike[str], a: str, b: str) -> CohortDiffView:
        """Load ``source`` (or take the tables ``load`` made) and compare the runs ``a`` keeps with those ``b``
        keeps (filter expressions, as ``ls --where`` takes them)."""
        return cls(diff_cohorts(source, a, b))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def cohorts_shown(
    backend: Any, a: str, b: str, close: Callable[[], None]
) -> tuple[CohortDiffView | None, tuple[Any, ...]]:
    """The run browser's cohorts (``RunBrowser.compare_cohorts``): the view of its source's runs ``a`` and ``b``
    keep, and what its box shows (a close button, then the view, or the one line that says why there is none)."""
    import ipywidgets as w

    from journaltools.errors import JournalError
    from journaltools.tables import load

    button = w.Button(description="close the cohorts", layout=w.Layout(width="auto"))
    button.on_click(lambda _button: close())
    if backend is None:
        note = "no cohorts: a comparison loads the source's tables; open the browser on a source"
        return None, (w.HTML(themed(f"<p>{esc(note)}</p>")), button)
    try:
        view = CohortDiffView.from_source(load(backend, strict=False, records=False, progress=False), a, b)
    except JournalError as error:
        return None, (w.HTML(themed(f"<p>No cohorts: {esc(error)}</p>")), button)
    return view, (button, view.widget)
