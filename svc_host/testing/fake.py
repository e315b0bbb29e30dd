"""An in-memory transport for fast unit tests of the host (never the only proof a feature works)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo, ResourceSnapshot
from svc_host.domain.submission import RenderedScript
from svc_host.errors import TransportError
from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import TransportSpec
from svc_host.slurm.resources import summarize, summarize_cluster
from svc_host.transports.base import LOG_CHUNK_LIMIT, LogChunk, Transport

if TYPE_CHECKING:
    from svc_host.domain.profiles import HostConfig


class FakeTransport(Transport):
    """Jobs live in a dict; tests move them with ``set_state`` and write logs with ``write_log``.

    Every call is recorded in ``calls`` (method name), so tests can assert how often the host asked.
    """

    def __init__(self, name: str = "fake", *, nodes: Sequence[NodeInfo] = ()) -> None:
        self.name = name
        self.jobs: dict[str, JobStatus] = {}
        self.scripts: dict[str, RenderedScript] = {}
        self.logs: dict[str, bytes] = {}
        self.nodes = list(nodes)
        self.calls: list[str] = []
        self.fail_submit: str | None = None
        self._ids = itertools.count(1000)

    async def submit(self, script: RenderedScript) -> str:
        self.calls.append("submit")
        if self.fail_submit:
            raise TransportError(self.fail_submit, argv=["sbatch", "--parsable"], exit_code=1, stderr=self.fail_submit)
        job_id = str(next(self._ids))
        self.scripts[job_id] = script
        self.jobs[job_id] = JobStatus(job_id=job_id, state=JobState.PENDING, raw_state="PENDING", name=job_id)
        return job_id

    def set_state(self, job_id: str, state: JobState, *, raw: str | None = None, exit_code: int | None = None) -> None:
        job = self.jobs[job_id]
        self.jobs[job_id] = job.model_copy(
            update={"state": state, "raw_state": raw or state.value, "exit_code": exit_code}
        )

    def write_log(self, path: str, data: bytes) -> None:
        self.logs[path] = self.logs.get(path, b"") + data

    async def queue(self, *, user: str | None = None) -> list[JobStatus]:
        self.calls.append("queue")
        return [job for job in self.jobs.values() if not job.state.is_terminal]

    async def statuses(self, job_ids: Sequence[str]) -> dict[str, JobStatus]:
        self.calls.append("statuses")
        return {job_id: self.jobs[job_id] for job_id in job_ids if job_id in self.jobs}

    async def describe(self, job_id: str) -> JobStatus | None:
        self.calls.append("describe")
        return self.jobs.get(job_id)

    async def cancel(self, job_ids: Sequence[str]) -> None:
        self.calls.append("cancel")
        for job_id in job_ids:
            if job_id not in self.jobs:
                raise TransportError(f"Invalid job id specified: {job_id}", argv=["scancel", job_id], exit_code=1)
            if not self.jobs[job_id].state.is_terminal:
                self.set_state(job_id, JobState.CANCELLED, raw="CANCELLED by 0")

    async def hold(self, job_ids: Sequence[str], *, release: bool = False) -> None:
        self.calls.append("release" if release else "hold")
        for job_id in job_ids:
            if job_id not in self.jobs:
                message = f"Invalid job id specified for job {job_id}"
                raise TransportError(message, argv=["scontrol", job_id], exit_code=1)
            if self.jobs[job_id].state == JobState.PENDING:
                reason = None if release else "JobHeldUser"
                self.jobs[job_id] = self.jobs[job_id].model_copy(update={"reason": reason})

    async def read_log(self, path: str, *, offset: int = 0, limit: int = LOG_CHUNK_LIMIT) -> LogChunk:
        self.calls.append("read_log")
        if path not in self.logs:
            return LogChunk(path=path, content="", offset=offset, next_offset=offset, size=None)
        data = self.logs[path][offset : offset + limit]
        return LogChunk(
            path=path, content=data.decode(), offset=offset, next_offset=offset + len(data), size=len(self.logs[path])
        )

    async def resources_total(self) -> ResourceSnapshot:
        from datetime import UTC, datetime

        self.calls.append("resources_total")
        running = [job for job in self.jobs.values() if job.state is JobState.RUNNING]
        return summarize_cluster(self.nodes, running, now=datetime.now(UTC))

    async def resources(self, partition: str | None = None) -> list[ResourceSnapshot]:
        from datetime import UTC, datetime

        self.calls.append("resources")
        running = [job for job in self.jobs.values() if job.state is JobState.RUNNING]
        return summarize(self.nodes, running, now=datetime.now(UTC), partition=partition)


class TransportPlugin:
    """A plugin providing one transport under its name (``svc_transports``). A plain class with a marked method,
    not a namespace of lambdas: every pluggy in svc's range finds the hook on it as it is (pluggy 1.7 looks
    hooks up statically), and it is hashable, so it is registered as itself."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    @hookimpl
    def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
        return [TransportSpec(self.transport.name, lambda: self.transport)]


def transport_plugin(transport: Transport) -> TransportPlugin:
    """A plugin providing ``transport`` under its name (``svc_transports``), to register into a test's plugin
    manager: ``svc_register_plugin(transport_plugin(FakeTransport("fake")))``."""
    return TransportPlugin(transport)
