"""A stock login node: OpenSSH's defaults (MaxSessions 10, MaxStartups 10:30:100), with and without sftp.

A 50-cell sweep over SSH, ten dashboard tabs following one job's log and the monitor, all at once, end without
one error: channels per connection stay within ``max_channels``, handshakes within MaxStartups, and every
follower assembles the log byte for byte (through SFTP on the dev sshd, through commands where sftp is refused).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.services import jobs
from svc_host.store import jobs as job_repo
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.workflows.prepare import RunRequest
from svc_plugin_ssh.transport import SSHTransport
from tests.integration.test_sweeps import counts, finish, start, stop, workflow

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

LINES = 40
TALKER = f'for i in $(seq 1 {LINES}); do echo "line $i: ünïcode ✓"; sleep 0.25; done'


@pytest.fixture(params=["sftp", "no-sftp"])
def stock_profile(request: pytest.FixtureRequest) -> tuple[SSHProfile, bool]:
    """The dev sshd (sftp served) or the one that refuses sftp, both with OpenSSH's default limits; and whether
    sftp is refused."""
    refused = request.param == "no-sftp"
    profile: SSHProfile = request.getfixturevalue("nosftp_profile" if refused else "dev_profile")
    return profile, refused


async def follow(host: Host, job_id: str) -> bytes:
    """What a dashboard tab shows: the job's stdout polled from the last offset until the job ended and the
    log stopped growing."""
    seen = b""
    offset = 0
    while True:
        got = await jobs.logs(host, "stock", job_id, stdout_offset=offset, limit=64)
        chunk = got.stdout
        assert chunk is not None
        seen += chunk.content.encode()
        ended = (await jobs.status(host, "stock", job_id)).status.state.is_terminal
        if ended and chunk.next_offset == offset and chunk.size == offset:
            return seen
        offset = chunk.next_offset
        await asyncio.sleep(0.2)


async def test_a_sweep_ten_log_followers_and_the_monitor_at_once_make_no_error(
    make_host: Callable[[], Host], stock_profile: tuple[SSHProfile, bool], caplog: pytest.LogCaptureFixture
) -> None:
    import svc_plugin_ssh.hooks

    profile, sftp_refused = stock_profile
    host = make_host()
    host.plugins.register(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    host.profiles.create("stock", profile)
    await host.reload_profiles()
    orchestrator = await start(host)
    remote = f"/tmp/svc-stock-{uuid.uuid4().hex[:8]}"
    text = f"name: stock-grid\nargs: {{x: 0}}\njobs:\n  - {{name: cell, command: 'true', work_dir: {remote}}}\n"
    caplog.set_level(logging.WARNING)
    try:
        talker = await jobs.submit(
            host,
            JobDefinition(name="talker", command=TALKER, log_dir=f"{remote}/logs"),
            transport="stock",
            source="web",
        )
        run = RunRequest(yaml_path=workflow(Path.cwd(), text), transport="stock")
        spec = parse_sweep({"matrix": {"x": list(range(50))}, "max_parallel": 50})
        sweep = await orchestrator.submit(SweepRequest(run=run, spec=spec, source="mcp"))
        followed = await asyncio.gather(*(follow(host, talker.job_id) for _ in range(10)))
        done = await finish(orchestrator, sweep.id, timeout=240)
        assert (done.status, counts(done)) == ("completed", (0, 0, 50, 0, 0))
        transport = host.transport("stock")
        assert isinstance(transport, SSHTransport)
        assert transport.sftp_refused is sftp_refused
        whole = (await transport.check(["cat", "--", str(talker.stdout_path)])).encode()
        assert whole.count(b"\n") == LINES
        assert followed == [whole] * 10  # byte for byte, offsets included
        state = (await jobs.status(host, "stock", talker.job_id)).status.state
        assert state is JobState.COMPLETED
    finally:
        await host.transport("stock").check(["rm", "-rf", "--", remote])  # type: ignore[attr-defined]
        live = [record.job_id for record in host.store.call(job_repo.live_jobs)]
        if live:
            await host.transport("stock").cancel(live)
        await stop(orchestrator)
    errors = [
        r for r in caplog.records if r.name.startswith(("svc_host", "svc_plugin")) and r.levelno >= logging.WARNING
    ]
    assert [r.getMessage() for r in errors] == []
