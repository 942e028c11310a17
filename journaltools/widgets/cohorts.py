"""CohortDiff: two sets of runs side by side in the notebook, from ``analyses.cohorts.diff_cohorts``.

What ``journaltools diff SOURCE --cohort A --cohort B`` prints, as tables: who is in each cohort, how the runs ended
(counts, shares, the change in points), tokens and wall clock per run (median and p90), tool calls and their errors
by tool, findings by code, and the runs of each cohort farthest from the other's median, each a run id. The run
browser opens it on two filter expressions (``RunBrowser.compare_cohorts``), or on the runs it showed when a person
pressed "A: these runs" and then "B: these runs" (``CohortPicker``). Journal text (a tool's name, a run id, the
expressions) is escaped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from typing import Any

from journaltools.analyses.cohorts import ChosenRuns, CohortChoice, CohortDiff, diff_cohorts
from journaltools.exports.facts import duration_text
from journaltools.exports.html import esc, id_html, themed
from journaltools.tables.schema import Tables


def cohort_diff_html(diff: CohortDiff) -> str:
    """The comparison as the notebook shows it: the tables ``diff --cohort`` prints (``CohortDiff.sections``),
    escaped, each run id shortened with its copy button; themed as every widget is."""
    a, b = diff.a, diff.b
    parts = [
        f'<p class="jt-cohort-sides"><b>A</b> <code>{esc(a.expression)}</code> ({len(a.runs):,} runs) · '
        f"<b>B</b> <code>{esc(b.expression)}</code> ({len(b.runs):,} runs)</p>"
    ]
    for section in diff.sections(duration_text):
        head = "".join(f"<th>{esc(column)}</th>" for column in section.columns)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{id_html(row[column]) if column == 'run' else esc(row[column])}</td>"
                for column in section.columns
            )
            + "</tr>"
            for row in section.rows
        )
        table = f'<table class="jt-table jt-cohorts"><tr>{head}</tr>{body}</table>'
        parts.append(f'<h4>{esc(section.title)}</h4><div class="jt-cohort-scroll">{table}</div>')
    return themed(f'<div class="jt-cohort-diff">{"".join(parts)}</div>')


class CohortDiffView:
    """The view: one HTML widget (a comparison is read, not clicked)."""

    def __init__(self, diff: CohortDiff) -> None:
        import ipywidgets as w

        self.diff = diff
        self.widget = w.HTML(cohort_diff_html(diff))

    @classmethod
    def from_source(cls, source: Tables | str | os.PathLike[str], a: CohortChoice, b: CohortChoice) -> CohortDiffView:
        """Load ``source`` (or take the tables ``load`` made) and compare the runs ``a`` keeps with those ``b``
        keeps (filter expressions, as ``ls --where`` takes them, or ``ChosenRuns``)."""
        return cls(diff_cohorts(source, a, b))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def cohorts_shown(
    backend: Any, a: CohortChoice, b: CohortChoice, close: Callable[[], None]
) -> tuple[CohortDiffView | None, tuple[Any, ...]]:
    """The run browser's cohorts (``RunBrowser.compare_cohorts``): the view of its source's runs ``a`` and ``b``
    keep, and what its box shows (a close button, then the view, or the one line that says why there is none)."""
    import ipywidgets as w

    from journaltools.errors import JournalError
    from journaltools.tables import load

    button = w.Button(description="close the cohorts", layout=w.Layout(width="auto"))
    button.add_class("jt-cohort-close")
    button.on_click(lambda _button: close())
    empty = [name for name, choice in (("A", a), ("B", b)) if isinstance(choice, ChosenRuns) and not choice.runs]
    if empty:
        note = f"no cohorts: {' and '.join(empty)} holds no run (the list was empty when it was taken)"
        return None, (w.HTML(themed(f"<p>{esc(note)}</p>")), button)
    if backend is None:
        note = "no cohorts: a comparison loads the source's tables; open the browser on a source"
        return None, (w.HTML(themed(f"<p>{esc(note)}</p>")), button)
    chosen = [choice.runs for choice in (a, b) if isinstance(choice, ChosenRuns)]
    # Two hand-picked cohorts need only their own runs' tables; an expression judges every run of the source.
    runs = sorted(chosen[0] | chosen[1]) if len(chosen) == 2 else None
    try:
        tables = load(backend, runs, strict=False, records=False, progress=False)
        view = CohortDiffView.from_source(tables, a, b)
    except JournalError as error:
        return None, (w.HTML(themed(f"<p>No cohorts: {esc(error)}</p>")), button)
    return view, (button, view.widget)


def chosen_label(text: str, statuses: Collection[str]) -> str:
    """How a person chose the runs the browser shows, in a few words: the chips in force and the search."""
    parts = [f"status {' or '.join(sorted(statuses))}"] if statuses else []
    parts += [f"search {' '.join(text.split())!r}"] if text.strip() else []
    return " · ".join(parts) or "every run"


class CohortPicker:
    """Two buttons beside the run browser's search: "A: these runs" and "B: these runs", each taking the runs the
    browser shows now (``shown``: their ids and how they were chosen). Once both are taken, ``compare`` gets them
    (the browser then shows their ``CohortDiffView``); a cohort taken again replaces the one before."""

    def __init__(self, shown: Callable[[], ChosenRuns], compare: Callable[[ChosenRuns, ChosenRuns], object]) -> None:
        import ipywidgets as w

        self._shown = shown
        self._compare = compare
        self.a: ChosenRuns | None = None
        self.b: ChosenRuns | None = None
        self.take_a = w.Button(description="A: these runs", tooltip="the runs listed now are cohort A")
        self.take_b = w.Button(description="B: these runs", tooltip="the runs listed now are cohort B: compare")
        self.take_a.on_click(lambda _button: self.take("a"))
        self.take_b.on_click(lambda _button: self.take("b"))
        for button in (self.take_a, self.take_b):
            button.add_class("jt-chip")
        self.note = w.HTML()
        self.widget = w.HBox([self.take_a, self.take_b, self.note])
        self.widget.add_class("jt-cohort-picker")
        self._say()

    def take(self, side: str) -> None:
        """Take the runs listed now as cohort ``side`` (``a`` or ``b``); compare once both are taken. An empty list
        is not taken: the note says so."""
        chosen = self._shown()
        if not chosen.runs:
            self._say(f"no run is listed ({chosen.label}): nothing to take as {side.upper()}")
            return
        if side == "a":
            self.a = chosen
        else:
            self.b = chosen
        self._say()
        if self.a is not None and self.b is not None:
            self._compare(self.a, self.b)

    def clear(self) -> None:
        """Forget both cohorts (the comparison was closed): the next two presses choose afresh."""
        self.a = self.b = None
        self._say()

    def _say(self, problem: str = "") -> None:
        def side(name: str, chosen: ChosenRuns | None) -> str:
            if chosen is None:
                return f"<b>{name}</b> not chosen"
            return f"<b>{name}</b> {len(chosen.runs):,} runs ({esc(chosen.label)})"

        said = f"{side('A', self.a)} · {side('B', self.b)}" + (f" · {esc(problem)}" if problem else "")
        self.note.value = f'<span class="jt-muted">{said}</span>'
