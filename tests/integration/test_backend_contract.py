"""The one backend suite (tests/backend_contract.py), run over the file backend and a real JetStream server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from journaltools.sources.file import FileBackend
from journaltools.sources.jetstream import JetStreamBackend
from tests.backend_contract import BackendContract


class TestFileBackend(BackendContract):
    exclusive_writers = True
    kind = "file"

    @pytest.fixture
    def backend(self, tmp_path: Path) -> Iterator[FileBackend]:
        with FileBackend(tmp_path / "journals", create=True) as backend:
            yield backend


class TestJetStreamBackend(BackendContract):
    exclusive_writers = False
    kind = "jetstream"

    @pytest.fixture
    def backend(self, jetstream: JetStreamBackend) -> JetStreamBackend:
        return jetstream
