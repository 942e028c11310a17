"""Cost from the user's own prices (``journaltools.tables.prices``): the price file and its refusals, the one cost rule
held to hand arithmetic on the real corpora's records (both generations), null and named (never zero) where no
price applies, the cost columns of ``load``, the audit and its Parquet files, and ``stats --prices``.

Every expected cost here is computed from the journals' own lines (read as plain JSON), never written down."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import journaltools as jt
from journaltools.cli import main
from journaltools.errors import InvalidPrices
from journaltools.protocol.generations import NEWEST
from journaltools.samples.builder import JournalBuilder
from journaltools.tables.prices import (
    TIERS,
    UNPRICED,
    ModelPrice,
    PriceTable,
    TokenCounts,
    cost_of,
    prices_of,
    read_prices,
)
from journaltools.tables.schema import COST_COLUMNS, RESPONSES_SCHEMA, RUNS_SCHEMA, with_plain_strings
from tests.paths import ROOT
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS
from tests.schemas import hold_to_schema, printed
from tests.strategies import valid_runs

AUGUST_FILES = CORPUS / "file"
NEWEST_FILES = NEWEST_CORPUS / "file"
#: Made-up prices per million tokens (journaltools ships none): only the arithmetic matters.
SONNET = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_create": 3.75}
OPUS = {"input": 15.0, "output": 75.0, "cache_read": 1.5, "cache_create": 18.75}
#: Every model the corpora name.
BOTH = {"claude-sonnet-4-6": SONNET, "claude-opus-4-8": OPUS, "claude-sonnet-5": SONNET}
#: The tier → the assistant record's field it prices.
FIELD = {"input": "in_tokens", "output": "out_tokens", "cache_read": "cache_read_tokens"}
FIELD["cache_create"] = "cache_create_tokens"


def price_file(directory: Path, models: Mapping[str, Mapping[str, float]], currency: str | None = "USD") -> Path:
    path = directory / "prices.json"
    path.write_text(json.dumps({"models": models, **({"currency": currency} if currency else {})}))
    return path


# -- the journals, read by hand ------------------------------------------------------------------------------


def journal_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The decodable lines of a journal, as plain JSON (a torn last line is left out, as every reader does)."""
    for line in path.read_bytes().splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def hand_responses(path: Path) -> list[dict[str, int]]:
    """The four counts of each assistant record, an absent count being the runtime's omitted zero."""
    return [
        {tier: line["assistant"].get(field, 0) for tier, field in FIELD.items()}
        for line in journal_lines(path)
        if line["protocol"].endswith(".assistant")
    ]


def hand_totals(responses: list[dict[str, int]]) -> dict[str, int]:
    return {tier: sum(counts[tier] for counts in responses) for tier in TIERS}


def hand_model(path: Path) -> str:
    return str(next(journal_lines(path))["meta"]["fingerprint"]["model"])


def hand_cost(counts: Mapping[str, int], price: Mapping[str, float]) -> dict[str, float]:
    parts = {tier: counts[tier] * price[tier] / 1_000_000 for tier in TIERS}
    return {**parts, "total": sum(parts.values())}


def hand_columns(counts: Mapping[str, int], price: Mapping[str, float]) -> dict[str, float]:
    """``hand_cost`` by the names of the cost columns."""
    return {("cost" if part == "total" else f"cost_{part}"): value for part, value in hand_cost(counts, price).items()}


def run_paths(directory: Path) -> dict[str, Path]:
    return {path.name.removesuffix(".json"): path for path in sorted(directory.glob("*.json"))}


def rows_by_run(table: pa.Table) -> dict[str, dict[str, Any]]:
    return {row["run"]: row for row in table.to_pylist()}


