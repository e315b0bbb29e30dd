"""The one place that turns MCP tool outcomes into the spec's shape: ``{success: true, ...}`` or
``{success: false, error}``. No exception reaches the agent as a protocol error or a traceback."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

from pydantic import ValidationError

from svc_host.errors import SvcError, describe_validation

log = logging.getLogger(__name__)
P = ParamSpec("P")


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
