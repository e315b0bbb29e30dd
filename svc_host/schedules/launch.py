"""The scheduler's ``Launcher`` on a ``Host``: a schedule's fire goes through the one run engine (or the sweep
orchestrator for a sweep), recorded with ``triggered_by: schedule``, exactly as a REST run would be."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.errors import NotFoundError
from svc_host.schedules.model import ScheduleSpec
from svc_host.sweeps import store as sweeps
from svc_host.sweeps.status import TERMINAL as SWEEP_TERMINAL
from svc_host.workflows.plan import RUN_TERMINAL
from svc_host.workflows.prepare import RunRequest

if TYPE_CHECKING:
    from svc_host.services.ports import RunPorts

TRIGGER = "schedule"


class HostLauncher:
    """Launch schedules on ``host``'s engine and orchestrator, on the schedule's transport or the server's."""

    def __init__(self, host: RunPorts) -> None:
        self.host = host

    def request(self, spec: ScheduleSpec) -> RunRequest:
        from svc_host.workflows.files import WorkflowDirectory, workflows_dir

        path = WorkflowDirectory(workflows_dir(self.host.paths)).path(spec.workflow)
        if path is None:
            raise NotFoundError(f"workflow {spec.workflow!r} not found")
        return RunRequest(
            yaml_path=path,
            args=spec.args,
            transport=spec.transport or self.host.server_transport_name(),
            mount=spec.mount,
        )

    async def launch(self, spec: ScheduleSpec) -> dict[str, Any]:
        from svc_host.sweeps.cells import SweepRequest
        from svc_host.sweeps.matrix import parse_sweep

        request = self.request(spec)
        if spec.sweep is not None:
            orchestrator = await self.host.sweep_orchestrator()
            sweep = await orchestrator.submit(SweepRequest(run=request, spec=parse_sweep(spec.sweep), source=TRIGGER))
            return {"sweep_id": sweep.id}
        engine = await self.host.workflow_engine()
        snap = await engine.run(request, triggered_by=TRIGGER)
        return {"run_id": snap.run.id}

    async def still_going(self, run_id: str | None, sweep_id: int | None) -> bool:
        from svc_host.workflows import store as runs

        if sweep_id is not None:
            sweep = await self.host.store.run(sweeps.get_sweep, sweep_id)
            return sweep is not None and sweep.status not in SWEEP_TERMINAL
        if run_id is not None:
            snap = await self.host.store.run(runs.snapshot, run_id)
            return snap is not None and snap.run.status not in RUN_TERMINAL
        return False
