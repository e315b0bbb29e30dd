"""Numbers read from ``SVC_*`` environment variables: a default when unset, one line naming the variable otherwise."""

from __future__ import annotations

from collections.abc import Mapping

from svc_host.errors import ConfigError


def env_number(env: Mapping[str, str], name: str, default: float, *, minimum: float, whole: bool = False) -> float:
    """``env[name]`` as a number (a whole one if ``whole``) of at least ``minimum``; ``default`` when unset or blank.

    Raises:
        ConfigError: the value is not such a number (the message names the variable, the bound and the value).
    """
    raw = env.get(name, "").strip()
    if not raw:
        return default
    kind = "a whole number" if whole else "a number"
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be {kind} of at least {minimum:g}, not {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum:g}, not {raw!r}")
    return value
