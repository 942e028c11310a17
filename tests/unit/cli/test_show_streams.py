"""``show`` writes a run as it draws it (``cli._show.run_lines``): its first lines are out before its messages are
drawn, and each message is drawn when the line before it was taken, so a run of 100,000 records starts printing
once it is folded. Observed through the generator and through what reaches standard output, never by timing."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.cli import _show as cli_show
from journaltools.cli import main
from journaltools.cli._show import account_of, run_lines, show_document
from journaltools.folding import FoldResult
from journaltools.protocol.blocks import Message
from tests.generated_runs import generated_run


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, FoldResult]:
    return generated_run(tmp_path_factory.mktemp("show-long-run"), 300, 5)


class Drawn:
    """``message_lines`` counting the messages it has drawn."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = cli_show.message_lines

        def counted(message: Message, **options: bool) -> list[str]:
            self.count += 1
            return real(message, **options)

        monkeypatch.setattr(cli_show, "message_lines", counted)


def test_each_message_is_drawn_only_when_the_lines_before_it_were_taken(
    long_run: tuple[Path, str, FoldResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    _root, run, result = long_run
    drawn = Drawn(monkeypatch)
    lines: Iterator[str] = run_lines(account_of(result), result)
    first = next(lines)
    assert first.startswith(f"run {run}: ") and drawn.count == 0
    taken = [first]
    while not taken[-1].startswith("\n[seq "):
        taken.append(next(lines))
    assert drawn.count == 0  # the first message's label comes before its body is drawn
    next(lines)
    assert drawn.count == 1
    rest = list(lines)
    assert drawn.count == len(result.messages) > 50
    assert len(taken) + 1 + len(rest) > len(result.messages)


def test_the_account_says_what_the_json_document_says(long_run: tuple[Path, str, FoldResult]) -> None:
    _root, _run, result = long_run
    document = show_document(result)
    account = account_of(result)
    assert {key: document[key] for key in account} == account
    assert list(run_lines(account, result)) == list(run_lines(document, result))


class Watched(io.StringIO):
    """Standard output noting how many messages were drawn when its first text came."""

    def __init__(self, drawn: Drawn) -> None:
        super().__init__()
        self.drawn = drawn
        self.drawn_at_first: int | None = None

    def write(self, text: str) -> int:
        if self.drawn_at_first is None:
            self.drawn_at_first = self.drawn.count
        return super().write(text)


def test_the_command_writes_its_first_lines_before_drawing_any_message(
    long_run: tuple[Path, str, FoldResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, run, result = long_run
    drawn = Drawn(monkeypatch)
    out = Watched(drawn)
    monkeypatch.setattr("sys.stdout", out)
    assert main(["show", str(root), run]) == 0
    assert out.drawn_at_first == 0 and drawn.count == len(result.messages)
    text = out.getvalue()
    assert text.startswith(f"run {run}: ") and text.count("\n[seq ") == len(result.messages)
