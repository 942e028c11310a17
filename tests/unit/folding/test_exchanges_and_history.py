"""A run's exchanges (``folding.exchanges``) and its history (``folding.history``): what the exports and the
time-travel view read instead of the records, held to the records of both real corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from journaltools.folding.exchanges import exchanges_of, json_of
from journaltools.folding.history import RunHistory
from journaltools.folding.run import fold_run
from journaltools.protocol.journal import read_file_journal, typed_records
from journaltools.sources.scan import run_read
from tests.mixed_journals import journals_of
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS

FOLDERS = [root / folder for root in (CORPUS, NEWEST_CORPUS) for folder in ("file", "broken")]
ROLE_OF_KIND = {"meta": "prompt", "user": "user", "tool_result": "tool", "assistant": "assistant"}


def _read(run: str, data: bytes) -> object:
    return run_read(run, read_file_journal(data), source="file:///test", where=run, strict=False, updated=None)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: str(folder.relative_to(CORPUS)))
def test_the_exchanges_are_the_records_that_speak_in_order(folder: Path) -> None:
    for run, data in journals_of(folder):
        read = _read(run, data)
        folded = fold_run(read)  # type: ignore[arg-type]
        records = typed_records(read.records)  # type: ignore[attr-defined]
        exchanges = exchanges_of(folded)
        speaking = [record for record in records if record.kind in ROLE_OF_KIND and record.payload() is not None]
        assert [(x.seq, x.role) for x in exchanges] == [(r.seq, ROLE_OF_KIND[r.kind or ""]) for r in speaking], run
        for exchange, record in zip(exchanges, speaking, strict=True):
            if record.meta is not None:
                assert exchange.text() == record.meta.prompt
                assert exchange.message() == {
                    "role": "user",
                    "parts": [{"type": "text", "content": record.meta.prompt}],
                }
            elif record.tool_result is not None:
                part = exchange.message()["parts"][0]
                assert (part["id"], part["response"]) == (record.tool_result.tool_use_id, exchange.text())
                assert exchange.text() == record.tool_result.result.content
            else:
                message = record.assistant.message if record.assistant is not None else record.user.message  # type: ignore[union-attr]
                blocks = message.content or ()
                texts = [block.text.text for block in blocks if block.text is not None and block.text.text]
                assert exchange.text() == "\n\n".join(texts)
                assert len(exchange.message()["parts"]) == sum(
                    1 for b in blocks if b.text or b.thinking or b.tool_use or b.tool_result
                )
        responses = [response.seq for response in folded.facts().responses]
        assert [x.seq for x in exchanges if x.role == "assistant"] == responses, run


def test_a_call_input_that_is_not_json_is_shown_as_its_text() -> None:
    assert json_of(b'{"a": 1}') == {"a": 1}
    assert json_of(b"") is None
    assert json_of(b"{not json") == "{not json"


@pytest.mark.parametrize("folder", [CORPUS / "file", NEWEST_CORPUS / "file"], ids=["august", "newest"])
def test_the_history_ends_where_the_fold_does(folder: Path) -> None:
    for run, data in journals_of(folder):
        read = _read(run, data)
        records = typed_records(read.records)  # type: ignore[attr-defined]
        history = RunHistory(run, records)
        assert len(history) == len(records) and history.seqs == [record.seq for record in records]
        assert history.fold_at(len(history) - 1).status == fold_run(read).result.status, run  # type: ignore[arg-type]
        for index, record in enumerate(records):
            assert history.kind_at(index) == (record.kind or record.protocol)
            assert history.index_of_seq(history.seq_at(index)) == records.index(record)
        meta = records[0].meta
        if meta is not None and meta.conversation_token:
            assert meta.conversation_token not in history.record_text_at(0)
        with pytest.raises(IndexError, match="no record at position"):
            history.fold_at(len(history))
