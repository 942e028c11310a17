"""RunBrowser: a sortable, filterable table of runs; selecting a run opens its ConversationView.

``RunBrowserModel`` is pure (rows, filter, sort, HTML); ``RunBrowser`` is the ipywidgets view over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from journaltools.backends.base import RunSummary
from journaltools.fold import FoldResult
from journaltools.widgets._html import STYLE, esc, status_badge

#: run id → its lenient fold (None when the journal cannot be read), used to open a conversation.
RunLoader = Callable[[str], FoldResult | None]

SORT_KEYS: tuple[str, ...] = ("run", "status", "created", "model", "turns", "tokens", "pending_calls", "last_seq")


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of the browser. Numbers are None where the source does not know them (e.g. a JetStream listing)."""

    run: str
    status: str
    created: str | None
    model: str | None
    turns: int | None
    tokens: int | None
    pending_calls: int | None
    last_seq: int

    def sort_value(self, key: str) -> tuple[bool, Any]:
        value = getattr(self, key)
        return (value is None, value if value is not None else 0)


def row_of(summary: RunSummary, result: FoldResult | None = None) -> RunRow:
    """A row from a listing entry, with counts from the run's fold when there is one."""
    counters = result.counters if result is not None else None
    return RunRow(
        run=summary.run,
        status=summary.status,
        created=summary.created,
        model=summary.model,
        turns=counters.turns if counters is not None else None,
        tokens=counters.input_tokens + counters.output_tokens if counters is not None else None,
        pending_calls=len(result.pending) if result is not None else None,
        last_seq=summary.last_seq,
    )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(slots=True)
class RunBrowserModel:
    """All rows, plus the current filter and sort. ``visible()`` is what the table shows."""

    rows: list[RunRow]
    text_filter: str = ""
    statuses: frozenset[str] = field(default_factory=frozenset)  # empty: every status
    sort_key: str = "created"
    descending: bool = False

    @classmethod
    def from_summaries(
        cls, summaries: Iterable[RunSummary], folds: Mapping[str, FoldResult | None] | None = None
    ) -> RunBrowserModel:
        folds = folds or {}
        return cls([row_of(summary, folds.get(summary.run)) for summary in summaries])

    @classmethod
    def from_runs_table(cls, table: Any) -> RunBrowserModel:
        """From the ``runs`` Arrow table of ``journaltools.tables`` (columns of INTERFACES.md)."""
        rows = []
        for item in table.to_pylist():
            tokens = None
            if item.get("input_tokens") is not None or item.get("output_tokens") is not None:
                tokens = int(item.get("input_tokens") or 0) + int(item.get("output_tokens") or 0)
            rows.append(
                RunRow(
                    run=str(item["run"]),
                    status=str(item["status"]),
                    created=None if item.get("created") is None else str(item["created"]),
                    model=item.get("model"),
                    turns=_int_or_none(item.get("turns")),
                    tokens=tokens,
                    pending_calls=_int_or_none(item.get("pending_calls")),
                    last_seq=int(item.get("last_seq") or 0),
                )
            )
        return cls(rows)

    @property
    def status_choices(self) -> list[str]:
        return sorted({row.status for row in self.rows})

    def visible(self) -> list[RunRow]:
        needle = self.text_filter.strip().lower()
        kept = [
            row
            for row in self.rows
            if (not self.statuses or row.status in self.statuses)
            and (not needle or needle in row.run.lower() or needle in (row.model or "").lower())
        ]
        key = self.sort_key if self.sort_key in SORT_KEYS else "run"
        # Unknown values (None) always sort last, whichever the direction.
        known = [row for row in kept if getattr(row, key) is not None]
        unknown = [row for row in kept if getattr(row, key) is None]
        known.sort(key=lambda row: (getattr(row, key), row.run), reverse=self.descending)
        return known + sorted(unknown, key=lambda row: row.run)

    def with_filter(self, text: str = "", statuses: Iterable[str] = ()) -> RunBrowserModel:
        return replace(self, text_filter=text, statuses=frozenset(statuses))

    def sorted_by(self, key: str, descending: bool = False) -> RunBrowserModel:
        if key not in SORT_KEYS:
            raise ValueError(f"cannot sort by {key!r}; choose one of {', '.join(SORT_KEYS)}")
        return replace(self, sort_key=key, descending=descending)

    def to_html(self, selected: str | None = None) -> str:
        head = "".join(
            f"<th>{esc(name)}</th>" for name in ("run", "status", "created", "model", "turns", "tokens", "pending")
        )
        body = []
        for row in self.visible():
            cells = [
                f"<td><code>{esc(row.run)}</code></td>",
                f"<td>{status_badge(row.status)}</td>",
                f"<td>{esc(row.created or '—')}</td>",
                f"<td>{esc(row.model or '—')}</td>",
                f"<td>{esc('—' if row.turns is None else row.turns)}</td>",
                f"<td>{esc('—' if row.tokens is None else f'{row.tokens:,}')}</td>",
                f"<td>{esc('—' if row.pending_calls is None else row.pending_calls)}</td>",
            ]
            marker = ' class="jt-selected" style="outline:2px solid #2563eb"' if row.run == selected else ""
            body.append(f'<tr data-run="{esc(row.run)}"{marker}>{"".join(cells)}</tr>')
        count = f"<p>{len(body)} of {len(self.rows)} runs</p>"
        return f'{STYLE}{count}<table class="jt-table jt-runs"><tr>{head}</tr>{"".join(body)}</table>'


