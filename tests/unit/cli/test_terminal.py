"""A clean terminal: journal content never reaches it with its control characters, whatever the content.

``show`` and ``ls`` print journal text escaped (``\\x1b``, ``\\u009b``, ``\\r``); ``--json`` stays exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools._base.text import for_terminal
from journaltools.cli import main
from journaltools.samples.builder import text, tool_use
from tests.builders import journal

#: What an attacker would put in a tool's output or a caller label: an OSC 52 clipboard write, a screen wipe,
#: a carriage return, a C1 CSI, a backspace, DEL and a right-to-left override.
HOSTILE = "\x1b]52;c;aGVsbG8=\x07 \x1b[2J\rwiped \x9b31m \x08\x7f \u202e"

# Any code point but lone surrogates (the Go encoder writes U+FFFD for them; a Python str cannot carry bytes).
any_text = st.text(st.characters(codec="utf-8", exclude_categories=()), max_size=30)


def terminal_output(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> str:
    """What ``journaltools ARGV`` puts on the terminal (stdout and stderr), decoded as the terminal would."""
    main(list(argv))
    captured = capsysbinary.readouterr()
    screen = captured.out + captured.err
    assert all(byte >= 0x20 or byte == 0x0A for byte in screen), "a raw C0 control byte"
    assert 0x7F not in screen, "a raw DEL byte"
    return screen.decode("utf-8")  # the output is UTF-8: a decoding error fails the test too


def assert_terminal_clean(shown: str) -> None:
    assert not any(0x80 <= ord(c) <= 0x9F for c in shown), "a raw C1 control character"
    assert "\u202e" not in shown and "\u2028" not in shown, "a raw bidi override or line separator"


def hostile_journal(run: str, texts: list[str]) -> bytes:
    built = journal(run, prompt=texts[0], caller=texts[1])
    call = tool_use("toolu_1", texts[2] or "tool", {texts[3]: texts[4]})
    built.assistant(text(texts[5]), call)
    built.result("toolu_1", texts[6], is_error=True)
    built.terminal("error", texts[7])
    return built.journal_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(any_text, min_size=8, max_size=8))
def test_show_and_ls_never_put_control_characters_on_the_terminal(
    texts: list[str], tmp_path_factory: pytest.TempPathFactory, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = tmp_path_factory.mktemp("terminal")
    (root / "probe.json").write_bytes(hostile_journal("probe", texts))
    for argv in (["show", str(root), "probe"], ["show", str(root), "probe", "--lenient"], ["ls", str(root)]):
        assert_terminal_clean(terminal_output(capsysbinary, *argv))


def test_escapes_are_readable_and_json_stays_exact(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    texts = ["please" + HOSTILE, "caller" + HOSTILE, "tool", "k", "v", "reply", "out" + HOSTILE, "overloaded" + HOSTILE]
    (tmp_path / "evil.json").write_bytes(hostile_journal("evil", texts))
    shown = terminal_output(capsysbinary, "show", str(tmp_path), "evil")
    assert "\\x1b]52;c;aGVsbG8=\\x07 \\x1b[2J\\rwiped \\u009b31m \\b\\x7f \\u202e" in shown
    assert_terminal_clean(shown)
    main(["show", str(tmp_path), "evil", "--json"])
    document = json.loads(capsysbinary.readouterr().out)
    assert document["messages"][0]["content"][0]["text"]["text"] == "please" + HOSTILE  # exact, as written
    assert document["terminal"]["message"] == "overloaded" + HOSTILE


def test_for_terminal_keeps_ordinary_text_and_newlines() -> None:
    ordinary = "Grüße, 世界 — naïve café\nsecond line\twith a tab"
    assert for_terminal(ordinary) == "Grüße, 世界 — naïve café\nsecond line\\twith a tab"
    assert for_terminal("a\nb", newlines=False) == "a\\nb"
    assert for_terminal("\ud800") == "\\ud800"
    assert for_terminal("\x00\x1b\x9b\u2028") == "\\x00\\x1b\\u009b\\u2028"
