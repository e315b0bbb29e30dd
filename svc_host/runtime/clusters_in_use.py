"""Which clusters a server keeps live numbers of: the ones someone looks at or has work on, a bounded few.

The resource sampler asks each watched cluster for its GPUs every interval (and announces them to open
dashboards); the monitor already ticks for every cluster with a live job, run or sweep of svc. A cluster is
*looked at* while REST requests name it (``?transport=``, or the server's default when none is named, marked by
:func:`svc_host.api.cluster.cluster_of`): the dashboard reads a cluster's numbers when a page shows it, and a
page that stays open keeps being counted by the reads its live updates make. It stops being watched
``window`` seconds after the last one. A profile nobody looks at costs nothing: no SSH connection is opened
for it.

The bound: at most ``limit`` clusters are watched. The server's default comes first, then the clusters with
live jobs, then the ones looked at most recently.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from svc_host.settings.env_numbers import env_number


@dataclass(frozen=True)
class InUseSettings:
    window: float = 600.0
    """Seconds a look keeps a cluster watched (``SVC_CLUSTER_IN_USE_MINUTES``, in minutes; default 10)."""
    limit: int = 4
    """How many clusters are watched at most (``SVC_WATCHED_CLUSTERS_MAX``; default 4)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None) -> InUseSettings:
        env = env or {}
        return cls(
            window=env_number(env, "SVC_CLUSTER_IN_USE_MINUTES", cls.window / 60, minimum=1) * 60,
            limit=int(env_number(env, "SVC_WATCHED_CLUSTERS_MAX", cls.limit, minimum=1, whole=True)),
        )


class ClustersInUse:
    """The clusters looked at lately (``mark``) and the bounded list of those to watch now (``watched``)."""

    def __init__(self, settings: InUseSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._looked_at: dict[str, float] = {}

    def mark(self, name: str) -> None:
        """Someone looked at cluster ``name`` just now."""
        self._looked_at[name] = self._clock()

    def looked_at(self) -> list[str]:
        """The clusters looked at within the window, most recent first (the older ones are forgotten)."""
        since = self._clock() - self.settings.window
        for name in [name for name, at in self._looked_at.items() if at < since]:
            del self._looked_at[name]
        return sorted(self._looked_at, key=lambda name: -self._looked_at[name])

    def watched(self, default: str, live: Iterable[str]) -> list[str]:
        """The clusters to watch now, each once, at most ``limit``: ``default``, those with live work (``live``,
        in name order), those looked at."""
        names = dict.fromkeys([default, *sorted(live), *self.looked_at()])
        return list(names)[: self.settings.limit]
