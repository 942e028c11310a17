"""Fixtures of the end-to-end tests."""

from tests.browser_fixtures import chromium  # noqa: F401
