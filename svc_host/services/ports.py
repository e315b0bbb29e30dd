"""The ports of services that also drive runs and sweeps (waits, schedules): ``Ports`` and the process's one workflow
engine and sweep orchestrator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from svc_host.runtime.ports import Ports

if TYPE_CHECKING:
    from svc_host.sweeps.orchestrator import SweepOrchestrator
    from svc_host.workflows.engine import WorkflowEngine


class RunPorts(Ports, Protocol):
    """``Ports`` with the workflow engine and the sweep orchestrator (made on first use, one per process)."""

    async def workflow_engine(self) -> WorkflowEngine:
        """The process's workflow engine."""

    async def sweep_orchestrator(self) -> SweepOrchestrator:
        """The process's sweep orchestrator."""
