"""Cost columns, for a load given the user's prices (``load(source, prices=FILE)``, ``audit --prices FILE``).

``with_costs`` adds ``cost_input``, ``cost_output``, ``cost_cache_read``, ``cost_cache_create`` and ``cost``
(float64, in the price table's currency) to ``runs`` and ``responses``, by the one cost rule
(``journaltools.tables.prices.cost_of``): a run is priced by its fingerprint's model, each response by its run's
(the journal records no other model). Where no price applies a cost is null, never zero, and a ``no_price`` finding
(info) names the run and the model, or the tier the table leaves out. Without prices the tables are left as they
are: no cost column at all.

It works on one batch of whole runs (what ``iter_tables`` yields), so a response always finds its run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from journaltools.protocol.findings import Finding
from journaltools.tables.columns import findings_of, findings_table
from journaltools.tables.prices import TIERS, Cost, PriceTable, TokenCounts, cost_of, unpriced
from journaltools.tables.schema import COST_COLUMNS, PRICED_TABLES, Tables, schema_of

#: The token columns priced, tier by tier (``journaltools.tables.prices.TIERS``).
TOKEN_COLUMNS = ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens")


def total_tokens(row: Mapping[str, Any]) -> int | None:
    """A run's tokens as the runtime CLI totals them (input, output and both cache tiers; thinking is already part
    of output), from a ``runs`` row; None when the run was not folded (its counters are all null)."""
    parts = [row.get(name) for name in TOKEN_COLUMNS]
    if all(part is None for part in parts):
        return None
    return sum(int(part or 0) for part in parts)


def _counts(table: pa.Table) -> list[TokenCounts | None]:
    """Each row's four counts; None where the run was not folded (its counters are null)."""
    columns = [table.column(name).to_pylist() for name in TOKEN_COLUMNS]
    return [None if any(value is None for value in row) else TokenCounts(*row) for row in zip(*columns, strict=True)]


def _priced(table: pa.Table, name: str, costs: list[Cost | None]) -> pa.Table:
    """``table`` with its cost columns (the ``schema_of(name, priced=True)`` schema)."""
    tiers = [pa.array([None if cost is None else cost.of(tier) for cost in costs], pa.float64()) for tier in TIERS]
    total = pa.array([None if cost is None else cost.total for cost in costs], pa.float64())
    schema = schema_of(name, priced=True)
    arrays = [*table.columns, *tiers, total]
    return pa.Table.from_arrays(arrays, schema=schema)


def _in_run_order(findings: list[Finding], runs: list[str]) -> list[Finding]:
    """Findings in run order (a stable sort: each run's own findings keep their order, its ``no_price`` last)."""
    position = {run: index for index, run in enumerate(runs)}
    return sorted(findings, key=lambda finding: position.get(finding.run or "", -1))


def with_costs(tables: Tables, prices: PriceTable | None) -> Tables:
    """``tables`` with cost columns on ``runs`` and ``responses`` and a ``no_price`` finding per run that has no
    total cost (module doc); ``tables`` as they are when ``prices`` is None."""
    if prices is None:
        return tables
    runs = tables.runs
    run_ids: list[str] = runs.column("run").to_pylist()
    models: list[str | None] = runs.column("model").to_pylist()
    sources: list[str] = runs.column("source").to_pylist()
    run_costs: list[Cost | None] = []
    added: list[Finding] = []
    for run, model, source, counts in zip(run_ids, models, sources, _counts(runs), strict=True):
        if counts is None:  # not folded: no counters to price (its findings say why)
            run_costs.append(None)
            continue
        run_costs.append(cost_of(prices, model, counts))
        why = unpriced(prices, model, counts) if model is not None else None
        if why is not None:
            added.append(Finding.of(run, None, "no_price", why, source))
    model_of = dict(zip(run_ids, models, strict=True))
    responses = tables.responses
    response_models = [model_of.get(run) for run in responses.column("run").to_pylist()]
    response_costs: list[Cost | None] = [
        cost_of(prices, model, counts) if counts is not None else None
        for model, counts in zip(response_models, _counts(responses), strict=True)
    ]
    findings = tables.findings
    if added:
        findings = findings_table(_in_run_order([*findings_of(findings), *added], run_ids))
    return dataclasses.replace(
        tables,
        runs=_priced(runs, "runs", run_costs),
        responses=_priced(responses, "responses", response_costs),
        findings=findings,
    )


__all__ = ["COST_COLUMNS", "PRICED_TABLES", "TOKEN_COLUMNS", "with_costs"]
