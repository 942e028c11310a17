"""Shared pytest fixtures."""

# A real nats-server -js for the JetStream tests (see tests/nats_fixtures.py).
from tests.nats_fixtures import jetstream, jetstream_url, nats_admin, nats_server  # noqa: F401
