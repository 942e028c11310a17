"""What people hand journaltools, one model each: the resume gate's candidate configuration (``gate --config``),
the query parameters of a ``nats://`` source and a price table (``--prices``). ``validated`` checks a value against
its model and turns pydantic's errors into the journaltools error of that input, in one line naming the field and
the reason.

Models are strict: a JSON ``"3"`` is not the number 3, ``1`` is not ``true``. Where an input is written as text
(a URL's query), the model reads that spelling itself, so the rule lives in one place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from journaltools._base.numbers import FINITE_TIMES_INT64
from journaltools.errors import JournalError

M = TypeVar("M", bound=BaseModel)

#: The Go runtime's fingerprint integers are int64.
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
Int64 = Annotated[int, Field(ge=_INT64_MIN, le=_INT64_MAX)]


class _Input(BaseModel):
    """An input: strict types, and a key the model does not know is an error, never silently ignored."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# -- gate --config -----------------------------------------------------------------------------------------------


class GateConfig(_Input):
    """The configuration a resume would run with (``journaltools gate --config FILE``): the run's fingerprint
    fields, ``system`` in place of ``system_hash`` if you like, and ``interactive``. A field left out (or null)
    is not compared: the stored value stands."""

    model_config = ConfigDict(title="journaltools gate --config")

    provider: str | None = Field(None, description="the provider; it can never change, even with --force")
    model: str | None = Field(None, description="the model; a change needs --force")
    system: list[str] | None = Field(
        None,
        description="the system prompt as its list of blocks; journaltools computes its system_hash (the lowercase "
        "hex SHA-256 of the Go JSON encoding of the list)",
    )
    system_hash: str | None = Field(
        None, description="the system prompt's hash, when the blocks are not given; a change needs --force"
    )
    tools_hash: str | None = Field(None, description="the tool set's hash; a change drops the approvals")
    thinking_mode: str | None = Field(None, description="a change needs --force")
    reasoning_effort: str | None = Field(None, description='a change needs --force (absent and "" are the same)')
    max_tokens: Int64 | None = Field(None, description="the cumulative token budget; a change is reported only")
    max_iterations: Int64 | None = Field(None, description="a change is reported only")
    interactive: bool | None = Field(None, description="chat (true) or one-shot (false); it can never change")
    schema_url: str | None = Field(
        None,
        alias="$schema",
        description="not compared: where an editor finds this schema (schema --input gate-config)",
    )

    @model_validator(mode="after")
    def _one_system_prompt(self) -> GateConfig:
        if self.system is not None and self.system_hash is not None:
            from journaltools.protocol.encode import system_hash

            if system_hash(self.system) != self.system_hash:
                raise ValueError("'system' and 'system_hash' disagree: give one of them")
        return self


# -- nats:// source parameters -----------------------------------------------------------------------------------

#: JetStream keeps at most five copies of a stream.
MAX_REPLICAS: Final = 5
#: A subject prefix: dot-separated tokens a subject may hold without wildcards.
PREFIX_PATTERN: Final = r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$"
_PREFIX: Final = re.compile(PREFIX_PATTERN)


def _url_replicas(value: Any) -> Any:
    """``replicas=3`` as a URL writes it: only ASCII digits are a number (``int`` would take ``+3`` or ``٣``)."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            raise ValueError(f"must be a whole number from 1 to {MAX_REPLICAS}")
        return int(value)
    return value


def _url_flag(value: Any) -> Any:
    """``create=1`` as a URL writes it: ``1``/``true`` or ``0``/``false``, nothing looser."""
    if isinstance(value, str):
        if value not in _FLAGS:
            raise ValueError("must be 1 or 0 (or true or false)")
        return _FLAGS[value]
    return value


_FLAGS: Final = {"1": True, "true": True, "0": False, "false": False}


def _subject_prefix(value: Any) -> Any:
    if isinstance(value, str) and not _PREFIX.fullmatch(value):
        raise ValueError("must be dot-separated tokens of [A-Za-z0-9_-]")
    return value


class NatsSourceParameters(_Input):
    """The query parameters of a JetStream source, ``nats://[user:pass@]host:port/STREAM?create=1&prefix=...``
    (also ``tls://``, ``ws://``, ``wss://``). A URL writes them as text: ``replicas=3``, ``create=1``."""

    model_config = ConfigDict(title="journaltools nats:// source parameters")

    create: Annotated[bool, BeforeValidator(_url_flag)] = Field(
        False, description="create the stream when it is missing, with the runtime's settings (URL: 1 or 0)"
    )
    prefix: Annotated[str | None, BeforeValidator(_subject_prefix)] = Field(
        None,
        json_schema_extra={"pattern": PREFIX_PATTERN},
        description="the subject prefix a created stream gets (default fisk.sessions); an existing stream is "
        "bound with its own prefix",
    )
    replicas: Annotated[int, BeforeValidator(_url_replicas)] = Field(
        1, ge=1, le=MAX_REPLICAS, description="copies of a created stream a cluster keeps"
    )


# -- --prices ----------------------------------------------------------------------------------------------------

#: The largest price per million tokens: the most tokens a journal counts (int64) times it is then at most the
#: largest float, so every tier's cost and their sum are finite numbers. About 1.95e289, far beyond any real price.
MAX_PRICE: Final = FINITE_TIMES_INT64


#: A price: a finite number, zero or more (JSON has no NaN or Infinity; TOML and Python do), and at most the
#: largest whose costs are finite numbers (``MAX_PRICE``).
Price = Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]


