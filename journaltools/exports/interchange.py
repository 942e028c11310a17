"""Runs as OpenTelemetry traces (OTLP JSON lines) and as ATIF trajectories, for the tools people already use.

fisk-ai can send live OpenTelemetry GenAI traces, but that is off by default, so most runs exist only as journals.
This module turns a folded journal into the trace fisk-ai's own telemetry would have sent, in the same shape:

    invoke_agent {agent}          the run (root)
    ├── chat {model}              one per model response (an assistant record)
    ├── execute_tool {name}       one per tool call (a tool_use block)
    └── ...

with the ``gen_ai.*`` attributes of the OpenTelemetry GenAI semantic conventions (the 1.41 version fisk-ai pins)
and fisk-ai's own ``fisk.*`` ones. An OTLP file holds one ``TracesData`` per line, the OpenTelemetry file
exporter's format, one line per run. An ATIF file (the Agent Trajectory Interchange Format, which Arize Phoenix
imports) holds one trajectory per line.

What the export promises:

- **Deterministic.** Trace and span ids are hashes of the run id and the journal seqs, and the JSON is written in
  one fixed order, so exporting the same journals again gives the same bytes.
- **Honest time.** A span's times come from the records' own times: a chat span runs from the record before the
  model's response to the response; a tool span ends at the record that ended its wait (its result, else its
  deferral) and starts where the runtime's timing rule starts it (``folding.facts``), and has no length when that
  rule leaves it untimed. A journal whose records carry no time (every August journal) holds one time, its
  ``meta.created``: every span of its trace starts and ends there, with no duration, and the trace says
  ``fisk.undated=true`` (on the resource and the root span). Nothing is spread out to look like a timeline.
- **Content only when asked.** Without ``content`` a trace holds structure, counts and times; with it, the
  messages (``gen_ai.input.messages`` / ``gen_ai.output.messages``), tool arguments and results. A thinking
  block's signature and a provider block's payload never; the conversation token never (nothing here reads it).
- What a journal does not hold is not made up: it records the configured model, not the model a response
  named, so ``gen_ai.response.model`` is left out; an August result says nothing of dispatch, so its outcome is
  ``answered``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from journaltools._base.oserrors import STDOUT, writing
from journaltools.errors import ExportError
from journaltools.exports.atif import ATIF_SCHEMA_VERSION, atif_trajectory, atif_trajectory_of
from journaltools.exports.otlp import otlp_trace, otlp_trace_of
from journaltools.exports.runview import (
    OUTCOMES,
    outcome,
    prepare,
)
from journaltools.folding.run import FoldedRun, fold_run

if TYPE_CHECKING:
    from journaltools.sources.base import Backend


@dataclass(slots=True)
class ExportReport:
    """What one export wrote: the runs exported, in order, and those left out with why."""

    runs: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    spans: int = 0


# -- what both formats read off a run ------------------------------------------------------------------------------


# -- GenAI message parts (content) ---------------------------------------------------------------------------------


# -- OTLP ----------------------------------------------------------------------------------------------------------


# -- ATIF ----------------------------------------------------------------------------------------------------------


# -- reading sources and writing files -----------------------------------------------------------------------------


def iter_folded(source: str | os.PathLike[str] | Backend, runs: Sequence[str] | None = None) -> Iterator[FoldedRun]:
    """Each run of ``source`` (all of them, or ``runs`` in the order given), read and folded leniently: a refused
    journal is exported as far as it folds, with ``fisk.run.status`` ``invalid``."""
    from journaltools.sources.base import Backend
    from journaltools.sources.registry import open_source

    if isinstance(source, Backend):
        wanted = list(runs) if runs else source.list_runs()
        for run in wanted:
            yield fold_run(source.read_run(run, strict=False), strict=False)
        return
    with open_source(str(source)) as backend:
        yield from iter_folded(backend, runs)


def export(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    otlp: str | os.PathLike[str] | None = None,
    atif: str | os.PathLike[str] | None = None,
    content: bool = False,
) -> ExportReport:
    """Write the runs of ``source`` (all, or ``runs``) as OTLP JSON lines to ``otlp`` and/or ATIF JSON lines to
    ``atif``, one line per run, in the source's run order. A run that cannot be exported (no meta record) is
    left out and named in ``ExportReport.skipped``. Each file is written whole or not at all, replacing what is
    there (a link is replaced, never followed; a FIFO, a device or a directory is refused, ``StorageError``);
    ``-`` is standard output."""
    if otlp is None and atif is None:
        raise ExportError("nothing to export to: give otlp, atif or both")
    if otlp is not None and atif is not None and os.fspath(otlp) == os.fspath(atif) == STDOUT:
        raise ExportError("otlp and atif cannot both go to standard output (-): their lines would mix")
    report = ExportReport()
    with ExitStack() as stack:
        # Each file is written as it goes (a run at a time, so a large source is never held) into a temporary
        # file beside it, renamed into place only when every run is written.
        otlp_file = _Lines(stack.enter_context(writing(otlp, "write the export"))) if otlp is not None else None
        atif_file = _Lines(stack.enter_context(writing(atif, "write the export"))) if atif is not None else None
        for folded in iter_folded(source, runs):
            prepared = prepare(folded)
            if isinstance(prepared, str):
                report.skipped.append((folded.run, prepared))
                continue
            if otlp_file is not None:
                trace = otlp_trace_of(prepared, content)
                report.spans += len(trace["resourceSpans"][0]["scopeSpans"][0]["spans"])
                otlp_file.write(msgspec.json.encode(trace))
            if atif_file is not None:
                atif_file.write(msgspec.json.encode(atif_trajectory_of(prepared, content)))
            report.runs.append(folded.run)
    return report


@dataclass(frozen=True, slots=True)
class _Lines:
    """JSON lines into an export's file."""

    handle: BinaryIO

    def write(self, line: bytes) -> None:
        self.handle.write(line + b"\n")


def export_otlp(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    path: str | os.PathLike[str],
    content: bool = False,
) -> ExportReport:
    """``export`` to an OTLP JSON lines file only."""
    return export(source, runs, otlp=path, content=content)


def export_atif(
    source: str | os.PathLike[str] | Backend,
    runs: Sequence[str] | None = None,
    *,
    path: str | os.PathLike[str],
    content: bool = False,
) -> ExportReport:
    """``export`` to an ATIF JSON lines file only."""
    return export(source, runs, atif=path, content=content)


__all__ = [
    "ATIF_SCHEMA_VERSION",
    "OUTCOMES",
    "ExportError",
    "ExportReport",
    "atif_trajectory",
    "export",
    "export_atif",
    "export_otlp",
    "iter_folded",
    "otlp_trace",
    "outcome",
]
