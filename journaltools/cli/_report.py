"""``report``: one run as one self-contained HTML file, over ``journaltools.exports.report``."""

from __future__ import annotations

import argparse

from journaltools.cli._output import _note, _say
from journaltools.cli._sources import _open, _source_and_optional_run, read_named


def cmd_report(args: argparse.Namespace) -> int:
    from journaltools.exports.report import report_of_read, write_report
    from journaltools.tables.prices import read_prices

    prices = read_prices(args.prices) if args.prices else None  # a wrong price file: bad usage, before any read
    source, run = _source_and_optional_run(args.targets)
    with _open(source, "report") as backend:
        read = read_named(backend, run, strict=args.strict)
        url = backend.url
    made = report_of_read(read, source=url, strict=args.strict, max_bytes=args.max_size, prices=prices)
    written = write_report(made, args.output)
    if written.path is None:  # the HTML went to standard output: the summary must not end up inside it
        _note("report", written.summary())
    else:
        _say(written.summary())
    return 0
