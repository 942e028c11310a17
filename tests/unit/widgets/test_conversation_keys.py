"""Find and one-key jumps in both notebook views of a conversation, driven from Python as their pages drive them:
``ConversationView`` (ipywidgets: a key comes back through its hidden box, ``conversation_keys``) and
``ConversationSurface`` (anywidget: the page sends ``find``, ``found`` and ``key``). Each lands on the page and marks
the message ``find_seqs`` and ``targets_of`` name, on every bundled sample; every face reads the one key table."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from journaltools.exports.conversation import ConversationModel
from journaltools.exports.conversation_places import (
    CALL_PLACES,
    FIND_BOX_KEY,
    FIND_STEPS,
    JUMPS,
    Target,
    find_seqs,
    targets_of,
)
from journaltools.exports.report_page import REPORT_SCRIPT
from journaltools.widgets import ConversationSurface, ConversationView
from journaltools.widgets.conversation_keys import KEY_ACTIONS, SCRIPT
from journaltools.widgets.conversation_surface import FIND_FIELD, KEYS
from journaltools.widgets.surface import ESM
from tests.widget_journals import SCRIPT as HOSTILE

SAMPLES = Path(__file__).resolve().parents[3] / "data" / "samples"
#: Small pages, so that most places are on a page other than the first.
PAGE = 2


@pytest.fixture(scope="module")
def models() -> dict[str, ConversationModel]:
    runs = sorted(path.stem for path in SAMPLES.glob("*.json"))
    return {run: ConversationModel.from_source(SAMPLES, run, page_size=PAGE) for run in runs}


def marked_seqs(page: str) -> list[int]:
    """The seqs of the messages a page marks (the message jumped or stepped to)."""
    return [int(seq) for seq in re.findall(r'class="[^"]*\bjt-target\b[^"]*" id="jt-\w+-seq-(\d+)"', page)]


def places(model: ConversationModel, kind: str) -> list[Target]:
    """The places of ``kind`` in journal order, as a reader pressing its key meets them."""
    return [
        target
        for _seq, _index, target in sorted((t.seq, i, t) for i, t in enumerate(targets_of(model)) if t.jump == kind)
    ]


def pressed(view: ConversationView, key: str, times: list[int]) -> None:
    """What ``conversation_keys.SCRIPT`` does for a key: ``<nonce> key <key>`` written into the hidden box."""
    times.append(len(times))
    view.keys.value = f"{len(times)}-0.5 key {key}"


def test_each_place_is_of_the_kind_its_label_says(models: dict[str, ConversationModel]) -> None:
    named = {
        "error": CALL_PLACES["error"],
        "deferral": CALL_PLACES["deferred"],
        "approval": CALL_PLACES["approved once"],
    }
    seen = set()
    for model in models.values():
        for target in targets_of(model):
            seen.add(target.jump)
            if target.jump in named:
                assert target.label.startswith(named[target.jump] + ":"), target
            elif target.jump == "pending call":
                assert target.label.startswith((CALL_PLACES["waiting"], "the turn in flight")), target
            elif target.jump == "process run":
                assert target.label.startswith("process run #"), target
            else:
                assert target.jump == "" and not target.label.startswith(tuple(CALL_PLACES.values())), target
    assert seen == {"", *(kind for _key, kind in JUMPS)}  # the samples hold every kind


def test_a_key_in_the_view_pages_to_each_place_of_its_kind_in_turn_and_marks_it(
    models: dict[str, ConversationModel],
) -> None:
    for run, model in models.items():
        view, times = ConversationView(model), []
        for key, kind in JUMPS:
            expected = places(model, kind)
            for place in [*expected, *expected[:1]]:  # round again past the last
                pressed(view, key, times)
                assert view.start == model.window_start(place.seq), (run, key, place)
                assert marked_seqs(view.body.value) == [model.anchor_seq(place.seq)], (run, key, place)
            if not expected:
                before = view.body.value
                pressed(view, key, times)
                assert view.body.value == before  # a kind the run has none of: nothing moves


def test_a_jump_goes_on_from_the_place_last_reached_by_any_key_or_jump_to(models: dict[str, ConversationModel]) -> None:
    model = models["newest-next-turn-in-flight"]
    view = ConversationView(model)
    runs, pending = places(model, "process run"), places(model, "pending call")
    assert len(runs) == 2 and pending
    view.jump.value = view._targets.index(runs[-1])  # "jump to" the last process run
    assert view.jump_next("p") == next(place for place in pending if place.seq >= runs[-1].seq)
    assert view.jump_next("r") == runs[0]  # past the last: round again
    assert view.jump_next("?") is None


def test_n_and_shift_n_step_through_what_was_found(models: dict[str, ConversationModel]) -> None:
    model = models["interactive-follow-ups"]
    query = "ORDERS"  # in most messages, on every page; any case
    found = find_seqs(model, query)
    assert len(found) > PAGE
    view, times = ConversationView(model), []
    view.find_box.value = query
    for number in (1, 2):
        pressed(view, "n", times)
        assert view.find_label.value == f"{number} of {len(found)}"
        assert marked_seqs(view.body.value) == [model.anchor_seq(found[number - 1])]
    pressed(view, "N", times)
    assert view.find_label.value == f"1 of {len(found)}"
    for nonsense in ("x key e", "1 click e", "1 key /", "1 key <b>"):
        view.keys.value = nonsense  # not shaped as the script sends a key, or no key it sends: let go
    assert view.find_label.value == f"1 of {len(found)}"


def test_every_face_reads_the_one_key_table() -> None:
    jump_keys = [key for key, _kind in JUMPS]
    code = html.unescape(re.fullmatch(r'<img alt="" hidden src="data:," onerror="(.*)">', SCRIPT, re.S).group(1))
    assert json.dumps([*jump_keys, *FIND_STEPS]) in code and f"findKey = {json.dumps(FIND_BOX_KEY)}" in code
    assert f".{KEY_ACTIONS} input" in code
    assert KEYS.split() == [*jump_keys, *FIND_STEPS, FIND_BOX_KEY]
    kinds = json.loads(re.search(r"var kinds = (\{.*?\}), runKey = (\"\w\")", REPORT_SCRIPT).group(1))
    run_key = json.loads(re.search(r"runKey = (\"\w\")", REPORT_SCRIPT).group(1))
    assert [*kinds, run_key] == jump_keys
    assert f"findSteps = {json.dumps(FIND_STEPS)}" in REPORT_SCRIPT
    view = ConversationView(ConversationModel.from_source(SAMPLES, "terminal-error"))
    assert KEY_ACTIONS in view.keys._dom_classes and any(
        getattr(c, "value", None) == SCRIPT for c in view.widget.children
    )
    assert "data-jt-keys" in ESM and "data-jt-enter" in ESM


def sent(surface: ConversationSurface, action: str, argument: str = "") -> None:
    """What the surface's front end sends for a click, a key or a field: one custom message."""
    surface.widget._on_message(surface.widget, {"act": action, "arg": argument}, [])


