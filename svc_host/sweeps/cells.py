"""From a sweep request to its cells: every cell prepared (validated, rendered, placed) before anything is
written, and the referenced mounts synced once for the whole sweep.

A cell is an ordinary run request with the cell's args (the caller's args with the cell's matrix values laid
over them). The first cell reports problems exactly as a plain run with those args would; a problem only a
later cell has is prefixed with the cell (``sweep cell 4 (lr=0.1, seed=2): ...``).

Mounts are synced once, before the rows are written (a failure writes nothing), each under its sync lock for
the duration of its sync; the cells then carry no mounts to sync, so 1,000 cells cost one rsync, not 1,000.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svc_host.errors import InvalidRequestError, SyncError, WorkflowError
from svc_host.settings.mounts import find_mount, mount_profile
from svc_host.sweeps.matrix import SweepSpec, check_sweep_jobs, expand
from svc_host.sweeps.store import NewSweep
from svc_host.workflows.prepare import PreparedRun, RunRequest, prepare
from svc_host.workflows.store import NewRun

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports

SOURCES = ("web", "mcp", "cli", "schedule")


@dataclass(frozen=True)
class SweepRequest:
    """What a caller asks to sweep: the run request of every cell (its ``args`` are the shared args), the
    spec, and who asks (``web``, ``mcp``, ``cli`` or ``schedule``: the sweep's ``submission_source``, its
    cells' ``triggered_by``)."""

    run: RunRequest
    spec: SweepSpec
    source: str

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"sweep source must be one of {', '.join(SOURCES)}, not {self.source!r}")


@dataclass(frozen=True)
class PreparedSweep:
    """The sweep row and the cells to write, and the mounts to sync first."""

    sweep: NewSweep
    cells: list[NewRun]
    sync_mounts: list[str]


def prepare_sweep(host: Ports, request: SweepRequest) -> PreparedSweep:
    """Prepare every cell (blocking: call it through ``asyncio.to_thread``). Raises what ``prepare`` raises."""
    shared = dict(request.run.args or {})
    prepared: list[PreparedRun] = []
    for index, args in enumerate(expand(request.spec, shared)):
        try:
            prepared.append(prepare(host, dataclasses.replace(request.run, args=args)))
        except WorkflowError as exc:
            if index == 0:
                raise
            where = f"sweep cell {index} ({_values(request.spec, args)})"
            raise WorkflowError([f"{where}: {problem}" for problem in exc.problems]) from None
        if index == 0:  # before preparing the other cells: a too-big sweep is refused at once
            try:
                check_sweep_jobs(request.spec, len(prepared[0].selected))
            except InvalidRequestError as exc:
                raise WorkflowError([str(exc)]) from None
    mounts = list(dict.fromkeys(name for cell in prepared for name in cell.new_run.sync_mounts))
    sweep = NewSweep(
        name=prepared[0].workflow.name,
        workflow_yaml_path=str(request.run.yaml_path),
        matrix=request.spec.matrix,
        args=shared,
        fail_fast=request.spec.fail_fast,
        max_parallel=request.spec.max_parallel,
        max_failures=request.spec.max_failures,
        submission_source=request.source,
        transport=prepared[0].new_run.transport,
    )
    cells = [dataclasses.replace(cell.new_run, sync_mounts=()) for cell in prepared]
    return PreparedSweep(sweep=sweep, cells=cells, sync_mounts=mounts)


def _values(spec: SweepSpec, args: Mapping[str, Any]) -> str:
    return ", ".join(f"{axis}={args[axis]}" for axis in spec.matrix)


async def sync_mounts(host: Ports, transport: str, names: list[str]) -> None:
    """Sync each mount once, under its lock. ``SyncError`` says which mount failed."""
    profile = mount_profile(host.transports.spec(transport))
    for name in names:
        backend = host.sync_backend(profile)
        mount = find_mount(host.transports.config.profiles, profile, name)
        try:
            async with backend.lock(mount):
                await backend.sync(mount)
        except SyncError as exc:
            raise SyncError(f"sweep: sync of mount {name!r} failed: {exc}") from exc
