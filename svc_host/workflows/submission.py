"""Submitting one workflow job so that a crash can never submit it twice.

Before sbatch runs, the job's row is set to ``SUBMITTING`` (attempt N) in its own transaction, and the
script carries ``#SBATCH --comment=svc-wf:<run id>:<job>:<N>``. The accepted job id is written together
with its ``job`` row in one transaction. A process killed in between leaves ``SUBMITTING`` behind; the
engine that takes the run over asks the scheduler (one ``squeue --name=<job>`` listing comments) whether
a job with that marker exists, adopts it if so, and otherwise puts the job back to be submitted again.
Slurm keeps a job's comment while it is pending or running and for ``MinJobAge`` (300 s by default)
after it ends; a job that ended and was purged in that window would be submitted again (see the docs).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Collection, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.domain.times import utc_now
from svc_host.errors import CommandError, SvcError, WorkflowError
from svc_host.plugin_core.settings import render_job
from svc_host.runtime.throttle import script_qos, waiters_of
from svc_host.slurm.arrays import array_of, task_id
from svc_host.slurm.limits import submit_limit_refusal
from svc_host.store import jobs as job_repo
from svc_host.transports.base import SlurmTransport, Transport
from svc_host.workflows import store as repo
from svc_host.workflows.plan import RETRYING, RUN_CANCELLED, WAITING
from svc_host.workflows.prepare import env_values

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.tables import WorkflowRunJob, WorkflowRunRecord

log = logging.getLogger(__name__)

MARKER_PREFIX = "svc-wf"


def marker(run_id: str, job: str, attempt: int) -> str:
    return f"{MARKER_PREFIX}:{run_id}:{job}:{attempt}"


def array_marker(first_cell: str) -> str:
    """The comment of a sweep's job array (``svc_host.sweeps.array_launch``), one for all its cells: named by the
    run id of its first cell, unique across databases (sweep ids are not)."""
    return f"{MARKER_PREFIX}-array:{first_cell}"


def with_marker(script: RenderedScript, value: str) -> RenderedScript:
    """The script with a ``--comment`` directive right after its shebang line (so inside the directive block)."""
    return with_directive(script, "comment", value)


def with_directive(script: RenderedScript, option: str, value: str) -> RenderedScript:
    """The script with ``#SBATCH --<option>=<value>`` right after its shebang line (a plain-word value)."""
    first, newline, rest = script.text.partition("\n")
    line = f"#SBATCH --{option}={value}\n"
    text = f"{first}{newline}{line}{rest}" if first.startswith("#!") else f"#!/bin/bash\n{line}{script.text}"
    return script.model_copy(update={"text": text})


def dependency_flag(edges: Sequence[tuple[str, str | None]]) -> str | None:
    """``[("afterok", "12"), ("afterany", "13"), ("afterok", "14")]`` -> ``afterok:12:14,afterany:13``."""
    grouped: dict[str, list[str]] = {}
    for kind, job_id in edges:
        grouped.setdefault(kind, [])
        if job_id is not None and job_id not in grouped[kind]:
            grouped[kind].append(job_id)
    return ",".join(f"{kind}:{':'.join(ids)}" for kind, ids in grouped.items()) or None


def lookup_argv(job_name: str) -> list[str]:
    """squeue listing id and comment of every job (any state slurmctld still holds) named ``job_name``."""
    return ["squeue", "--noheader", "--all", "--states=all", f"--name={job_name}", "--Format=JobArrayID:0|,Comment:0"]


def parse_lookup(output: str) -> dict[str, str]:
    """``{comment: job id}`` from :func:`lookup_argv` output."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        job_id, sep, comment = line.strip().partition("|")
        if sep and job_id.strip():
            found[comment.strip()] = job_id.strip()
    return found


def can_look_up(transport: Transport) -> bool:
    return isinstance(transport, SlurmTransport)


async def find_submitted(
    transport: Transport, job_name: str, value: str, *, array: tuple[str, int] | None = None
) -> str | None:
    """The id of the job carrying marker ``value``, or None. Raises ``TransportError`` if squeue fails.

    ``array`` is ``(array marker, task index)`` for a sweep cell: when its sweep's job array carries that marker
    (listed as ``123_4`` or as a pending range ``123_[5-9%2]``), the cell's job is its task ``123_<index>``."""
    if not isinstance(transport, SlurmTransport):
        raise TypeError(f"transport {type(transport).__name__} cannot list job comments")
    found = parse_lookup(await transport.check(lookup_argv(job_name)))
    if value in found or array is None:
        return found.get(value)
    array_job_id = array_of(found.get(array[0], ""))
    return task_id(array_job_id, array[1]) if array_job_id is not None else None