def test_the_surface_finds_and_jumps_as_the_ipywidgets_view_does(models: dict[str, ConversationModel]) -> None:
    for run, model in models.items():
        surface, view = ConversationSurface(model), ConversationView(model)
        assert f'data-jt-keys="{KEYS}"' in surface.widget.html
        for key, _kind in JUMPS:
            for _ in range(len(places(model, _kind)) + 1):
                sent(surface, "key", key)
                view.jump_next(key)
                assert surface.place.start == view.start, (run, key)
                assert marked_seqs(surface.widget.html) == marked_seqs(view.body.value), (run, key)
        call = next((part.call for m in model.messages for part in m.parts if part.call is not None), None)
        query = call.name if call is not None else model.messages[0].parts[0].text[:6]
        sent(surface, "find", query)
        view.find(query)
        found = find_seqs(model, query)
        assert f'<span class="jt-find-count" aria-live="polite">{view.find_label.value}</span>' in surface.widget.html
        for action, argument, step in (("found", "1", 1), ("key", "n", 1), ("key", "N", -1), ("found", "-1", -1)):
            sent(surface, action, argument)
            seq = view.step_found(step)
            assert seq in found and marked_seqs(surface.widget.html) == [model.anchor_seq(seq)], (run, action)
            assert f">{view.find_label.value}</span>" in surface.widget.html


def test_the_find_box_takes_the_keyboard_once_and_its_text_is_escaped(models: dict[str, ConversationModel]) -> None:
    surface = ConversationSurface(models["terminal-error"])
    sent(surface, "key", FIND_BOX_KEY)
    assert f'data-jt-focus="{FIND_FIELD}"' in surface.widget.html
    sent(surface, "find", HOSTILE)
    assert "data-jt-focus" not in surface.widget.html
    assert HOSTILE not in surface.widget.html and html.escape(HOSTILE, quote=True) in surface.widget.html
    assert ">no match</span>" in surface.widget.html
    sent(surface, "found", "1")
    sent(surface, "key", "x")  # no key of the table
    assert ">no match</span>" in surface.widget.html
