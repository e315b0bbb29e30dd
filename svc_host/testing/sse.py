"""Reading a server-sent event stream in tests (``GET /api/events``), as a browser's EventSource would."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


@dataclass(frozen=True)
class SseMessage:
    event: str
    data: str
    id: str | None

    def json(self) -> Any:
        return json.loads(self.data)


async def sse_messages(response: httpx.Response) -> AsyncIterator[SseMessage]:
    """The messages of a streamed response, comments (heartbeats) left out."""
    event, last_id = "message", None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseMessage(event=event, data="\n".join(data), id=last_id)
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            last_id = value
