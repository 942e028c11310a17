"""Shared pytest fixtures."""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.follow_process import Watched

# A real nats-server -js for the JetStream tests (see tests/nats_fixtures.py).
from tests.nats_fixtures import bucket_url, jetstream, jetstream_url, nats_admin, nats_server  # noqa: F401
from tests.paths import SAMPLES, TESTS

# These machines are shared: a wall-clock deadline per example only measures the neighbours.
settings.register_profile("journaltools", deadline=None)
settings.load_profile("journaltools")

#: The folders that say what a test needs, and so its marker: ``unit`` tests need nothing but the checkout,
#: ``integration`` tests a real server or worker processes, ``e2e`` tests a browser, a wheel build, Jupyter, killed
#: writers or a cluster. ``make check`` runs the unit tests alone.
KINDS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kind = Path(item.path).relative_to(TESTS).parts[0]
        if kind not in KINDS:
            raise pytest.UsageError(f"{item.nodeid}: a test file belongs in tests/unit, tests/integration or tests/e2e")
        item.add_marker(kind)
        # A unit file may hold a few cases that also replay their corpus into a real nats-server: those take the
        # server fixture, directly or through another, and are integration tests wherever they sit.
        if kind == "unit" and "nats_server" in getattr(item, "fixturenames", ()):
            item.add_marker("integration")


@pytest.fixture
def samples_dir(tmp_path: Path) -> Path:
    """A scratch copy of the committed sample journals, for tests that write to them or add files."""
    root = tmp_path / "samples"
    shutil.copytree(SAMPLES, root)
    return root


@pytest.fixture
def watched() -> Iterator[list[Watched]]:
    """The ``show --follow`` / ``ls --watch`` processes a test started (it appends them), stopped when it ends."""
    started: list[Watched] = []
    yield started
    for process in started:
        process.stop()
