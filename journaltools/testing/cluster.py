"""A JetStream cluster of local ``nats-server`` nodes on loopback, for replicated streams in tests and demos.

Built on the library's throwaway servers (``journaltools.sources.embedded``); the library itself never starts a cluster.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import socket
import tempfile
import time
import urllib.request
import weakref
from pathlib import Path
from typing import Any, Final

from journaltools.errors import SourceError
from journaltools.sources.embedded import EmbeddedServer


def distinct_free_ports(host: str, count: int) -> list[int]:
    """``count`` different ports free now: every probe stays bound until all are chosen, so none repeats."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for probe in probes:
            probe.bind((host, 0))
        return [probe.getsockname()[1] for probe in probes]


#: Plans of a cluster's ports tried before a start gives up.
_CLUSTER_ATTEMPTS: Final = 3


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


@atexit.register
def _stop_all() -> None:
    for cluster in list(_live_clusters):
        cluster.stop()
