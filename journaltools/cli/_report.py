"""``report``: one run as one self-contained HTML file, over ``journaltools.runreport``."""

from __future__ import annotations

import argparse

from journaltools.cli._output import UsageError, _say
from journaltools.cli._sources import _default_source, _is_source, _only_run, _open


def cmd_report(args: argparse.Namespace) -> int:
    from journaltools.runreport import report_of_read, write_report

    words = args.targets
    if len(words) > 2:
        raise UsageError(f"expected [SOURCE] [RUN], got {len(words)} arguments")
    if len(words) == 2:
        source, run = words
    elif len(words) == 1 and _is_source(words[0]):
        source, run = words[0], None
    elif len(words) == 1:
        source, run = _default_source(), words[0]
    else:
        source, run = _default_source(), None
    with _open(source, "report") as backend:
        read = backend.read_run(run if run is not None else _only_run(backend), strict=args.strict)
        url = backend.url
    made = report_of_read(read, source=url, strict=args.strict, max_bytes=args.max_size)
    _say(write_report(made, args.output).summary())
    return 0
