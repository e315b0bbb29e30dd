"""Keyword arguments svc passes to methods that plugins override reach only the overrides that declare them, as pluggy
does for hooks: a transport written before ``run(..., idempotent=...)`` existed keeps working (plugin API 1.0), with a
``DeprecationWarning`` when its class is made, until svc 0.3."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

REMOVED_IN = "svc 0.3"


def adapt_overrides(cls: type, added: Mapping[str, Sequence[str]], *, since: str) -> None:
    """Make ``cls``'s own overrides of methods that gained keyword arguments callable with them.

    ``added`` maps a method name to the keyword arguments svc passes since API ``since``. An override that declares
    neither them nor ``**kwargs`` is wrapped to drop them (with a ``DeprecationWarning`` when the class is made).
    """
    for name, keywords in added.items():
        method = cls.__dict__.get(name)
        if method is None or not callable(method):
            continue
        parameters = inspect.signature(method).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            continue
        missing = tuple(keyword for keyword in keywords if keyword not in parameters)
        if missing:
            warnings.warn(
                f"{cls.__module__}.{cls.__qualname__}.{name}() does not take {', '.join(missing)} (plugin API "
                f"{since}); svc calls it without until {REMOVED_IN}: declare them to receive them",
                DeprecationWarning,
                stacklevel=4,
            )
            setattr(cls, name, _dropping(method, missing))


def _dropping(method: Callable[..., Any], missing: tuple[str, ...]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def adapted_async(*args: Any, **kwargs: Any) -> Any:
            for keyword in missing:
                kwargs.pop(keyword, None)
            return await method(*args, **kwargs)

        return adapted_async

    @functools.wraps(method)
    def adapted(*args: Any, **kwargs: Any) -> Any:
        for keyword in missing:
            kwargs.pop(keyword, None)
        return method(*args, **kwargs)

    return adapted
