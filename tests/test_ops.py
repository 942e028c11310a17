from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journaltools.backends.file import FileBackend, FileJournalWriter
from journaltools.errors import AlreadyAnswered, AnswerRefused, ClaimRefused
from journaltools.fold import fold
from journaltools.ops.answer import answer_call
from journaltools.ops.resume import claim_run
from journaltools.protocol.fingerprint import resume_gate, system_sha256
from journaltools.samples import SAMPLE_SYSTEM_PROMPT, SAMPLE_TOOLS, sample_fingerprint

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


@pytest.fixture
def samples(samples_dir: Path) -> FileBackend:
    return FileBackend(samples_dir)


def test_answering_a_deferred_call_writes_one_tool_result(samples: FileBackend) -> None:
    before = samples.path_of("suspended-approval").read_bytes()
    answered = answer_call(samples, "suspended-approval", "toolu_21", "deployed", ts="2026-11-29T12:00:00Z")
    assert answered.seq == 5
    after = samples.path_of("suspended-approval").read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    folded = fold(samples.read_run("suspended-approval").records)
    assert folded.status == "open" and folded.resume.waiting_for == "model"
    with pytest.raises(AlreadyAnswered) as twice:
        answer_call(samples, "suspended-approval", "toolu_21", "again")
    assert twice.value.result_seq == 5


def test_answer_refusals_take_no_lock_and_write_nothing(samples: FileBackend) -> None:
    before = samples.path_of("turn-in-flight").read_bytes()
    with samples.open_writer("turn-in-flight") as held:  # a lock held elsewhere does not matter for a refusal
        with pytest.raises(AnswerRefused, match="not deferred"):
            answer_call(samples, "turn-in-flight", "toolu_11", "x")
        with pytest.raises(AnswerRefused, match="no such call"):
            answer_call(samples, "turn-in-flight", "toolu_99", "x")
        assert held.last_seq == 3
    assert samples.path_of("turn-in-flight").read_bytes() == before


def test_claim_lands_before_anything_and_the_runner_continues_after_it(samples: FileBackend) -> None:
    resumed = claim_run(samples, "turn-in-flight", "worker-z")
    with resumed.writer as writer:
        assert resumed.claim_seq == 4 and writer.last_seq == 4
    folded = fold(samples.read_run("turn-in-flight").records)
    assert [call.id for call in folded.pending] == ["toolu_11", "toolu_12"], "the claim left the batch pending"


def test_a_claim_that_cannot_land_is_fatal(samples: FileBackend) -> None:
    with samples.open_writer("turn-in-flight"), pytest.raises(ClaimRefused):
        claim_run(samples, "turn-in-flight", "worker-z")


def test_gate_classes() -> None:
    folded = fold(
        FileBackend(Path(__file__).parent.parent / "data" / "samples").read_run("completed-with-tools").records
    )
    stored = folded.meta.fingerprint if folded.meta else None
    assert stored is not None
    same = {**sample_fingerprint(), "system": SAMPLE_SYSTEM_PROMPT}
    same.pop("system_sha256")
    assert resume_gate(stored, same, folded).resumable

    verdicts = {v.field: v.verdict for v in resume_gate(stored, {**same, "model": "other"}, folded).fields}
    assert verdicts["model"] == "refused"
    assert not resume_gate(stored, {**same, "system": "changed"}, folded).resumable
    hotter = {**same, "temperature": 0.9}
    assert not resume_gate(stored, hotter, folded).resumable
    assert resume_gate(stored, hotter, folded, override_blocking=True).resumable

    tools = dict(same["tools"])
    tools["new_tool"] = system_sha256("x")
    del tools["deploy"]  # never called by this run
    assert resume_gate(stored, {**same, "tools": tools}, folded).resumable
    tools["run_tests"] = system_sha256("changed schema")  # called by this run
    refused = resume_gate(stored, {**same, "tools": tools}, folded)
    assert not refused.resumable and "run_tests" in next(v.why for v in refused.fields if v.field == "tools")

    tight = resume_gate(stored, {**same, "budget": {"max_turns": 1}}, folded)
    budget = next(v for v in tight.fields if v.field == "budget")
    assert tight.resumable and budget.verdict == "exceeded" and "2 turns" in budget.why


