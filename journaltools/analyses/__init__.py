"""Analyses of folded runs: the newest runtime's own ``session stats`` (``stats``), ``session query`` (``query``)
and ``session search`` (``search``) with their exact ``--json`` bytes (their shared pieces in ``runtime_bytes``), two
runs side by side (``rundiff``) and text search across runs (``textgrep``)."""
