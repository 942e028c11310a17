"""Fixture tooling, kept out of the library: the corpus generator (``generate``: realistic runs by the thousand,
to try the tools on or load-test them), the guided tour (``demo``) and a local JetStream cluster (``cluster``).
Nothing in the library imports this package."""
