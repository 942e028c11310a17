from pathlib import Path

from journaltools.backends.file import FileBackend
from journaltools.fold import fold
from journaltools.samples import write_samples

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


def test_regenerating_the_samples_gives_the_committed_bytes(tmp_path: Path) -> None:
    runs = write_samples(tmp_path)
    committed = sorted(path.name for path in SAMPLES.glob("*.jsonl"))
    assert sorted(f"{run}.jsonl" for run in runs) == committed
    for name in committed:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name


def test_samples_cover_the_cases_the_toolkit_must_show() -> None:
    backend = FileBackend(SAMPLES)
    statuses = {row.run: row.status for row in backend.listing()}
    assert statuses == {
        "answered-deferral": "open",
        "approved-deferral": "open",
        "cancelled-by-user": "cancelled",
        "completed-with-tools": "completed",
        "consecutive-users": "completed",
        "corrupt-interior": "invalid",
        "failed-provider": "failed",
        "optional-unknown-record": "completed",
        "resumed-after-crash": "completed",
        "schema-violation": "invalid",
        "suspended-approval": "suspended",
        "torn-tail": "completed",
        "turn-in-flight": "open",
        "version-mismatch": "invalid",
    }
    in_flight = fold(backend.read_run("turn-in-flight").records)
    assert [call.id for call in in_flight.pending] == ["toolu_11", "toolu_12"]
    resumed = backend.read_run("resumed-after-crash").records
    assert [record.type for record in resumed] == ["meta", "user", "assistant", "claim", "tool_result", "assistant"]
    answered = fold(backend.read_run("answered-deferral").records)
    assert answered.tool_calls[0].deferred == "external" and answered.tool_calls[0].result_seq == 5
    assert fold(backend.read_run("optional-unknown-record").records).counters.skipped_optional == 1
