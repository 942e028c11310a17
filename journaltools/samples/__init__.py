"""The bundled sample journals of both generations, written by journaltools' own file writer.

Each sample tells one story a post-mortem must be able to read (``SAMPLE_STORIES``). Every story is told twice:
as the August build writes it (format version 3, run id ``<story>``) and as the newest line does (format version
1, run id ``newest-<story>``: every record dated, the agent, each call's provider kind and dispatch, terminal
summaries), so the two generations sit side by side; ``newest-provider-kinds`` is the newest line's alone (one
call of each provider, a call a policy denied, a remote call refused). A journal is written the
way the runtime writes it: created with its meta record, one writer per process run (a resume reopens the
journal under its flock and starts with a claim), ``<id>.json`` beside an empty ``<id>.lock``. The damaged
samples (a torn tail, a resume glued onto torn bytes, a corrupt interior line, a noncanonical line) are
what a crash, the Go backend or a hand edit leave behind, which journaltools' writer never produces: they
are written by the writer first and then altered byte for byte, as ``tests/corpus/runstate/broken`` was.

Times are fixed, so regenerating gives the same bytes as ``data/samples/`` (a test checks it).
``samples_dir()`` finds them for the demo and the notebooks: the checkout's ``data/samples`` when there is
one, otherwise a directory it writes them into, so an installed package needs nothing from the repository.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from journaltools._base.durable import (
    IrregularFile,
    fsync_directory,
    read_regular_file,
    refuse_unreplaceable,
    replace_file,
)
from journaltools._base.oserrors import mapped, not_writable
from journaltools.errors import SourceError, StorageError
from journaltools.protocol.encode import encode_record
from journaltools.samples.builder import SYSTEM_PROMPT, TOOL_DEFINITIONS
from journaltools.samples.stories import sample_fingerprint, sample_stories
from journaltools.sources.registry import default_source, open_source

SAMPLE_SYSTEM_PROMPT: Final = SYSTEM_PROMPT
SAMPLE_TOOLS: Final = TOOL_DEFINITIONS
JOURNAL_SUFFIX: Final = ".json"
LOCK_SUFFIX: Final = ".lock"


#: run id -> the story it tells (what the demo and the docs say about each sample).
SAMPLE_STORIES: Final = {sample.run: sample.story for sample in sample_stories()}


def _write_into(root: Path) -> list[str]:
    with open_source(root, create=True) as backend:
        for sample in sample_stories():
            records = sample.journal.records
            bounds = [*sample.exits, len(records)]
            start = 1
            # The meta record's own bytes: a newest one carries the time its clock gave it.
            writer = backend.create_journal(sample.run, encode_record(records[0]))
            for number, end in enumerate(bounds):
                if number:
                    writer = backend.open_writer(sample.run)
                with writer:
                    for record in records[start:end]:
                        writer.append(record)
                start = end
            if sample.damage is not None:
                path = root / f"{sample.run}{JOURNAL_SUFFIX}"
                with mapped(path, "write the sample journals"):
                    replace_file(path, sample.damage(read_regular_file(path)))
    return sorted(SAMPLE_STORIES)


def write_samples(directory: str | Path) -> list[str]:
    """Write every sample journal (``<id>.json`` and its empty ``<id>.lock``) into ``directory``, which must not
    hold them yet; returns the run ids.

    All or nothing: the journals are written into a scratch directory inside ``directory`` and moved into
    place only once every one of them is complete, so a full disk or a refused write leaves ``directory`` as
    it was (``StorageError``, naming the path).
    """
    root = Path(directory)
    created = not root.exists()
    with mapped(root, "create the samples directory"):
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        with mapped(root, "write the sample journals"):
            scratch = Path(tempfile.mkdtemp(prefix=".samples-", dir=root))
    except BaseException:
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    moved: list[Path] = []
    try:
        try:
            runs = _write_into(scratch)
        except StorageError as exc:  # name the file the user asked for, not the scratch copy that is removed
            where = str(root / Path(exc.path).name) if exc.path.startswith(str(scratch)) else exc.path
            raise StorageError(where, exc.doing, exc.why, exc.hint, exc.errno) from None
        with mapped(root, "move the sample journals into place"):
            for run in runs:
                for suffix in (JOURNAL_SUFFIX, LOCK_SUFFIX):
                    target = root / f"{run}{suffix}"
                    try:  # what the one writer would not replace (a FIFO, a device) is left as it is
                        refuse_unreplaceable(target)
                    except IrregularFile as exc:
                        raise not_writable(exc, "move the sample journals into place") from None
                    (scratch / f"{run}{suffix}").rename(target)
                    moved.append(target)
            fsync_directory(root)
    except BaseException:
        for path in moved:
            path.unlink(missing_ok=True)
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return runs


#: Where ``samples_dir`` writes the samples when no checkout holds them (relative to the working directory).
DEFAULT_SAMPLES_FALLBACK = Path("journaltools-samples")

#: One journal every sample set has, to recognise a directory of samples.
_MARKER = f"completed-with-tools{JOURNAL_SUFFIX}"


def _holds_samples(directory: Path) -> bool:
    return (directory / _MARKER).is_file()


def _checkout_samples(start: Path) -> Path | None:
    """``data/samples`` of a journaltools checkout at or above ``start`` (a checkout has ``pyproject.toml``)."""
    for folder in (start, *start.parents):
        candidate = folder / "data" / "samples"
        if (folder / "pyproject.toml").is_file() and _holds_samples(candidate):
            return candidate
    return None


def samples_dir(fallback: str | os.PathLike[str] | None = None, start: str | os.PathLike[str] | None = None) -> Path:
    """The directory of sample journals, never raising for want of a repository.

    In order: ``data/samples`` of the checkout holding ``start`` (the working directory by default) or this
    package; else ``fallback`` (``./journaltools-samples`` by default) when it holds them already; else the
    samples are written there (the same bytes every time) and it is returned.
    """
    here = Path(start) if start is not None else Path.cwd()
    found = _checkout_samples(here.resolve()) or _checkout_samples(Path(__file__).resolve().parent)
    if found is not None:
        return found
    target = Path(fallback) if fallback is not None else DEFAULT_SAMPLES_FALLBACK
    if _holds_samples(target):
        return target
    if target.exists() and any(target.iterdir()):
        raise SourceError(f"{target} exists and does not hold the sample journals; remove it or pass another directory")
    # Written beside the target and renamed into place, so an interrupted write never looks like a sample set.
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    write_samples(partial)
    if target.exists():
        target.rmdir()
    partial.rename(target)
    return target


#: The environment variable that points the notebooks (and ``notebook_source``) at a source of one's own.
SOURCE_VARIABLE: Final = "JOURNALTOOLS_SOURCE"


def notebook_source() -> str:
    """The source the notebooks open: ``$JOURNALTOOLS_SOURCE`` when set (a directory or a ``nats://`` URL, as
    ``load`` takes it); else the runtime's own directory (``default_source()``) when it holds a journal; else the
    sample journals (``samples_dir()``). A reader's own runs come first, so a notebook opens them unchanged."""
    chosen = os.environ.get(SOURCE_VARIABLE, "")
    if chosen:
        return chosen
    runtime = default_source()
    if runtime.is_dir() and any(runtime.glob("*" + JOURNAL_SUFFIX)):
        return str(runtime)
    return str(samples_dir())


__all__ = [
    "SAMPLE_STORIES",
    "SAMPLE_SYSTEM_PROMPT",
    "SAMPLE_TOOLS",
    "SOURCE_VARIABLE",
    "notebook_source",
    "sample_fingerprint",
    "samples_dir",
    "write_samples",
]
