"""Launching a whole sweep as one Slurm job array: one sbatch instead of one per cell.

Taken only when every cell is pending (a fresh sweep), the transport runs Slurm's own tools (it can submit an
array and look up its marker), and :func:`svc_host.sweeps.array.array_definition` finds the cells uniform,
environment variable values included (read for every cell, as a per-cell submission would). Then, as the
per-cell path does for one run:

1. every cell moves ``pending -> submitting`` and its job ``SUBMITTING`` (the crash marker), in one transaction;
2. one sbatch with ``--array=0-(N-1)%max_parallel`` and the marker ``svc-sweep:<id>:array`` as its comment;
3. in one transaction the sweep records the array id and every cell its task ``<array>_<i>`` (a ``job`` row the
   monitor tracks like any other), then the cells move to ``running``.

From there each cell is an ordinary run the engine drives from its task's state (a retry is a plain job of
that cell). A failed sbatch fails every cell with the reason, as a failed launch fails one cell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import utc_now
from svc_host.errors import RenderError, SvcError, WorkflowError
from svc_host.plugin_core.settings import render_job
from svc_host.runtime.throttle import script_qos, sweep_waiter
from svc_host.slurm.arrays import array_flag, task_id
from svc_host.sweeps import store as repo
from svc_host.sweeps.array import array_definition, array_script
from svc_host.transports.base import SlurmTransport
from svc_host.workflows.plan import RUN_CANCELLED, RUN_PENDING, RUN_RUNNING, RUN_SUBMITTING, WAITING
from svc_host.workflows.prepare import env_values
from svc_host.workflows.store import policy_of
from svc_host.workflows.submission import array_marker, with_marker

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.tables import SweepRunRecord
    from svc_host.workflows.engine import WorkflowEngine
    from svc_host.workflows.store import RunSnapshot


async def array_cells(engine: WorkflowEngine, sweep: SweepRunRecord) -> list[tuple[RunSnapshot, JobDefinition]] | None:
    """The cells in matrix order with their jobs' definitions (environment values read), when the sweep can be
    launched as one array; None otherwise."""
    if sweep.id is None or sweep.cells_pending != sweep.cell_count or sweep.cancel_requested_at is not None:
        return None
    snaps = sorted(
        await engine.runs(sweep_id=sweep.id, limit=sweep.cell_count), key=lambda s: (s.run.started_at, s.run.id)
    )
    if not _fresh(snaps, sweep.cell_count) or not isinstance(
        engine.driver.submitter.transport_for(snaps[0].run), SlurmTransport
    ):
        return None
    definitions = [JobDefinition.model_validate_json(s.jobs[0].definition) for s in snaps]
    if definitions[0].environment.env_vars:
        try:
            definitions = await asyncio.to_thread(_with_env_values, engine.host, snaps, definitions)
        except WorkflowError:
            return None  # each cell's own launch says what is wrong
    if array_definition(definitions) is None:
        return None
    return list(zip(snaps, definitions, strict=True))


def _fresh(snaps: Sequence[RunSnapshot], cell_count: int) -> bool:
    """Every cell is there, pending, with one job not submitted yet."""
    return (
        bool(snaps)
        and len(snaps) == cell_count
        and all(s.run.status == RUN_PENDING and len(s.jobs) == 1 and s.jobs[0].status == WAITING for s in snaps)
    )


def _with_env_values(
    host: Ports, snaps: Sequence[RunSnapshot], definitions: list[JobDefinition]
) -> list[JobDefinition]:
    filled = []
    for snap, definition in zip(snaps, definitions, strict=True):
        values = env_values(host, snap.run, snap.jobs[0].name)
        names = definition.environment.env_vars
        if any(name not in values for name in names):
            raise WorkflowError([f"job {snap.jobs[0].name!r}: an environment variable is no longer set"])
        environment = definition.environment.model_copy(update={"env_vars": {name: values[name] for name in names}})
        filled.append(definition.model_copy(update={"environment": environment}))
    return filled


async def launch_array(
    engine: WorkflowEngine, sweep: SweepRunRecord, cells: Sequence[tuple[RunSnapshot, JobDefinition]]
) -> str | None:
    """Submit ``cells`` (from :func:`array_cells`) as one array; returns its job id, None when no cell was still
    pending. Raises the submission's ``SvcError`` after failing every cell with it."""
    host = engine.host
    if sweep.id is None:
        return None
    admission = await host.submit_throttle.admit(
        sweep.transport,
        qos=_qos(host, cells),
        wanted=len(cells),
        waiters=(sweep_waiter(sweep.id), *(snap.run.id for snap, _ in cells)),
        array=True,
    )
    cells = cells[: admission.count]  # the rest stay pending: the orchestrator launches them cell by cell
    run_ids = [snap.run.id for snap, _ in cells]
    rows = {job.id for snap, _ in cells for job in snap.jobs if job.id is not None}
    in_flight = engine.driver.submitter.in_flight
    in_flight.update(rows)  # submitted by this process now: no engine pass takes them for a crash's leftovers
    try:
        submitted = await _submit(engine, sweep, sweep.id, cells)
        if submitted is not None:
            admission.submitted(submitted[0])
    finally:
        in_flight.difference_update(rows)
        admission.abandon()  # when nothing was submitted
    if submitted is None:
        return None
    array_job_id, statuses, tasks = submitted
    first, name = cells[0][0], cells[0][0].jobs[0].name
    running = await host.store.run(repo.move_cells, sweep.id, run_ids, RUN_RUNNING, only_from=[RUN_SUBMITTING])
    await _announce(engine, sweep.id, running, RUN_RUNNING)
    gone = [task_id(array_job_id, c.index) for c in tasks if statuses.get(c.run_id) in (RUN_CANCELLED, "")]
    if gone:  # cells cancelled while the array was being submitted: their tasks (all: the array) go too
        victims = [array_job_id] if len(gone) == len(tasks) else gone
        await engine.driver.submitter.scancel(first.run.transport, [(name, job_id) for job_id in victims])
    host.monitor.poke(first.run.transport)
    return array_job_id


