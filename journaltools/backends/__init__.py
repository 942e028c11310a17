"""Backends move bytes; see ``base.Backend`` for the contract and ``registry.open_source`` for URLs."""
