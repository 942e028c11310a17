"""Fixture tooling, kept out of the library: the journal generator and builder (``generate``), the bundled sample
journals (``samples``), the guided tour (``demo``) and a local JetStream cluster (``cluster``).

Nothing in the library imports this package, with one exception the command line's interface asks for:
``journaltools samples DIR`` writes the sample journals, and so reaches ``testing.samples`` when it runs.
"""
