"""Cost from the user's own prices: one price table, one cost rule, used by the tables, ``stats``, the audit and
the widgets.

journaltools ships no prices and never guesses one: any bundled list would be presented as current long after it
stopped being so. The user hands a price table (``--prices FILE``, ``load(source, prices=...)``) that gives, per
model, a price per million tokens of each tier:

- ``input``: the uncached input tokens (the runtime's ``in_tokens``);
- ``output``: the output tokens, thinking included (``out_tokens``; ``thinking_tokens`` is a part of it and is
  never priced again);
- ``cache_read``: tokens read from the provider's prompt cache (``cache_read_tokens``);
- ``cache_create``: tokens written to it, what providers call a cache write (``cache_create_tokens``).

The rule (``cost_of``):

- a model the table does not name costs **null** in every tier and in total, never zero; the model is named
  (``unpriced``, a ``no_price`` finding in the tables, a note in ``stats``);
- a tier the table leaves out for a priced model costs 0 when the tier's count is 0 and null otherwise (the total
  is then null too): a count of zero costs nothing at any price, a count without a price is not guessed;
- both generations journal the four counts on every assistant record, and the runtime writes a cache count of 0 by
  leaving it out, so an absent cache count *is* a recorded zero: it costs 0 when the model is priced;
- every cost is a finite number: a price is at most ``MAX_PRICE``, so that the most tokens a journal can count
  (int64) times it is at most the largest float; a larger price is refused where the table is read, and ``cost_of``
  refuses one it is handed another way (``InvalidPrices``), so no table and no ``--json`` document ever holds an
  infinite cost.

The table is validated at the edge (``journaltools.models.inputs.PricesFile``, ``schema --input prices``) by
``read_prices`` and ``prices_of``; this module itself never imports pydantic.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from journaltools._base.numbers import FINITE_TIMES_INT64
from journaltools.errors import InvalidPrices

#: The priced tiers, in the order every face shows them.
TIERS: Final = ("input", "output", "cache_read", "cache_create")
#: Prices are per this many tokens.
PER_TOKENS: Final = 1_000_000
#: The largest price per million tokens (``models.inputs.MAX_PRICE``, which a price file is checked against): the
#: most tokens a journal counts (int64) times it is then at most the largest float, so every cost is finite.
MAX_PRICE: Final = FINITE_TIMES_INT64
#: The largest price file read: a table of every model ever priced is a few kilobytes, so anything near this is
#: not one (and a file without end, ``/dev/zero`` say, is never read whole).
MAX_PRICE_FILE_BYTES: Final = 4 << 20


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """One model's prices per million tokens; None for a tier the table leaves out."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_create: float | None = None

    def of(self, tier: str) -> float | None:
        price: float | None = getattr(self, tier)
        return price


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The user's prices: model (exactly as the journal's fingerprint names it) → ``ModelPrice``, and the currency
    they are in (only ever shown, never converted)."""

    models: Mapping[str, ModelPrice]
    currency: str | None = None

    def price_of(self, model: str | None) -> ModelPrice | None:
        return None if model is None else self.models.get(model)


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """The four priced counts of a response or a run, and its thinking tokens: a part of ``output``, shown apart
    but never priced again."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_create: int = 0
    thinking: int = 0

    def of(self, tier: str) -> int:
        count: int = getattr(self, tier)
        return count


