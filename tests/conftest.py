"""Shared pytest fixtures."""

import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# A real nats-server -js for the JetStream tests (see tests/nats_fixtures.py).
from tests.nats_fixtures import bucket_url, jetstream, jetstream_url, nats_admin, nats_server  # noqa: F401

# These machines are shared: a wall-clock deadline per example only measures the neighbours.
settings.register_profile("journaltools", deadline=None)
settings.load_profile("journaltools")

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


@pytest.fixture
def samples_dir(tmp_path: Path) -> Path:
    """A scratch copy of the committed sample journals, for tests that write to them or add files."""
    root = tmp_path / "samples"
    shutil.copytree(SAMPLES, root)
    return root
