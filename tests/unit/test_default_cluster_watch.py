"""A move of the server's default cluster reaches open dashboards within seconds, whoever made it (B30): the
server's watch announces ``server.default_changed`` once per move, for ``svc profile use`` in another process too."""

from __future__ import annotations

from typing import Any

from svc_host.domain.profiles import SSHProfile
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.runtime.default_cluster import DEFAULT_CHANGED, DefaultClusterWatch
from svc_host.settings.profiles import ProfileStore
from svc_host.testing.waiting import eventually


def moves(seen: list[Event]) -> list[Any]:
    return [event.payload["transport"] for event in seen if event.name == DEFAULT_CHANGED]


async def test_a_default_moved_by_another_process_is_announced_once_per_move(svc_test_host: Host) -> None:
    other = ProfileStore(svc_test_host.paths.profiles_file)  # `svc profile use` in a terminal: its own store
    other.create("gpu", SSHProfile(hostname="login.example.org", username="ada"))
    seen: list[Event] = []
    watch = DefaultClusterWatch(svc_test_host.server_transport_name, seen.append, every=0.05)
    watch.start()
    try:
        other.activate("gpu")
        await eventually(lambda: moves(seen) == ["gpu"], timeout=10, what="the move to gpu announced")
        other.activate("local")
        await eventually(lambda: moves(seen) == ["gpu", "local"], timeout=10, what="the move back announced")
        assert watch.check() is None  # nothing moved since: nothing more is said
    finally:
        await watch.close()
    assert moves(seen) == ["gpu", "local"]


async def test_a_move_made_here_is_announced_at_once_and_not_again(svc_test_host: Host) -> None:
    seen: list[Event] = []
    watch = DefaultClusterWatch(svc_test_host.server_transport_name, seen.append)
    svc_test_host.profiles.create("gpu", SSHProfile(hostname="login.example.org", username="ada"))
    assert watch.check() is None  # a new profile is not a new default
    svc_test_host.profiles.activate("gpu")
    assert watch.check() == "gpu"
    assert watch.check() is None
    assert moves(seen) == ["gpu"]
