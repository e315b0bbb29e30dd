"""GPU use over time: the sampler stores one row per partition per interval (recorded sinfo output), prunes by age
and count, announces ``resources.sampled``; the history route groups and thins the series."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from svc_host import hookimpl
from svc_host.domain.jobs import JobState, JobStatus
from svc_host.errors import ConfigError
from svc_host.host import Host
from svc_host.plugin_core.records import Event, TransportSpec
from svc_host.runtime.sampler import ResourceSampler, SamplerSettings, history_series
from svc_host.slurm.parse import parse_sinfo
from svc_host.store import resource_samples as repo
from svc_host.store.tables import ResourceSample
from svc_host.testing.fake import FakeTransport
from svc_host.testing.waiting import eventually

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"


@pytest.fixture
def fake(svc_register_plugin: Callable[..., None]) -> FakeTransport:
    """A transport whose nodes are the dev cluster's recorded ``sinfo`` (debug, gpu, multi; 2 of 4 GPUs used)."""
    transport = FakeTransport("local", nodes=parse_sinfo((RECORDED / "sinfo.txt").read_text()))
    svc_register_plugin(
        SimpleNamespace(svc_transports=hookimpl(lambda config: [TransportSpec("local", lambda: transport)]))
    )
    transport.jobs["5"] = JobStatus(job_id="5", state=JobState.RUNNING, raw_state="RUNNING", name="t", partition="gpu")
    return transport


async def watch_local() -> list[str]:
    return ["local"]


def sampler_of(host: Host, events: list[Event], **settings: float) -> ResourceSampler:
    return ResourceSampler(
        host.store,
        host.transports,
        watch_local,
        events.append,
        SamplerSettings(**settings),  # type: ignore[arg-type]
    )


async def test_a_sample_stores_each_partition_and_announces_it(svc_test_host: Host, fake: FakeTransport) -> None:
    events: list[Event] = []
    snapshots = await sampler_of(svc_test_host, events).sample("local")
    rows = svc_test_host.store.call(repo.samples_since, "local", datetime.now(UTC) - timedelta(minutes=1))
    assert sorted((row.partition, row.total_gpus, row.gpus_in_use) for row in rows) == [
        ("debug", 4, 2),
        ("gpu", 4, 2),
        ("multi", 4, 2),  # the down node's GPUs are not offered
    ]
    assert {row.partition: row.jobs_running for row in rows}["gpu"] == 1
    assert fake.calls == ["resources"]  # one resources query per sample
    assert [event.name for event in events] == ["resources.sampled"]
    assert [p["partition"] for p in events[0].payload["partitions"]] == [s.partition for s in snapshots]


async def test_samples_past_the_kept_days_or_the_row_bound_are_pruned(svc_test_host: Host, fake: FakeTransport) -> None:
    old = datetime.now(UTC) - timedelta(days=3)
    svc_test_host.store.call(
        lambda session: session.add(
            ResourceSample(
                transport="local",
                partition="gpu",
                at=old,
                total_gpus=4,
                gpus_in_use=4,
                jobs_running=2,
                nodes_total=1,
                nodes_idle=0,
                nodes_down=0,
            )
        )
    )
    await sampler_of(svc_test_host, [], keep_days=2).sample("local")
    rows = svc_test_host.store.call(repo.samples_since, "local", old - timedelta(days=1))
    assert len(rows) == 3
    assert min(row.at for row in rows) > old

    await sampler_of(svc_test_host, [], max_rows=4, interval=0).sample("local")
    assert len(svc_test_host.store.call(repo.samples_since, "local", old)) == 4  # the newest four rows are kept


async def test_two_servers_on_one_database_keep_one_series(svc_test_host: Host, fake: FakeTransport) -> None:
    first_events: list[Event] = []
    second_events: list[Event] = []
    first, second = sampler_of(svc_test_host, first_events), sampler_of(svc_test_host, second_events)  # 60 s intervals
    await first.sample("local")
    await second.sample("local")  # right after the other server: not stored again, still announced to its dashboards
    assert (first.samples_taken, second.samples_taken) == (1, 0)
    assert len(svc_test_host.store.call(repo.samples_since, "local", datetime.now(UTC) - timedelta(minutes=1))) == 3
    assert [event.name for event in second_events] == ["resources.sampled"]


async def test_the_loop_samples_on_its_interval_and_survives_a_scheduler_failure(
    svc_test_host: Host, fake: FakeTransport
) -> None:
    sampler = sampler_of(svc_test_host, [], interval=0.05)
    real = fake.resources
    failures = 0

    async def flaky(partition: str | None = None) -> list:  # type: ignore[type-arg]
        nonlocal failures
        if failures < 2:
            failures += 1
            from svc_host.errors import TransportError

            raise TransportError("sinfo: cannot reach slurmctld", argv=["sinfo"], exit_code=1)
        return await real(partition)

    fake.resources = flaky  # type: ignore[method-assign]
    sampler.start()
    await eventually(lambda: sampler.samples_taken >= 3, what="three samples")
    await sampler.stop()
    assert failures == 2
    assert sampler.samples_taken >= 3


def test_settings_come_from_the_environment_and_bad_values_are_refused() -> None:
    assert SamplerSettings.from_env({"SVC_RESOURCE_SAMPLE_SECONDS": "15", "SVC_RESOURCE_HISTORY_DAYS": "2"}) == (
        SamplerSettings(interval=15, keep_days=2)
    )
    assert SamplerSettings.from_env(None) == SamplerSettings()
    with pytest.raises(ConfigError, match="SVC_RESOURCE_SAMPLE_SECONDS must be a number of at least 0, not 'often'"):
        SamplerSettings.from_env({"SVC_RESOURCE_SAMPLE_SECONDS": "often"})


def sample(partition: str, at: datetime, in_use: int) -> ResourceSample:
    return ResourceSample(
        transport="local",
        partition=partition,
        at=at,
        total_gpus=4,
        gpus_in_use=in_use,
        jobs_running=in_use,
        nodes_total=1,
        nodes_idle=0,
        nodes_down=0,
    )


def test_history_groups_by_partition_and_averages_long_ranges_into_buckets() -> None:
    since = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [sample("gpu", since + timedelta(minutes=n), n % 2 * 4) for n in range(100)]
    rows += [sample("debug", since + timedelta(minutes=5), 1)]
    series = history_series(rows, since=since, until=since + timedelta(minutes=100), max_points=10)
    assert [s["partition"] for s in series] == ["debug", "gpu"]
    assert series[0]["points"] == [
        {
            "timestamp": (since + timedelta(minutes=5)).isoformat(),
            "total_gpus": 4,
            "gpus_in_use": 1,
            "jobs_running": 1,
            "nodes_down": 0,
        }
    ]
    gpu = series[1]["points"]
    assert len(gpu) == 10
    assert {point["gpus_in_use"] for point in gpu} == {2.0}  # half the minutes at 4, half at 0


async def test_the_history_route_returns_the_stored_series(
    svc_test_host: Host, fake: FakeTransport, svc_api_client: httpx.AsyncClient
) -> None:
    await svc_test_host.resource_sampler.sample("local")
    history = await svc_api_client.get("/api/resources/history", params={"hours": 1})
    assert history.status_code == 200
    body = history.json()
    assert body["transport"] == "local"
    assert body["interval_seconds"] == 60
    assert [s["partition"] for s in body["series"]] == ["debug", "gpu", "multi"]
    assert body["series"][1]["points"][0]["gpus_in_use"] == 2
    refused = await svc_api_client.get("/api/resources/history", params={"hours": -1})
    assert refused.status_code == 422
    assert "hours" in refused.json()["detail"]
