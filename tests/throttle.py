"""A slow link on 127.0.0.1: a TCP proxy between a client and a real server that forwards bytes at a set rate.

Each direction of each connection is pumped by its own thread: read at most ``chunk`` bytes, hold them for
``delay`` seconds plus their time on the wire at ``rate`` bytes per second, then send them on. The holding is the
simulated link, not synchronisation. ``partition()`` stops forwarding (bytes read are held, the connections stay
open, as when a route between two hosts goes away); ``heal()`` lets them through again. ``cut()`` resets every
connection (a lossy link that drops them).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time


class ThrottledProxy:
    """Listens on 127.0.0.1 (``port``) and forwards every connection to ``target_port`` on 127.0.0.1."""

    def __init__(self, target_port: int, *, rate: float, chunk: int = 16384, delay: float = 0.0) -> None:
        self.target_port = target_port
        self.rate = rate
        self.chunk = chunk
        self.delay = delay
        self.forwarded = 0
        #: Partition the link once this many bytes have been forwarded (None: never by itself).
        self.partition_after: int | None = None
        self._open = threading.Event()
        self._open.set()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # the listener was closed
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                thread = threading.Thread(target=self._pump, args=(source, sink), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while not self._closing.is_set():
            try:
                data = source.recv(self.chunk)
            except OSError:
                data = b""
            if not data:
                break
            time.sleep(self.delay + len(data) / self.rate)  # the link: latency per chunk, then the wire
            # A partition holds what was read; bounded by close(), which sets the event.
            while not self._open.wait(0.5):
                if self._closing.is_set():
                    return
            try:
                sink.sendall(data)
            except OSError:
                break
            with self._lock:
                self.forwarded += len(data)
                if self.partition_after is not None and self.forwarded >= self.partition_after:
                    self._open.clear()
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def partition(self) -> None:
        self._open.clear()

    def heal(self) -> None:
        self.partition_after = None
        self._open.set()

    def cut(self) -> None:
        """Reset every connection now (SO_LINGER 0 sends an RST): the client sees its link drop."""
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.shutdown(socket.SHUT_RDWR)  # wakes a pump blocked in recv (closing alone does not on Linux)
            with contextlib.suppress(OSError):
                sock.close()

    def close(self) -> None:
        self._closing.set()
        self._open.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        self.listener.close()
        self.cut()
        for thread in self._threads:
            thread.join(timeout=5)
