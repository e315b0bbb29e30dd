"""JSON bodies encoded once, the way FastAPI's own responses encode them (compact, UTF-8, no NaN).

A route that returns plain data is validated against its return type and walked by ``jsonable_encoder`` before
it is encoded; for a list of a hundred dicts that costs more than the query that read them. Routes whose answer
is already JSON data (built from the store's rows) encode it with ``encode_json`` (once for every request that
shares the read, ``SharedReads``), answer ``json_body(bytes)`` and declare the shape with ``response_model=`` for
the OpenAPI document, which stays as it was.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response


def encode_json(content: Any) -> bytes:
    """``content`` (JSON data: dicts, lists, strings, numbers, booleans, None) as the bytes of a JSON answer."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def json_body(body: bytes) -> Response:
    """A 200 JSON answer of ``body``, already encoded."""
    return Response(body, media_type="application/json")
