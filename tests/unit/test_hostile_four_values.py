"""Issue 42, a hostile world round four, the values: C extensions clean under UBSan, journal values that do not fit
the column they land in, compressed journals bounded while they are decompressed, prices whose costs cannot be
represented, and JetStream subjects whose sequence is not written as Go writes it.

Each test fails on the code path it guards as it was before the fix.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import zstandard

from journaltools import load
from journaltools.cli import main
from journaltools.errors import InvalidPrices
from journaltools.folding.facts import time_ns
from journaltools.folding.native import NATIVE_ROWS_VARIABLE
from journaltools.goencoding.time import go_time, parse_go_time
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import NEWEST
from journaltools.protocol.kinds import UINT64_MAX
from journaltools.sources.jetstream import JetStreamBackend, seq_of_token
from journaltools.sources.scan import MAX_JOURNAL_BYTES_VARIABLE
from journaltools.tables import Tables
from journaltools.tables.prices import MAX_PRICE, TIERS, ModelPrice, PriceTable, TokenCounts, cost_of, read_prices
from journaltools.tables.schema import COST_COLUMNS, PRICED_TABLES
from journaltools.testing.generate import JournalBuilder, calls_of, fingerprint_for, text, tool_use
from tests.builders import completed_run
from tests.nats_fixtures import NatsAdmin
from tests.paths import ROOT
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS
from tests.table_checks import same_tables

# -- T1: both C extensions under UBSan over every corpus journal of both generations ------------------------------

#: Every folder of journals of both generations: written by the runtime, random, broken, the newest format's own.
SANITIZED_CORPORA = [
    CORPUS / "file",
    CORPUS / "random",
    CORPUS / "broken",
    NEWEST_CORPUS / "file",
    NEWEST_CORPUS / "random",
    NEWEST_CORPUS / "broken",
    NEWEST_CORPUS / "version3",
]

#: Loads every folder named on its command line (strict=False, the native fold on), then every line-prefix of each
#: journal the runtime wrote through its API (folders named file: a run cut after each of its records, so pending
#: calls, open turns, every state the walk holds), and fails unless the native walk folded a great many of them (a
#: sanitizer that never ran would pass).
_SANITIZED_LOAD = """
import sys, tempfile
from pathlib import Path
import journaltools as jt
from journaltools.folding import native

assert native.active() and "sanitized" in native._native.__file__, native._native.__file__
folded = []
walk = native._native.fold_rows

def counted(*arguments):
    found = walk(*arguments)
    folded.append(found is not None)
    return found

extension = native._native
native._native = type("Counted", (), {"fold_rows": staticmethod(counted), "KINDS": extension.KINDS})
for folder in sys.argv[1:]:
    jt.load(folder, strict=False)
with tempfile.TemporaryDirectory() as prefixes:
    for folder in (name for name in sys.argv[1:] if Path(name).name == "file"):
        for path in sorted(Path(folder).glob("*.json")):
            lines = path.read_bytes().splitlines(keepends=True)
            for kept in range(1, len(lines)):
                cut = Path(prefixes, str(kept))
                cut.mkdir(exist_ok=True)
                (cut / path.name).write_bytes(b"".join(lines[:kept]))
    for cut in Path(prefixes).iterdir():
        jt.load(cut, strict=False)
