"""The run browser's table read back from its HTML (``runs_page.table_html``), cell by cell, as a reader sees it."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any


@dataclass
class Cell:
    text: str
    title: str
    classes: tuple[str, ...]
    tabbable: bool
    action: str
    argument: str


@dataclass
class Line:
    classes: tuple[str, ...]
    cells: list[Cell] = field(default_factory=list)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[Line] = []
        self._cell: dict[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        classes = tuple(found.get("class", "").split())
        if tag == "div" and ("jt-tr" in classes or "jt-thead" in classes):
            self.lines.append(Line(classes))
        elif tag == "button":
            self._cell, self._text = found, []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._cell is not None:
            found = self._cell
            self.lines[-1].cells.append(
                Cell(
                    "".join(self._text),
                    found.get("title", ""),
                    tuple(found.get("class", "").split()),
                    found.get("tabindex") == "0",
                    found.get("data-jt-act", ""),
                    found.get("data-jt-arg", ""),
                )
            )
            self._cell = None


def table_lines(browser: Any) -> list[Line]:
    """The header line, then one line per row shown."""
    reader = _Reader()
    reader.feed(browser.table.value)
    return reader.lines


def headers(browser: Any) -> list[Cell]:
    return table_lines(browser)[0].cells


def rows(browser: Any) -> list[list[Cell]]:
    return [line.cells for line in table_lines(browser)[1:]]


def shown_runs(browser: Any) -> list[str]:
    """The run of each row shown, whole (its cells' action argument)."""
    return [cells[0].argument for cells in rows(browser)]
