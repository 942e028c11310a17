"""A clean terminal: journal content never reaches it with its control characters, whatever the content.

``show`` and ``ls`` print journal text escaped (``\\x1b``, ``\\u009b``, ``\\r``); ``--json`` stays exact.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools._terminal import for_terminal
from journaltools.cli import main
from tests.builders import JournalBuilder
from tests.test_hostile import HOSTILE, assert_terminal_clean, hostile_journal

# Any code point at all, lone surrogates included (JSON can carry them as \\ud800 escapes).
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)


def terminal_output(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> str:
    """What ``journaltools ARGV`` puts on the terminal (stdout and stderr), decoded as the terminal would."""
    main(list(argv))
    captured = capsysbinary.readouterr()
    screen = captured.out + captured.err
    assert all(byte >= 0x20 or byte == 0x0A for byte in screen), "a raw C0 control byte"
    assert 0x7F not in screen, "a raw DEL byte"
    return screen.decode("utf-8")  # the output is UTF-8: a decoding error fails the test too


def _line(body: dict[str, Any], ascii_only: bool) -> bytes:
    # ensure_ascii writes every non-ASCII character as an escape (the only way for a lone surrogate)
    return json.dumps(body, ensure_ascii=ascii_only, separators=(",", ":")).encode("utf-8", "surrogatepass")


@st.composite
def hostile_runs(draw: st.DrawFn) -> bytes:
    """A journal whose every string field is arbitrary text; sometimes a line also carries raw arbitrary bytes."""
    texts = [draw(any_text) for _ in range(10)]
    journal = JournalBuilder("probe")
    journal.bodies[0]["fingerprint"] = {**journal.bodies[0]["fingerprint"], "model": texts[0]}
    journal.bodies[0]["labels"] = {texts[1]: texts[2]}
    journal.user(texts[3])
    journal.add(
        "assistant",
        content=[
            {"type": "text", "text": texts[4]},
            {"type": "tool_use", "id": "toolu_1" + texts[5], "name": texts[6], "input": {texts[7]: texts[8]}},
        ],
        stop_reason="tool_use",
        usage={"input_tokens": 1, "output_tokens": 1},
    )
    journal.result("toolu_1" + texts[5], texts[9])
    ending = draw(st.sampled_from(["error", "cancel", "note"]))
    if ending == "error":
        journal.add("error", where="tool", message=draw(any_text), fatal=True)
    elif ending == "cancel":
        journal.add("cancel", by=draw(any_text), reason=draw(any_text))
    else:
        journal.add("note", text=draw(any_text), optional=True)
    ascii_only = draw(st.booleans()) or any(0xD800 <= ord(c) <= 0xDFFF for text in texts for c in text)
    lines = [_line(body, ascii_only) for body in journal.bodies]
    if draw(st.booleans()):  # raw bytes inside a string: invalid UTF-8, raw controls, anything
        at = draw(st.integers(1, len(lines) - 1))
        raw = draw(st.binary(max_size=20)).replace(b'"', b"").replace(b"\\", b"").replace(b"\n", b"")
        lines[at] = lines[at].replace(b'"ts":"', b'"junk":"' + raw + b'","ts":"', 1)
    return b"\n".join(lines) + b"\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(journal=hostile_runs())
def test_show_and_ls_never_put_control_characters_on_the_terminal(
    journal: bytes, tmp_path_factory: pytest.TempPathFactory, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = tmp_path_factory.mktemp("terminal")
    (root / "probe.jsonl").write_bytes(journal)
    for argv in (["show", str(root), "probe"], ["show", str(root), "probe", "--lenient"], ["ls", str(root)]):
        assert_terminal_clean(terminal_output(capsysbinary, *argv))


def test_escapes_are_readable_and_json_stays_exact(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (tmp_path / "evil.jsonl").write_bytes(hostile_journal("evil").bytes())
    shown = terminal_output(capsysbinary, "show", str(tmp_path), "evil")
    assert "please\\x1b]52;c;aGVsbG8=\\x07 \\x1b[2J\\rwiped \\u009b31m \\b\\x7f \\u202e" in shown
    main(["show", str(tmp_path), "evil", "--json"])
    document = json.loads(capsysbinary.readouterr().out)
    assert document["messages"][0]["content"] == "please" + HOSTILE  # exact, every character as written
    assert document["end_reason"]["message"] == "overloaded" + HOSTILE


def test_for_terminal_keeps_ordinary_text_and_newlines() -> None:
    text = "Grüße, 世界 — naïve café\nsecond line\twith a tab"
    assert for_terminal(text) == "Grüße, 世界 — naïve café\nsecond line\\twith a tab"
    assert for_terminal("a\nb", newlines=False) == "a\\nb"
    assert for_terminal("\ud800") == "\\ud800"
    assert for_terminal("\x00\x1b\x9b\u2028") == "\\x00\\x1b\\u009b\\u2028"