# -- the price file -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({"models": {"m": {"input": -1.0}}}, "'models.m.input' must be greater than or equal to 0 (got -1.0)"),
        ({"models": {"m": {"output": 1e400}}}, "'models.m.output' must be a finite number"),
        ({"models": {"m": {"cache_read": "0.3"}}}, "'models.m.cache_read' must be a valid number (got '0.3')"),
        ({"models": {"m": {"cache_create": True}}}, "'models.m.cache_create' must be a valid number"),
        ({"models": {"m": {"inptu": 1.0}}}, "'models.m' has inptu; the kinds are input, output, cache_read"),
        ({"models": {"m": {"cache_write": 1.0}}}, "'models.m' has cache_write; the kinds are"),
        ({"models": {"m": 3}}, "'models.m' must be a JSON object (got 3)"),
        ({"models": {}, "currency": 1}, "'currency' must be a string (got 1)"),
        ({"currency": "USD"}, "'models' is required"),
        ({"models": {}, "prices": {}}, "unknown key 'prices'"),
    ],
)
def test_a_price_file_that_breaks_its_model_is_refused_in_one_line_naming_the_model_and_field(
    tmp_path: Path, document: dict[str, Any], named: str
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidPrices) as raised:
        read_prices(path)
    message = str(raised.value)
    assert message.startswith(f"the price file {path}: ") and named in message and "\n" not in message
    assert isinstance(raised.value, ValueError)  # a wrong value, as the widgets have always raised


def test_a_file_without_end_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    from journaltools.tables.prices import MAX_PRICE_FILE_BYTES

    with pytest.raises(InvalidPrices, match=r"/dev/zero: it is a device, not a regular file"):
        read_prices("/dev/zero")  # refused by the one opener before a byte is read
    path = tmp_path / "prices.json"
    path.write_bytes(b'{"models": {}, "currency": "' + b"x" * MAX_PRICE_FILE_BYTES + b'"}')
    with pytest.raises(InvalidPrices, match="not a price table"):
        read_prices(path)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_prices_that_are_not_finite_are_refused_naming_the_model_and_tier(tmp_path: Path, number: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text('{"models": {"claude-x": {"cache_read": NUMBER}}}'.replace("NUMBER", number))
    with pytest.raises(InvalidPrices, match=r"'models\.claude-x\.cache_read' must be a finite number"):
        read_prices(path)


def test_a_toml_price_file_reads_as_its_json_twin_and_refuses_nan_too(tmp_path: Path) -> None:
    toml = tmp_path / "prices.toml"
    toml.write_text('currency = "EUR"\n\n[models."claude-sonnet-4-6"]\ninput = 3\noutput = 15.0\ncache_read = 0.3\n')
    table = read_prices(toml)
    assert table == PriceTable({"claude-sonnet-4-6": ModelPrice(3.0, 15.0, 0.3, None)}, "EUR")
    assert (
        read_prices(price_file(tmp_path, {"claude-sonnet-4-6": {"input": 3, "output": 15, "cache_read": 0.3}}, "EUR"))
        == table
    )
    toml.write_text("[models.m]\ninput = nan\n")
    with pytest.raises(InvalidPrices, match=r"'models\.m\.input' must be a finite number"):
        read_prices(toml)
    toml.write_text("[models.m\n")
    with pytest.raises(InvalidPrices, match="is not TOML"):
        read_prices(toml)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidPrices, match=r"cannot read the price file .*nope\.json: No such file"):
        read_prices(tmp_path / "nope.json")


def test_every_form_of_prices_gives_one_table(tmp_path: Path) -> None:
    path = price_file(tmp_path, BOTH)
    table = read_prices(path)
    assert prices_of(path) == prices_of(str(path)) == table
    assert prices_of({"models": BOTH, "currency": "USD"}) == table and prices_of(table) is table
    assert prices_of(BOTH) == PriceTable(table.models)  # the widgets' bare {model: {tier: price}}
    assert prices_of(None) is None


def test_the_schema_of_the_price_file_is_published_and_the_documented_example_fits_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import jsonschema

    assert main(["schema", "--input", "prices"]) == 0
    schema = json.loads(capsys.readouterr().out)
    docs = (ROOT / "docs" / "interfaces.md").read_text()
    example = docs.split("### Prices and cost", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    jsonschema.validate(json.loads(example), schema)
    (tmp_path / "example.json").write_text(example)
    assert read_prices(tmp_path / "example.json").currency == "USD"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"models": {"m": {"input": -1}}}, schema)


