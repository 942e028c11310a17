"""The fold against the real runtime's: every journal of the corpus folds to the state Go's Fold returned."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from journaltools.errors import FoldError
from journaltools.folding import fold
from journaltools.protocol.kinds import Record
from tests.runstate_corpus import expected, journal_bytes

WRITTEN_BY_THE_RUNTIME = [entry for name in ("file", "random") for entry in expected(name)]


def records_of(data: bytes) -> list[Record]:
    decoder = msgspec.json.Decoder(Record)
    return [decoder.decode(line) for line in data.split(b"\n") if line]


def assert_same_state(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    assert set(got) == set(want), where
    for field in want:
        assert got[field] == want[field], f"{where}: {field} differs"


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=lambda entry: entry["path"])
def test_strict_fold_equals_the_runtime(entry: dict[str, Any]) -> None:
    records = records_of(journal_bytes(entry))
    if not entry["ok"]:
        with pytest.raises(FoldError) as refused:
            fold(records, run=entry["store_id"])
        # Go's error text names the rule and the seq; ours carries the same rule text.
        assert refused.value.rule.split(": ", 1)[-1] in entry["error"]
        return
    result = fold(records, run=entry["store_id"])
    assert result.state is not None
    assert_same_state(result.state.to_go_json(), entry["state"], entry["path"])
    assert result.state.completed() == entry["completed"]
    if "open_deferrals" in entry:
        assert result.state.pending is not None
        got = [d.tool_use_id for d in result.state.pending.open_deferrals()]
        assert got == [d["tool_use_id"] for d in entry["open_deferrals"] or []]
    assert result.last_seq == entry["last_seq"]


@pytest.mark.parametrize("entry", WRITTEN_BY_THE_RUNTIME, ids=lambda entry: entry["path"])
def test_lenient_fold_agrees_with_strict(entry: dict[str, Any]) -> None:
    records = records_of(journal_bytes(entry))
    lenient = fold(records, run=entry["store_id"], strict=False)
    errors = [finding for finding in lenient.findings if finding.severity == "error"]
    if entry["ok"]:
        assert errors == []
        assert lenient.state is not None
        assert lenient.state.to_go_json() == fold(records).state.to_go_json()  # type: ignore[union-attr]
        expected_status = entry["state"]["Terminal"]["reason"] if entry["state"]["Terminal"] else "open"
        assert lenient.status == expected_status
    else:
        assert lenient.status == "invalid"
        assert errors, "a refused journal says why"