class ModelPrices(_Input):
    """One model's prices, per million tokens of each tier. A tier left out is not priced: a count of it costs
    null (a count of 0 costs 0), never a guessed zero."""

    model_config = ConfigDict(title="prices of one model")

    input: Price | None = Field(None, description="per million uncached input tokens (in_tokens)")
    output: Price | None = Field(None, description="per million output tokens, thinking included (out_tokens)")
    cache_read: Price | None = Field(None, description="per million tokens read from the prompt cache")
    cache_create: Price | None = Field(
        None, description="per million tokens written to the prompt cache (a cache write; cache_create_tokens)"
    )

    @model_validator(mode="before")
    @classmethod
    def _known_tiers(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            unknown = sorted(str(key) for key in value if key not in cls.model_fields)
            if unknown:
                tiers = ", ".join(cls.model_fields)
                raise ValueError(f"has {', '.join(unknown)}; the kinds are {tiers} (per million tokens)")
        return value


class PricesFile(_Input):
    """A price table (``--prices FILE``, ``load(source, prices=FILE)``), in JSON or TOML. journaltools ships no
    prices: a model the table does not name gets a null cost, and is named."""

    model_config = ConfigDict(title="journaltools --prices")

    models: dict[str, ModelPrices] = Field(
        description="model, exactly as the journal's fingerprint names it → its prices per million tokens"
    )
    currency: str | None = Field(None, description="the prices' currency (shown with each cost, never converted)")
    schema_url: str | None = Field(
        None, alias="$schema", description="where an editor finds this schema (schema --input prices)"
    )


#: ``journaltools schema --input NAME``.
INPUT_MODELS: Final[dict[str, type[_Input]]] = {
    "gate-config": GateConfig,
    "nats-source": NatsSourceParameters,
    "prices": PricesFile,
}


# -- errors ------------------------------------------------------------------------------------------------------


def validated(model: type[M], value: Any, error: type[JournalError], *, key_word: str = "key") -> M:
    """``value`` as ``model``, or ``error`` with one line naming the first field at fault and why (and how many
    more there are). ``key_word`` is what the input calls its keys in that line (a URL has parameters)."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise error(describe(model, problems[0], key_word) + more) from None


def describe(model: type[BaseModel], problem: ErrorDetails, key_word: str = "key") -> str:
    """One pydantic error as a line a person reads: ``'max_tokens' must be an integer (got 'many')``."""
    kind, location = problem["type"], problem["loc"]
    where = _path(location)
    if kind == "extra_forbidden":
        known = ", ".join(field.alias or name for name, field in model.model_fields.items())
        return f"unknown {key_word} {where!r} (known: {known})"
    if not location:
        if kind in ("model_type", "dict_type"):
            return "the configuration must be a JSON object"
        return _reason(problem)
    return f"{where!r} {_reason(problem)}{_got(problem)}"


_REASONS: Final = {
    "missing": "is required",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
}


def _reason(problem: ErrorDetails) -> str:
    if problem["type"] in _REASONS:
        return _REASONS[problem["type"]]
    context = problem.get("ctx") or {}
    if problem["type"] == "value_error" and "error" in context:
        return str(context["error"])
    if problem["type"] == "less_than_equal" and isinstance(context.get("le"), float):
        return f"must be at most {context['le']:.3g}"  # pydantic writes a float bound out in full: 295 digits
    message = problem["msg"]  # pydantic's own words for the rest ("Input should be less than or equal to 5")
    return "must be" + message.removeprefix("Input should be") if message.startswith("Input should be") else message


def _got(problem: ErrorDetails) -> str:
    if problem["type"] == "missing":
        return ""
    value = problem.get("input")
    if problem["type"] == "value_error" and isinstance(value, Mapping):
        return ""  # a model's own check of a whole object says what is wrong with it
    if isinstance(value, str | int | float | bool) or value is None:
        shown = repr(value)
        return f" (got {shown})" if len(shown) <= 40 else ""
    return f" (got a {_json_kind(value)})"


def _json_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "JSON object"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def _path(location: tuple[int | str, ...]) -> str:
    """``('system', 1)`` → ``system[1]``."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text
