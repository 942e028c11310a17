"""The one error tree of journaltools.

Every refusal names what it refused: the run, the seq where there is one, the path or URL, and the rule
broken, in one line that says what to do. Low-level errors are translated into this tree in one place per
backend, so callers never catch a nats-py exception or a bare ``OSError``: operating-system errors on local
files in ``_base/oserrors.py`` (``storage_error``), NATS client errors in ``sources/nats.py``
(``classify_nats_error`` for requests, ``connect_error`` for connecting).

::

    JournalError
    ├── InvalidRunId              a run id that is unsafe as a file name or subject token
    ├── InvalidConfig             a candidate configuration for the resume gate that cannot be read: bad usage
    ├── InvalidPrices             a price table (``--prices``) that cannot be read: names the model and field
    ├── InvalidGrep               a grep that cannot be asked (an empty pattern, a regular expression RE2 refuses)
    ├── RunNotFound               no journal for that run in the source
    ├── InvalidPage               a page of a listing asked for wrongly: a limit below 1, a cursor not minted here
    ├── NoSuchSegment             a process run (segment) a journal does not have
    ├── RunExists                 a create of a run the source already holds
    ├── SourceError               a source URL or backend that cannot be used
    │   ├── InvalidSource         the source as written cannot be a source (bad URL, port): bad usage, CLI exit 2
    │   ├── StreamConfigRefused   a JetStream stream whose settings would let records change or expire
    │   ├── StreamFull            the server refused an append: the stream is at its max_msgs / max_bytes limit
    │   ├── ServerNotAnswering    a NATS server that stopped answering (a partition, a hung server)
    │   ├── ConnectFailed         no connection to a server: refused, unreachable, timed out, authentication, TLS
    │   ├── ReadOnlySource        a write into a source that is only read (compressed journals, a glob)
    │   └── StorageError          the operating system refused a file operation (path, errno, what to do)
    │       └── NotAJournalFile   a journal or lock path that is a symlink, FIFO, directory or device
    ├── UndecodableLine           one line the runtime's decoder refuses (the reason Go gives)
    ├── CorruptJournal            an unparsable interior line: the journal is refused, never half-loaded
    ├── JournalTooLarge           a journal past a bound per journal (decompressed bytes, records): not read
    ├── RecordRefused             one record breaks a protocol rule (run, seq, code, rule)
    │   ├── FoldError             ... found while folding
    │   │   └── VersionMismatch   meta.version differs from the reader's
    │   └── SequenceGap           CheckAppend: seq more than one above the last
    ├── WriterConflict            somebody else writes this run
    │   ├── JournalLocked         file backend: another process holds the run's flock
    │   ├── ConcurrentCreate      JetStream: another writer created the run at the same time
    │   └── AnotherWriter         JetStream: another writer appended behind this one
    ├── ClaimRefused              a resume could not land its claim: the resume must not go on
    ├── AnswerRefused             answering a deferred call was refused
    │   └── AlreadyAnswered       ... because the call already has a result
    ├── TaskError
    │   ├── TaskNotFound
    │   ├── TaskExists            a submit of an id the store already holds
    │   ├── InvalidTask           a task id or request the runtime would refuse, or a stored record it cannot read
    │   └── TaskAlreadyCompleted  a task is completed once: the first write wins (names when it was)
    ├── TurnJournalError          agent-harness-go turn checkpoints; ``sentinel`` names the Go error it stands for
    │   ├── TurnNotFound          ErrNotFound
    │   ├── TurnAlreadyExists     ErrAlreadyExists
    │   ├── RevisionConflict      ErrConflict: another writer moved the record (or the index owner differs)
    │   ├── InvalidTurnRecord     ErrInvalidRecord: a record breaks Validate, or could never be read back
    │   ├── InvalidTransition     ErrInvalidTransition
    │   ├── CorruptTurnStore      ErrCorruptStore: stored bytes the runtime refuses (names the record and why)
    │   └── CASRetryLimit         ErrCASRetryLimit: the index kept changing under every retry
    ├── TurnNotResumable          recovery may not resume a turn by itself (``plan`` says why and which calls)
    ├── InvalidPattern            a regular expression Go's ``regexp`` would refuse (names the flag and why): bad usage
    ├── InvalidSearch             a search criterion the runtime would refuse (a status, a time): bad usage
    ├── InvalidFilter             a filter expression (``--where``, ``where=``) that cannot be one: names the field
    ├── ExportError               a run that cannot be exported (no meta record), or an export with no file to write
    └── MissingDependency         an optional package a feature needs is not installed (names what to install)
"""