assert sum(folded) > 1000, (len(folded), sum(folded))
"""


def _sanitized_package(into: Path) -> Path:
    """A copy of the package whose two C extensions are built with UBSan, any report fatal; the checkout's built
    extensions are left out so that only the sanitized ones can load."""
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.skip("the UBSan build needs gcc, which this machine lacks")
    package = into / "sanitized" / "journaltools"
    shutil.copytree(ROOT / "journaltools", package, ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.pyd"))
    include, suffix = sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX")
    for source in (package / "protocol" / "_canonical.c", package / "folding" / "_native.c"):
        command = [compiler, "-shared", "-fPIC", "-O1", "-g", "-std=c11", f"-I{include}"]
        command += ["-fsanitize=undefined", "-fno-sanitize-recover=all", str(source)]
        subprocess.run([*command, "-o", str(source.with_suffix("")) + suffix], check=True, timeout=120)
    return package.parent


@pytest.mark.slow
def test_the_extensions_run_every_corpus_journal_without_an_undefined_behaviour_report(tmp_path: Path) -> None:
    # T1: an assistant turn of tool_use blocks only put an empty text from a NULL buffer: memcpy(dst, NULL, 0).
    packages = _sanitized_package(tmp_path)
    runtime = subprocess.run(
        ["gcc", "-print-file-name=libubsan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    # Python itself is not built with the sanitizer: its runtime is loaded first, so that it is set up before
    # the extensions that call it are.
    environment = {**os.environ, "PYTHONPATH": str(packages), "LD_PRELOAD": runtime, "JOURNALTOOLS_NATIVE_ROWS": "1"}
    environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    completed = subprocess.run(
        [sys.executable, "-c", _SANITIZED_LOAD, *map(str, SANITIZED_CORPORA)],
        cwd=packages,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "runtime error" not in completed.stderr, completed.stderr[-4000:]
    assert completed.returncode == 0, completed.stderr[-4000:]


# -- T2: values Go accepts that their columns cannot hold ------------------------------------------------------

INT64_MAX = (1 << 63) - 1
#: A moment of the corpus's era, for every record a case does not date otherwise.
NOW = "2026-12-02T01:36:12.5Z"
#: The extremes Go writes and reads (MarshalJSON, time.Parse): years 0 to 9999, offsets within a day.
FIRST_INSTANT, LAST_INSTANT = "0001-01-01T00:00:01Z", "9999-12-31T23:59:59.999999999Z"
BEFORE_YEAR_ONE, AFTER_YEAR_9999, YEAR_ZERO = (
    "0001-01-01T00:30:00+01:00",
    "9999-12-31T23:59:59-23:59",
    "0000-06-01T00:00:00Z",
)


def _dated_run(run: str, created: str, times: list[str], *, tokens: int = 100, iteration: int = 0) -> bytes:
    """A newest-line run of five records (meta, a tool call, its result, the answer, the terminal) dated with
    ``times`` in order, as a runner's clock dates them."""
    clock = iter(times)
    built = JournalBuilder(
        run,
        prompt="p",
        created=created,
        fingerprint=fingerprint_for("m"),
        generation=NEWEST,
        agent="ops",
        clock=lambda: next(clock),
    )
    built.next_iteration = iteration
    turn = built.assistant(tool_use("tu_1", "shell", {"x": 1}), in_tokens=tokens, out_tokens=tokens)
    built.result(calls_of(turn)[0], "ok")
    built.assistant(text("done"), in_tokens=tokens, out_tokens=tokens, cache_read_tokens=tokens, thinking_tokens=tokens)
    built.terminal("completed")
    return built.journal_bytes()


#: run -> (its journal, the columns its finding names; empty when every value fits).
EXTREME_RUNS: dict[str, tuple[bytes, set[str]]] = {
    "good": (_dated_run("good", NOW, [NOW] * 5), set()),
    # The case: one record dated 2400, a wall clock of 373 years.
    "far": (_dated_run("far", NOW, [NOW, NOW, NOW, NOW, "2400-01-01T00:00:00Z"]), {"runs.wall_clock"}),
    # Every instant a column holds, the whole span apart: each time fits, no duration does.
    "span": (
        _dated_run("span", FIRST_INSTANT, [FIRST_INSTANT, FIRST_INSTANT, LAST_INSTANT, LAST_INSTANT, LAST_INSTANT]),
        {"runs.wall_clock", "tool_calls.duration"},
    ),
    # Times Go writes that fall outside years 1-9999 in UTC (no wall clock: its end, year 0, comes before its start).
    "beyond": (
        _dated_run("beyond", BEFORE_YEAR_ONE, [BEFORE_YEAR_ONE, NOW, AFTER_YEAR_9999, NOW, YEAR_ZERO]),
        {
            "runs.created",
            "runs.updated",
            "runs.ended",
            "segments.started_at",
            "segments.ended_at",
            "tool_calls.answered_at",
            "tool_calls.duration",
        },
    ),
    # The largest counts Go writes: the fold wraps their sums at int64 as the runtime does, and every column holds them.
    "counts": (_dated_run("counts", NOW, [NOW] * 5, tokens=INT64_MAX, iteration=INT64_MAX - 1), set()),
}


