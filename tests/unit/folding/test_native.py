"""The native fold of clean proven journals (``folding.native``) held to the Python fold, table by table.

The Python fold is the reference. The native walk may give a journal back to it (None), never table it otherwise:
every test here builds the seven tables of the same journals twice, natively where the walk takes them and with
``native_fold.disabled()``, and asserts them equal column by column. Completeness is asked where it is promised: a
journal the runtime wrote that the reference folds without a finding is taken natively.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.errors import JournalError
from journaltools.folding import native as native_fold
from journaltools.protocol import native
from journaltools.protocol.generations import AUGUST, NEWEST
from journaltools.protocol.journal import ProvenRecords, read_file_journal
from journaltools.protocol.kinds import PROTOCOLS
from journaltools.sources.scan import run_read
from journaltools.tables import batch as batch_module
from journaltools.tables import load
from journaltools.tables.build import TablesBuilder, fold_read
from journaltools.tables.schema import TABLE_NAMES, Tables, with_plain_strings
from tests.mixed_journals import journals_of, line_mutations, mixed_directory
from tests.paths import SAMPLES
from tests.runstate_corpus import CORPUS, NEWEST_CORPUS, random_ones_slow
from tests.strategies import valid_runs


def test_the_project_install_builds_the_native_fold() -> None:
    # `make setup` compiles it; without it every test below would compare the reference with itself.
    assert native_fold.AVAILABLE and native.AVAILABLE


def assert_same_tables(native_tables: Tables, python_tables: Tables, where: str) -> None:
    for name in TABLE_NAMES:
        ours, reference = native_tables[name], python_tables[name]
        assert ours.schema == reference.schema, (where, name)
        ours, reference = with_plain_strings(ours), with_plain_strings(reference)
        for column in ours.column_names:
            assert ours[column].equals(reference[column]), (
                where,
                name,
                column,
                _first_difference(ours, reference, column),
            )


def _first_difference(ours: pa.Table, reference: pa.Table, column: str) -> object:
    mine, theirs = ours[column].to_pylist(), reference[column].to_pylist()
    for row, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return row, a, b
    return len(mine), len(theirs)


def journal_read(run: str, data: bytes) -> object:
    """A journal's bytes read as the file backend reads them (proven when the scanner proves them)."""
    return run_read(run, read_file_journal(data), source="file:///test", where=run, strict=False, updated=None)


def tables_both_ways(reads: Sequence[object]) -> tuple[Tables, Tables, int]:
    """The tables of ``reads`` natively and by the reference, and how many journals the native walk took."""
    taken = sum(1 for read in reads if taken_natively(read))
    builder = TablesBuilder()
    for read in reads:
        builder.add_folding(read)  # type: ignore[arg-type]
    with native_fold.disabled():
        reference = TablesBuilder()
        for read in reads:
            reference.add_folding(read)  # type: ignore[arg-type]
    return builder.finish(), reference.finish(), taken


def taken_natively(read: object) -> bool:
    first = native_fold.usable_first(read)  # type: ignore[arg-type]
    if first is None or first.meta is None:
        return False
    scratch = TablesBuilder()
    return native_fold.fold_rows(read, first.meta, scratch._native_columns) is not None  # type: ignore[arg-type]


def corpus_folders() -> list[Path]:
    return [root / folder for root in (CORPUS, NEWEST_CORPUS) for folder in ("file", "random", "broken")]


# --- the real corpora ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "folder", random_ones_slow(corpus_folders()), ids=lambda folder: f"{folder.parent.name}-{folder.name}"
)
def test_every_journal_of_both_corpora_tables_as_the_reference_tables_it(folder: Path) -> None:
    reads = [journal_read(run, data) for run, data in journals_of(folder)]
    ours, reference, taken = tables_both_ways(reads)
    assert_same_tables(ours, reference, str(folder))
    if folder.name != "broken":
        assert taken > 0