from __future__ import annotations

from typing import Any, ClassVar


class JournalError(Exception):
    """Base of every error journaltools raises on purpose."""


class InvalidRunId(JournalError, ValueError):
    def __init__(self, run: object, why: str) -> None:
        self.run = run
        super().__init__(f"invalid run id {run!r}: {why}")


class InvalidConfig(JournalError, ValueError):
    """A candidate configuration (``gate --config``) that cannot be read; the message names the key."""


class InvalidPrices(JournalError, ValueError):
    """A price table (``--prices FILE``, ``prices=``) that cannot be read or breaks its model; the message names the
    file, the model and the field."""


class InvalidPage(JournalError, ValueError):
    """A page of a listing asked for wrongly (the runtime's ``ErrInvalidLimit`` and ``ErrInvalidCursor``)."""


class InvalidGrep(JournalError, ValueError):
    """A ``grep`` that cannot be asked: an empty pattern, a regular expression RE2 refuses, an unknown place."""


class NoSuchSegment(JournalError, LookupError):
    """A process run (segment) number a journal does not have (``diff --segments``)."""

    def __init__(self, run: str, segment: int, segments: int) -> None:
        self.run = run
        self.segment = segment
        super().__init__(f"run {run!r} has {segments} process run(s), numbered from 0: there is no segment {segment}")


class RunNotFound(JournalError, LookupError):
    def __init__(self, run: str, where: str) -> None:
        self.run = run
        super().__init__(f"run {run!r}: no journal in {where}")


class RunExists(JournalError):
    def __init__(self, run: str, where: str) -> None:
        self.run = run
        super().__init__(f"run {run!r} already exists in {where}; open it to resume instead of creating it")


class SourceError(JournalError):
    """A source URL, directory or server that cannot be used."""


class InvalidSource(SourceError, ValueError):
    """The source as written cannot name a source (an unknown scheme, a port out of range): bad usage."""


class ConnectFailed(SourceError):
    """No connection to a server. ``reason`` is one of ``CONNECT_REASONS``; ``url`` never holds credentials."""

    def __init__(self, url: str, reason: str, detail: str, hint: str) -> None:
        self.url = url
        self.reason = reason
        self.detail = detail
        super().__init__(f"{url}: cannot connect: {reason} ({detail}); {hint}")


#: What ``ConnectFailed.reason`` can say.
CONNECT_REASONS = (
    "connection refused",
    "unreachable",
    "unknown host",
    "timed out",
    "authentication failed",
    "TLS failed",
    "not a NATS server",
    "failed",
)


class ReadOnlySource(SourceError):
    """A write into a source journaltools only reads (compressed journals, a glob of files)."""


class StorageError(SourceError):
    """An operating-system failure on a local path, made one line by ``_base.oserrors.storage_error``.

    ``errno`` is the OS error number (None where the failure has none), ``path`` the file or directory.
    """

    def __init__(self, path: str, doing: str, why: str, hint: str, errno: int | None = None) -> None:
        self.path = path
        self.doing = doing
        self.why = why
        self.hint = hint
        self.errno = errno
        super().__init__(f"{path}: cannot {doing}: {why}; {hint}")


class NotAJournalFile(StorageError):
    """A journal or lock path that is not a regular file: never followed or opened for reading, never written."""

    def __init__(self, path: str, doing: str, kind: str) -> None:
        self.kind = kind
        hint = (
            "journals are never followed out of their source: put the file itself in its place"
            if kind == "a symbolic link"
            else "journals and their locks are regular files: move it away"
        )
        super().__init__(path, doing, f"it is {kind}, not a regular file", hint)


