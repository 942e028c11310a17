"""Analyses of folded runs: the newest runtime's own ``session stats/query/search`` with its exact ``--json`` bytes
(``session``), two runs side by side (``rundiff``) and text search across runs (``textgrep``)."""
