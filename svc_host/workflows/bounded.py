"""What a workflow template may build, counted while it renders.

Every operation that can make a string (``~``, ``+``, ``replace``, ``join``, ``tojson``, ``string``, the case
filters and the output of ``{{ }}`` itself) checks the size of what it is about to build against
:data:`MAX_FIELD_CHARS` and adds it to the render's spending, which may reach :data:`MAX_RENDER_CHARS`. Sizes are
checked before a string exists wherever they can be computed (``tojson`` is encoded piece by piece), so a short
template cannot make the server allocate gigabytes: it is refused as soon as it has built a few megabytes.
"""

from __future__ import annotations

import contextvars
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from typing import Any

MAX_FIELD_CHARS = 1_000_000
"""A rendered string, and anything a template builds on the way, is at most this many characters."""
MAX_RENDER_CHARS = 4 * MAX_FIELD_CHARS
"""Everything one template builds while it renders, intermediate strings included."""
MAX_INDENT = 32
"""The largest ``tojson(indent=...)``."""

_HTML_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027"}  # what Jinja's tojson escapes


class Refused(Exception):
    """A template uses something workflow templates may not, or builds too much."""


@dataclass
class Meter:
    """The work one render may do: ``limit`` characters built in all (refused with ``over``), and the thread
    CPU time (``time.thread_time``) it may run to (refused with ``cpu_over``). The caller reads ``built``
    afterwards: renders of one workflow draw on one budget."""

    limit: int = MAX_RENDER_CHARS
    over: str = f"the template builds more than {MAX_RENDER_CHARS} characters while it renders"
    cpu_deadline: float = math.inf
    cpu_over: str = "the template needs too much CPU time"
    built: int = 0

    def charge(self, size: int) -> None:
        self.built += size
        if self.built > self.limit:
            raise Refused(self.over)
        self.check_cpu()

    def check_cpu(self) -> None:
        if time.thread_time() > self.cpu_deadline:
            raise Refused(self.cpu_over)


_meter: contextvars.ContextVar[Meter] = contextvars.ContextVar("svc_template_meter")


def bounded(size: int, what: str) -> None:
    """Refuse a string of ``size`` characters before it is built, and count it against the render."""
    _check(size, what)
    _charge(size)


def _check(size: int, what: str) -> None:
    if size > MAX_FIELD_CHARS:
        raise Refused(f"{what} would build more than {MAX_FIELD_CHARS} characters")


def _charge(size: int) -> None:
    meter = _meter.get(None)
    if meter is not None:
        meter.charge(size)


def render_bounded(pieces: Iterable[str], meter: Meter | None = None) -> str:
    """Join a template's output (``Template.generate``), stopping as soon as it passes ``MAX_FIELD_CHARS`` or
    ``meter`` (a fresh one by default) is spent."""
    meter = meter or Meter()
    token = _meter.set(meter)
    try:
        out: list[str] = []
        size = 0
        for piece in pieces:
            size += len(piece)
            _check(size, "the template")
            meter.check_cpu()
            out.append(piece)
        return "".join(out)
    finally:
        _meter.reset(token)


def bounded_join(parts: Iterable[Any]) -> str:
    """``~`` (Jinja's string concatenation), refusing to build more than ``MAX_FIELD_CHARS``."""
    words = [bounded_text(part) for part in parts]
    bounded(sum(len(word) for word in words), "'~'")
    return "".join(words)


def bounded_replace(value: Any, old: Any, new: Any, count: int | None = None) -> str:
    """The ``replace`` filter, with the result's length checked before it is built."""
    text, old, new = bounded_text(value), bounded_text(old), bounded_text(new)
    found = text.count(old) if old else len(text) + 1
    if count is not None and count >= 0:
        found = min(found, count)
    bounded(len(text) + found * (len(new) - len(old)), "replace")
    return text.replace(old, new, -1 if count is None else count)


def bounded_join_filter(value: Any, separator: Any = "", attribute: Any = None) -> str:
    """The ``join`` filter (of plain items: ``attribute`` is not supported), length checked first."""
    if attribute is not None:
        raise Refused("join(attribute=...) is not allowed in workflow templates")
    if isinstance(value, str):
        value = list(value)
    words = [bounded_text(item) for item in value]
    glue = bounded_text(separator)
    bounded(sum(len(word) for word in words) + len(glue) * max(len(words) - 1, 0), "join")
    return glue.join(words)


def bounded_text(value: Any) -> str:
    """``str(value)`` (the ``string`` filter and what ``{{ }}`` writes), its size estimated before it is built."""
    if isinstance(value, str):
        return value
    _estimate(value, "the template")
    return str(value)


def _estimate(value: Any, what: str) -> int:
    """An upper bound of ``len(str(value))``, refused as soon as it passes ``MAX_FIELD_CHARS``."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2 if item.isascii() and item.isprintable() else 10 * len(item) + 2
        elif isinstance(item, Mapping):
            stack += [*item.keys(), *item.values()]
            total += 2 + 4 * len(item)
        elif isinstance(item, list | tuple | set | frozenset):
            stack += item
            total += 2 + 2 * len(item)
        else:
            total += len(repr(item))
        _check(total, what)
    return total


def charged(function: Callable[[str], str]) -> Callable[[str], str]:
    """A one-argument string filter (``upper``...) whose result counts against the render."""

    def bounded_filter(value: str) -> str:
        text = function(bounded_text(value))
        bounded(len(text), function.__name__.removeprefix("do_"))
        return text

    return bounded_filter


def metered(function: Callable[..., Any], *, after_environment: bool = False) -> Callable[..., Any]:
    """A filter that reads all of its input (``max``, ``trim``...): the input's size counts against the render
    before the filter runs, so many of them over a big argument cannot add up to minutes of work.
    ``after_environment``: the filter is Jinja's ``pass_environment`` kind (its input is the second argument)."""
    position = 1 if after_environment else 0

    def bounded_filter(*args: Any, **kwargs: Any) -> Any:
        value = args[position]
        _charge(len(value) if isinstance(value, Sized) else 1)
        return function(*args, **kwargs)

    return bounded_filter


def bounded_tojson(value: Any, indent: Any = None) -> str:
    """Jinja's ``tojson`` (sorted keys, ``<>&'`` escaped), encoded piece by piece under the bounds.

    The result is a plain string, not Jinja's ``Markup``: these are shell words, and ``Markup + str`` would
    HTML-escape the right-hand side."""
    if indent is not None and (type(indent) is not int or not 0 <= indent <= MAX_INDENT):
        raise Refused(f"tojson(indent=...) must be an integer from 0 to {MAX_INDENT}")
    return "".join(_json_pieces(value, indent))


def _json_pieces(value: Any, indent: int | None) -> Iterator[str]:
    size = 0
    for chunk in json.JSONEncoder(sort_keys=True, indent=indent).iterencode(value):
        grows = sum(chunk.count(char) for char in _HTML_SAFE) * 5
        size += len(chunk) + grows
        _check(size, "tojson")
        _charge(len(chunk) + grows)
        safe = chunk
        for char, escaped in _HTML_SAFE.items():
            safe = safe.replace(char, escaped)
        yield safe
