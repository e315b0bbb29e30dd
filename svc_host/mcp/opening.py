"""The client's opening request, answered before the MCP SDK is imported (importing it takes most of a second).

An agent spawns ``svc mcp`` and its first frame is ``server/discover`` (protocol 2026-07-28, the official client)
or ``initialize`` (older clients). ``server/discover`` is stateless: the answer depends only on the server (its
name, version, instructions and the capabilities the SDK derives from ``MCPServer``'s handlers), never on the
session, and every later request carries its own protocol envelope. So ``svc mcp`` imports the SDK in a thread
while the main thread reads the first frame; a ``server/discover`` for the protocol version svc knows is answered
at once with ``discover_result()``, and the SDK serves everything after it (``tools/list`` waits for the server,
so the list is always complete). Anything else (``initialize``, another version, a frame that is not JSON, an SDK
other than ``VERIFIED_SDK``) is handed to the SDK as it came, through a pipe that replays the bytes already read
in front of the rest of stdin; so are frames the client sent behind the first one without waiting.

``tests/mcp/test_mcp_opening.py`` checks that the early answer is, field for field, the one the SDK gives.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from svc_host import __version__

NAME = "svc"
INSTRUCTIONS = (
    "svc submits and watches batch jobs on Slurm GPU clusters. Every tool returns an object with "
    "'success'; on failure 'error' says what went wrong. Omit 'transport' (or pass 'local') for the "
    "scheduler on this machine, or pass an SSH profile name (see list_ssh_profiles)."
)
VERIFIED_SDK = "2.3.0"
"""The MCP SDK whose own ``server/discover`` answer ``discover_result`` is (with another one, the SDK answers)."""
PROTOCOL_VERSION = "2026-07-28"
"""The stateless protocol revision the early answer is for."""
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES = {
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}
_FRAME_LIMIT = 1 << 20
"""Stop looking for the end of the first frame after this many bytes (the SDK then reads it whole)."""


def discover_result() -> dict[str, Any]:
    """What the SDK answers to ``server/discover`` for svc's ``MCPServer`` (``VERIFIED_SDK``)."""
    return {
        "cacheScope": "private",
        "capabilities": _CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "resultType": "complete",
        "supportedVersions": [PROTOCOL_VERSION],
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": NAME, "version": __version__}},
    }


def early_answer(frame: bytes, sdk_version: str | None) -> bytes | None:
    """The answer line to the opening ``frame`` when svc can give it for the installed SDK, else None."""
    if sdk_version != VERIFIED_SDK:
        return None
    try:
        message = json.loads(frame)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "server/discover":
        return None
    request_id = message.get("id")
    params = message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or meta.get(_META_VERSION) != PROTOCOL_VERSION:
        return None
    answer = {"jsonrpc": "2.0", "id": request_id, "result": discover_result()}
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"


def answer_opening(preload: str) -> threading.Thread:
    """Import ``preload`` (the server module) in a thread; meanwhile answer the client's opening frame on fd 1 if
    svc can, and leave fd 0 so that the SDK reads every byte it did not answer. Join the returned thread before
    using ``preload``."""
    sdk: list[str | None] = []
    known = threading.Event()

    def load() -> None:
        try:
            from importlib.metadata import PackageNotFoundError, version

            try:
                sdk.append(version("mcp"))
            except PackageNotFoundError:
                sdk.append(None)
        finally:
            known.set()
        __import__(preload)

    loader = threading.Thread(target=load, name="svc-mcp-import", daemon=True)
    loader.start()
    data = _read_first_frame()
    frame, newline, rest = data.partition(b"\n")
    known.wait()
    answer = early_answer(frame, sdk[0] if sdk else None) if newline else None
    if answer is not None:
        _write_all(1, answer)
        data = rest
    if data:
        _replay(data)
    return loader


def _read_first_frame() -> bytes:
    """Bytes from fd 0 up to the first newline (and whatever came with it), the end of input, or the limit."""
    data = b""
    while b"\n" not in data and len(data) < _FRAME_LIMIT:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replay(consumed: bytes) -> None:
    """Make fd 0 a pipe that gives ``consumed`` and then everything still to come on the real stdin."""
    read_end, write_end = os.pipe()
    source = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)

    def forward() -> None:
        try:
            _write_all(write_end, consumed)
            while chunk := os.read(source, 65536):
                _write_all(write_end, chunk)
        except OSError:  # the server closed its end: nobody reads any more
            pass
        finally:
            os.close(write_end)
            os.close(source)

    threading.Thread(target=forward, name="svc-mcp-stdin", daemon=True).start()