@pytest.fixture
def extremes(tmp_path: Path) -> Path:
    for run, (data, _) in EXTREME_RUNS.items():
        (tmp_path / f"{run}.json").write_bytes(data)
    return tmp_path


def _unfit_columns(tables: Tables) -> dict[str, set[str]]:
    """Per run, the columns its value_out_of_range finding names."""
    named: dict[str, set[str]] = {}
    for finding in tables.findings.to_pylist():
        if finding["code"] == "value_out_of_range":
            assert finding["run"] not in named, "one finding per run"
            named[finding["run"]] = set(
                re.findall(r"\b(?:runs|segments|tool_calls|responses)\.\w+", finding["message"])
            )
    return named


@pytest.mark.parametrize("workers", [None, 2])
@pytest.mark.parametrize("strict", [False, True])
def test_values_no_column_holds_are_null_with_a_finding_on_every_path(
    extremes: Path, monkeypatch: pytest.MonkeyPatch, strict: bool, workers: int | None
) -> None:
    # T2: a wall clock beyond int64 nanoseconds raised OverflowError out of every load path.
    loads = {}
    for native in ("1", "0"):
        monkeypatch.setenv(NATIVE_ROWS_VARIABLE, native)
        loads[native] = tables = load(extremes, strict=strict, workers=workers, runs_per_batch=2)
        assert sorted(tables.runs.column("run").to_pylist()) == sorted(EXTREME_RUNS)
        assert _unfit_columns(tables) == {run: columns for run, (_, columns) in EXTREME_RUNS.items() if columns}
        runs = {row["run"]: row for row in tables.runs.to_pylist()}
        assert runs["far"]["wall_clock"] is None and runs["far"]["warning_findings"] == 1
        assert runs["far"]["updated"].year == 2400
        assert runs["span"]["created"].year == 1 and runs["span"]["updated"].year == 9999
        assert runs["beyond"]["created"] is None
        assert runs["good"]["wall_clock"] is not None and runs["good"]["warning_findings"] == 0
        assert runs["counts"]["in_tokens"] == -2  # 2 x int64 max wraps, as Go's int64 sum does
        assert runs["counts"]["next_iteration"] == -(1 << 63)  # after iteration int64 max, as Go's int64 does
        calls = {row["run"]: row for row in tables.tool_calls.to_pylist()}
        assert calls["span"]["duration"] is None and calls["span"]["timed"] is False
        assert calls["beyond"]["answered_at"] is None and calls["beyond"]["made_at"] is not None
        assert load(extremes, strict=strict, workers=workers, fold=False).records.num_rows == 5 * 5
    same_tables(loads["1"], loads["0"])


