"""A single job whose sbatch answer comes too late still ends tracked: real sbatch, real Slurm, local transport."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.plugin_core.records import TransportSpec
from svc_host.services import jobs
from svc_host.store import jobs as job_repo
from svc_plugin_local.transport import LocalTransport

pytestmark = pytest.mark.cluster

SLOW_ANSWER = """#!/bin/sh
# The real sbatch submits at once; its answer comes long after the transport's timeout.
{sbatch} "$@" > {record}
sleep 30
cat {record}
"""


async def test_a_submit_that_times_out_ends_tracked_not_duplicated(
    make_host: Callable[[], Host], svc_register_plugin: Callable[..., None], tmp_path: Path, work: Path
) -> None:
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    record = tmp_path / "answer"
    (wrappers / "sbatch").write_text(SLOW_ANSWER.format(sbatch=shutil.which("sbatch"), record=record))
    (wrappers / "sbatch").chmod(0o755)
    slow = LocalTransport(timeout=3, env={"PATH": f"{wrappers}:{os.environ['PATH']}"})
    slow.reconcile_delays = (0.5, 1.0, 1.0, 2.0)

    class SlowAnswers:
        @hookimpl
        def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
            return [TransportSpec(name="slow", factory=lambda: slow, description="sbatch answers late")]

    svc_register_plugin(SlowAnswers(), "slow-answers")
    host = make_host()
    definition = JobDefinition(name="late-answer", command="true", log_dir=str(work / "logs"))

    tracked = await jobs.submit(host, definition, transport="slow", source="cli")

    accepted = record.read_text().strip()
    assert tracked.job_id == accepted  # the job sbatch created, found by its tag, and no second one
    stored = await host.store.run(job_repo.find_job, "slow", accepted)
    assert stored is not None
    assert (stored.name, stored.source) == ("late-answer", "cli")
    await host.monitor.stop()