def load_source(url: str) -> tuple[RunBrowserModel, RunLoader]:
    """Open a source, fold every run leniently (file listing semantics) and give the model and a run loader."""
    from journaltools.backends.registry import open_source
    from journaltools.fold import fold

    backend = open_source(url)
    summaries = backend.listing()
    folds: dict[str, FoldResult | None] = {}
    for summary in summaries:
        read = backend.read_run(summary.run, strict=False)
        folds[summary.run] = fold(read.records, strict=False, run=summary.run) if read.complete else None
    return RunBrowserModel.from_summaries(summaries, folds), folds.get


class RunBrowser:
    """The view: filter box, status filter, sort controls, the table and the selected run's conversation."""

    def __init__(self, model: RunBrowserModel, loader: RunLoader | None = None, page_size: int = 50) -> None:
        import ipywidgets as w

        self.model = model
        self.loader = loader
        self.page_size = page_size
        self.filter_box = w.Text(placeholder="filter by run or model", description="filter")
        self.status_box = w.SelectMultiple(options=model.status_choices, description="status", rows=4)
        self.sort_box = w.Dropdown(options=list(SORT_KEYS), value=model.sort_key, description="sort by")
        self.descending_box = w.Checkbox(value=model.descending, description="descending")
        self.picker = w.Select(options=[], description="open run", rows=8)
        self.table = w.HTML()
        self.detail = w.VBox()
        for control in (self.filter_box, self.status_box, self.sort_box, self.descending_box):
            control.observe(self._on_controls, names="value")
        self.picker.observe(self._on_pick, names="value")
        controls = w.HBox([w.VBox([self.filter_box, self.sort_box, self.descending_box]), self.status_box])
        self.widget = w.VBox([controls, w.HBox([self.table, self.picker]), self.detail])
        self._refresh()

    @classmethod
    def from_source(cls, url: str) -> RunBrowser:
        model, loader = load_source(url)
        return cls(model, loader)

    def _on_controls(self, _change: object) -> None:
        self.model = self.model.with_filter(self.filter_box.value, self.status_box.value).sorted_by(
            self.sort_box.value, self.descending_box.value
        )
        self._refresh()

    def _refresh(self) -> None:
        runs = [row.run for row in self.model.visible()]
        current = self.picker.value if self.picker.value in runs else None
        self.picker.options = runs
        self.picker.value = current
        self.table.value = self.model.to_html(selected=current)

    def _on_pick(self, change: Mapping[str, Any]) -> None:
        self.select(change["new"])

    def select(self, run: str | None) -> None:
        """Open ``run``'s ConversationView below the table (or clear it)."""
        from journaltools.widgets.conversation import ConversationView

        self.table.value = self.model.to_html(selected=run)
        if run is None:
            self.detail.children = ()
            return
        if run in self.picker.options and self.picker.value != run:
            self.picker.value = run  # observed: comes back here through _on_pick
            return
        result = self.loader(run) if self.loader is not None else None
        if result is None:
            import ipywidgets as w

            self.detail.children = (
                w.HTML(f"<p>No conversation for <code>{esc(run)}</code>: the journal was not readable.</p>"),
            )
            return
        self.detail.children = (ConversationView.from_fold(result, page_size=self.page_size).widget,)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