class AnsweredMeanwhile(FileBackend):
    """A backend where an operator answers the deferred call between the resume's read and its claim."""

    def open_writer(self, run: str) -> FileJournalWriter:
        answer_call(FileBackend(self.root), run, "toolu_21", "deployed by hand")
        return super().open_writer(run)


def test_a_resume_that_raced_an_answer_returns_the_fold_after_its_claim(samples: FileBackend) -> None:
    resumed = claim_run(AnsweredMeanwhile(samples.root), "suspended-approval", "worker-z")
    with resumed.writer:
        assert resumed.claim_seq == 6
    assert resumed.folded.resume.last_seq == 6 and resumed.folded.status == "open"
    assert resumed.folded.pending == [] and resumed.folded.resume.waiting_for == "model"


# -- the resume reminder: appended after the fingerprint, so it can never change a verdict ---------------------


def _candidate(**changes: object) -> dict[str, Any]:
    config: dict[str, Any] = {**sample_fingerprint(), "system": SAMPLE_SYSTEM_PROMPT}
    config.pop("system_sha256")
    config.update(changes)
    return config


candidate_changes = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["claude-sonnet-4-5", "claude-opus-4"]),
        "system": st.sampled_from([SAMPLE_SYSTEM_PROMPT, SAMPLE_SYSTEM_PROMPT + " ", "another prompt"]),
        "temperature": st.sampled_from([0.2, 0.9]),
        "max_tokens": st.sampled_from([4096, 1024]),
        "top_p": st.just(0.5),
        "tools": st.dictionaries(
            st.sampled_from(["read_file", "run_tests", "deploy", "new_tool"]),
            st.sampled_from([*SAMPLE_TOOLS.values(), system_sha256("changed")]),
        ),
        "budget": st.fixed_dictionaries({}, optional={"max_turns": st.integers(0, 30), "max_tokens": st.integers()}),
    },
)


@settings(max_examples=200)
@given(
    changes=candidate_changes,
    reminder=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200),
    run=st.sampled_from(["completed-with-tools", "turn-in-flight", "suspended-approval"]),
    override=st.booleans(),
)
def test_no_reminder_changes_any_verdict(changes: dict[str, Any], reminder: str, run: str, override: bool) -> None:
    folded = fold(FileBackend(SAMPLES).read_run(run).records)
    assert folded.meta is not None
    config = _candidate(**changes)
    without = resume_gate(folded.meta.fingerprint, config, folded, override_blocking=override)
    with_reminder = resume_gate(
        folded.meta.fingerprint, {**config, "reminder": reminder}, folded, override_blocking=override
    )
    assert with_reminder.resumable == without.resumable
    assert [v.to_json() for v in with_reminder.fields] == [v.to_json() for v in without.fields]
    assert with_reminder.system == config["system"] + reminder and without.system == config["system"]
    digest = next(v for v in with_reminder.fields if v.field == "system_sha256")
    assert digest.candidate == system_sha256(config["system"])  # the prompt alone is hashed


def test_a_resume_with_a_reminder_hands_the_runner_prompt_plus_reminder(samples: FileBackend) -> None:
    reminder = "\n\nThis run was resumed; its last turn's tool calls still need results."
    resumed = claim_run(samples, "turn-in-flight", "worker-z", config=_candidate(reminder=reminder))
    with resumed.writer:
        assert resumed.gate is not None and resumed.gate.resumable
        assert resumed.system_prompt == SAMPLE_SYSTEM_PROMPT + reminder
    with pytest.raises(ClaimRefused, match="system_sha256"):  # pasted into the prompt, it is a changed prompt
        claim_run(samples, "turn-in-flight", "worker-z", config=_candidate(system=SAMPLE_SYSTEM_PROMPT + reminder))
