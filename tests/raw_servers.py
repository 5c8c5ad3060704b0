"""Servers on 127.0.0.1 that are not HTTP servers, for the cases where an endpoint misbehaves below HTTP: a port
that resets every connection, a port where another protocol answers."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def raw_tcp_server(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A port whose server passes each accepted connection to `handle` (which closes it)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test is over
            handle(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        # Closing alone leaves the thread blocked in accept() until the join gives up (5 s); a shutdown
        # wakes it at once.
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
        if thread.is_alive():
            raise AssertionError("the raw server's thread did not end after its listener was shut")


def reset_at_once(connection: socket.socket) -> None:
    """An RST, not a clean close."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def answer_in_ssh(connection: socket.socket) -> None:
    """Another service on the port: an SSH server's greeting, whatever was asked."""
    with connection:
        connection.recv(65536)
        connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