@dataclass(frozen=True, slots=True)
class Cost:
    """A cost per tier and in total, in the table's currency; None where it cannot be known (see the module doc)."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_create: float | None = None
    total: float | None = None

    def of(self, tier: str) -> float | None:
        value: float | None = getattr(self, tier)
        return value


#: The cost of a model without a price: null everywhere.
UNPRICED: Final = Cost()


def cost_of(prices: PriceTable, model: str | None, counts: TokenCounts) -> Cost:
    """What ``counts`` of ``model`` cost by ``prices``: the one cost rule of journaltools (module doc)."""
    price = prices.price_of(model)
    if price is None:
        return UNPRICED
    parts: dict[str, float | None] = {}
    for tier in TIERS:
        count, per_million = counts.of(tier), price.of(tier)
        if per_million is not None:
            if not 0 <= per_million <= MAX_PRICE:  # also NaN; a table read by ``prices_of`` never holds one
                raise InvalidPrices(
                    f"the {tier} price of model {model!r} is {per_million!r} per million tokens: a price is a "
                    f"number from 0 to {MAX_PRICE:.3g}, so that every cost is a finite number"
                )
            parts[tier] = count * per_million / PER_TOKENS
        else:
            parts[tier] = 0.0 if count == 0 else None
    known = [part for part in parts.values() if part is not None]
    total = math.fsum(known) if len(known) == len(parts) else None
    return Cost(**parts, total=total)


def unpriced(prices: PriceTable, model: str | None, counts: TokenCounts) -> str | None:
    """Why ``counts`` of ``model`` have no total cost, in one line naming the model (None when they have one)."""
    price = prices.price_of(model)
    if model is None:
        return "no model recorded (no meta record), so no price applies"
    if price is None:
        return f"no price for model {model!r} in the price table: its cost is null, not zero"
    missing = [tier for tier in TIERS if price.of(tier) is None and counts.of(tier)]
    if not missing:
        return None
    tiers = ", ".join(f"{tier} ({counts.of(tier):,} tokens)" for tier in missing)
    return f"no {' or '.join(missing)} price for model {model!r} in the price table: {tiers} cost null, not zero"


# -- the edge: reading and checking a table (pydantic is imported here only) ------------------------------------

PricesLike = PriceTable | str | os.PathLike[str] | Mapping[str, Any]


def prices_of(value: PricesLike | None) -> PriceTable | None:
    """A checked ``PriceTable`` from what a user hands over: a ``PriceTable`` (as it is), a path to a price file
    (``read_prices``), the file's document as a mapping (``{"models": {...}, "currency": ...}``) or, as the widgets
    have always taken it, the bare ``{model: {tier: price}}`` mapping. Raises ``InvalidPrices`` naming the model
    and the field at fault."""
    if value is None or isinstance(value, PriceTable):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_prices(value)
    document = value if not isinstance(value, Mapping) or _is_document(value) else {"models": value}
    return _checked(document, "prices")


def _is_document(value: Mapping[str, Any]) -> bool:
    """Whether a mapping is the file's document rather than bare models: it has ``models`` and nothing but
    ``currency`` and ``$schema`` beside it (so a bare table cannot name a single model ``models``)."""
    return "models" in value and set(value) <= {"models", "currency", "$schema"}


def read_prices(path: str | os.PathLike[str]) -> PriceTable:
    """The price file at ``path``: JSON, or TOML when its name ends in ``.toml`` (``schema --input prices``).
    Raises ``InvalidPrices`` naming the file and the model and field at fault."""
    from journaltools._base.durable import IrregularFile, read_regular_file

    where = os.fspath(path)
    try:
        # The one opener: a FIFO or a device named here is refused at once, never waited on nor read.
        data = read_regular_file(where, limit=MAX_PRICE_FILE_BYTES + 1, follow_links=True)
    except IrregularFile as exc:
        raise InvalidPrices(f"cannot read the price file {where}: it is {exc.kind}, not a regular file") from None
    except OSError as exc:
        raise InvalidPrices(f"cannot read the price file {where}: {exc.strerror or exc}") from None
    if len(data) > MAX_PRICE_FILE_BYTES:
        raise InvalidPrices(f"the price file {where} is over {MAX_PRICE_FILE_BYTES:,} bytes: not a price table")
    try:
        if where.endswith(".toml"):
            import tomllib

            document: Any = tomllib.loads(data.decode("utf-8"))
        else:
            import json

            # NaN, Infinity and 1e400 are read as floats, so that the model refuses them naming the model and tier.
            document = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # RecursionError: arrays or tables nested deeper than the parser recurses, which no price table is.
        kind = "TOML" if where.endswith(".toml") else "JSON"
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidPrices(f"the price file {where} is not {kind}: {why}") from None
    return _checked(document, f"the price file {where}")


def _checked(document: Any, where: str) -> PriceTable:
    from journaltools.models.inputs import PricesFile, validated

    try:
        checked = validated(PricesFile, document, InvalidPrices)
    except InvalidPrices as exc:
        raise InvalidPrices(f"{where}: {exc}") from None
    models = {name: ModelPrice(**price.model_dump()) for name, price in checked.models.items()}
    return PriceTable(models, checked.currency)


__all__ = [
    "MAX_PRICE",
    "PER_TOKENS",
    "TIERS",
    "UNPRICED",
    "Cost",
    "ModelPrice",
    "PriceTable",
    "PricesLike",
    "TokenCounts",
    "cost_of",
    "prices_of",
    "read_prices",
    "unpriced",
]
