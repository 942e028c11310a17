"""Journals the widget tests share: the real corpus' scenarios folded, and one hostile journal built from typed
values (every text it carries is markup, with a conversation token and a signed thinking block)."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path

import msgspec

from journaltools.audits.turns import TurnFinding
from journaltools.errors import UndecodableLine
from journaltools.folding import FoldResult, fold
from journaltools.protocol.blocks import Block, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from journaltools.protocol.decode import decode_line
from journaltools.protocol.kinds import (
    Assistant,
    Claim,
    Deferred,
    Fingerprint,
    Meta,
    Record,
    Terminal,
    ToolResult,
    make_record,
)
from journaltools.widgets.turns import TurnCheckpointsModel, TurnRow
from tests.paths import TESTS

CORPUS = TESTS / "corpus" / "runstate"
SCRIPT = "<script>window.pwned = 1</script>"
TOKEN = "tok-SECRET-9f8e7d6c5b4a"


@cache
def scenario_ids() -> dict[str, str]:
    """Scenario name → run id, from the corpus' scenarios.jsonl."""
    with open(CORPUS / "scenarios.jsonl", encoding="utf-8") as lines:
        return {entry["scenario"]: entry["run_id"] for entry in map(json.loads, lines)}


@cache
def corpus_records(scenario: str) -> tuple[Record, ...]:
    """The records of one corpus journal, split and decoded here (a line Go refuses is left out)."""
    return journal_records(f"file/{scenario_ids()[scenario]}.json")


@cache
def journal_records(path: str) -> tuple[Record, ...]:
    """The records of the journal at ``path`` in tests/corpus/runstate (a line Go refuses is left out)."""
    records = []
    for line in (CORPUS / path).read_bytes().split(b"\n"):
        if not line:
            continue
        try:
            records.append(decode_line(line).record)
        except UndecodableLine:
            continue
    return tuple(records)


#: Real runs, one of each build, that a new turn follows after their ending: their status carries a detail
#: ("open", then "next turn in flight").
STALE_TERMINAL_RUNS = ("random/3FyljN8OvVnGwOo6qP5222mgnCv.json", "newest/random/3MtgeTxn44iWRpP2WHX0YyvdV62.json")

#: A real run whose status changed thirteen times (what TimeTravel's buttons step to).
MANY_CHANGES_RUN = "random/3GgYkEqrsYaI43i1d8Y9faXF9Hp.json"


@cache
def browser_folds() -> dict[str, FoldResult]:
    """What the browser tests browse: every scenario, the two stale-terminal runs, and a run whose prompt is
    markup."""
    stale = {Path(path).stem: fold(journal_records(path), strict=False) for path in STALE_TERMINAL_RUNS}
    return {**all_folds(), **stale, "hostile-prompt": fold(hostile_records(), strict=False, run="hostile-prompt")}


def corpus_fold(scenario: str) -> FoldResult:
    """The fold of a scenario's journal named by the scenario (so each also has a ``run_id_mismatch`` finding)."""
    return fold(corpus_records(scenario), strict=False, run=scenario)


@cache
def all_folds() -> dict[str, FoldResult]:
    return {scenario: corpus_fold(scenario) for scenario in scenario_ids()}


FINGERPRINT = Fingerprint(
    provider="anthropic",
    model="claude-<b>model</b>",
    system_hash="a" * 64,
    tools_hash="b" * 64,
    thinking_mode="off",
    max_tokens=0,
    max_iterations=25,
)


def assistant_at(seq: int, iteration: int, *blocks: Block, stop: str = "tool_use") -> Record:
    message = Message(role="assistant", content=list(blocks))
    return make_record(
        seq, Assistant(iteration=iteration, message=message, stop_reason=stop, in_tokens=10, out_tokens=5)
    )


def tool_use(call_id: str, name: str, raw: bytes) -> Block:
    return Block(tool_use=ToolUseBlock(id=call_id, name=name, input=msgspec.Raw(raw)))