class RunCancelled(Exception):
    """The run was cancelled while one of its jobs was being submitted (that job has been cancelled too)."""


class Submitter:
    """Submits, settles and cancels the jobs of runs (one per engine)."""

    def __init__(self, host: Ports, wake: Callable[[str], None]) -> None:
        self.host = host
        self.wake = wake
        """Make a run plan again soon (a job held back by the submission throttle may fit now)."""
        self.in_flight: set[int] = set()
        """Job rows this process is submitting right now (a ``SUBMITTING`` row not in here was left by a crash)."""
        self.routes: dict[int, Transport] = {}
        """Sweep id -> the transport its cells submit through (the sweep's pooled SSH sessions)."""

    def transport_for(self, run: WorkflowRunRecord) -> Transport:
        """The run's transport, or its sweep's pooled one."""
        routed = self.routes.get(run.sweep_id) if run.sweep_id is not None else None
        return routed if routed is not None else self.host.transport(run.transport)

    async def submit(
        self, run: WorkflowRunRecord, job: WorkflowRunJob, dependency: str | None, expected: str
    ) -> str | None:
        """Submit one job (see ``submission``); None when another step changed the row first, or when the job does
        not fit under the site's limits now (``svc_host.runtime.throttle``: it stays waiting, and the run is woken
        when there may be room)."""
        definition = JobDefinition.model_validate({**json.loads(job.definition), "dependency": dependency})
        if definition.environment.env_vars:
            definition = await self._with_env_values(run, job.name, definition)
        rendered = render_job(self.host.plugins, definition, self.host.config())
        if job.exclude_nodes:  # node names as Slurm printed them: one plain word of a hostlist
            rendered = with_directive(rendered, "exclude", job.exclude_nodes)
        if job.id is None or expected not in (WAITING, RETRYING):
            return None
        admission = await self.host.submit_throttle.try_admit(
            run.transport, qos=script_qos(rendered.text), waiters=waiters_of(run), wake=lambda: self.wake(run.id)
        )
        if admission is None:
            return None  # it stays waiting; the throttle wakes the run when there may be room
        try:
            attempt = await self.host.store.run(repo.begin_submit, job.id, expected)
            if attempt is None:
                return None
            value = marker(run.id, job.name, attempt)
            transport = self.transport_for(run)
            self.in_flight.add(job.id)
            try:
                job_id = await transport.submit(with_marker(rendered, value))
            except SvcError as exc:
                found = await self._find(transport, job.name, value)  # a timeout may hide an accepted job
                if found is None:
                    refusal = submit_limit_refusal(exc.stderr_tail) if isinstance(exc, CommandError) else None
                    if refusal is None:
                        raise
                    await self._hold_back(run, job.id, expected, refusal)
                    return None
                job_id = found
            admission.submitted(job_id)
            stdout, stderr = rendered.log_paths_for(job_id)
            status = await self.host.store.run(
                repo.finish_submit,
                job.id,
                transport=run.transport,
                job_id=job_id,
                definition=definition,
                stdout_path=stdout,
                stderr_path=stderr,
            )
        finally:
            self.in_flight.discard(job.id)
            admission.abandon()  # when nothing was submitted
        if status == RUN_CANCELLED:
            await self.scancel(run.transport, [(job.name, job_id)])
            raise RunCancelled
        return job_id

    async def _hold_back(self, run: WorkflowRunRecord, row: int, expected: str, refusal: str) -> None:
        """sbatch refused the job for a submit limit: back to ``expected`` (the attempt undone), woken by the
        submission throttle as jobs end."""
        due = utc_now() if expected == RETRYING else None
        await self.host.store.run(repo.abort_submit, row, status=expected, undo_attempt=True, next_retry_at=due)
        self.host.submit_throttle.refused(
            run.transport, reason=refusal, waiters=waiters_of(run), wake=lambda: self.wake(run.id)
        )
        log.info("run %s: sbatch refused a job for %s; it waits for room", run.id, refusal)

    async def _with_env_values(self, run: WorkflowRunRecord, name: str, definition: JobDefinition) -> JobDefinition:
        """The stored definition with its environment variables' values, read from their sources now."""
        values = await asyncio.to_thread(env_values, self.host, run, name)
        missing = [key for key in definition.environment.env_vars if key not in values]
        if missing:
            where = "the workflow file or the configuration"
            raise WorkflowError([f"job {name!r}: environment variable {missing[0]} is no longer set in {where}"])
        environment = definition.environment.model_copy(
            update={"env_vars": {key: values[key] for key in definition.environment.env_vars}}
        )
        return definition.model_copy(update={"environment": environment})

    async def _find(self, transport: Transport, name: str, value: str) -> str | None:
        if not can_look_up(transport):
            return None
        try:
            return await find_submitted(transport, name, value)
        except SvcError as exc:
            log.warning("could not check whether job %s was accepted: %s", name, exc)
            return None

    async def failed_attempt(self, job: WorkflowRunJob, exc: SvcError, *, retry: bool) -> None:
        if job.id is None:
            return
        error = f"submission failed: {exc}"
        if retry and job.retries_left > 0:
            due = utc_now() + timedelta(seconds=job.retry_delay)
            left = job.retries_left - 1
            await self.host.store.run(
                repo.abort_submit, job.id, status=RETRYING, retries_left=left, next_retry_at=due, error=error
            )
        else:
            await self.host.store.run(repo.abort_submit, job.id, status="FAILED", error=error)

    async def reconcile(self, run: WorkflowRunRecord, job: WorkflowRunJob) -> None:
        """Settle a ``SUBMITTING`` row left by a process that died during sbatch."""
        if job.id is None:
            return
        transport = self.transport_for(run)
        value = marker(run.id, job.name, job.attempt)
        array = None
        if run.sweep_id is not None and job.attempt == 1:  # the cell may have been submitted with its sweep's array
            place = await self.host.store.run(repo.sweep_place, run.id)
            array = (array_marker(place[1]), place[0]) if place is not None else None
        if not can_look_up(transport):
            error = f"submission interrupted; transport {run.transport!r} cannot tell whether it was accepted"
            await self.host.store.run(repo.abort_submit, job.id, status="FAILED", error=error)
            return
        try:
            found = await find_submitted(transport, job.name, value, array=array)
        except SvcError as exc:
            log.warning("run %s: cannot check job %s yet: %s", run.id, job.name, exc)
            return
        if found is None:
            again = RETRYING if job.attempt > 1 else WAITING
            due = utc_now() if again == RETRYING else None
            await self.host.store.run(repo.abort_submit, job.id, status=again, undo_attempt=True, next_retry_at=due)
            log.info("run %s: job %s was not accepted before the restart; it will be submitted", run.id, job.name)
            return
        definition = JobDefinition.model_validate_json(job.definition)
        rendered = render_job(self.host.plugins, definition, self.host.config())
        stdout, stderr = rendered.log_paths_for(found)
        status = await self.host.store.run(
            repo.finish_submit,
            job.id,
            transport=run.transport,
            job_id=found,
            definition=definition,
            stdout_path=stdout,
            stderr_path=stderr,
        )
        array_job_id = array_of(found) if array is not None else None
        if run.sweep_id is not None and array_job_id is not None:
            await self.host.store.run(repo.keep_sweep_array, run.sweep_id, array_job_id)
        log.info("run %s: adopted job %s (%s) submitted before the restart", run.id, job.name, found)
        self.host.monitor.poke(run.transport)
        if status == RUN_CANCELLED:
            await self.scancel(run.transport, [(job.name, found)])

    async def never_started(self, transport_name: str, tasks: Collection[str]) -> None:
        """Record array tasks that were cancelled while pending as ``CANCELLED``: Slurm drops such a task at once,
        and accounting keeps it only inside a range (``123_[4-9]``) or the array's own record, never by its id."""
        if tasks:
            raw = "CANCELLED (array task cancelled before it started)"
            gone = {job_id: JobStatus(job_id=job_id, state=JobState.CANCELLED, raw_state=raw) for job_id in tasks}
            await self.host.store.run(job_repo.apply_statuses, transport_name, gone)

    async def scancel(self, transport_name: str, jobs: list[tuple[str, str]]) -> list[str]:
        """Cancel jobs in one scancel; when that fails, one by one to say which failed (``<name>: <message>``)."""
        jobs = [(name, job_id) for name, job_id in jobs if job_id]
        if not jobs:
            return []
        transport = self.host.transport(transport_name)
        warnings: list[str] = []
        try:
            await transport.cancel([job_id for _, job_id in jobs])
        except SvcError:
            for name, job_id in jobs:
                try:
                    await transport.cancel([job_id])
                except SvcError as exc:
                    warnings.append(f"{name}: {exc}")
        self.host.monitor.poke(transport_name)
        return warnings
