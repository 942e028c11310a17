"""The report of a run too long for its bound as plain HTML: the middle pages are stored compressed inside the one
file (gzip in base64, inflated by the page's script), so it holds every message the fold gives; past even that, it
says exactly what it left out and the command that prints the rest. Small generated runs and small bounds stand in
for 20,000 records (``benchmarks/bench_large_runs.py`` measures the real size)."""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path

import pytest

from journaltools.exports.report import MIN_MAX_BYTES, RunReport, report, report_of_read
from journaltools.folding import FoldResult
from journaltools.sources.registry import open_source
from tests.generated_runs import generated_run
from tests.report_pages import SECTIONS, assert_self_contained, sections_of

MESSAGE = re.compile(r'<div class="jt-msg jt-msg-\w+[^"]*" id="jt-r-seq-(\d+)" data-index="(\d+)" data-seq="\d+">')
PACKED = re.compile(
    r'<details class="jt-page jt-packed" id="page-(\d+)" data-first-seq="(\d+)">.*?data-jt-gz="([^"]*)"'
)


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, FoldResult]:
    return generated_run(tmp_path_factory.mktemp("report-long-run"), 700, 2)


@pytest.fixture(scope="module")
def longer_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, FoldResult]:
    """A run whose compressed pages still pass the least bound."""
    return generated_run(tmp_path_factory.mktemp("report-longer-run"), 3_000, 2)


def inflated(html: str) -> tuple[str, dict[int, str]]:
    """The file with every compressed page inflated in place (as its script does), and each page's HTML by number."""
    pages: dict[int, str] = {}

    def inflate(match: re.Match[str]) -> str:
        page = gzip.decompress(base64.b64decode(match[3])).decode()
        pages[int(match[1])] = page
        return match[0].replace(f'data-jt-gz="{match[3]}"', "") + page

    return PACKED.sub(inflate, html), pages


def message_seqs(html: str) -> list[int]:
    return [int(seq) for seq, _index in MESSAGE.findall(html)]


def test_a_run_too_long_for_the_bound_holds_every_message_in_compressed_pages(
    long_run: tuple[Path, str, FoldResult],
) -> None:
    root, run, result = long_run
    plain = report(str(root), run, max_bytes=10**9)
    assert plain.compressed_pages == 0 and plain.messages_shown == plain.messages
    bound = plain.size * 2 // 3
    made = report(str(root), run, max_bytes=bound, page_size=20)
    assert made.size <= bound and made.left_out_from_seq is None
    assert made.messages_shown == made.messages == len(result.messages) > 100
    assert made.compressed_pages == made.pages - 2 > 3
    whole, pages = inflated(made.html)
    assert sorted(pages) == list(range(2, made.pages))  # the first and last pages stay plain
    # Every message the fold gives, once, in order, each page's from its first seq.
    assert message_seqs(whole) == result.message_seqs
    for number, first in re.findall(r'id="page-(\d+)" data-first-seq="(\d+)"', made.html):
        assert message_seqs(pages[int(number)])[0] == int(first)
    # What a compressed page holds is what the same page holds plain.
    unpacked = report(str(root), run, max_bytes=10**9, page_size=20)
    for number, page in pages.items():
        assert f'<details class="jt-page" id="page-{number}"><summary>' in unpacked.html
        assert page in unpacked.html
    assert sections_of(made.html) == list(SECTIONS)
    assert_self_contained(made.html)
    assert f"({made.compressed_pages:,} of them compressed)" in made.summary()


def test_a_reader_without_scripts_is_told_how_to_print_a_compressed_page(
    long_run: tuple[Path, str, FoldResult],
) -> None:
    root, run, _result = long_run
    with open_source(root) as backend:
        made = report_of_read(backend.read_run(run), source="runs", page_size=20, compress=True)
    notes = re.findall(
        r'data-first-seq="(\d+)">.*?<code>journaltools show runs (\S+) --from-seq (\d+)</code>', made.html
    )
    assert len(notes) == made.compressed_pages > 0
    assert all(first == seq and shown == run for first, shown, seq in notes)


def test_past_even_compressed_pages_it_says_exactly_what_it_left_out_and_how_to_read_it(
    longer_run: tuple[Path, str, FoldResult],
) -> None:
    root, run, result = longer_run
    made: RunReport = report(str(root), run, max_bytes=MIN_MAX_BYTES, page_size=20)
    assert made.size <= MIN_MAX_BYTES and made.compressed_pages > 0
    assert made.left_out_from_seq is not None and 0 < made.messages_shown < made.messages
    whole, _pages = inflated(made.html)
    kept = message_seqs(whole)
    assert kept == result.message_seqs[: len(kept)] and len(kept) == made.messages_shown
    left = [seq for seq in result.message_seqs if seq >= made.left_out_from_seq]
    assert len(left) == made.messages - made.messages_shown
    note = re.search(
        r'data-left-out-from="(\d+)">… ([\d,]+) messages(?: and the turn in flight)? from seq (\d+) on left out',
        made.html,
    )
    assert note is not None and int(note[1]) == int(note[3]) == made.left_out_from_seq == left[0]
    assert int(note[2].replace(",", "")) == len(left)
    assert f"--from-seq {made.left_out_from_seq}</code>" in made.html


def test_one_run_makes_one_file(long_run: tuple[Path, str, FoldResult]) -> None:
    root, run, _result = long_run
    with open_source(root) as backend:
        read = backend.read_run(run)
    first = report_of_read(read, page_size=20, compress=True).html
    second = report_of_read(read, page_size=20, compress=True).html
    stamp = re.compile(r"report made [^·]+ by")
    assert stamp.sub("", first) == stamp.sub("", second)
