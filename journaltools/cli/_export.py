"""``journaltools export``: runs as OpenTelemetry traces (OTLP JSON lines) and ATIF trajectories
(``exports/interchange.py``)."""

from __future__ import annotations

import argparse

from journaltools._base.oserrors import STDOUT
from journaltools.cli._output import UsageError, _note

EXPORT_HELP = (
    "write runs as OpenTelemetry traces (--otlp: OTLP JSON lines, one TracesData per run, the OpenTelemetry file "
    "exporter's format) and/or ATIF trajectories (--atif: one per line, which Arize Phoenix imports), in the shape "
    "fisk-ai's own telemetry uses; a journal with no record times (the August build) is marked undated and given "
    "no durations. Re-exporting gives the same bytes"
)


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    from journaltools.cli._options import output_path

    parser.add_argument("source", metavar="SOURCE")
    parser.add_argument("runs", nargs="*", metavar="RUN", help="only these runs, in this order (default: every run)")
    parser.add_argument(
        "--otlp",
        type=output_path,
        metavar="FILE",
        help="write the OTLP JSON lines file FILE (replaced; - for standard output)",
    )
    parser.add_argument(
        "--atif",
        type=output_path,
        metavar="FILE",
        help="write the ATIF JSON lines file FILE (replaced; - for standard output)",
    )
    parser.add_argument(
        "--content",
        action="store_true",
        help="include the conversation: the prompt, messages, thinking text, tool arguments and results (never the "
        "conversation token, nor a thinking signature)",
    )


def cmd_export(args: argparse.Namespace) -> int:
    from journaltools.cli._sources import _open  # the sources' code: not at --help
    from journaltools.exports.interchange import export

    if not args.otlp and not args.atif:
        raise UsageError("say where to write: --otlp FILE, --atif FILE or both")
    if args.otlp == args.atif == STDOUT:
        raise UsageError("--otlp and --atif cannot both be - (standard output): their lines would mix")
    with _open(args.source, "export") as backend:
        report = export(backend, args.runs or None, otlp=args.otlp, atif=args.atif, content=args.content)
    for run, why in report.skipped:
        _note("export", f"skipped {run}: {why}")
    written = " and ".join(f"{name} {path}" for name, path in (("OTLP", args.otlp), ("ATIF", args.atif)) if path)
    summary = (
        f"exported {len(report.runs)} runs ({report.spans} spans) to {written}"
        if args.otlp
        else f"exported {len(report.runs)} runs to {written}"
    )
    if STDOUT in (args.otlp, args.atif):  # the lines went to standard output: the summary must not mix with them
        _note("export", summary)
    else:
        print(summary)
    # A run named on the command line that could not be exported is a failure; in a whole source it is a note.
    return 1 if report.skipped and args.runs else 0