async def _submit(
    engine: WorkflowEngine, sweep: SweepRunRecord, sweep_id: int, cells: Sequence[tuple[RunSnapshot, JobDefinition]]
) -> tuple[str, dict[str, str], list[repo.ArrayCell]] | None:
    """Cells ``submitting``, one sbatch, the tasks recorded: the array's id, each cell's status after the record
    (one cancelled meanwhile needs its task cancelled) and the tasks; None when no cell was still pending."""
    host = engine.host
    run_ids = [snap.run.id for snap, _ in cells]
    moved = await host.store.run(
        repo.move_cells,
        sweep_id,
        run_ids,
        RUN_SUBMITTING,
        only_from=[RUN_PENDING],
        owner=engine.owner,
        lease_until=utc_now() + engine.lease,
    )
    engine.hold([run_id for run_id, _ in moved])
    await _announce(engine, sweep_id, moved, RUN_SUBMITTING)
    launched = {run_id for run_id, _ in moved}
    cells = [cell for cell in cells if cell[0].run.id in launched]  # not one cancelled meanwhile
    if not cells:
        return None
    run_ids = [snap.run.id for snap, _ in cells]
    first = cells[0][0]
    name = first.jobs[0].name
    # a cell that may be retried (opted in, or escalated) must not hold its siblings when its command fails
    stops = sweep.fail_fast and all(
        job.retries_left == 0 and not policy_of(job.retry_policy).escalates for snap, _ in cells for job in snap.jobs
    )
    definition = array_definition([definition for _, definition in cells], fail_fast=stops)
    try:
        if definition is None:
            raise WorkflowError([f"job {name!r}: the cells can no longer be one array"])
        rendered = render_job(host.plugins, definition, host.config())
        tasks_flag = array_flag(len(cells), sweep.max_parallel)
        script = with_marker(array_script(rendered, tasks_flag), array_marker(first.run.id))
        array_job_id = await engine.driver.submitter.transport_for(first.run).submit(script)
    except Exception as exc:  # a plugin's bug too: the cells end failed with the reason, never submitting
        if isinstance(exc, RenderError):
            error = f"script rendering failed: {exc}"
        elif isinstance(exc, SvcError | WorkflowError):
            error = f"submission of job {name!r} failed: {exc}"
        else:
            error = f"launch failed: {type(exc).__name__}: {exc}"  # as for a cell launched on its own
        failed = await host.store.run(repo.fail_cells, sweep_id, run_ids, error)
        await _announce(engine, sweep_id, failed, "failed")
        raise
    tasks = [
        repo.ArrayCell(
            snap.run.id,
            job.id,
            index,
            JobDefinition.model_validate_json(job.definition),
            *rendered.log_paths_for(task_id(array_job_id, index)),
        )
        for index, (snap, _) in enumerate(cells)
        for job in snap.jobs
        if job.id is not None
    ]
    statuses = await host.store.run(
        repo.finish_array, sweep_id, transport=first.run.transport, array_job_id=array_job_id, cells=tasks
    )
    return array_job_id, statuses, tasks


def _qos(host: Ports, cells: Sequence[tuple[RunSnapshot, JobDefinition]]) -> str | None:
    """The QOS the array's script will ask for (None: the user's default, or a script that does not render, which
    ``_submit`` reports)."""
    definition = array_definition([definition for _, definition in cells])
    if definition is None:
        return None
    try:
        return script_qos(render_job(host.plugins, definition, host.config()).text)
    except (RenderError, WorkflowError):
        return None


async def _announce(engine: WorkflowEngine, sweep_id: int, moved: list[tuple[str, str]], after: str) -> None:
    if not moved:
        return
    records = await engine.host.store.run(repo.cells_by_id, sweep_id, [run_id for run_id, _ in moved])
    for run_id, before in moved:
        if run_id in records:
            await engine.announce(records[run_id], before, after)
