"""Benchmarks printing ratios, not run by ``make test``: ``python -m benchmarks`` runs them all."""
