"""A hostile world, through the command line as a user meets it (issue rows F1-F10).

Every row runs ``python -m journaltools`` as a subprocess and asserts its exit status, a message on stderr that
names the path or URL in one line, no ``Traceback``, completion within a few seconds, and that nothing on disk
changed (lock files excepted: taking a lock creates its empty file by design, and it holds no data).

F4 and F5 need a user the file modes apply to: as root the command runs as ``nobody`` (``subprocess``'s
``user=``); F7 and F8 need a filesystem that is full or read-only: as root a 256 KiB tmpfs is mounted for them.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journaltools.samples import write_samples
from tests.builders import JournalBuilder

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = os.geteuid() == 0
NOBODY = 65534
#: Generous for a shared 2-core machine; a hang (F2) would take the whole subprocess timeout.
FEW_SECONDS = 15.0


@dataclass
class Outcome:
    status: int
    out: str
    err: str
    seconds: float


def as_nobody_prefix() -> list[str]:
    # setpriv rather than subprocess's user=: the interpreter may live under root's private home, which an exec
    # by nobody could not reach; once running, the child holds nobody's credentials only (checked below).
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def run_cli(*argv: str, as_nobody: bool = False, cwd: Path | None = None) -> Outcome:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [*(as_nobody_prefix() if as_nobody else []), sys.executable, "-m", "journaltools", *argv]
    started = time.monotonic()
    result = subprocess.run(
        command, capture_output=True, cwd=cwd or ROOT, env=env, timeout=60, stdin=subprocess.DEVNULL
    )
    return Outcome(
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
        time.monotonic() - started,
    )


def snapshot(*roots: Path) -> dict[str, bytes | str]:
    """Every file (bytes), directory and link under ``roots``, lock files left out."""
    found: dict[str, bytes | str] = {}
    for root in roots:
        if not root.exists():
            found[str(root)] = "missing"
            continue
        for path in sorted([root, *root.rglob("*")]):
            info = path.lstat()
            if path.name.endswith(".lock"):
                continue
            if stat.S_ISLNK(info.st_mode):
                found[str(path)] = f"link -> {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                found[str(path)] = f"dir {stat.S_IMODE(info.st_mode):o}"
            elif stat.S_ISREG(info.st_mode):
                try:
                    found[str(path)] = path.read_bytes()
                except PermissionError:
                    found[str(path)] = f"unreadable {info.st_size}"
            else:
                found[str(path)] = f"special {stat.S_IFMT(info.st_mode):o}"
    return found


def deferred_journal(run: str, size_mod_page: int | None = None) -> bytes:
    """A run waiting for an answer to call ``toolu_1``; optionally padded so its size is ``size_mod_page``
    modulo 4096 (an answer then needs a new page of the filesystem)."""

    def build(pad: str) -> bytes:
        journal = JournalBuilder(run).user("deploy it" + pad).assistant("toolu_1")
        journal.add("deferral", call="toolu_1", reason="approval")
        return journal.bytes()

    data = build("")
    if size_mod_page is not None:
        data = build("." * ((size_mod_page - len(data)) % 4096 or 4096))
        assert len(data) % 4096 == size_mod_page
    return data


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A scratch directory any user may enter (pytest's own are private to their owner)."""
    path = Path(tempfile.mkdtemp(prefix="journaltools-hostile-"))
    path.chmod(0o755)
    yield path
    for child in [path, *path.rglob("*")]:
        if not child.is_symlink():
            child.chmod(0o755 if child.is_dir() else 0o644)
    shutil.rmtree(path)


def nobody_cannot_run_the_cli(scratch: Path) -> str | None:
    """Why a child cannot run the CLI as an unprivileged user here, or None once a child as ``nobody`` has
    shown both that it runs Python and that file modes bind it (it cannot read a mode-000 file)."""
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    locked = scratch / "mode-000-probe"
    locked.write_bytes(b"x")
    locked.chmod(0)
    probe = "import os, sys, journaltools.cli\ntry:\n open(sys.argv[1])\nexcept PermissionError:\n print(os.geteuid())"
    try:
        done = subprocess.run(
            [*as_nobody_prefix(), sys.executable, "-c", probe, str(locked)], capture_output=True, cwd="/", timeout=60
        )
    finally:
        locked.unlink()
    if done.stdout.strip() != str(NOBODY).encode():
        return f"a child as nobody did not run unprivileged: {done.stderr.decode(errors='replace').strip()[-200:]}"
    return None


