"""``GET /api/jobs?user=me|all`` on the real dev cluster, whose queue is shared by two users: jobs submitted
through ``local`` run as this process's user (root), jobs submitted through an SSH profile as the profile's login
(svcdev). "Mine" is each cluster's own login's jobs; ``all`` (the default, as the spec says) is every job."""

from __future__ import annotations

import functools
import getpass
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

import svc_plugin_ssh.hooks
from svc_host.domain.profiles import SSHProfile
from svc_host.host import Host
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.local_slurm]

HELD = "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\nsleep 60\n"


@pytest.fixture
async def both_users_jobs(
    svc_api_client: httpx.AsyncClient,
    svc_register_plugin: Callable[..., None],
    local_transport: None,
    svc_test_host: Host,
    dev_profile: SSHProfile,
) -> AsyncIterator[tuple[int, int]]:
    """A held job of this process's user (through ``local``) and one of svcdev (through the profile ``dev``)."""
    svc_register_plugin(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    svc_test_host.profiles.create("dev", dev_profile)
    assert getpass.getuser() != dev_profile.username
    submitted: list[tuple[str, int]] = []
    try:
        for transport, name in (("local", "mine-local"), ("dev", "mine-dev")):
            answer = await svc_api_client.post(
                "/api/jobs", params={"transport": transport}, json={"name": name, "script_content": HELD}
            )
            assert answer.status_code == 201, answer.text
            submitted.append((transport, answer.json()["job_id"]))
        yield submitted[0][1], submitted[1][1]
    finally:
        for transport, job_id in submitted:
            await svc_api_client.delete(f"/api/jobs/{job_id}", params={"transport": transport})


async def listed(client: httpx.AsyncClient, transport: str, user: str | None) -> tuple[set[int], str | None]:
    params = {"transport": transport} | ({"user": user} if user else {})
    answer = await client.get("/api/jobs", params=params)
    assert answer.status_code == 200, answer.text
    return {job["job_id"] for job in answer.json()}, answer.headers.get("X-Svc-User")


async def test_mine_is_each_clusters_own_login_and_all_is_everyones(
    svc_api_client: httpx.AsyncClient, both_users_jobs: tuple[int, int], dev_profile: SSHProfile
) -> None:
    roots, svcdevs = both_users_jobs
    # a queue answer is a snapshot up to about a second old: wait until each one holds both jobs
    for transport, user in [(t, u) for t in ("local", "dev") for u in ("all", None)]:  # None: the spec's default
        whole = functools.partial(listed, svc_api_client, transport, user)
        await eventually(
            whole,
            until=lambda found: {roots, svcdevs} <= found[0] and found[1] is None,
            what=f"both users' jobs in {transport}'s queue (user={user})",
        )
    local_mine, local_login = await listed(svc_api_client, "local", "me")
    assert (roots in local_mine, svcdevs in local_mine, local_login) == (True, False, getpass.getuser())
    dev_mine, dev_login = await listed(svc_api_client, "dev", "me")
    assert (roots in dev_mine, svcdevs in dev_mine, dev_login) == (False, True, dev_profile.username)


async def test_an_unknown_user_choice_is_422(svc_api_client: httpx.AsyncClient) -> None:
    answer = await svc_api_client.get("/api/jobs", params={"user": "root"})
    assert answer.status_code == 422
    assert "user" in answer.text