@pytest.mark.parametrize("folder", corpus_folders()[::3], ids=["august", "newest"])
def test_journals_read_record_by_record_table_as_the_reference_tables_them(folder: Path) -> None:
    """Stored records found canonical one by one (a JetStream body, a file the scanner was not asked about) are
    joined one per line for the native walk."""
    with native.disabled():
        reads = [journal_read(run, data) for run, data in journals_of(folder)]
    assert not any(isinstance(read.records, ProvenRecords) for read in reads)  # type: ignore[attr-defined]
    ours, reference, taken = tables_both_ways(reads)
    assert_same_tables(ours, reference, str(folder))
    assert taken > 0


@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
def test_every_runtime_journal_the_reference_folds_without_a_finding_is_taken_natively(root: Path) -> None:
    """Completeness where it is promised: what the runtime writes in the normal course folds natively."""
    missed = []
    for run, data in journals_of(root / "file"):
        read = journal_read(run, data)
        result = fold_read(read)  # type: ignore[arg-type]
        clean = isinstance(read.records, ProvenRecords) and result is not None and not result.findings  # type: ignore[attr-defined]
        if clean and not taken_natively(read):
            missed.append(run)
    assert missed == []


@pytest.mark.parametrize(
    "folder", corpus_folders()[:2] + corpus_folders()[3:5], ids=lambda f: f"{f.parent.name}-{f.name}"
)
def test_renamed_journals_are_taken_natively_with_the_reference_run_id_mismatch(folder: Path) -> None:
    """A journal under another name than its meta record's run id (a copy, a renamed file) keeps the native walk:
    the walk reports ``run_id_mismatch`` itself, where and as the reference does, and nothing else changes."""
    reads = [journal_read(f"copy-{run}", data) for run, data in journals_of(folder)]
    ours, reference, taken = tables_both_ways(reads)
    assert_same_tables(ours, reference, str(folder))
    codes = reference.findings.column("code").to_pylist()
    assert codes.count("run_id_mismatch") == len(reads)
    clean = [read for read in reads if [f.code for f in fold_read(read).findings] == ["run_id_mismatch"]]  # type: ignore[arg-type, union-attr]
    assert clean and all(taken_natively(read) for read in clean)
    assert taken >= len(clean)


#: The warnings the native walk reports itself instead of giving the journal back.
NATIVE_WARNINGS = {"run_id_mismatch", "times_out_of_order", "unanswered_call"}


@pytest.mark.slow  # a few hundred mutated corpus journals folded both ways: `make test` runs it
@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
def test_journals_whose_only_findings_the_walk_reports_are_taken_natively(root: Path) -> None:
    """Turns closed with calls unanswered (lines dropped from real journals), records dated backwards, renamed
    journals: the walk reports each warning where and as the reference does, and keeps the journal."""
    chooser = random.Random(20261206)
    reads = [
        journal_read(f"{prefix}{run}", mutated)
        for folder in ("file", "random")
        for run, data in journals_of(root / folder)
        for prefix, mutated in [("", data), *(("", m) for m in line_mutations(data, chooser, 3)), ("copy-", data)]
    ]
    ours, reference, _ = tables_both_ways(reads)
    assert_same_tables(ours, reference, str(root))
    warned: dict[str, int] = {}
    for read in reads:
        result = fold_read(read)  # type: ignore[arg-type]
        codes = {finding.code for finding in result.findings} if result is not None else {"refused"}
        if isinstance(read.records, ProvenRecords) and codes and codes <= NATIVE_WARNINGS:  # type: ignore[attr-defined]
            assert taken_natively(read), (read.run, codes)  # type: ignore[attr-defined]
            for code in codes:
                warned[code] = warned.get(code, 0) + 1
    assert {"run_id_mismatch", "unanswered_call"} <= set(warned), warned


