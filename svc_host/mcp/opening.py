"""The client's opening request, answered before the MCP SDK is imported (importing it takes most of a second).

An agent spawns ``svc mcp`` and its first frame is ``initialize`` (the handshake of every protocol up to
2025-11-25: TypeScript SDK 1.x, Python's ``ClientSession.initialize``) or ``server/discover`` (the stateless
2026-07-28 protocol, ``mcp.Client``). Both answers depend only on the server (its name, version, instructions and
the capabilities the SDK derives from ``MCPServer``'s handlers) and, for ``initialize``, on the protocol version
the client asks for, never on anything the SDK computes at run time. So ``early_answer`` gives the SDK's own answer
for the SDK it was checked against (``VERIFIED_SDK``) and the versions it accepts; anything else (another SDK, a
version the SDK would counter-offer, a frame that is not a plain request) is None, and the SDK answers.

``initialize`` opens a session: the SDK must still see it (``Early.replay``), record the client's capabilities
and protocol version, and its own answer is dropped on the way out (``svc_host.mcp.stdio``), after a check that it
is the one svc gave. ``tests/mcp/test_mcp_opening.py`` compares the answers field for field for every version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from svc_host import __version__

NAME = "svc"
INSTRUCTIONS = (
    "svc submits and watches batch jobs on Slurm GPU clusters. Every tool returns an object with "
    "'success'; on failure 'error' says what went wrong. Omit 'transport' (or pass 'local') for the "
    "scheduler on this machine, or pass an SSH profile name (see list_ssh_profiles)."
)
VERIFIED_SDK = "2.3.0"
"""The MCP SDK whose own answers these are (with another one, the SDK answers)."""
PROTOCOL_VERSION = "2026-07-28"
"""The stateless protocol revision the early ``server/discover`` answer is for."""
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The ``initialize`` protocol versions ``VERIFIED_SDK`` accepts as asked (others get its counter-offer)."""
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_CLIENT_INFO_FIELDS = {"name", "version", "title", "description", "websiteUrl"}
_INITIALIZE_FIELDS = {"protocolVersion", "capabilities", "clientInfo", "_meta"}


@dataclass(frozen=True)
class Early:
    """An answer svc wrote itself: ``line`` goes to the client; when ``replay``, the SDK still reads the request
    and its answer (the one with ``request_id``, whose result must equal ``result``) is not sent."""

    line: bytes
    request_id: int | str
    result: dict[str, Any]
    replay: bool


def discover_result() -> dict[str, Any]:
    """What the SDK answers to ``server/discover`` for svc's ``MCPServer`` (``VERIFIED_SDK``)."""
    return {
        "cacheScope": "private",
        "capabilities": {
            "prompts": {"listChanged": True},
            "resources": {"listChanged": True, "subscribe": True},
            "tools": {"listChanged": True},
        },
        "instructions": INSTRUCTIONS,
        "resultType": "complete",
        "supportedVersions": [PROTOCOL_VERSION],
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": NAME, "version": __version__}},
    }


def initialize_result(protocol_version: str) -> dict[str, Any]:
    """What the SDK answers to an ``initialize`` asking for ``protocol_version`` (one of ``HANDSHAKE_VERSIONS``)."""
    return {
        "capabilities": {
            "prompts": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "tools": {"listChanged": False},
        },
        "instructions": INSTRUCTIONS,
        "protocolVersion": protocol_version,
        "serverInfo": {"name": NAME, "version": __version__},
    }


def early_answer(frame: bytes, sdk_version: str | None, *, handshake: bool = True) -> Early | None:
    """svc's answer to the opening ``frame`` when it is the installed SDK's own, else None. ``handshake``: whether
    an ``initialize`` may be answered (its request must then reach the SDK and its answer be dropped)."""
    request = _request(frame) if sdk_version == VERIFIED_SDK else None
    if request is None:
        return None
    request_id, method, params = request
    if method == "server/discover" and _plain_discover(params):
        return _early(request_id, discover_result(), replay=False)
    if method == "initialize" and handshake and _plain_initialize(params):
        return _early(request_id, initialize_result(params["protocolVersion"]), replay=True)
    return None


def _request(frame: bytes) -> tuple[int | str, Any, dict[str, Any]] | None:
    """A JSON-RPC request's id, method and params (an object), or None."""
    try:
        message = json.loads(frame)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    return request_id, message.get("method"), params


def _early(request_id: int | str, result: dict[str, Any], *, replay: bool) -> Early:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":")).encode()
    return Early(line + b"\n", request_id, result, replay)


def _plain_discover(params: dict[str, Any]) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, dict) and meta.get(_META_VERSION) == PROTOCOL_VERSION


def _plain_initialize(params: dict[str, Any]) -> bool:
    """Params the SDK accepts as they are: a version it takes as asked, capabilities as objects and a client
    described by strings only (anything richer is the SDK's to judge)."""
    info = params.get("clientInfo")
    capabilities = params.get("capabilities")
    return (
        params.keys() <= _INITIALIZE_FIELDS
        and params.get("protocolVersion") in HANDSHAKE_VERSIONS
        and isinstance(params.get("_meta", {}), dict)
        and isinstance(capabilities, dict)
        and all(isinstance(value, dict) for value in capabilities.values())
        and isinstance(info, dict)
        and info.keys() <= _CLIENT_INFO_FIELDS
        and all(isinstance(info.get(key), str) for key in ("name", "version"))
        and all(isinstance(value, str) for value in info.values())
    )