def test_the_prices_module_and_a_load_without_prices_never_import_pydantic() -> None:
    code = (
        "import sys, journaltools.tables.prices, journaltools.tables.costs, journaltools as jt; "
        "jt.load('data/samples', strict=False); print('pydantic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]


# -- the cost rule ------------------------------------------------------------------------------------------


def test_a_model_without_a_price_costs_null_never_zero_and_a_missing_tier_only_where_it_has_tokens() -> None:
    prices = PriceTable({"m": ModelPrice(input=3.0, output=15.0)})
    assert cost_of(prices, "other", TokenCounts(0, 0, 0, 0)) == UNPRICED
    assert cost_of(prices, None, TokenCounts(1, 1, 1, 1)) == UNPRICED
    no_cache = cost_of(prices, "m", TokenCounts(1000, 100, 0, 0))
    assert no_cache.cache_read == no_cache.cache_create == 0.0
    assert no_cache.total == pytest.approx((1000 * 3.0 + 100 * 15.0) / 1e6)
    cached = cost_of(prices, "m", TokenCounts(1000, 100, 50, 0))
    assert cached.cache_read is None and cached.total is None and cached.input == pytest.approx(0.003)


counts_st = st.builds(TokenCounts, *(st.integers(0, 10**9) for _ in TIERS))
price_st = st.one_of(st.none(), st.floats(0, 1000, allow_nan=False, allow_infinity=False))
model_price_st = st.builds(ModelPrice, *(price_st for _ in TIERS))


@given(counts=counts_st, price=model_price_st, other=model_price_st, factor=st.floats(0, 100), priced=st.booleans())
def test_cost_is_linear_in_the_prices_and_null_exactly_where_no_price_applies(
    counts: TokenCounts, price: ModelPrice, other: ModelPrice, factor: float, priced: bool
) -> None:
    table = PriceTable({"m": price} if priced else {"n": price})
    cost = cost_of(table, "m", counts)
    for tier in TIERS:
        known = priced and (price.of(tier) is not None or counts.of(tier) == 0)
        assert (cost.of(tier) is not None) == known
    assert (cost.total is None) == (not priced or any(cost.of(tier) is None for tier in TIERS))
    if not priced:
        return
    scaled = {tier: None if price.of(tier) is None else factor * price.of(tier) for tier in TIERS}  # type: ignore[operator]
    by_factor = cost_of(PriceTable({"m": ModelPrice(**scaled)}), "m", counts)
    summed = {
        tier: None if price.of(tier) is None or other.of(tier) is None else price.of(tier) + other.of(tier)  # type: ignore[operator]
        for tier in TIERS
    }
    by_sum = cost_of(PriceTable({"m": ModelPrice(**summed)}), "m", counts)
    by_other = cost_of(PriceTable({"m": other}), "m", counts)
    for tier in TIERS:
        part = cost.of(tier)
        if part is None:
            continue
        assert by_factor.of(tier) == pytest.approx(factor * part, rel=1e-9, abs=1e-12)
        if summed[tier] is not None:
            assert by_sum.of(tier) == pytest.approx(part + by_other.of(tier), rel=1e-9, abs=1e-12)  # type: ignore[operator]
    if cost.total is not None:
        assert cost.total == pytest.approx(math.fsum(cost.of(tier) for tier in TIERS))  # type: ignore[misc]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    built=st.one_of(valid_runs(max_records=16), valid_runs(max_records=16, generation=NEWEST)),
    priced=st.booleans(),
    factor=st.sampled_from([0.5, 2.0, 10.0]),
)
def test_a_generated_run_of_either_generation_is_priced_linearly_or_null_when_its_model_has_none(
    tmp_path: Path, built: JournalBuilder, priced: bool, factor: float
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / f"{built.run_id}.json").write_bytes(built.journal_bytes())
    model = built.meta.fingerprint.model
    name = model if priced else model + "-unpriced"
    once = jt.load(root, prices={name: SONNET}, workers=1)
    twice = jt.load(root, prices={name: {tier: factor * price for tier, price in SONNET.items()}}, workers=1)
    [run] = once.runs.to_pylist()
    [scaled] = twice.runs.to_pylist()
    no_price = [f for f in once.findings.to_pylist() if f["code"] == "no_price"]
    if not priced:
        assert all(run[column] is None for column in COST_COLUMNS)
        assert [f["run"] for f in no_price] == [built.run_id] and f"no price for model {model!r}" in no_price[0][
            "message"
        ]
        assert all(row[c] is None for row in once.responses.to_pylist() for c in COST_COLUMNS)
        return
    assert no_price == [] and run["cost"] is not None
    for column in COST_COLUMNS:
        assert scaled[column] == pytest.approx(factor * run[column], rel=1e-9, abs=1e-15)
    total = math.fsum(row["cost"] for row in once.responses.to_pylist())
    assert run["cost"] == pytest.approx(total, rel=1e-9, abs=1e-15)


