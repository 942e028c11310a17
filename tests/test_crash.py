"""Writers killed with SIGKILL at random moments lose nothing they acknowledged."""

import random
import subprocess
import sys
import time
from pathlib import Path

from journaltools.backends.file import FileBackend
from tests.builders import JournalBuilder

ROOT = Path(__file__).resolve().parent.parent
KILLS = 50

APPENDER = """
import sys
from journaltools.backends.file import FileBackend
from tests.builders import JournalBuilder
writer = FileBackend(sys.argv[1]).open_writer("crashy")
seq = writer.last_seq
template = JournalBuilder("crashy")
padding = "x" * int(sys.argv[2])
while True:
    seq += 1
    if seq == 1:
        record = template.bodies[0]
    else:
        record = {"type": "note", "run": "crashy", "seq": seq, "ts": "2026-11-29T10:00:00Z", "text": padding}
    writer.append(record)
    sys.stdout.write(f"{seq}\\n")
    sys.stdout.flush()
"""


def test_killed_writers_keep_every_acknowledged_record(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    backend = FileBackend(tmp_path)
    acknowledged = 0
    deadline = time.monotonic() + 240
    for kill in range(KILLS):
        assert time.monotonic() < deadline, f"crash test ran out of time after {kill} kills"
        child = subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(tmp_path), str(rng.choice([10, 4000, 70000]))],
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        assert child.stdout is not None
        for _ in range(rng.randint(1, 25)):
            line = child.stdout.readline()
            assert line, f"appender died on its own (exit {child.poll()})"
            acknowledged = int(line)
        child.kill()
        child.wait()
        child.stdout.close()
        read = backend.read_run("crashy")
        seqs = [record.seq for record in read.records]
        assert seqs == list(range(1, len(seqs) + 1)), "records are contiguous from 1"
        assert len(seqs) >= acknowledged, f"kill {kill}: acknowledged {acknowledged}, only {len(seqs)} stored"
        assert [f.code for f in read.findings] in ([], ["torn_tail"])
    with backend.open_writer("crashy") as writer:
        next_seq = writer.last_seq + 1
        writer.append({"type": "note", "run": "crashy", "seq": next_seq, "ts": "2026-11-29T10:00:00Z", "text": "end"})
    final = backend.read_run("crashy")
    assert final.findings == [] and final.records[-1].seq == next_seq
    assert final.records[0].raw == JournalBuilder("crashy").raw()[0].raw