@pytest.mark.parametrize("parquet", [False, True])
def test_audit_reports_values_no_column_holds(
    extremes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], parquet: bool
) -> None:
    written = tmp_path / "parquet"
    assert main(["audit", "--json", str(extremes), *(["--parquet", str(written)] if parquet else [])]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert sorted(f["run"] for f in findings if f["code"] == "value_out_of_range") == ["beyond", "far", "span"]
    if parquet:
        runs = pq.read_table(written / "runs.parquet").to_pylist()
        assert {row["run"]: row["wall_clock"] for row in runs}["far"] is None


@pytest.mark.parametrize("run", sorted(EXTREME_RUNS))
def test_the_other_commands_read_the_extremes(
    extremes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str
) -> None:
    journal_path = str(extremes / f"{run}.json")
    assert main(["ls", "--json", str(extremes)]) == 0
    assert main(["show", "--json", journal_path]) == 0
    assert main(["stats", "--json", journal_path]) == 0
    assert main(["report", journal_path, "-o", str(tmp_path / "report.html")]) == 0
    assert main(["export", "--otlp", str(tmp_path / "otlp.json"), journal_path]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("written", [YEAR_ZERO, "0000-01-01T00:00:00+01:00", BEFORE_YEAR_ONE, AFTER_YEAR_9999])
def test_go_times_outside_a_datetime_keep_their_instant_and_text(written: str) -> None:
    # Go reads years 0 to 9999 at any offset within a day; the instant is kept to the nanosecond all the same.
    parsed = parse_go_time(written)
    assert parsed.text() == written
    assert time_ns(written) == parsed.unix_ns
    assert go_time(written) is None


# -- T3: a compressed journal is streamed through its decompressor, never read whole -----------------------------

#: The sparse file's size: what the reader held whole before (a few KB of it are data).
SPARSE_BYTES = 64 << 20
#: The bound on a journal's bytes the tests set: the compressed head decompresses past it.
SMALL_BOUND = 1 << 20


def _compressed(suffix: str, data: bytes) -> bytes:
    if suffix == ".json.gz":
        return gzip.compress(data)
    return zstandard.ZstdCompressor().compress(data)


@pytest.fixture(params=[".json.gz", ".json.zst"])
def huge_compressed(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding one good run and ``x`` + the suffix: a few KB of compressed data decompressing past
    the bound, then 64 MiB of holes (a sparse file: nothing on disk, a 64 MiB read)."""
    monkeypatch.setenv(MAX_JOURNAL_BYTES_VARIABLE, str(SMALL_BOUND))
    (tmp_path / "good.json").write_bytes(EXTREME_RUNS["good"][0])
    huge = tmp_path / f"x{request.param}"
    with open(huge, "wb") as out:
        out.write(
            _compressed(request.param, EXTREME_RUNS["good"][0] * (4 * SMALL_BOUND // len(EXTREME_RUNS["good"][0])))
        )
        out.truncate(SPARSE_BYTES)
    return tmp_path


def _peak_bytes(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_huge_compressed_journal_is_refused_at_the_bound_without_being_read_whole(huge_compressed: Path) -> None:
    # T3: the compressed file was read whole (and gzip's unconsumed input copied again) before the bound applied.
    peak = _peak_bytes(lambda: load(huge_compressed, strict=False))
    assert peak < SPARSE_BYTES // 4, f"{peak:,} bytes at the peak"
    tables = load(huge_compressed, strict=False)
    assert sorted(tables.runs.column("run").to_pylist()) == ["good", "x"]
    codes = {(row["run"], row["code"]) for row in tables.findings.to_pylist()}
    assert codes == {("x", "journal_too_large")}


@pytest.mark.parametrize("command", [["ls", "--json"], ["audit", "--json"]])
def test_listing_and_audit_name_the_huge_compressed_journal_and_list_the_good_one(
    huge_compressed: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    peak = _peak_bytes(lambda: main([*command, str(huge_compressed)]))
    assert peak < SPARSE_BYTES // 4, f"{peak:,} bytes at the peak"
    printed = capsys.readouterr()
    if command[0] == "ls":
        rows = {row["run"]: row for row in json.loads(printed.out)}
        assert rows["good"]["status"] == "completed"
        assert rows["x"]["status"] == "invalid" and rows["x"]["why"].startswith("journal_too_large")
    else:
        assert [(row["run"], row["code"]) for row in json.loads(printed.out)] == [("x", "journal_too_large")]


def test_show_and_worker_loads_refuse_the_huge_compressed_journal_alone(
    huge_compressed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = next(path for path in huge_compressed.iterdir() if path.name.startswith("x."))
    # The worker processes read through the same reader, out of this process's sight: they give the same answer.
    assert _peak_bytes(lambda: main(["show", str(huge)])) < SPARSE_BYTES // 4
    assert "decompresses to more than 1,048,576 bytes" in capsys.readouterr().err
    tables = load(huge_compressed, strict=False, workers=2, runs_per_batch=1)
    assert {(row["run"], row["code"]) for row in tables.findings.to_pylist()} == {("x", "journal_too_large")}
    assert sorted(tables.runs.column("run").to_pylist()) == ["good", "x"]


# -- T5: a price whose costs cannot be represented ----------------------------------------------------------------


def _strict_json(text: str) -> Any:
    """JSON as the standard has it: Infinity and NaN (Python's extension) refused."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in a --json document")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
@pytest.mark.parametrize("command", ["stats", "audit"])
def test_a_price_whose_cost_overflows_is_refused_where_the_file_is_read(
    extremes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, suffix: str
) -> None:
    # T5: 1e308 per million tokens was accepted, and its costs were inf: "Infinity" in stats --json.
    prices = tmp_path / f"prices{suffix}"
    prices.write_text(
        '{"models": {"m": {"input": 1.0, "output": 1e308}}}' if suffix == ".json" else "models.m.output = 1e308\n"
    )
    assert main([command, "--json", "--prices", str(prices), str(extremes / "good.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert str(prices) in captured.err and "'models.m.output'" in captured.err and "at most 1.95e+289" in captured.err


def test_the_largest_price_costs_the_most_tokens_finitely_everywhere(
    extremes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"m": dict.fromkeys(TIERS, MAX_PRICE)}}))
    counts = str(extremes / "counts.json")  # int64 max tokens per response, in each tier
    assert main(["stats", "--json", "--prices", str(prices), counts]) == 0
    document = _strict_json(capsys.readouterr().out)
    assert document["tokens"]["in_tokens"] == -2  # the runtime's int64 sum wraps, as the fold's counters do
    assert all(math.isfinite(response["cost"]["total"]) for response in document["responses"])
    assert (
        main(["audit", "--json", "--prices", str(prices), "--parquet", str(tmp_path / "parquet"), str(extremes)]) == 0
    )
    _strict_json(capsys.readouterr().out)
    for name in PRICED_TABLES:
        table = pq.read_table(tmp_path / "parquet" / f"{name}.parquet")
        for column in COST_COLUMNS:
            values = table.column(column).to_pylist()
            assert all(value is None or math.isfinite(value) for value in values), (name, column)
    assert TokenCounts(*[INT64_MAX] * 4).input == INT64_MAX
    assert math.isfinite(cost_of(read_prices(prices), "m", TokenCounts(*[INT64_MAX] * 4)).total or math.inf)
    assert math.isfinite(cost_of(read_prices(prices), "m", TokenCounts(*[-(1 << 63)] * 4)).total or math.inf)


@pytest.mark.parametrize("price", [1e308, math.inf, math.nan, -1.0])
def test_no_price_table_however_made_gives_a_cost_that_is_not_a_finite_number(extremes: Path, price: float) -> None:
    with pytest.raises(InvalidPrices, match=re.escape("'models.m.input'")):
        load(extremes, strict=False, prices={"m": {"input": price}})
    built = PriceTable({"m": ModelPrice(input=price)})
    with pytest.raises(InvalidPrices, match="input price of model 'm'"):
        cost_of(built, "m", TokenCounts(input=1))
    with pytest.raises(InvalidPrices, match="input price of model 'm'"):
        load(extremes, strict=False, prices=built)


# -- the JetStream subject whose seq is written with leading zeros ----------------------------------------------


@pytest.mark.parametrize(
    ("token", "seq"),
    [
        ("_meta", 1),
        ("2", 2),
        ("002", 2),  # strconv.ParseUint reads leading zeros: the runtime opens a writer at seq 2, as on ".2"
        ("18446744073709551615", UINT64_MAX),
        ("000018446744073709551615", UINT64_MAX),
        ("18446744073709551616", None),  # past uint64: ParseUint's range error
        ("", None),
        ("+2", None),
        ("-2", None),
        ("2_0", None),
        ("abc", None),
        ("\u0662", None),  # an Arabic-Indic two: a digit to Python, not to ParseUint
        ("2.x", None),
    ],
)
def test_a_subject_seq_token_is_read_as_the_runtime_reads_it(token: str, seq: int | None) -> None:
    assert seq_of_token(token) == seq


def test_a_record_under_a_zero_padded_subject_reads_as_its_seq_without_a_finding(
    jetstream: JetStreamBackend, nats_admin: NatsAdmin
) -> None:
    # Observation: ".002" reads as seq 2 with no subject_seq_mismatch; the runtime (parseSeqToken, ParseUint) reads
    # it so too and opens its writer at seq 2, so a run stored so is read, listed and continued as the runtime does.
    built = completed_run("padded", calls=0)
    meta, second = built.records[0], built.records[1]
    nats_admin.publish(jetstream.subject("padded", 1), encode_record(meta))
    nats_admin.publish(f"{jetstream.prefix}.padded.002", encode_record(second))
    assert jetstream.seq_of_subject(f"{jetstream.prefix}.padded.002") == 2
    read = jetstream.read_run("padded", strict=False)
    assert [stored.record.seq for stored in read.records] == [1, 2]
    assert "subject_seq_mismatch" not in {finding.code for finding in read.findings}
    (summary,) = jetstream.listing()
    assert "subject_seq_mismatch" not in {finding.code for finding in summary.findings}
    writer = jetstream.open_writer("padded")
    assert writer.last_seq == 2