# -- the tables, on the real corpora -------------------------------------------------------------------------


@pytest.mark.parametrize("directory", [AUGUST_FILES, NEWEST_FILES], ids=["august", "newest"])
def test_costs_in_runs_and_responses_are_the_records_tokens_times_the_prices(directory: Path) -> None:
    tables = jt.load(directory, strict=False, prices=BOTH)
    runs = rows_by_run(tables.runs)
    responses: dict[str, list[dict[str, Any]]] = {}
    for row in tables.responses.to_pylist():
        responses.setdefault(row["run"], []).append(row)
    checked = 0
    for run, path in run_paths(directory).items():
        row = runs[run]
        if row["status"] == "invalid":  # priced by what its counters hold, when the fold got that far
            assert (row["cost"] is None) == (row["in_tokens"] is None)
            continue
        price = BOTH[hand_model(path)]
        hand = hand_responses(path)
        for response, counts in zip(responses.get(run, []), hand, strict=True):
            for column, value in hand_columns(counts, price).items():
                assert response[column] == pytest.approx(value, rel=1e-12, abs=0), (run, column)
        for column, value in hand_columns(hand_totals(hand), price).items():
            assert row[column] == pytest.approx(value, rel=1e-12, abs=0), (run, column)
        checked += 1
    assert checked >= 20
    assert any(row["cost_cache_read"] for row in runs.values())  # the cache tiers are priced, not only input


@pytest.mark.parametrize("directory", [AUGUST_FILES, NEWEST_FILES], ids=["august", "newest"])
def test_a_model_absent_from_the_prices_costs_null_and_each_of_its_runs_is_named(directory: Path) -> None:
    tables = jt.load(directory, strict=False, prices={"claude-sonnet-4-6": SONNET})
    named = {f["run"]: f for f in tables.findings.to_pylist() if f["code"] == "no_price"}
    runs = rows_by_run(tables.runs)
    unpriced = set()
    for run, row in runs.items():
        if row["in_tokens"] is None:  # not folded: no counters to price, and its own findings say why
            assert row["cost"] is None and run not in named
        elif row["model"] != "claude-sonnet-4-6":
            unpriced.add(run)
            assert all(row[column] is None for column in COST_COLUMNS)
            message = named[run]["message"]
            assert named[run]["severity"] == "info" and f"no price for model {row['model']!r}" in message
        else:
            assert row["cost"] is not None and run not in named
    assert unpriced and set(named) == unpriced
    for response in tables.responses.to_pylist():
        if response["run"] in unpriced:
            assert all(response[column] is None for column in COST_COLUMNS)
        elif runs[response["run"]]["in_tokens"] is not None:
            assert response["cost"] is not None


def test_a_tier_left_out_costs_null_only_for_the_runs_that_used_it_and_names_the_tier() -> None:
    without_cache = {model: {"input": price["input"], "output": price["output"]} for model, price in BOTH.items()}
    tables = jt.load(AUGUST_FILES, strict=False, prices=without_cache)
    named = {f["run"]: f["message"] for f in tables.findings.to_pylist() if f["code"] == "no_price"}
    seen = {"cached": 0, "uncached": 0}
    for run, path in run_paths(AUGUST_FILES).items():
        row = rows_by_run(tables.runs)[run]
        if row["status"] == "invalid":
            continue
        totals = hand_totals(hand_responses(path))
        if totals["cache_read"] or totals["cache_create"]:
            seen["cached"] += 1
            assert row["cost"] is None and row["cost_input"] is not None
            assert "cache_read" in named[run] or "cache_create" in named[run]
        else:
            seen["uncached"] += 1
            assert row["cost_cache_read"] == row["cost_cache_create"] == 0.0 and row["cost"] is not None
            assert run not in named
    assert seen["cached"] and seen["uncached"]


