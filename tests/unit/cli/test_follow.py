"""``show --follow`` and ``ls --watch`` on file journals, as processes: records appended by the project's own writer
appear once each, in order, with their effect; a torn tail completed later is read once; a journal that turns
corrupt, is deleted or replaced says so; Ctrl-C ends with exit 0 and no traceback. Every wait is on an output line."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.goencoding.time import now_go_time
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import AUGUST, NEWEST, Generation
from journaltools.samples.builder import JournalBuilder, calls_of, text, tool_use
from journaltools.samples.stories import sample_fingerprint
from journaltools.sources.file import FileBackend, FileJournalWriter
from tests.builders import CLAIMANT, CLAIMED
from tests.follow_process import Watched, count_holding

RUN = "run-1"
TOKEN = "conversation-secret-7f3e"


def _builder(generation: Generation) -> JournalBuilder:
    return JournalBuilder(
        RUN,
        prompt="follow me",
        created="2026-11-29T10:00:00.123456789+01:00",
        fingerprint=sample_fingerprint(),
        conversation_token=TOKEN,
        generation=generation,
        clock=now_go_time,
    )


def _follow(watched: list[Watched], *argv: str) -> Watched:
    process = Watched(*argv)
    watched.append(process)
    return process


def _create(tmp_path: Path, built: JournalBuilder) -> FileJournalWriter:
    writer = FileBackend(tmp_path, create=True).create_journal(RUN, built.meta)
    assert isinstance(writer, FileJournalWriter)
    return writer


@pytest.mark.parametrize("generation", [AUGUST, NEWEST], ids=["august", "newest"])
def test_each_appended_record_appears_once_with_its_effect_until_the_run_ends(
    tmp_path: Path, watched: list[Watched], generation: Generation
) -> None:
    built = _builder(generation)
    writer = _create(tmp_path, built)
    follow = _follow(watched, "show", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    turn = built.assistant(text("looking"), tool_use("toolu_a", "lookup", {"q": 1}), tool_use("toolu_b", "ask", {}))
    writer.append(turn)
    follow.until("[seq 2] assistant")
    first, second = calls_of(turn)
    for record in (built.result(first, "found it"), built.deferred(second, note="needs a person", handle="T-9")):
        writer.append(record)
        follow.until(f"[seq {record.seq}]")
    # The runtime writes its memory revisions right after the terminal: both are shown, then the follow ends.
    writer.close()
    with (tmp_path / f"{RUN}.json").open("ab") as journal:
        journal.write(encode_record(built.terminal("suspended", "waiting for T-9")) + b"\n")
        journal.write(encode_record(built.memory_revisions({"notes": 3})) + b"\n")
    follow.until("[seq 5] terminal: suspended")
    rest = follow.rest()
    assert follow.wait() == 0
    # The newest line lists a run that journaled anything after its terminal open again; August lists the terminal.
    ending = "run ended: suspended (status open)" if generation is NEWEST else "run ended: suspended"
    assert rest[-1] == ending, rest
    lines = follow.lines
    assert count_holding(lines, "[seq 6] memory revisions: 1 key(s)") == 1
    for seq in range(2, 6):
        assert count_holding(lines, f"[seq {seq}]") == 1, lines
    answer = next(line for line in lines if "[seq 3]" in line)
    assert "<- lookup [toolu_a]" in answer and "found it" in answer
    assert "deferred ask [toolu_b]: needs a person [handle T-9]" in next(line for line in lines if "[seq 4]" in line)
    if generation is AUGUST:  # the newest line's status may never leave open: the revisions came with the terminal
        assert any("status: open -> suspended" in line for line in lines)
    # The newest line dates every record: how long after its append each was shown is said; August's are undated.
    timed = [line for line in lines if "after it was journaled" in line]
    assert len(timed) == (5 if generation is NEWEST else 0)
    if generation is NEWEST:
        assert " after " in answer.split("found it")[0]  # the call's duration, by the runtime's rule
    assert all(TOKEN not in line for line in lines)


def test_ctrl_c_ends_the_follow_with_exit_0_and_no_traceback(tmp_path: Path, watched: list[Watched]) -> None:
    built = _builder(NEWEST)
    _create(tmp_path, built).close()
    follow = _follow(watched, "show", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    assert follow.interrupt() == 0
    assert "Traceback" not in follow.stderr()


def test_a_torn_tail_completed_later_is_read_once(tmp_path: Path, watched: list[Watched]) -> None:
    built = _builder(NEWEST)
    writer = _create(tmp_path, built)
    follow = _follow(watched, "show", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    writer.close()  # the writer dies mid-line: half a record, no newline
    user = built.user("are you there?")
    path = tmp_path / f"{RUN}.json"
    with path.open("ab") as journal:
        journal.write(encode_record(user)[:20])
    follow.until("does not decode")
    # A resumed writer of this project cuts the torn tail off and writes the record whole.
    with FileBackend(tmp_path).open_writer(RUN) as resumed:
        resumed.append(user)
        follow.until("[seq 2] user")
        resumed.append(built.claim(CLAIMANT, CLAIMED))
        follow.until("[seq 3] claimed by")
    assert follow.interrupt() == 0
    assert count_holding(follow.lines, "[seq 2]") == 1
    assert count_holding(follow.lines, "are you there?") == 1


def test_a_tail_the_runtime_resumed_after_makes_the_journal_invalid_with_a_line_saying_why(
    tmp_path: Path, watched: list[Watched]
) -> None:
    # The runtime appends after a torn tail without cutting it: once a record follows, the torn bytes are an
    # interior line the runtime refuses. The follow says so, and goes on, the run invalid.
    built = _builder(NEWEST)
    writer = _create(tmp_path, built)
    writer.close()
    follow = _follow(watched, "show", "--lenient", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    path = tmp_path / f"{RUN}.json"
    user = built.user("first")
    with path.open("ab") as journal:
        journal.write(encode_record(user)[:25])
    follow.until("does not decode")
    with path.open("ab") as journal:
        journal.write(encode_record(user) + b"\n")
        journal.write(encode_record(built.user("second")) + b"\n")
    follow.until("status: open -> invalid")
    assert any("resumed_after_torn_tail" in line for line in follow.lines)
    assert any("[seq 3] user" in line for line in follow.lines)
    assert follow.interrupt() == 0


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_journal_deleted_or_replaced_ends_the_follow_with_a_clear_line(
    tmp_path: Path, watched: list[Watched], how: str
) -> None:
    built = _builder(NEWEST)
    _create(tmp_path, built).close()
    follow = _follow(watched, "show", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    path = tmp_path / f"{RUN}.json"
    if how == "deleted":
        path.unlink()
    else:
        replacement = tmp_path / "other.tmp"
        replacement.write_bytes(path.read_bytes())
        replacement.replace(path)
    line = follow.until("stopped following")[-1]
    assert f"was {how}" in line
    assert follow.wait() == 1


def test_journal_content_is_escaped_on_the_terminal(tmp_path: Path, watched: list[Watched]) -> None:
    built = _builder(NEWEST)
    writer = _create(tmp_path, built)
    follow = _follow(watched, "show", "--follow", str(tmp_path), RUN)
    follow.until("--- following")
    writer.append(built.user("red \x1b[31malert\x1b[0m and a bell \x07"))
    shown = follow.until("[seq 2] user")
    shown += follow.until("alert")
    assert all("\x1b" not in line and "\x07" not in line for line in shown)
    assert follow.interrupt() == 0


def test_ls_watch_redraws_when_a_run_changes(tmp_path: Path, watched: list[Watched]) -> None:
    built = _builder(NEWEST)
    writer = _create(tmp_path, built)
    listing = _follow(watched, "ls", "--watch", str(tmp_path))
    listing.until("watching since")
    writer.append(built.terminal("completed"))
    redrawn = listing.until("watching since")
    assert any("the runs changed" in line for line in redrawn)
    assert any(RUN in line and "completed" in line for line in redrawn)
    assert listing.interrupt() == 0
    assert "Traceback" not in listing.stderr()