@pytest.mark.parametrize(
    "source", [SAMPLES, CORPUS / "file", NEWEST_CORPUS / "file"], ids=["samples", "august", "newest"]
)
@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_load_is_the_same_natively_and_in_python_strict_and_lenient(source: Path, strict: bool) -> None:
    def attempt() -> Tables | str:
        try:
            return load(source, strict=strict, progress=False, workers=1)
        except JournalError as refused:
            return str(refused)

    ours = attempt()
    with native_fold.disabled():
        reference = attempt()
    if isinstance(ours, str) or isinstance(reference, str):
        assert ours == reference
    else:
        assert_same_tables(ours, reference, str(source))


# --- mutations: canonical lines in orders and places the runtime never writes ---------------------------------------


@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
def test_reordered_corpus_journals_table_as_the_reference_tables_them(root: Path) -> None:
    chooser = random.Random(20261202)
    reads = [
        journal_read(f"{run}", mutated)
        for run, data in journals_of(root / "file")
        for mutated in line_mutations(data, chooser, 6)
    ]
    ours, reference, taken = tables_both_ways(reads)
    assert_same_tables(ours, reference, str(root))
    assert 0 < taken < len(reads)  # some mutations stay clean, others give findings the reference must report


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([AUGUST, NEWEST]))
def test_generated_journals_and_their_reorderings_table_as_the_reference_tables_them(
    data: st.DataObject, generation: object
) -> None:
    built = data.draw(valid_runs(generation=generation))  # type: ignore[arg-type]
    original = built.journal_bytes()
    seed = data.draw(st.integers(0, 2**32 - 1))
    journals = [original, *line_mutations(original, random.Random(seed), 2)]
    reads = [journal_read("gen-run", journal) for journal in journals]
    ours, reference, _ = tables_both_ways(reads)
    assert_same_tables(ours, reference, repr(original[:200]))
    assert taken_natively(reads[0])  # what the runtime could have written is taken


# --- the rows a walk gave back are gone ----------------------------------------------------------------------------


def test_a_journal_given_back_late_leaves_no_row_behind() -> None:
    """A journal whose last record is one the reference warns of (an unknown terminal reason): the walk has
    appended its rows by then and must take every one back."""
    run, data = next(journals_of(CORPUS / "file"))
    lines = data.split(b"\n")[:-1]
    last_seq = max(int(line.split(b'"seq":')[1].split(b",")[0]) for line in lines)
    odd = b'{"seq":%d,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"gave_up"}}' % (
        last_seq + 1
    )
    read = journal_read(run, data + odd + b"\n")
    assert isinstance(read.records, ProvenRecords)  # type: ignore[attr-defined]
    builder = TablesBuilder()
    before = [len(column) for column in builder._native_columns]
    first = native_fold.usable_first(read)  # type: ignore[arg-type]
    assert first is not None and first.meta is not None
    assert native_fold.fold_rows(read, first.meta, builder._native_columns) is None  # type: ignore[arg-type]
    assert [len(column) for column in builder._native_columns] == before


def test_the_extension_folds_only_kinds_the_record_model_declares() -> None:
    from journaltools.protocol.kinds import KINDS

    assert set(native_fold.extension_kinds()) <= set(KINDS)
    # Each protocol reaches the walk as the kind of the same name.
    walked = native_fold.extension_kinds()
    for protocol, kind in PROTOCOLS.items():
        assert walked[native_fold._KIND_OF_ID[protocol]] == kind


def test_the_walk_names_columns_its_tables_have() -> None:
    """The walk names the columns it appends to (the builder hands it the buffers of those names): each is a column
    of its table, once, and every column of its table but the run is one of them."""
    from journaltools.tables.schema import MESSAGES_SCHEMA, RESPONSES_SCHEMA, SEGMENTS_SCHEMA, TOOL_CALLS_SCHEMA

    tables = [MESSAGES_SCHEMA, TOOL_CALLS_SCHEMA, RESPONSES_SCHEMA, SEGMENTS_SCHEMA]
    named = [native_fold.MESSAGE_COLUMNS, native_fold.CALL_COLUMNS, native_fold.RESPONSE_COLUMNS]
    for schema, columns in zip(tables, [*named, native_fold.SEGMENT_COLUMNS], strict=True):
        assert len(set(columns)) == len(columns) and set(columns) == set(schema.names) - {"run"}