@pytest.mark.parametrize("directory", [AUGUST_FILES, NEWEST_FILES], ids=["august", "newest"])
def test_without_prices_the_tables_are_unchanged_and_with_prices_only_cost_columns_are_added(directory: Path) -> None:
    plain = jt.load(directory, strict=False)
    assert plain.runs.schema == RUNS_SCHEMA and plain.responses.schema == RESPONSES_SCHEMA
    assert "no_price" not in plain.findings.column("code").to_pylist()
    priced = jt.load(directory, strict=False, prices=BOTH)
    for name in ("runs", "responses"):
        table = priced[name]
        assert table.column_names == [*plain[name].column_names, *COST_COLUMNS]
        assert all(table.schema.field(column).type == pa.float64() for column in COST_COLUMNS)
        assert with_plain_strings(table.drop_columns(list(COST_COLUMNS))).equals(with_plain_strings(plain[name]))
    for name in ("records", "segments", "messages", "tool_calls", "findings"):
        assert with_plain_strings(priced[name]).equals(with_plain_strings(plain[name]))
    frames = priced.to_pandas()
    assert str(frames.runs["cost"].dtype) == "double[pyarrow]"


def test_an_empty_source_still_has_the_cost_columns_when_priced(tmp_path: Path) -> None:
    assert jt.load(tmp_path, prices=BOTH).runs.column_names[-5:] == list(COST_COLUMNS)
    assert jt.load(tmp_path).runs.schema == RUNS_SCHEMA


def test_a_wrong_price_table_is_refused_before_any_journal_is_read(tmp_path: Path) -> None:
    with pytest.raises(InvalidPrices, match=r"'models\.m\.input' must be greater than or equal to 0"):
        jt.load(tmp_path / "does-not-exist", prices={"m": {"input": -3}})


# -- the audit and its Parquet files ---------------------------------------------------------------------------


@pytest.mark.parametrize("dask", [False, True], ids=["local", "dask"])
def test_an_audit_with_prices_writes_the_cost_columns_and_reads_them_back(tmp_path: Path, dask: bool) -> None:
    sources = [str(AUGUST_FILES), str(NEWEST_FILES)]
    prices = {"claude-sonnet-4-6": SONNET}
    result = jt.audit_sources(sources, parquet=tmp_path / "out", prices=prices, progress=False, dask=dask or None)
    written = jt.read_audit(tmp_path / "out")
    loaded = [jt.load(source, strict=False, prices=prices) for source in sources]
    for name in ("runs", "responses"):
        assert written[name].column_names[-5:] == list(COST_COLUMNS)
        expected = [value for tables in loaded for value in tables[name].column("cost").to_pylist()]
        assert written[name].column("cost").to_pylist() == expected
    costs = [value for tables in loaded for value in tables.runs.column("cost").to_pylist()]
    assert result.cost == pytest.approx(math.fsum(value for value in costs if value is not None))
    assert result.unpriced_runs == sum(value is None for value in costs) > 0
    named = [f for f in result.findings if f.code == "no_price"]
    assert {f.run for f in named} == {
        row["run"] for tables in loaded for row in tables.findings.to_pylist() if row["code"] == "no_price"
    }
    assert written.findings.column("code").to_pylist().count("no_price") == len(named) > 0


def test_an_audit_without_prices_writes_no_cost_column(tmp_path: Path) -> None:
    result = jt.audit_sources(str(NEWEST_FILES), parquet=tmp_path / "out", progress=False)
    assert result.cost is None and jt.read_audit(tmp_path / "out").runs.schema == RUNS_SCHEMA