class StreamConfigRefused(SourceError):
    def __init__(self, stream: str, setting: str, why: str) -> None:
        self.stream = stream
        self.setting = setting
        super().__init__(f"stream {stream!r} refused: {setting}: {why}")


class StreamFull(SourceError):
    """An append the server refused because the stream is at one of its operator's limits (discard new).

    ``limit`` is ``max_msgs``, ``max_bytes`` or ``max_msgs_per_subject``; ``value`` the limit as configured,
    when known. Nothing was stored: the writer is where it was and the append can be retried once there is room.
    """

    #: What each limit counts, for the message.
    UNITS: ClassVar[dict[str, str]] = {
        "max_msgs": "messages",
        "max_bytes": "bytes",
        "max_msgs_per_subject": "messages per subject",
    }

    def __init__(self, where: str, what: str, limit: str, value: int | None = None) -> None:
        self.where = where
        self.limit = limit
        self.value = value
        shown = f"{limit} = {value} {self.UNITS.get(limit, '')}".rstrip() if value is not None else limit
        super().__init__(
            f"{where}: {what} refused: the stream is full ({shown} reached); nothing was stored; "
            f"raise the stream's {limit} or move runs out of it, then append again"
        )


class ServerNotAnswering(SourceError):
    """The server stopped answering mid-operation: nothing arrived on the connection for ``silent`` seconds and
    a ping got no answer either. Reported once for the whole command, not once per run."""

    def __init__(self, where: str, what: str, silent: float) -> None:
        self.where = where
        self.silent = silent
        super().__init__(
            f"{where}: the server stopped answering ({what}: nothing arrived for {silent:g}s, and no answer to "
            "a ping); check the network between here and the server, then run the command again"
        )


