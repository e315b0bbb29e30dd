"""Deprecated public names: an old name of ``svc_host.plugin`` keeps working, warning once per process, until the
plugin API version that removes it.

The door's table (``svc_host.plugin._DEPRECATED``) maps an old name to a ``Deprecated`` entry: the name to use
instead (or ``None`` when the name leaves the door with nothing in its place), the API version that deprecated it
and the one without it. Deprecated names are not in ``__all__``, so ``dir()`` and star imports show only current
names, and the snapshot test keeps holding the current surface.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple


class Deprecated(NamedTuple):
    """One deprecated public name."""

    new: str | None
    """The public name to use instead; ``None``: none (say what to do in ``advice``)."""
    since: str
    """The plugin API version that deprecated it."""
    removed_in: str
    """The plugin API version that no longer has it (a major version)."""
    advice: str = ""
    """What to do instead when there is no new name."""


class DeprecatedNames:
    """Resolves the deprecated names of one module, warning once per name per process."""

    def __init__(self, module: str, table: dict[str, Deprecated]) -> None:
        self.module = module
        self.table = table
        self._warned: set[str] = set()

    def resolve(self, name: str, load: Callable[[str], Any]) -> Any:
        """The value of the deprecated ``name`` (``load(new)``, or ``load(name)`` when it has no new name), after a
        ``DeprecationWarning`` the first time it is asked for."""
        entry = self.table[name]
        if name not in self._warned:
            self._warned.add(name)
            instead = f"use {self.module}.{entry.new}" if entry.new else entry.advice
            warnings.warn(
                f"{self.module}.{name} is deprecated since plugin API {entry.since} and will be removed in plugin "
                f"API {entry.removed_in}: {instead}",
                DeprecationWarning,
                stacklevel=3,
            )
        return load(entry.new or name)
