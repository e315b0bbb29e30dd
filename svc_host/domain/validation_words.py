"""Validation errors in words, for people: pydantic's error types as "must be at least 1", a pattern as the
characters it allows (``worded_pattern``), fields as dotted paths. REST answers (``errors`` of a 422), MCP tool
errors, the CLI and the settings files all say a bad value this way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

_PATTERN_WORDS: dict[str, str] = {}


def worded_pattern(pattern: str, words: str) -> str:
    """Register what ``pattern`` allows, in words ("lowercase letters, digits, ..."): a value that does not match is
    then told that, never the regex. Returns ``pattern`` (``NAME = worded_pattern(r"...", "...")``)."""
    _PATTERN_WORDS[pattern] = words
    return pattern


_WHERE = frozenset({"body", "query", "path", "header", "cookie"})


def _field(loc: Sequence[Any]) -> str:
    """``("body", "resources", "time_limit")`` as ``resources.time_limit``: the request part it came in is left out."""
    parts = list(loc)
    if parts and parts[0] in _WHERE:
        parts = parts[1:]
    return ".".join(str(part) for part in parts)


_SAID: dict[str, str] = {
    "missing": "is required",
    "extra_forbidden": "is not a setting svc knows",
    "string_too_long": "must be at most {max_length} characters",
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
}
"""Pydantic's error types in words; ``{name}`` is filled from the error's ``ctx`` (its bound)."""


def _words(error: Mapping[str, Any]) -> str:
    """One problem as a person says it: the bounds and the allowed characters, not pydantic's wording or a regex."""
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if kind == "string_pattern_mismatch":
        words = _PATTERN_WORDS.get(str(ctx.get("pattern", "")))
        return f"use {words}" if words else "contains characters that are not allowed here"
    if kind == "string_too_short":
        least = ctx.get("min_length")
        return "must not be empty" if least == 1 else f"must be at least {least} characters"
    if kind in _SAID:
        return _SAID[kind].format(**ctx)
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return message.replace("Input should be", "must be", 1)


def field_problems(errors: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Pydantic (or FastAPI) validation errors as ``[{field, message}]``: the field as a dotted path (``""`` for the
    request as a whole), the message in words. A 422's ``errors`` beside its ``detail`` (which keeps pydantic's
    wording, matched by scripts); the dashboard shows each message next to its field."""
    return [{"field": _field(error.get("loc", ())), "message": _words(error)} for error in errors]


def describe_validation(errors: Sequence[Mapping[str, Any]]) -> str:
    """Pydantic (or FastAPI) validation errors as ``field: problem`` clauses joined by ``; ``."""
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()))
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or "invalid input"


def describe_validation_error(exc: ValidationError, *, where: str = "") -> str:
    """``<where>: a.b: message; c: message`` — one clause per problem, fields as dotted paths."""
    detail = describe_validation(exc.errors())
    return f"{where}: {detail}" if where else detail