def test_the_audit_command_takes_prices_and_says_the_total(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = price_file(tmp_path, BOTH)
    status = main(["audit", str(NEWEST_FILES), "--prices", str(path), "--parquet", str(tmp_path / "out"), "--quiet"])
    captured = capsys.readouterr()
    assert status == 0 and "cost: " in captured.err and " USD by your price table" in captured.err
    assert jt.read_audit(tmp_path / "out").responses.column_names[-1] == "cost"
    bad = price_file(tmp_path, {"m": {"output": -1}})
    assert main(["audit", str(NEWEST_FILES), "--prices", str(bad), "--quiet"]) == 2
    assert "'models.m.output' must be greater than or equal to 0" in capsys.readouterr().err


# -- stats --------------------------------------------------------------------------------------------------


def runtime_stats() -> list[dict[str, Any]]:
    lines = (NEWEST_CORPUS / "analysis" / "file.jsonl").read_text().splitlines()
    return [case for case in map(json.loads, lines) if case["command"].startswith("session stats")]


def test_stats_with_prices_adds_a_cost_object_and_keeps_every_byte_of_the_runtime_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = price_file(tmp_path, {"claude-opus-4-8": OPUS})
    cases = runtime_stats()
    assert cases
    for case in cases:
        run = case["run_id"]
        assert printed(capsys, "stats", "--json", str(NEWEST_FILES), run) == case["stdout"]
        priced = hold_to_schema(
            "stats", printed(capsys, "stats", "--json", "--prices", str(path), str(NEWEST_FILES), run)
        )
        cost = priced.pop("cost")
        responses = [response.pop("cost") for response in priced["responses"]]
        assert priced == json.loads(case["stdout"])  # the runtime's document, keys in its order
        hand = hand_responses(NEWEST_FILES / f"{run}.json")
        if priced.get("model") != "claude-opus-4-8":
            assert cost["total"] is None and "no price for model" in cost["note"]
            continue
        assert cost["currency"] == "USD" and "note" not in cost
        totals = hand_totals(hand)
        assert cost == pytest.approx({"currency": "USD", **hand_cost(totals, OPUS)})
        for response, counts in zip(responses, hand, strict=True):
            assert response == pytest.approx(hand_cost(counts, OPUS))


def test_stats_of_an_august_journal_prices_its_cache_tiers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = price_file(tmp_path, BOTH)
    for run, journal in run_paths(AUGUST_FILES).items():
        hand = hand_responses(journal)
        totals = hand_totals(hand)
        if not totals["cache_read"]:
            continue
        document = json.loads(printed(capsys, "stats", "--json", "--prices", str(path), str(AUGUST_FILES), run))
        expected = {"currency": "USD", **hand_cost(totals, BOTH[hand_model(journal)])}
        assert document["cost"] == pytest.approx(expected)
        text = printed(capsys, "stats", "--prices", str(path), str(AUGUST_FILES), run)
        plain = printed(capsys, "stats", str(AUGUST_FILES), run)
        assert text.startswith(plain) and "cost: " in text[len(plain) :] and "USD" in text[len(plain) :]
        return
    pytest.fail("no August journal of the corpus read from the cache")


def test_stats_refuses_a_wrong_price_file_as_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"models": {"claude-opus-4-8": {"input": "cheap"}}}')
    [case, *_] = runtime_stats()
    assert main(["stats", "--prices", str(bad), str(NEWEST_FILES), case["run_id"]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'models.claude-opus-4-8.input' must be a valid number (got 'cheap')" in err


# -- the widgets share the rule ------------------------------------------------------------------------------


def test_the_widgets_take_a_price_file_and_price_by_the_same_rule(tmp_path: Path) -> None:
    from journaltools.exports.facts import Tokens, check_prices

    path = price_file(tmp_path, BOTH)
    table = check_prices(path)
    assert table == read_prices(path)
    tokens = Tokens(1000, 200, 300, 400)
    assert (
        tokens.cost(table, "claude-opus-4-8")
        == cost_of(read_prices(path), "claude-opus-4-8", TokenCounts(1000, 200, 300, 400)).total
    )
    assert tokens.cost(table, "gpt-unknown") is None and tokens.cost(None, "claude-opus-4-8") is None


def test_the_samples_of_both_generations_are_priced_in_one_load() -> None:
    tables = jt.load(ROOT / "data" / "samples", strict=False, prices=BOTH)
    priced = {row["generation"] for row in tables.runs.to_pylist() if row["cost"] is not None}
    assert {"august", "newest"} <= priced