class UndecodableLine(JournalError, ValueError):
    """One stored line the Go decoder refuses; the journal reader decides if it is a torn tail or corruption."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class CorruptJournal(JournalError):
    """An interior line that does not parse. Only valid as a verdict because journals are append-only and synced."""

    def __init__(self, run: str, position: int, why: str, where: str = "", unit: str = "line") -> None:
        self.run = run
        self.position = position
        self.where = where
        place = f" ({where})" if where else ""
        super().__init__(f"run {run!r}: corrupt journal at {unit} {position}{place}: {why}")


class JournalTooLarge(JournalError):
    """A journal holding (or decompressing to) more bytes or records than the bounds per journal; not read."""

    def __init__(self, run: str, why: str) -> None:
        self.run = run
        super().__init__(f"run {run!r}: {why}")


class RecordRefused(JournalError):
    """A record breaks a protocol rule. ``code`` is one of the finding codes of INTERFACES.md."""

    def __init__(self, run: str | None, seq: int | None, code: str, rule: str) -> None:
        self.run = run
        self.seq = seq
        self.code = code
        self.rule = rule
        super().__init__(f"run {run!r} seq {'-' if seq is None else seq}: {code}: {rule}")


class FoldError(RecordRefused):
    """The fold refused a journal."""


class VersionMismatch(FoldError):
    pass


class SequenceGap(RecordRefused):
    def __init__(self, run: str, last: int, seq: int) -> None:
        self.last = last
        super().__init__(run, seq, "seq_gap", f"seq {seq} after last {last} leaves a gap (CheckAppend)")


class WriterConflict(JournalError):
    def __init__(self, run: str, seq: int | None, why: str) -> None:
        self.run = run
        self.seq = seq
        super().__init__(f"run {run!r} seq {seq}: {why}")


class JournalLocked(WriterConflict):
    pass


class ConcurrentCreate(WriterConflict):
    pass


class AnotherWriter(WriterConflict):
    pass


class ClaimRefused(JournalError):
    def __init__(self, run: str, why: str) -> None:
        self.run = run
        super().__init__(f"run {run!r}: claim refused, the resume must not continue: {why}")


class AnswerRefused(JournalError):
    def __init__(self, run: str, call: str, why: str) -> None:
        self.run = run
        self.call = call
        super().__init__(f"run {run!r} call {call!r}: answer refused: {why}")


class AlreadyAnswered(AnswerRefused):
    def __init__(self, run: str, call: str, result_seq: int) -> None:
        self.result_seq = result_seq
        super().__init__(run, call, f"already answered by the tool_result at seq {result_seq}")


class TaskError(JournalError):
    pass


class TaskNotFound(TaskError, LookupError):
    pass


class TaskExists(TaskError):
    pass


class InvalidTask(TaskError, ValueError):
    pass


class TaskAlreadyCompleted(TaskError):
    pass


class TurnJournalError(JournalError):
    """A turn-checkpoint store refused a call; ``sentinel`` is the agent-harness-go error it corresponds to."""

    sentinel = ""


class TurnNotFound(TurnJournalError, LookupError):
    sentinel = "ErrNotFound"


class TurnAlreadyExists(TurnJournalError):
    sentinel = "ErrAlreadyExists"


class RevisionConflict(TurnJournalError):
    sentinel = "ErrConflict"


class InvalidTurnRecord(TurnJournalError, ValueError):
    sentinel = "ErrInvalidRecord"


class InvalidTransition(TurnJournalError):
    sentinel = "ErrInvalidTransition"


class CorruptTurnStore(TurnJournalError):
    sentinel = "ErrCorruptStore"


class CASRetryLimit(TurnJournalError):
    sentinel = "ErrCASRetryLimit"


class TurnNotResumable(JournalError):
    """Recovery may not resume this record's model or tool execution by itself. ``plan`` is the
    ``stores.turns.recovery.ResumePlan`` that says why."""

    def __init__(self, plan: Any, task_id: str, workspace_id: str, revision: int, why: str) -> None:
        self.plan = plan
        super().__init__(
            f"turnjournal task {task_id!r} (workspace {workspace_id!r}, revision {revision}) "
            f"is not resumed automatically: {why}"
        )


class JournalWarning(UserWarning):
    """Base of the warnings journaltools gives: something works, but not as well as it could."""


class SlowReads(JournalWarning):
    """A source can only be read the slow way (a JetStream stream without direct get, say)."""


class JournalPastReadersBound(JournalWarning):
    """A writer's append took its journal past a bound per journal of journaltools' readers (bytes or records):
    the record is stored, as the runtime would store it, but every reader refuses the journal from now on
    (``journal_too_large``) until the bound is raised."""


class InvalidPattern(JournalError, ValueError):
    """A pattern given to ``--input-match``, ``--output-match`` or ``--match`` that Go's ``regexp`` refuses: the
    runtime would refuse it, so journaltools does too rather than read it the way Python's ``re`` would."""

    def __init__(self, flag: str, pattern: str, why: str) -> None:
        self.flag = flag
        self.pattern = pattern
        super().__init__(f"invalid --{flag} pattern: {why}")


class InvalidSearch(JournalError, ValueError):
    """A search criterion the runtime's ``session search`` would refuse (an unknown status, an unreadable time)."""


class InvalidFilter(JournalError, ValueError):
    """A filter expression over the runs table (``ls --where``, ``load(where=)``, the run browser's search box) that
    cannot be one: a syntax it does not take, a field the runs table has no column for, or a value of the wrong type
    for its column. ``field`` names the column at fault (None for a syntax error); ``reason`` is the message without
    the list of columns, short enough for a status line."""

    def __init__(self, reason: str, field: str | None = None, columns: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.field = field
        self.columns = columns
        listed = f"; the runs table's columns are: {', '.join(columns)}" if columns else ""
        super().__init__(f"invalid filter: {reason}{listed}")


class ExportError(JournalError, ValueError):
    """A run that cannot be exported as a trace or trajectory, or an export asked for with nowhere to write it."""


class MissingDependency(JournalError, ImportError):
    """An optional package is missing; the message names the feature and what to install."""

    def __init__(self, feature: str, package: str, extra: str = "notebook") -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs {package}, which is not installed: "
            f'pip install "journaltools[{extra}]" (or pip install {package})'
        )