def result_at(seq: int, call_id: str, content: str, is_error: bool = False) -> Record:
    block = ToolResultBlock(tool_use_id=call_id, content=content, is_error=is_error)
    return make_record(seq, ToolResult(tool_use_id=call_id, result=block))


def hostile_records() -> list[Record]:
    """A journal whose every tool- and caller-written text is markup, with a conversation token and a signed
    thinking block: an interactive run resumed mid-batch that ends suspended on a deferred call."""
    meta = Meta(
        version=3,
        run_id="hostile",
        created="2026-08-21T23:36:20.123456789+02:00",
        fingerprint=FINGERPRINT,
        prompt=f"prompt {SCRIPT}",
        interactive=True,
        conversation_token=TOKEN,
        caller=f"caller {SCRIPT}",
    )
    thinking = Block(thinking=ThinkingBlock(text="pondering <b>", signature=b"SIGNATURE-BYTES-xyz"))
    return [
        make_record(1, meta),
        assistant_at(
            2,
            0,
            thinking,
            Block(text=TextBlock(text=f"answer {SCRIPT}")),
            tool_use("c1", "<img src=x onerror=alert(1)>", b'{"cmd":"<script>x</script>","n":1.50e3}'),
            tool_use("c2", "shell", b'{"cmd":"ls"}'),
        ),
        result_at(3, "c1", f"output {SCRIPT}", is_error=True),
        make_record(4, Claim(by=f"by {SCRIPT}", claimed="2026-08-22T08:00:00Z")),
        make_record(5, Deferred(tool_use_id="c2", tool_name="shell", note=f"note {SCRIPT}", handle=f"handle {SCRIPT}")),
        make_record(6, Terminal(reason="suspended", message=f"message {SCRIPT}")),
    ]


def assert_safe(html: str) -> None:
    """No markup from the journal, no token and no signature in a page."""
    assert "<script" not in html and "<img" not in html
    assert TOKEN not in html and "SECRET" not in html
    assert "SIGNATURE-BYTES" not in html and base64.b64encode(b"SIGNATURE-BYTES-xyz").decode() not in html


#: A task id as long as agent-harness-go's real ones.
LONG_TASK = "wksp-2026-08-21-production-billing/" + "t" * 60 + "-rotate-credentials-for-the-billing-service"
ARROW_INPUT = rb'{"expr":"1 -\u003e 3","note":"a \u0026 b"}'


def six_process_runs() -> list[Record]:
    """A run resumed five times by hosts with long names, with a long caller: its header must wrap, not clip."""
    meta = Meta(
        version=3,
        run_id="six-process-runs",
        created="2026-08-21T09:00:00Z",
        fingerprint=FINGERPRINT,
        prompt="rotate the credentials",
        caller="scheduler@" + "very-long-host-name-of-the-production-cluster-" * 3,
    )
    records = [make_record(1, meta), assistant_at(2, 0, tool_use("c1", "calc", ARROW_INPUT))]
    seq = 3
    for n in range(5):
        claim = Claim(by=f"worker-{n}@host-{'x' * 30} pid {1000 + n}", claimed=f"2026-08-2{n + 1}T10:00:00Z")
        records.append(make_record(seq, claim))
        seq += 1
    records.append(result_at(seq, "c1", "3"))
    return records


def long_id_turns() -> TurnCheckpointsModel:
    """Turn checkpoints of real-length task ids: every table must shorten them in the middle, not widen."""
    finding = TurnFinding("ws", LONG_TASK, 3, "turn_call_requested", "warning", "a call waits for an operator")
    rows = [
        TurnRow(f"k{n}", "ws-" + "w" * 50, f"{LONG_TASK}-{n}", "awaiting_tool", 3, "host-" + "h" * 60, 75.0, 2, True,
                (finding,), ())
        for n in range(3)
    ]  # fmt: skip
    return TurnCheckpointsModel("agent-harness-go state", rows, [])
