"""The clusters a server keeps live numbers of: the default, those with live jobs and those looked at lately, at
most a few; one that does not answer fails only its own sample; a REST request naming a cluster marks it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from svc_host import hookimpl
from svc_host.errors import ConfigError, TransportError
from svc_host.host import Host
from svc_host.plugin_core.records import Event, TransportSpec
from svc_host.runtime.clusters_in_use import ClustersInUse, InUseSettings
from svc_host.runtime.sampler import ResourceSampler, SamplerSettings
from svc_host.slurm.parse import parse_sinfo
from svc_host.testing.fake import FakeTransport

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def in_use(clock: Clock, *, window: float = 600, limit: int = 4) -> ClustersInUse:
    return ClustersInUse(InUseSettings(window=window, limit=limit), clock=clock)


def test_a_look_keeps_a_cluster_watched_for_the_window_only() -> None:
    clock = Clock()
    clusters = in_use(clock)
    clusters.mark("lab24")
    assert clusters.watched("local", []) == ["local", "lab24"]
    clock.now += 599
    assert clusters.watched("local", []) == ["local", "lab24"]
    clock.now += 2
    assert clusters.watched("local", []) == ["local"]  # nobody looked for 10 minutes: off


def test_default_then_live_work_then_the_latest_looks_within_the_bound() -> None:
    clock = Clock()
    clusters = in_use(clock, limit=3)
    for name in ("a", "b", "c"):
        clusters.mark(name)
        clock.now += 1
    assert clusters.watched("local", ["z"]) == ["local", "z", "c"]
    assert clusters.watched("local", []) == ["local", "c", "b"]
    clusters.mark("local")  # the default looked at is listed once
    assert clusters.watched("local", ["c"]) == ["local", "c", "b"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, InUseSettings(600, 4)),
        ({"SVC_CLUSTER_IN_USE_MINUTES": "2", "SVC_WATCHED_CLUSTERS_MAX": "9"}, InUseSettings(120, 9)),
    ],
)
def test_settings_from_the_environment(env: dict[str, str], expected: InUseSettings) -> None:
    assert InUseSettings.from_env(env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SVC_WATCHED_CLUSTERS_MAX": "0"}, "SVC_WATCHED_CLUSTERS_MAX must be at least 1, not '0'"),
        ({"SVC_WATCHED_CLUSTERS_MAX": "2.5"}, "SVC_WATCHED_CLUSTERS_MAX must be a whole number of at least 1"),
        ({"SVC_CLUSTER_IN_USE_MINUTES": "soon"}, "SVC_CLUSTER_IN_USE_MINUTES must be a number of at least 1"),
    ],
)
def test_bad_settings_say_which_and_why(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        InUseSettings.from_env(env)


class Unreachable(FakeTransport):
    async def resources(self, partition: str | None = None) -> list[object]:  # type: ignore[override]
        self.calls.append("resources")
        raise TransportError("ssh: connection refused", argv=["sinfo"], exit_code=255, stderr="refused")


@pytest.fixture
def two_clusters(svc_register_plugin: Callable[..., None]) -> dict[str, FakeTransport]:
    nodes = parse_sinfo((RECORDED / "sinfo.txt").read_text())
    made = {"local": FakeTransport("local", nodes=nodes), "lab24": FakeTransport("lab24", nodes=nodes)}
    made["down"] = Unreachable("down", nodes=nodes)
    specs = [TransportSpec(name, lambda t=transport: t) for name, transport in made.items()]
    svc_register_plugin(SimpleNamespace(svc_transports=hookimpl(lambda config: specs)))
    return made


async def test_each_watched_cluster_is_sampled_and_a_silent_one_fails_alone(
    svc_test_host: Host, two_clusters: dict[str, FakeTransport], caplog: pytest.LogCaptureFixture
) -> None:
    events: list[Event] = []

    async def watched() -> list[str]:
        return ["local", "down", "lab24"]

    sampler = ResourceSampler(
        svc_test_host.store, svc_test_host.transports, watched, events.append, SamplerSettings(interval=0)
    )
    with caplog.at_level(logging.WARNING):
        assert await sampler.sample_watched() == ["local", "down", "lab24"]
        await sampler.sample_watched()
    assert sorted(event.payload["transport"] for event in events) == ["lab24", "lab24", "local", "local"]
    assert two_clusters["down"].calls == ["resources", "resources"]
    failures = [record.message for record in caplog.records if "down" in record.message]
    assert len(failures) == 1  # said once while it stays down
    assert "connection refused" in failures[0]


async def test_a_request_naming_a_cluster_makes_the_server_watch_it(
    svc_test_host: Host, two_clusters: dict[str, FakeTransport], svc_api_client: httpx.AsyncClient
) -> None:
    assert await svc_test_host.watched_clusters() == ["local"]
    answer = await svc_api_client.get("/api/resources", params={"transport": "lab24"})
    assert answer.status_code == 200
    assert await svc_test_host.watched_clusters() == ["local", "lab24"]
    unknown = await svc_api_client.get("/api/resources", params={"transport": "nowhere"})
    assert unknown.status_code == 404
    assert await svc_test_host.watched_clusters() == ["local", "lab24"]
