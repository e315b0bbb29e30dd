"""The one place that turns MCP tool outcomes into the spec's shape: ``{success: true, ...}`` or
``{success: false, error}``. No exception reaches the agent as a protocol error or a traceback, and
neither do arguments refused before a tool runs (missing, unknown, or of the wrong type)."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from svc_host.domain.validation_words import describe_validation
from svc_host.errors import SvcError

if TYPE_CHECKING:
    from anyio import AsyncFile

    from svc_host.mcp.opening import Early

log = logging.getLogger(__name__)
P = ParamSpec("P")
LifespanT = TypeVar("LifespanT")


def failure(message: str) -> dict[str, Any]:
    return {"success": False, "error": message}


def tool_result(fn: Callable[P, Awaitable[dict[str, Any]]]) -> Callable[P, Awaitable[dict[str, Any]]]:
    """Wrap a tool body: its dict gains ``success: true``; expected failures become ``{success: false, error}``."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        try:
            return {"success": True, **(await fn(*args, **kwargs))}
        except SvcError as exc:
            return failure(str(exc))
        except ValidationError as exc:
            return failure(describe_validation(exc.errors()))
        except Exception as exc:
            log.exception("tool %s failed", fn.__name__)
            return failure(f"internal error in {fn.__name__}: {type(exc).__name__}: {exc}")

    return wrapper


def describe_arguments(tool: str, errors: Sequence[Mapping[str, Any]]) -> str:
    """Arguments refused by a tool's schema, each named: ``missing required argument 'x'`` or
    ``argument 'x': <problem> (got <JSON type>)``. Values are not echoed: they may be long or secret."""
    parts = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        name = loc[0] if loc else "?"
        inner = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in loc[1:])
        if error.get("type") == "missing" and len(loc) == 1:
            parts.append(f"missing required argument '{name}'")
        else:
            message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
            parts.append(f"argument '{name}{inner}': {message} (got {_json_type(error.get('input'))})")
    return f"{tool}: " + "; ".join(parts or ["invalid arguments"])


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class SpecShapedServer(MCPServer[LifespanT]):
    """``MCPServer`` whose argument errors come back as ``{success: false, error}`` (as structured content
    and its JSON text) instead of the SDK's ``isError`` text, like every other failure of a tool.

    Arguments a tool does not take are refused too (the SDK would drop them): a misspelt ``dry_run`` must
    not run a workflow for real."""

    async def run_stdio_async(self, consumed: bytes = b"", answered: Early | None = None) -> None:
        """Serve over stdin and stdout driven by the event loop (``svc_host.mcp.stdio``), after the ``consumed``
        bytes and without a second answer to the request svc ``answered`` before the SDK was loaded; the SDK's
        own stdio transport when they cannot be (regular files: ``svc_host.mcp.handoff`` gave them no such bytes)."""
        from mcp.server.stdio import stdio_server

        from svc_host.mcp.stdio import loop_stdio

        async with loop_stdio(consumed, answered) as wire:
            if wire is None:
                await super().run_stdio_async()
                return
            # stdio_server takes anyio files; it only iterates the one and calls write and flush on the other
            stdin, stdout = cast("tuple[AsyncFile[str], AsyncFile[str]]", wire)
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):
                lowlevel = self._lowlevel_server
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[LifespanT, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        schema = next((tool.input_schema for tool in await self.list_tools() if tool.name == name), None)
        if schema is not None:
            known = list(schema.get("properties", {}))
            unknown = [key for key in arguments if key not in known]
            if unknown:
                takes = f"it takes {', '.join(known)}" if known else "it takes no arguments"
                listed = ", ".join(map(repr, unknown))
                return _refused(name, f"{name}: unknown argument{'s' * (len(unknown) > 1)} {listed} ({takes})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            return _refused(name, describe_arguments(name, exc.__cause__.errors(include_url=False)))


def _refused(tool: str, message: str) -> CallToolResult:
    log.info("tool %r refused its arguments: %s", tool, message)
    body = failure(message)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], structured_content=body)
