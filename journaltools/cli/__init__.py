"""The ``journaltools`` command line: a thin layer that parses arguments, calls the library and turns
``JournalError`` into exit status 1 with one line on stderr (docs/interfaces.md).

Exit status: 0 success; 1 the request was refused or failed; 2 bad usage (``InvalidSource`` too: a source
that cannot be one as written, such as a port out of range; ``InvalidFilter``, a ``--where`` that cannot be one).
Whatever happens, stderr gets one line per problem and never a traceback; ``--debug`` adds the traceback of an
unexpected error. Human-readable output shows journal content's control characters escaped (``for_terminal``);
``--json`` output is exact JSON.

The parser is ``_parser`` (every value typed is read by ``_options``); each command's code is imported when
that command runs. ``meta.conversation_token`` is a credential: nothing here ever reads it, so no output can hold it.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
from collections.abc import Sequence

from journaltools.cli._output import UsageError
from journaltools.cli._parser import build_parser


def _fail(args: argparse.Namespace, message: str, status: int, *, trace: bool = False) -> int:
    from journaltools._base.text import for_terminal

    if args.debug and trace:
        traceback.print_exc()
    print(f"journaltools {args.command}: {for_terminal(message, newlines=False)}", file=sys.stderr)
    return status


def _quiet_streams() -> None:
    """Show what cannot be encoded escaped rather than failing (a terminal that is not UTF-8, say)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Imported past parsing: ``--help``, ``--version`` and bad usage end above without them.
    from journaltools._base.oserrors import storage_error
    from journaltools.cli._output import install_warning_format
    from journaltools.errors import InvalidFilter, InvalidPrices, InvalidSource, JournalError

    install_warning_format(f"journaltools {args.command}")  # a journaltools warning is one line
    _quiet_streams()
    try:
        return int(args.handler(args))
    except (UsageError, InvalidSource, InvalidPrices, InvalidFilter) as exc:
        return _fail(args, str(exc), 2)
    except JournalError as exc:
        return _fail(args, str(exc), 1)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep the interpreter's final flush quiet too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return _fail(args, "interrupted", 130)
    except OSError as exc:  # a path no backend maps: still one line naming it
        return _fail(args, str(storage_error(exc, exc.filename or "?", f"complete {args.command}")), 1)
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        hint = "" if args.debug else "; run it again with --debug for the traceback"
        return _fail(args, f"unexpected error: {detail}{hint}, and please report it", 1, trace=True)


if __name__ == "__main__":
    sys.exit(main())
