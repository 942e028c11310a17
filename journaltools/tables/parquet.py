"""The tables on disk: an audit's Parquet files, written row group by row group, and read back.

Two layouts, one reader: ``DIR/<table>.parquet`` (a local audit, one file per table) and
``DIR/<table>.parquet/part.<n>.parquet`` (a Dask audit, a directory of partitions per table). pandas, pyarrow
and DuckDB read either with the right types (the schemas of ``tables.schema``).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from journaltools._base.durable import IrregularFile, exclusive_lock, refuse_unreplaceable
from journaltools._base.oserrors import not_writable, open_regular
from journaltools.errors import NotAJournalFile
from journaltools.tables.schema import SCHEMAS, Tables, empty_table, is_priced, schema_of


def statistics_columns(name: str, *, priced: bool = False) -> list[str]:
    """Columns worth min/max statistics: not the long texts (bodies, messages, inputs). Their statistics
    would be useless for filtering, and a writer keeps every row group's statistics in memory until it
    closes, so they would make memory grow with the number of batches."""
    return [
        f.name
        for f in schema_of(name, priced=priced)
        if f.type not in (pa.large_string(), pa.large_binary()) and f.name != "message"
    ]


def parquet_writer(path: Path, name: str, *, priced: bool = False) -> pq.ParquetWriter:
    """A writer of the table ``name`` (``priced``: with the cost columns of a load given prices)."""
    schema = schema_of(name, priced=priced)
    return pq.ParquetWriter(path, schema, compression="zstd", write_statistics=statistics_columns(name, priced=priced))


class ParquetTables:
    """One ``ParquetWriter`` per table; ``write`` buffers a batch's tables and writes a row group once a
    table has ``row_group_bytes`` pending (and at ``close``).

    Buffering bounds memory (at most ``row_group_bytes`` pending per table) and keeps the number of row
    groups, whose metadata every writer holds until it closes, proportional to the data, not to the
    number of batches. Files are written into a private temporary directory beside the targets
    (``DIR/.audit-*``) and renamed into place by ``close`` once complete, under a lock on the directory: a failed
    audit never leaves a file that looks finished, two audits into one directory never write the same file, and
    the directory then holds every table of the audit that closed last, never a mix. ``close`` also removes an
    earlier audit's table that this one does not write (``records`` without ``--records``): every table an audit
    owns is replaced.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        names: Sequence[str],
        *,
        row_group_bytes: int = 8 << 20,
        priced: bool = False,
    ) -> None:
        # Absolute, so pyarrow never reads a local name such as ``nats:/x`` as a URI naming another filesystem.
        self.directory = Path(directory).absolute()
        self.directory.mkdir(parents=True, exist_ok=True)
        for name in names:  # before any work: an audit that cannot put a table in place refuses at once
            refuse_unreplaceable_table(self.path(name))
        self._staging = Path(tempfile.mkdtemp(prefix=".audit-", dir=self.directory))
        self.row_group_bytes = row_group_bytes
        self.schemas = {name: schema_of(name, priced=priced) for name in names}
        self.rows = dict.fromkeys(names, 0)
        self._pending: dict[str, list[pa.Table]] = {name: [] for name in names}
        self._pending_bytes = dict.fromkeys(names, 0)
        self._writers: dict[str, pq.ParquetWriter] = {}
        try:
            for name in names:
                self._writers[name] = parquet_writer(self._partial(name), name, priced=priced)
        except BaseException:
            self.abort()  # a full disk can refuse the third file after the first two were made
            with contextlib.suppress(OSError):
                self._partial(name).unlink(missing_ok=True)
            raise

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.parquet"

    def _partial(self, name: str) -> Path:
        return self._staging / f"{name}.parquet"

    def write_table(self, name: str, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._pending[name].append(table.cast(self.schemas[name]))
        self._pending_bytes[name] += table.nbytes
        self.rows[name] += table.num_rows
        if self._pending_bytes[name] >= self.row_group_bytes:
            self._flush(name)

    def _flush(self, name: str) -> None:
        pending = self._pending[name]
        if pending:
            self._writers[name].write_table(pa.concat_tables(pending), row_group_size=1 << 30)
        pending.clear()
        self._pending_bytes[name] = 0
        pa.default_memory_pool().release_unused()  # hand the row group's buffers back, not just to the pool

    def write(self, tables: Tables) -> None:
        for name in self._writers:
            self.write_table(name, tables[name])

    def close(self) -> dict[str, Path]:
        written = {}
        for name, writer in self._writers.items():
            self._flush(name)
            writer.close()
        with _directory_lock(self.directory):
            for name in self._writers:
                target = self.path(name)
                refuse_unreplaceable_table(target)
                if is_partitions(target):  # an earlier Dask audit into the same directory
                    shutil.rmtree(target)
                os.replace(self._partial(name), target)
                written[name] = target
            for name in SCHEMAS:
                stale = self.path(name)
                if name in written:
                    continue
                if is_partitions(stale):
                    shutil.rmtree(stale)
                else:
                    stale.unlink(missing_ok=True)
        shutil.rmtree(self._staging, ignore_errors=True)
        return written

    def abort(self) -> None:
        """Remove every partial file, even when closing a writer fails too (a full disk fails its last flush)."""
        for name, writer in self._writers.items():
            self._pending[name].clear()
            with contextlib.suppress(OSError):
                writer.close()
            with contextlib.suppress(OSError):
                self._partial(name).unlink(missing_ok=True)
        shutil.rmtree(self._staging, ignore_errors=True)


def is_partitions(path: Path) -> bool:
    """A Dask audit's directory of partitions (itself, not a link to a directory elsewhere)."""
    return path.is_dir() and not path.is_symlink()


def refuse_unreplaceable_table(target: Path) -> None:
    """A table's file replaces what the one writer would (a regular file, a link, never followed) or an earlier
    Dask audit's partitions; a FIFO, device or socket there is a ``StorageError``, and left as it is."""
    if is_partitions(target):
        return
    try:
        refuse_unreplaceable(target)
    except IrregularFile as exc:
        raise not_writable(exc, "write the Parquet tables") from None


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``DIR/.audit.lock`` while an audit puts its tables in place (opened by the one
    opener: a FIFO or a link planted there is refused, never waited on nor followed)."""
    lock = directory / ".audit.lock"
    try:
        with exclusive_lock(lock):
            yield
    except IrregularFile as exc:
        raise NotAJournalFile(os.fsdecode(lock), "take the audit's lock", exc.kind) from None


def _opened(part: Path) -> io.FileIO:
    """A table's file, opened by the one opener: a FIFO or device named like a table is refused, never waited on."""
    return io.FileIO(open_regular(part, os.O_RDONLY, "read the audit's table"), "rb", closefd=True)


def read_audit(directory: str | os.PathLike[str], names: Sequence[str] | None = None) -> Tables:
    """The tables an audit wrote into ``directory`` (either layout), with their schemas (and the cost columns of an
    audit given prices); missing ones empty."""
    root = Path(directory)
    tables: dict[str, pa.Table] = {}
    for name in SCHEMAS:
        path = root / f"{name}.parquet"
        if (names is not None and name not in names) or not path.exists():
            tables[name] = empty_table(name)
            continue
        parts = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        priced = False
        if parts:
            with _opened(parts[0]) as first:
                priced = is_priced(pq.read_schema(first))
        schema = schema_of(name, priced=priced)
        pieces = []
        for part in parts:
            with _opened(part) as handle:
                pieces.append(pq.read_table(handle, schema=schema))
        tables[name] = pa.concat_tables(pieces) if pieces else empty_table(name)
    return Tables(**tables)
