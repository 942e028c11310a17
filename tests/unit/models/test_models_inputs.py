"""What people hand journaltools, checked by its model: one line naming the field and the reason, the same line
from Python and from the command line, and a JSON Schema that accepts and refuses what the model does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from journaltools.cli import main
from journaltools.errors import InvalidConfig, InvalidSource
from journaltools.models import INPUT_NAMES, input_schema
from journaltools.models.inputs import INPUT_MODELS
from journaltools.ops.gate import Candidate, system_hash
from journaltools.sources.nats import parse_nats_url
from tests.paths import ROOT

# (configuration, the line it is refused with); None: accepted.
GATE_CONFIGS: list[tuple[Any, str | None]] = [
    ({"system": ["a & b"], "max_tokens": 10, "interactive": True}, None),
    ({"model": None}, None),  # null leaves the field as stored, like leaving it out
    ({"$schema": "./gate-config.schema.json", "model": "m"}, None),  # where an editor finds the schema
    ({"temperature": 0.2}, "unknown key 'temperature' (known: provider, model, system, "),
    ({"max_tokens": "many"}, "'max_tokens' must be an integer (got 'many')"),
    ({"max_tokens": 1.0}, "'max_tokens' must be an integer (got 1.0)"),
    ({"max_tokens": True}, "'max_tokens' must be an integer (got True)"),
    ({"max_iterations": 1 << 63}, "'max_iterations' must be less than or equal to 9223372036854775807"),
    ({"model": 3}, "'model' must be a string (got 3)"),
    ({"interactive": 1}, "'interactive' must be true or false (got 1)"),
    ({"system": "one block"}, "'system' must be a list (got 'one block')"),
    ({"system": ["a", 2]}, "'system[1]' must be a string (got 2)"),
    ({"system": ["a"], "system_hash": "0" * 64}, "'system' and 'system_hash' disagree: give one of them"),
    ([1, 2], "the configuration must be a JSON object"),
    ({"model": 3, "provider": 4}, "'provider' must be a string (got 4) (and 1 more)"),
]


@pytest.mark.parametrize(("config", "refusal"), GATE_CONFIGS)
def test_a_gate_configuration_is_refused_naming_the_field_and_why(config: Any, refusal: str | None) -> None:
    if refusal is None:
        Candidate.from_config(config)
        return
    with pytest.raises(InvalidConfig) as raised:
        Candidate.from_config(config)
    assert str(raised.value).startswith(refusal)
    assert "\n" not in str(raised.value)


def test_a_gate_configuration_keeps_what_it_says() -> None:
    candidate = Candidate.from_config({"system": ["a & b"], "model": "m", "max_tokens": 10, "interactive": False})
    assert candidate.system_hash == system_hash(["a & b"])
    assert (candidate.model, candidate.max_tokens, candidate.interactive, candidate.provider) == ("m", 10, False, None)
    assert Candidate.from_config({"$schema": "gate.json"}) == Candidate()
    with pytest.raises(InvalidConfig, match=r"unknown key 'schema_url' \(known: .*, interactive, \$schema\)"):
        Candidate.from_config({"schema_url": "gate.json"})  # the key is spelt as editors spell it
    agreeing = Candidate.from_config({"system": ["x"], "system_hash": system_hash(["x"])})
    assert agreeing.system_hash == system_hash(["x"])


def test_the_command_line_says_the_same_line_as_python(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "next.json"
    config.write_text(json.dumps({"max_tokens": "many"}))
    code = main(["gate", str(ROOT / "data" / "samples"), "deferred-waiting", "--config", str(config)])
    err = capsys.readouterr().err
    with pytest.raises(InvalidConfig) as raised:
        Candidate.from_config({"max_tokens": "many"})
    assert code == 2
    assert err == f"journaltools gate: --config {config}: {raised.value}\n"


@pytest.mark.parametrize(("config", "refusal"), GATE_CONFIGS)
def test_the_gate_configuration_schema_agrees_with_its_model(config: Any, refusal: str | None) -> None:
    schema = input_schema("gate-config")
    jsonschema.Draft202012Validator.check_schema(schema)
    valid = jsonschema.Draft202012Validator(schema).is_valid(config)
    beyond_schema = ({"system": ["a"], "system_hash": "0" * 64}, {"max_tokens": 1.0})
    if json.dumps(config) in map(json.dumps, beyond_schema):  # by spelling: True == 1.0 in Python
        # Beyond a schema: a hash agreeing with the blocks; and JSON Schema calls 1.0 an integer, where the
        # runtime's Go decoder (and the model) refuse it for an int64.
        assert valid
    else:
        assert valid == (refusal is None)


@pytest.mark.parametrize(
    ("query", "refusal"),
    [
        ("?replicas=three", "'replicas' must be a whole number from 1 to 5 (got 'three')"),
        ("?replicas=6", "'replicas' must be less than or equal to 5 (got 6)"),
        ("?replicas=0", "'replicas' must be greater than or equal to 1 (got 0)"),
        ("?replicas=%2B3", "'replicas' must be a whole number from 1 to 5 (got '+3')"),
        ("?create=yes", "'create' must be 1 or 0 (or true or false) (got 'yes')"),
        ("?prefix=a..b", "'prefix' must be dot-separated tokens of [A-Za-z0-9_-] (got 'a..b')"),
        ("?speed=9", "unknown parameter 'speed' (known: create, prefix, replicas)"),
    ],
)
def test_a_nats_source_parameter_is_refused_naming_it(query: str, refusal: str) -> None:
    url = f"nats://alice:S3cret@localhost:4222/RUNS{query}"
    with pytest.raises(InvalidSource) as raised:
        parse_nats_url(url)
    assert str(raised.value) == f"'nats://***@localhost:4222/RUNS{query}': {refusal}"


def test_nats_source_parameters_are_read_as_a_url_spells_them() -> None:
    location = parse_nats_url("nats://localhost:4222/RUNS?create=true&prefix=a.b&replicas=3&replicas=2")
    assert (location.create, location.prefix, location.replicas) == (True, "a.b", 2)  # the last repeat wins
    plain = parse_nats_url("nats://localhost:4222/RUNS")
    assert (plain.create, plain.prefix, plain.replicas) == (False, None, 1)


def test_every_input_has_a_schema() -> None:
    assert set(INPUT_NAMES) == set(INPUT_MODELS)
    for name in INPUT_NAMES:
        schema = input_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False  # an editor flags a misspelt key, as the model does
        assert all(field.get("description") for field in schema["properties"].values())


def test_the_nats_source_model_and_the_connection_code_agree() -> None:
    from journaltools.models import inputs
    from journaltools.sources import nats

    assert tuple(inputs.NatsSourceParameters.model_fields) == nats.SOURCE_URL_PARAMETERS
    assert inputs.MAX_REPLICAS == nats.MAX_REPLICAS  # the bucket URLs' replicas= reads the same bound


def test_the_gate_configuration_model_names_every_candidate_field() -> None:
    from dataclasses import fields

    from journaltools.models.inputs import GateConfig
    from journaltools.ops.gate import FIELD_CLASSES

    keys = {field.alias or name for name, field in GateConfig.model_fields.items()}
    assert keys == {field.name for field in fields(Candidate)} | {"system", "$schema"}
    assert set(FIELD_CLASSES) < keys
