"""ListingComparison: the file and JetStream listings side by side, one row per run, each row with a verdict.

``ListingComparisonModel`` (pure) holds the rows. It takes the table of ``journaltools.audits.listings`` (columns
``run, status_a, status_b, verdict, explanation``), any rows of that shape (``compare --json``), or two
listings which it hands to ``compare_listings``. Each difference is shown by its cause (PROTOCOL 6): a
``documented`` row (the file rule names the last terminal's reason, the JetStream rule says ``open``, and a
new turn follows that terminal: the conversation's next turn is in flight) in amber, a ``summary_rule`` row
(the same records, and only records that start no turn follow the last terminal, or the file rule refuses a
journal the two-record rule reads) in blue, both explained in plain words; only a ``discrepancy`` or a run
missing on one side is loud (red). The table is shown a page at a time (``to_html(page=...)``), so a
comparison of a hundred thousand runs is never one enormous page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from journaltools.exports.html import esc, id_html, status_badge, themed

#: Rows per page of the comparison table.
ROWS_PER_PAGE = 100

Verdict = Literal["agree", "documented", "summary_rule", "discrepancy", "missing_a", "missing_b"]
VERDICTS: tuple[Verdict, ...] = ("discrepancy", "missing_a", "missing_b", "documented", "summary_rule", "agree")

#: What a reader sees in the verdict column (a word, never only a colour).
FLAG_TEXT: dict[str, str] = {
    "agree": "✓ agree",
    "documented": "⚑ documented",
    "summary_rule": "≈ summary rule",
    "discrepancy": "✖ DISCREPANCY",
    "missing_a": "✖ MISSING in {label_a}",
    "missing_b": "✖ MISSING in {label_b}",
}

#: How loud each verdict is: discrepancies outrank missing runs, which outrank the expected differences.
SEVERITY: dict[str, int] = {
    "agree": 0,
    "summary_rule": 1,
    "documented": 1,
    "discrepancy": 3,
    "missing_a": 2,
    "missing_b": 2,
}

#: Verdicts that are expected (explained by a rule), never an error.
EXPECTED: frozenset[str] = frozenset({"agree", "documented", "summary_rule"})

#: A run id longer than this is shortened in its middle here (its tooltip and copy button hold it whole): the
#: explanation needs the room more.
COMPARISON_ID_SHOWN = 20

#: Shown on a documented row that arrives without an explanation of its own (e.g. hand-made rows).
DOCUMENTED_EXPLANATION = (
    "Documented, not an error: both sides hold the same records and a new turn follows the last terminal "
    "(the conversation's next turn is in flight). The file listing folds the journal and names the last "
    "terminal's reason; the JetStream listing reads only the last record, which is no terminal, and says open."
)

#: Shown on a summary_rule row that arrives without an explanation of its own.
SUMMARY_RULE_EXPLANATION = (
    "Expected, not an error: both sides hold the same records, and only records that start no turn follow the "
    "last terminal (memory revisions, a claim, a decision, a call approval, an optional record); the JetStream "
    "listing reads the last record alone and says open, or the file listing refuses a journal that the "
    "two-record rule still reads."
)


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    run: str
    status_a: str | None
    status_b: str | None
    verdict: str
    explanation: str
    #: The two sources' names, which a missing run's flag says ("MISSING in jetstream", not "in B").
    label_a: str = "A"
    label_b: str = "B"

    @property
    def flag(self) -> str:
        return FLAG_TEXT.get(self.verdict, self.verdict).format(label_a=self.label_a, label_b=self.label_b)

    @property
    def css_class(self) -> str:
        return f"jt-verdict-{self.verdict}"

    @property
    def severity(self) -> int:
        return SEVERITY.get(self.verdict, 3)


@dataclass(slots=True)
class ListingComparisonModel:
    label_a: str
    label_b: str
    rows: list[ComparisonRow]

    @classmethod
    def from_rows(
        cls, rows: Iterable[Mapping[str, Any]], label_a: str = "file", label_b: str = "jetstream"
    ) -> ListingComparisonModel:
        """From ``compare_listings``' rows (or ``compare --json``): run, status_a, status_b, verdict, explanation."""
        converted = []
        for row in rows:
            verdict = str(row["verdict"])
            explanation = str(row.get("explanation") or "")
            if verdict == "documented" and not explanation:
                explanation = DOCUMENTED_EXPLANATION
            elif verdict == "summary_rule" and not explanation:
                explanation = SUMMARY_RULE_EXPLANATION
            converted.append(
                ComparisonRow(
                    str(row["run"]), row.get("status_a"), row.get("status_b"), verdict, explanation, label_a, label_b
                )
            )
        return cls(label_a, label_b, converted)

    @classmethod
    def from_table(cls, table: Any, label_a: str = "file", label_b: str = "jetstream") -> ListingComparisonModel:
        return cls.from_rows(table.to_pylist(), label_a, label_b)

    @classmethod
    def from_listings(
        cls,
        a_rows: Sequence[Any],
        b_rows: Sequence[Any],
        label_a: str = "file",
        label_b: str = "jetstream",
    ) -> ListingComparisonModel:
        """Compare two listings (``RunSummary`` lists) with ``journaltools.audits.listings.compare_listings``."""
        from journaltools.audits.listings import compare_listings

        return cls.from_table(compare_listings(a_rows, b_rows, label_a, label_b), label_a, label_b)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        for row in self.rows:
            counts[row.verdict] = counts.get(row.verdict, 0) + 1
        return counts

    def row(self, run: str) -> ComparisonRow:
        return next(row for row in self.rows if row.run == run)

    def summary_text(self) -> str:
        counts = self.counts()
        return ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))

    def page_count(self, page_size: int = ROWS_PER_PAGE) -> int:
        return max(1, -(-len(self.rows) // max(1, page_size)))

    def only_problems(self) -> ListingComparisonModel:
        """The rows that do not simply agree."""
        return ListingComparisonModel(self.label_a, self.label_b, [r for r in self.rows if r.verdict != "agree"])

    def to_html(self, page: int = 0, page_size: int = ROWS_PER_PAGE) -> str:
        """The summary (over every row) and one page of rows."""
        page = min(max(0, page), self.page_count(page_size) - 1)
        start = page * page_size
        shown = self.rows[start : start + page_size]
        head = (
            f"<tr><th>verdict</th><th>run</th><th>{esc(self.label_a)}</th><th>{esc(self.label_b)}</th>"
            "<th>explanation</th></tr>"
        )
        body = []
        for row in shown:
            a = status_badge(row.status_a) if row.status_a else "<i>missing</i>"
            b = status_badge(row.status_b) if row.status_b else "<i>missing</i>"
            body.append(
                f'<tr class="jt-row {row.css_class}" data-run="{esc(row.run)}" data-verdict="{esc(row.verdict)}">'
                f'<td class="jt-verdict-cell"><span class="jt-flag jt-flag-{esc(row.verdict)}">'
                f"{esc(row.flag)}</span></td>"
                f"<td>{id_html(row.run, COMPARISON_ID_SHOWN)}</td><td>{a}</td><td>{b}</td>"
                f'<td class="jt-explanation">{esc(row.explanation)}</td></tr>'
            )
        where = f"rows {start + 1 if shown else 0:,}-{start + len(shown):,} of {len(self.rows):,}"
        return themed(
            f'<div class="jt-comparison"><p class="jt-summary">{esc(self.label_a)} vs {esc(self.label_b)}: '
            f'{esc(self.summary_text())}</p><p class="jt-muted">{esc(where)}</p>'
            f'<table class="jt-table jt-comparison-table">{head}{"".join(body)}</table></div>'
        )


class ListingComparison:
    """The comparison table a page at a time, with a toggle to hide the rows that agree."""

    def __init__(self, model: ListingComparisonModel, page_size: int = ROWS_PER_PAGE) -> None:
        import ipywidgets as w

        self.model = model
        self.page_size = max(1, page_size)
        self.page = 0
        self.only_problems = w.Checkbox(value=False, description="hide rows that agree", indent=False)
        self.table = w.HTML()
        self.previous = w.Button(description="← previous")
        self.following = w.Button(description="next →")
        self.page_label = w.Label()
        self.previous.on_click(lambda _b: self.show(self.page - 1))
        self.following.on_click(lambda _b: self.show(self.page + 1))
        self.only_problems.observe(lambda _change: self.show(0), names="value")
        pager = w.HBox([self.previous, self.page_label, self.following])
        pager.add_class("jt-pager")
        self.widget = w.VBox([self.only_problems, self.table, pager])
        self.show(0)

    @property
    def shown_model(self) -> ListingComparisonModel:
        return self.model.only_problems() if self.only_problems.value else self.model

    def show(self, page: int) -> None:
        model = self.shown_model
        pages = model.page_count(self.page_size)
        self.page = min(max(0, page), pages - 1)
        self.table.value = model.to_html(self.page, self.page_size)
        self.page_label.value = f"page {self.page + 1:,} of {pages:,}"
        self.previous.disabled = self.page == 0
        self.following.disabled = self.page >= pages - 1

    def _refresh(self, only_problems: bool) -> None:
        self.only_problems.value = only_problems
        self.show(0)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
