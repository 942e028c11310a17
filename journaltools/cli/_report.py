"""``report``: one run as one self-contained HTML file, over ``journaltools.exports.report``."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from journaltools._base.oserrors import STDOUT
from journaltools.cli._output import UsageError, _note, _say
from journaltools.cli._sources import _open, _source_and_optional_run, read_named
from journaltools.sources.registry import default_source

if TYPE_CHECKING:
    from journaltools.exports.facts import Prices


def cmd_report(args: argparse.Namespace) -> int:
    from journaltools.exports.report import report_of_read, write_report
    from journaltools.tables.prices import read_prices

    prices = read_prices(args.prices) if args.prices else None  # a wrong price file: bad usage, before any read
    if args.all or args.zip:
        return _report_site(args, prices)
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


def _report_site(args: argparse.Namespace, prices: Prices | None) -> int:
    """``report SOURCE --all -o DIR [--zip]``: every run of SOURCE as one offline site."""
    from journaltools.exports.site import report_site

    if not args.all:
        raise UsageError("--zip writes the site of every run: give --all too")
    if len(args.targets) > 1:
        raise UsageError("--all reports every run of SOURCE: give SOURCE alone, no RUN")
    if os.fspath(args.output) == STDOUT:
        raise UsageError("--all writes a folder (or with --zip a .zip file): give -o a path, not -")
    source = args.targets[0] if args.targets else str(default_source())
    if args.strict:
        raise UsageError("--all reports every run as far as it reads: --strict is for one run")
    site = report_site(source, args.output, as_zip=args.zip, max_bytes=args.max_size, prices=prices)
    _say(site.summary())
    return 0
