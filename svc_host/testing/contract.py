"""``TransportContract``: the behaviour every transport must show against a real Slurm.

Subclass it in a test module and provide two fixtures::

    class TestMyTransport(TransportContract):
        gpu_partition = "gpu"          # a partition with GPUs, or None to skip the GPU checks

        @pytest.fixture
        def transport(self):
            return MyTransport(...)

        @pytest.fixture
        def job_dir(self):
            return "/shared/scratch/svc-contract"   # a directory the job's user can write on the cluster

The suite submits real jobs (each lasting seconds; the time-limit check waits for Slurm's own TIMEOUT,
about 80 s) and cancels whatever it leaves behind.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition, RenderedScript, Resources
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.plugin import HOLDS_GPUS
from svc_host.testing.waiting import wait_for_state
from svc_host.transports.base import SlurmTransport, Transport

LIVE = {JobState.PENDING, JobState.RUNNING}


class TransportContract:
    """Real-scheduler checks shared by ``local``, ``ssh`` and any third-party transport."""

    gpu_partition: str | None = None
    """A partition offering GPUs; when set, resource accounting of a GPU job is checked."""

    @pytest.fixture
    def transport(self) -> Transport:
        raise NotImplementedError("provide a `transport` fixture")

    @pytest.fixture
    def job_dir(self) -> str:
        raise NotImplementedError("provide a `job_dir` fixture: a cluster directory jobs can write to")

    @pytest.fixture
    async def submit(self, transport: Transport, job_dir: str) -> AsyncIterator[Any]:
        """Submit a job definition (``**fields`` of JobDefinition); every job is cancelled afterwards."""
        submitted: list[str] = []
        scripts: dict[str, RenderedScript] = {}

        async def _submit(**fields: Any) -> tuple[str, RenderedScript]:
            fields.setdefault("name", f"contract-{uuid.uuid4().hex[:8]}")
            fields.setdefault("log_dir", f"{job_dir}/logs")
            script = render_sbatch(JobDefinition(**fields))
            job_id = await transport.submit(script)
            submitted.append(job_id)
            scripts[job_id] = script
            return job_id, script

        yield _submit
        live = [job_id for job_id, job in (await transport.statuses(submitted)).items() if not job.state.is_terminal]
        if live:
            await transport.cancel(live)

    async def test_submit_runs_to_completed(self, transport: Transport, submit: Any) -> None:
        job_id, _ = await submit(command="sleep 1")
        assert job_id.isdigit()
        first = await wait_for_state(transport, job_id, LIVE | {JobState.COMPLETED}, timeout=30)
        assert first.job_id == job_id
        done = await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
        assert done.exit_code in (0, None)

    async def test_nonzero_exit_is_failed_with_exit_code(self, transport: Transport, submit: Any) -> None:
        job_id, _ = await submit(command="exit 3")
        done = await wait_for_state(transport, job_id, {JobState.FAILED, JobState.COMPLETED}, timeout=60)
        assert done.state is JobState.FAILED
        if done.exit_code is None:  # squeue knew the end before accounting did; accounting adds the code
            done = await self._wait_for_exit_code(transport, job_id)
        assert done.exit_code == 3

    async def _wait_for_exit_code(self, transport: Transport, job_id: str) -> Any:
        for _ in range(60):
            job = (await transport.statuses([job_id]))[job_id]
            if job.exit_code is not None:
                return job
            await asyncio.sleep(0.5)
        raise AssertionError(f"no exit code reported for job {job_id}")

    async def test_cancel_gives_cancelled(self, transport: Transport, submit: Any) -> None:
        job_id, _ = await submit(command="sleep 120")
        await wait_for_state(transport, job_id, LIVE, timeout=30)
        await transport.cancel([job_id])
        done = await wait_for_state(transport, job_id, {JobState.CANCELLED}, timeout=60)
        assert done.raw_state.startswith("CANCELLED")

    async def test_hold_keeps_a_job_queued_until_released(self, transport: Transport, submit: Any) -> None:
        # A sweep's pause: the held job stays pending (a user hold) until it is released.
        first, _ = await submit(command="sleep 60")
        then, _ = await submit(command="true", dependency=f"afterok:{first}")
        await transport.hold([then])
        held = (await transport.statuses([then]))[then]
        assert (held.state, held.reason) == (JobState.PENDING, "JobHeldUser")
        await transport.hold([then], release=True)
        released = (await transport.statuses([then]))[then]
        assert released.state is JobState.PENDING
        assert released.reason != "JobHeldUser"

    @pytest.mark.slow
    async def test_time_limit_gives_timeout(self, transport: Transport, submit: Any) -> None:
        # It cannot be shorter: one minute is Slurm's smallest limit and slurmctld enforces limits on a ~30 s
        # tick (about 80 s in all). It belongs to no xdist group, so under ``pytest -n`` the rest of the suite
        # runs beside it; polling every 2 s keeps the wait from loading the shared login node.
        job_id, _ = await submit(command="sleep 300", resources=Resources(time_limit="1"))
        done = await wait_for_state(
            transport, job_id, {JobState.TIMEOUT, JobState.COMPLETED, JobState.FAILED}, timeout=180, interval=2
        )
        assert done.state is JobState.TIMEOUT

    async def test_logs_by_offset(self, transport: Transport, submit: Any) -> None:
        job_id, script = await submit(command="echo out-line-1; echo err-line >&2; echo 'ünï ✓'")
        await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
        stdout_path, stderr_path = script.log_paths_for(job_id)
        out = await transport.read_log(stdout_path)
        assert out.content == "out-line-1\nünï ✓\n"
        assert out.next_offset == out.size == len(out.content.encode())
        rest = await transport.read_log(stdout_path, offset=len("out-line-1\n"))
        assert rest.content == "ünï ✓\n"
        head = len(b"out-line-1\n")
        cut = await transport.read_log(stdout_path, offset=0, limit=head + 1)  # first byte of the two-byte 'ü'
        assert cut.content == "out-line-1\n"
        assert cut.next_offset == head
        whole = await transport.read_log(stdout_path, offset=0, limit=head + 2)
        assert whole.content == "out-line-1\nü"
        inside = await transport.read_log(stdout_path, offset=head + 1)  # a tail may start inside a character
        assert (inside.content, inside.offset) == ("nï ✓\n", head + 2)
        err = await transport.read_log(stderr_path)
        assert err.content == "err-line\n"
        missing = await transport.read_log(stdout_path + ".missing")
        assert not missing.exists
        assert missing.content == ""

    async def test_user_is_the_login_whose_queue_holds_the_jobs_submitted(
        self, transport: Transport, submit: Any
    ) -> None:
        job_id, _ = await submit(command="sleep 60")
        user = await transport.user()
        assert user
        assert job_id in {job.job_id for job in await transport.queue(user=user)}

    async def test_queue_lists_pending_and_running(self, transport: Transport, submit: Any) -> None:
        name = f"queue-{uuid.uuid4().hex[:6]} x|y"
        job_id, _ = await submit(command="sleep 60", name=name)
        await wait_for_state(transport, job_id, LIVE, timeout=30)
        listed = {job.job_id: job for job in await transport.queue()}
        assert job_id in listed
        assert listed[job_id].name == name
        assert listed[job_id].state in LIVE

    @HOLDS_GPUS
    async def test_resources_are_consistent(self, transport: Transport, submit: Any) -> None:
        snapshots = await transport.resources()
        assert snapshots, "no partition reported"
        for snap in snapshots:
            assert snap.gpus_available == snap.total_gpus - snap.gpus_in_use
            assert snap.nodes_total >= snap.nodes_idle + snap.nodes_down
            assert 0.0 <= snap.gpu_utilization <= 1.0
            assert snap.has_available_gpus == (snap.gpus_available > 0)
        assert await transport.resources("no-such-partition") == []
        if self.gpu_partition is None:
            return
        before = (await transport.resources(self.gpu_partition))[0]
        assert before.partition == self.gpu_partition
        assert before.total_gpus > 0
        job_id, _ = await submit(command="sleep 30", resources=Resources(partition=self.gpu_partition, gpus_per_node=1))
        await wait_for_state(transport, job_id, {JobState.RUNNING}, timeout=30)
        during = (await transport.resources(self.gpu_partition))[0]
        assert during.gpus_in_use == before.gpus_in_use + 1
        assert during.jobs_running >= 1

    async def test_status_of_fifty_jobs_in_one_call(self, transport: Transport, submit: Any) -> None:
        ids = [(await submit(command="true"))[0] for _ in range(50)]
        commands: list[list[str]] = []
        if isinstance(transport, SlurmTransport):
            original = transport.run

            async def counting_run(argv: Any, **kwargs: Any) -> Any:
                commands.append(list(argv))
                return await original(argv, **kwargs)

            transport.run = counting_run  # type: ignore[method-assign]
        statuses = await transport.statuses(ids)
        assert set(statuses) <= set(ids)
        assert len(statuses) >= 45, "the scheduler lost track of freshly submitted jobs"
        if isinstance(transport, SlurmTransport):
            assert len(commands) <= 2, commands
        for job_id in ids:
            await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=90)