def fill(mount: Path) -> None:
    """Use every free page of ``mount`` (a write into a new page then fails with ENOSPC)."""
    with open(mount / "filler", "wb", buffering=0) as handle:
        while True:
            try:
                handle.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                return


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs of its own (root only)."""
    if not IS_ROOT:
        pytest.skip("a full or read-only filesystem needs root to mount a 256 KiB tmpfs; run the tests as root")
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"this machine refuses to mount a tmpfs: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def read_only(mount: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)


def whole_records_only(dest: Path, source: Path) -> None:
    """What a failed migration left in ``dest``: journals holding whole records of the source, or nothing."""
    for journal in dest.rglob("*.jsonl"):
        data = journal.read_bytes()
        assert data == b"" or data.endswith(b"\n"), f"{journal} ends in a partial record"
        assert (source / journal.name).read_bytes().startswith(data)


@dataclass
class Case:
    argv: list[str]
    status: int
    names: list[str]  # what the message must say (a path, a URL, the cause)
    watch: list[Path] = field(default_factory=list)  # trees that must not change
    as_nobody: bool = False
    stderr_lines: int | None = 1  # None: a summary line may follow (audit), the finding itself is on stdout
    check: Callable[[Outcome], None] | None = None


Scenario = Callable[[Path, Callable[[], Path]], Case]


def _two_journals(root: Path) -> None:
    root.mkdir(exist_ok=True)
    (root / "good.jsonl").write_bytes(JournalBuilder("good").user().assistant().bytes())


def f1_port_out_of_range(tmp: Path, mount: Callable[[], Path]) -> Case:
    return Case(["ls", "nats://127.0.0.1:99999/S"], 2, ["nats://127.0.0.1:99999/S", "port"])


def f2_fifo(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        _two_journals(tmp / "d")
        os.mkfifo(tmp / "d" / "r1.jsonl")
        argv = ["show", str(tmp / "d"), "r1"] if command == "show" else ["ls", str(tmp / "d")]
        lists_good: Callable[[Outcome], None] = lambda outcome: None  # noqa: E731
        if command == "ls":
            lists_good = lambda outcome: _listed(outcome, {"good": "completed", "r1": "invalid"})  # noqa: E731
        return Case(argv, 1 if command == "show" else 0, [str(tmp / "d" / "r1.jsonl"), "FIFO"], [tmp], check=lists_good)

    return scenario


def f3_directory(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        _two_journals(tmp / "d")
        (tmp / "d" / "r1.jsonl").mkdir()
        argv = ["show", str(tmp / "d"), "r1"] if command == "show" else ["ls", str(tmp / "d")]
        return Case(argv, 1 if command == "show" else 0, [str(tmp / "d" / "r1.jsonl"), "directory"], [tmp])

    return scenario


def _listed(outcome: Outcome, statuses: dict[str, str]) -> None:
    rows = {line.split()[0]: line.split()[1] for line in outcome.out.splitlines()[1:]}
    assert {run: rows.get(run) for run in statuses} == statuses


def f4_unreadable(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        root = tmp / "d"
        _two_journals(root)
        secret = root / "secret.jsonl"
        secret.write_bytes(JournalBuilder("secret").user().assistant().bytes())
        secret.chmod(0)
        names = [str(secret), "permission denied"]
        if command == "ls":
            check = lambda outcome: _listed(outcome, {"good": "completed", "secret": "invalid"})  # noqa: E731
            return Case(["ls", str(root)], 0, names, [tmp], IS_ROOT, check=check)
        if command == "show":
            return Case(["show", str(root), "secret"], 1, names, [tmp], IS_ROOT)

        def audited(outcome: Outcome) -> None:
            assert "unreadable_journal" in outcome.out and str(secret) in outcome.out
            assert "2 runs" in outcome.err  # the other journal was audited too

        return Case(["audit", str(root)], 0, [], [tmp], IS_ROOT, stderr_lines=None, check=audited)

    return scenario


def f5_lock_cannot_be_created(tmp: Path, mount: Callable[[], Path]) -> Case:
    root = tmp / "d"
    root.mkdir()
    (root / "r.jsonl").write_bytes(deferred_journal("r"))
    root.chmod(0o555)
    argv = ["answer", str(root), "r", "toolu_1", "--result", "ok"]
    return Case(argv, 1, [str(root / "r.lock"), "permission denied"], [tmp], IS_ROOT)


def f6_lock_is_a_directory(tmp: Path, mount: Callable[[], Path]) -> Case:
    root = tmp / "d"
    root.mkdir()
    (root / "r.jsonl").write_bytes(deferred_journal("r"))
    (root / "r.lock").mkdir()
    argv = ["answer", str(root), "r", "toolu_1", "--result", "ok"]
    case = Case(argv, 1, [str(root / "r.lock"), "directory"], [tmp])
    case.check = lambda outcome: None if (root / "r.lock").is_dir() else pytest.fail("the lock directory was touched")
    return case


def f7_disk_full(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        mnt = mount()
        source = tmp / "src"
        write_samples(source)
        if command == "answer":
            (mnt / "d").mkdir()
            (mnt / "d" / "r.jsonl").write_bytes(deferred_journal("r", size_mod_page=4091))
        fill(mnt)
        full = "no space left"
        if command == "samples":
            return Case(["samples", str(mnt / "new")], 1, [str(mnt / "new"), full], [mnt])
        if command == "migrate":
            case = Case(["migrate", str(source), str(mnt / "dest")], 1, [str(mnt / "dest"), full], [source])
            case.check = lambda outcome: whole_records_only(mnt / "dest", source)
            return case
        if command == "audit":
            case = Case(["audit", str(source), "--parquet", str(mnt / "out"), "--quiet"], 1, [str(mnt), full])
            case.watch = [source]
            case.check = lambda outcome: _no_files(mnt / "out")
            return case
        argv = ["answer", str(mnt / "d"), "r", "toolu_1", "--result", "ok"]
        return Case(argv, 1, [str(mnt / "d" / "r.jsonl"), full], [mnt])

    return scenario


def _no_files(directory: Path) -> None:
    left = [path for path in directory.rglob("*") if path.is_file()] if directory.exists() else []
    assert left == [], f"a failed audit left {left}"


def f8_read_only(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        mnt = mount()
        source = tmp / "src"
        write_samples(source)
        (mnt / "d").mkdir()
        (mnt / "d" / "r.jsonl").write_bytes(deferred_journal("r"))
        read_only(mnt)
        if command == "answer":
            argv = ["answer", str(mnt / "d"), "r", "toolu_1", "--result", "ok"]
            return Case(argv, 1, [str(mnt / "d"), "read-only"], [mnt])
        return Case(["migrate", str(source), str(mnt / "dest")], 1, [str(mnt / "dest"), "read-only"], [source, mnt])

    return scenario


HOSTILE = "\x1b]52;c;aGVsbG8=\x07 \x1b[2J\rwiped \u009b31m \x08\x7f \u202e"


def hostile_journal(run: str) -> JournalBuilder:
    journal = JournalBuilder(run)
    journal.bodies[0]["fingerprint"] = {**journal.bodies[0]["fingerprint"], "model": "model" + HOSTILE}
    journal.user("please" + HOSTILE)
    journal.add(
        "assistant",
        content=[
            {"type": "text", "text": "sure" + HOSTILE},
            {"type": "tool_use", "id": "toolu_1", "name": "tool" + HOSTILE, "input": {"arg": HOSTILE}},
        ],
        stop_reason="tool_use",
        usage={"input_tokens": 1, "output_tokens": 1},
    )
    journal.result("toolu_1", "result" + HOSTILE)
    journal.add("error", where="provider", message="overloaded" + HOSTILE, fatal=True)
    return journal


def assert_terminal_clean(text: str) -> None:
    """No C0 control but newline, no DEL, no C1 control: what a terminal would act on."""
    bad = sorted({f"U+{ord(c):04X}" for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F})
    assert bad == [], f"raw control characters on the terminal: {bad}"


def f9_control_characters(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        root = tmp / "d"
        root.mkdir()
        (root / "evil.jsonl").write_bytes(hostile_journal("evil").bytes())

        def clean(outcome: Outcome) -> None:
            assert_terminal_clean(outcome.out + outcome.err)
            assert "\\x1b]52;c;aGVsbG8=\\x07" in outcome.out and "\\u009b" in outcome.out and "\\r" in outcome.out

        argv = ["show", str(root), "evil"] if command == "show" else ["ls", str(root)]
        case = Case(argv, 0, [], [tmp], stderr_lines=0, check=clean)
        return case

    return scenario


def f10_symlink_out_of_the_source(command: str) -> Scenario:
    def scenario(tmp: Path, mount: Callable[[], Path]) -> Case:
        outside, root = tmp / "outside", tmp / "d"
        outside.mkdir()
        root.mkdir()
        (outside / "r.jsonl").write_bytes(deferred_journal("r"))
        (root / "r.jsonl").symlink_to(outside / "r.jsonl")
        names = [str(root / "r.jsonl"), "symbolic link"]
        if command == "ls":
            check = lambda outcome: _listed(outcome, {"r": "invalid"})  # noqa: E731
            return Case(["ls", str(root)], 0, names, [tmp], check=check)
        case = Case(["answer", str(root), "r", "toolu_1", "--result", "ok"], 1, names, [tmp])
        case.check = lambda outcome: _no_locks(tmp)
        return case

    return scenario


def _no_locks(tmp: Path) -> None:
    assert list(tmp.rglob("*.lock")) == [], "a refused journal takes no lock"


ROWS: dict[str, Scenario] = {
    "F1-ls": f1_port_out_of_range,
    "F2-show": f2_fifo("show"),
    "F2-ls": f2_fifo("ls"),
    "F3-show": f3_directory("show"),
    "F3-ls": f3_directory("ls"),
    "F4-ls": f4_unreadable("ls"),
    "F4-show": f4_unreadable("show"),
    "F4-audit": f4_unreadable("audit"),
    "F5-answer": f5_lock_cannot_be_created,
    "F6-answer": f6_lock_is_a_directory,
    "F7-samples": f7_disk_full("samples"),
    "F7-migrate": f7_disk_full("migrate"),
    "F7-audit": f7_disk_full("audit"),
    "F7-answer": f7_disk_full("answer"),
    "F8-answer": f8_read_only("answer"),
    "F8-migrate": f8_read_only("migrate"),
    "F9-show": f9_control_characters("show"),
    "F9-ls": f9_control_characters("ls"),
    "F10-answer": f10_symlink_out_of_the_source("answer"),
    "F10-ls": f10_symlink_out_of_the_source("ls"),
}


@pytest.mark.parametrize("row", list(ROWS))
def test_hostile_world_row(row: str, open_dir: Path, request: pytest.FixtureRequest) -> None:
    case = ROWS[row](open_dir, lambda: request.getfixturevalue("small_fs"))
    if case.as_nobody:
        reason = nobody_cannot_run_the_cli(open_dir)
        if reason is not None:
            pytest.skip(f"as root this row runs as nobody, who cannot run this checkout: {reason}")
    before = snapshot(*case.watch)
    outcome = run_cli(*case.argv, as_nobody=case.as_nobody)
    assert outcome.status == case.status, (outcome.status, outcome.err)
    assert "Traceback" not in outcome.err + outcome.out
    assert outcome.seconds < FEW_SECONDS
    lines = outcome.err.splitlines()
    if case.stderr_lines is not None:
        assert len(lines) == case.stderr_lines, lines
    for name in case.names:
        assert name in (lines[0] if lines else ""), (name, lines)
    assert snapshot(*case.watch) == before
    if case.check is not None:
        case.check(outcome)


# -- no traceback for any input ---------------------------------------------------------------------------------


def test_an_unexpected_error_is_one_line_and_debug_adds_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import journaltools.cli as cli_module

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(cli_module, "open_source", broken)
    assert cli_module.main(["ls", "somewhere"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "journaltools ls: unexpected error: RuntimeError: a bug\\nover two lines; "
        "run it again with --debug for the traceback, and please report it"
    ]
    assert cli_module.main(["--debug", "ls", "somewhere"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "RuntimeError: a bug" in err
    assert err.splitlines()[-1].startswith("journaltools ls: unexpected error: RuntimeError")


_SOURCES = st.one_of(
    st.text(max_size=12).filter(lambda t: "**" not in t and not t.startswith(("/", "embedded", "-")) and ".." not in t),
    st.builds(
        "nats://127.0.0.1:{}/{}".format, st.sampled_from(["1", "0", "99999", "-3", "x", ""]), st.text(max_size=6)
    ),
    st.sampled_from(
        [
            *(
                "nats://",
                "nats://:1/S",
                "tls://127.0.0.1:1/S",
                "file://",
                "file:///no/such/dir",
                "embedded:/dev/null/x",
            ),
            *("ftp://127.0.0.1/x", "C:", "nats://127.0.0.1:1/bad.stream", "*.jsonl", "x.jsonl.gz", "?"),
        ]
    ),
)
_COMMANDS = st.sampled_from(["ls", "show", "audit", "answer", "gate", "compare", "migrate"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_COMMANDS, source=_SOURCES, run=st.text(max_size=10))
def test_no_input_makes_the_cli_raise(
    command: str, source: str, run: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from journaltools.cli import main

    scratch = tmp_path_factory.mktemp("fuzz")
    (scratch / "config.json").write_text("{}")
    argv = {
        "ls": ["ls", source],
        "show": ["show", source, run],
        "audit": ["audit", source],
        "answer": ["answer", source, run, "toolu_1", "--result", "ok"],
        "gate": ["gate", source, run, "--config", str(scratch / "config.json")],
        "compare": ["compare", source, source],
        "migrate": ["migrate", source, str(scratch / "dest")],
    }[command]
    cwd = os.getcwd()
    os.chdir(scratch)  # relative sources and globs resolve in an empty scratch directory
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse's own refusal of the arguments
        status = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert status in (0, 1, 2) and "Traceback" not in err
    if status != 0:
        assert err.strip(), "a refusal says why"
