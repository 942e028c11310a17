"""Find in a run and jump to what went wrong (``exports.conversation_places``, ``ConversationView.find``): every
message of the run is looked through whatever its page, and every call that failed or waits is a place to go."""

from __future__ import annotations

import pytest

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.conversation_places import CALL_PLACES, find_seqs, haystack, targets_of
from journaltools.widgets import ConversationView
from tests.widget_journals import all_folds, browser_folds


@pytest.fixture(scope="module")
def models() -> dict[str, ConversationModel]:
    return {run: ConversationModel.from_fold(fold) for run, fold in {**all_folds(), **browser_folds()}.items()}


def test_find_keeps_the_messages_holding_every_word_and_only_those(models: dict[str, ConversationModel]) -> None:
    model = models["long-run"]
    called = next(part.call for message in model.messages for part in message.parts if part.call is not None)
    for query in (called.name, f"{called.name.upper()} {called.id[-4:]}", "no-such-word-anywhere", "   "):
        found = find_seqs(model, query)
        words = query.lower().split()
        expected = [m.seq for m in model.messages if words and all(word in haystack(m) for word in words)]
        assert found == expected
    assert find_seqs(model, called.name), "a tool's name is looked through"
    assert find_seqs(model, "   ") == [] and find_seqs(model, "no-such-word-anywhere") == []


def test_every_call_that_failed_or_waits_is_a_place_to_jump_to(models: dict[str, ConversationModel]) -> None:
    seen: set[str] = set()
    for model in models.values():
        labels = [target.label for target in targets_of(model)]
        calls = [
            (message.seq, part.call) for message in model.messages for part in message.parts if part.call is not None
        ]
        if model.pending is not None:
            calls += [(model.pending.seq, call) for call in model.pending.calls]
        for seq, call in calls:
            kind = "error" if call.is_error else call.state
            if kind in CALL_PLACES:
                assert f"{CALL_PLACES[kind]}: {call.name} (seq {seq})" in labels, model.run
                seen.add(kind)
        assert model.targets() == targets_of(model)
    assert {"error", "deferred", "waiting"} <= seen  # the corpora hold each kind


def test_the_view_finds_says_how_many_and_steps_through_them_on_any_page(
    models: dict[str, ConversationModel],
) -> None:
    model = models["long-run"]
    view = ConversationView(model)
    called = next(part.call for message in model.messages[::-1] for part in message.parts if part.call is not None)
    found = view.find(called.name)
    assert found and view.find_label.value == f"0 of {len(found):,}"
    last = len(found)
    for number in range(1, last + 1):
        seq = view.step_found(1)
        assert seq == found[number - 1] and view.find_label.value == f"{number:,} of {last:,}"
        assert f'id="jt-{model.uid}-seq-{model.anchor_seq(seq)}"' in view.body.value
    assert view.step_found(1) == found[0]  # round again
    assert view.step_found(-1) == found[-1]
    assert view.find("no-such-word-anywhere") == [] and view.find_label.value == "no match"
    assert view.find_next.disabled and view.step_found(1) is None
    view.find_box.value = called.name  # what Enter in the box does
    assert view.find_label.value == f"0 of {last:,}"
    view.show_model(models["terminal-error"])  # another run: found again in it
    assert view.find_label.value in ("no match", f"0 of {len(find_seqs(view.model, called.name)):,}")