def test_a_kind_the_walk_does_not_fold_gives_the_journal_back() -> None:
    """A kind the record model holds and the walk does not (a newer generation's, until the walk learns it) reaches
    the walk as its own number: the journal goes to the Python fold, and no row is left behind."""
    run, data = next(journals_of(CORPUS / "file"))
    read = journal_read(run, data)
    assert isinstance(read.records, ProvenRecords)  # type: ignore[attr-defined]
    first = native_fold.usable_first(read)  # type: ignore[arg-type]
    assert first is not None and first.meta is not None
    scan = read.records.scan  # type: ignore[attr-defined]
    kinds = bytearray(native_fold.kinds_of_protocols(scan.protocols))
    builder = TablesBuilder()
    before = [len(column) for column in builder._native_columns]
    data = read.records.data  # type: ignore[attr-defined]
    assert native_fold.fold_lines(data, scan.starts, bytes(kinds), first.meta, builder._native_columns)
    builder = TablesBuilder()
    kinds[len(kinds) - 1] = native_fold._NOT_WALKED
    found = native_fold.fold_lines(data, scan.starts, bytes(kinds), first.meta, builder._native_columns)
    assert found is None
    assert [len(column) for column in builder._native_columns] == before


@pytest.mark.parametrize(
    ("reasons", "tokens", "why"),
    [
        ((), ("unknown", "remote"), "between 1 and"),
        (("completed",), ("unknown", "builtin"), "no .remote. or no .mcp."),
        (("completed",), ("remote", "mcp"), "no .remote. or no .mcp."),
        (("completed",), ("unknown", "remote"), "no .remote. or no .mcp."),
        (("completed",), ("unknown", 3), "names are str"),
    ],
)
def test_the_walk_refuses_a_configuration_it_cannot_fold_by(
    reasons: tuple[str, ...], tokens: tuple[object, ...], why: str
) -> None:
    from journaltools.folding import _native  # type: ignore[attr-defined]

    with pytest.raises((ValueError, TypeError), match=why):
        _native.configure(reasons, tokens)
    # A refused configuration leaves the one in force: the walk still folds.
    run, data = next(journals_of(CORPUS / "file"))
    assert taken_natively(journal_read(run, data))


def test_the_environment_sets_the_native_fold_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    assert native_fold.active()
    monkeypatch.setenv(native_fold.NATIVE_ROWS_VARIABLE, "0")
    assert not native_fold.active()
    monkeypatch.delenv(native_fold.NATIVE_ROWS_VARIABLE)
    with native_fold.disabled():
        assert not native_fold.active()
    assert native_fold.active()


# --- a directory folded in place: the batch path against the reference ------------------------------------------


@pytest.mark.parametrize("root", [CORPUS, NEWEST_CORPUS], ids=["august", "newest"])
@pytest.mark.parametrize("records", [True, False], ids=["with-records", "no-records"])
def test_a_directory_folded_in_place_tables_as_the_reference_tables_it(
    root: Path, records: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load`` reads local journals into one buffer and folds each proven one from its lines there: every table
    equals the reference's, journal for journal, whatever mix of journals the directory holds."""
    directory = mixed_directory(tmp_path / "runs", root)
    folded_in_place = []
    in_place = batch_module._folded_in_place

    def spied(*args: object) -> object:
        folded_in_place.append(True)
        return in_place(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module, "_folded_in_place", spied)
    ours = load(directory, progress=False, workers=1, records=records, strict=False)
    with native_fold.disabled():
        reference = load(directory, progress=False, workers=1, records=records, strict=False)
    assert_same_tables(ours, reference, str(root))
    assert len(ours.runs) == len(list(directory.iterdir()))
    assert folded_in_place, "the directory was not folded in place"
    assert (len(ours.records) > 0) == records
