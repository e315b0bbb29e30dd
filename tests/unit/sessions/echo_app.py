"""A small app for the node guard's tests (stdlib only): answers every HTTP request with its head (a body, sized
or chunked, is read and dropped), keeping connections alive.

``python3 echo_app.py PORT [NOTE...]`` listens on 127.0.0.1:PORT and appends each request head to ``requests.log``
in its working directory. ``GET /info`` answers JSON: its argv, ``APP_SECRET`` from its environment and its PATH.
A request with ``Upgrade`` gets ``101`` and then every byte is echoed back, as after a WebSocket handshake. On
SIGTERM it writes ``terminated`` and exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path


def on_term(signum: int, frame: object) -> None:
    Path("terminated").write_text("yes")
    os._exit(0)


def more(conn: socket.socket, data: bytes) -> bytes:
    chunk = conn.recv(65536)
    if not chunk:
        raise EOFError
    return data + chunk


def skip_body(conn: socket.socket, head: bytes, data: bytes) -> bytes:
    """What follows the request's body (``Content-Length`` or chunked): the body is read and dropped, so one request
    gets one answer however its bytes arrive."""
    fields = head.lower()
    if b"\r\ntransfer-encoding: chunked" in fields:
        while True:
            while b"\r\n" not in data:
                data = more(conn, data)
            size_line, data = data.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(data) < size + 2:
                data = more(conn, data)
            data = data[size + 2 :]
            if size == 0:
                return data
    if b"\r\ncontent-length: " in fields:
        length = int(fields.split(b"\r\ncontent-length: ")[1].split(b"\r\n")[0])
        while len(data) < length:
            data = more(conn, data)
        return data[length:]
    return data


def serve(conn: socket.socket) -> None:
    """Answer requests on one connection (kept alive) until the guard closes it."""
    data = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            if b"\r\nupgrade:" not in head.lower():
                try:
                    data = skip_body(conn, head, data)
                except EOFError:
                    return
            with open("requests.log", "ab") as log:
                log.write(head + b"\n---\n")
            if b"\r\nupgrade:" in head.lower():
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
                while True:
                    conn.sendall(data)
                    data = conn.recv(65536)
                    if not data:
                        return
            if head.startswith(b"GET /info "):
                info = {"argv": sys.argv[1:], "secret": os.environ.get("APP_SECRET"), "path": os.environ["PATH"]}
                body = json.dumps(info).encode()
            else:
                body = head
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def main() -> None:
    signal.signal(signal.SIGTERM, on_term)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1])))
    server.listen(16)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
