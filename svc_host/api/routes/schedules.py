"""``/api/schedules``: scheduled workflow runs (create, list, show with next fires, replace, delete, fire now).

Schedules are fired by the scheduler the Host of a ``svc serve`` runs; several servers on one store fire each
one once (docs/schedules.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from svc_host.api.cluster import named_cluster
from svc_host.api.deps import HostDep
from svc_host.api.params import error_responses
from svc_host.domain.times import utc_now
from svc_host.errors import InvalidRequestError, SvcError
from svc_host.host import Host
from svc_host.schedules import manage
from svc_host.schedules import store as schedules
from svc_host.schedules.launch import HostLauncher
from svc_host.schedules.model import ScheduleSpec
from svc_host.sweeps.matrix import parse_sweep

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

NOT_FOUND = error_responses(404, e404="schedule (or its workflow) not found")


def _checked(host: Host, spec: ScheduleSpec) -> ScheduleSpec:
    """The spec with its cluster recorded (the server's default now, when it names none), so it fires there
    whatever is the default then. Refuse now what would only fail at fire time: an unknown cluster or
    workflow, an invalid sweep."""
    spec = spec.model_copy(update={"transport": named_cluster(host, spec.transport)})
    HostLauncher(host).request(spec)
    if spec.sweep is not None:
        parse_sweep(spec.sweep)
    return spec


@router.get("")
async def list_schedules(host: HostDep) -> list[dict[str, Any]]:
    """Every schedule with its next fire and last outcome, by name."""
    now = utc_now()
    return [manage.view(record, now=now) for record in await host.store.run(schedules.all_schedules)]


TAKEN = error_responses(409, e409="a schedule with that name exists")


@router.post("", status_code=201, responses={**TAKEN, **NOT_FOUND})
async def create_schedule(spec: ScheduleSpec, host: HostDep) -> dict[str, Any]:
    """Create a schedule: 201 with its next fires; 404 unknown workflow; 409 name taken; 422 invalid spec."""
    spec = _checked(host, spec)
    now = utc_now()
    return manage.view(await manage.add(host.store, spec, now=now), now=now, upcoming_count=5)


@router.get("/{name}", responses=NOT_FOUND)
async def get_schedule(name: str, host: HostDep, upcoming: Annotated[int, Query(ge=0, le=100)] = 5) -> dict[str, Any]:
    """A schedule with its next ``upcoming`` fire times (UTC)."""
    return manage.view(await host.store.run(schedules.get, name), now=utc_now(), upcoming_count=upcoming)


@router.put("/{name}", responses={**error_responses(400, e400="the body's name is not the path's"), **NOT_FOUND})
async def replace_schedule(name: str, spec: ScheduleSpec, host: HostDep) -> dict[str, Any]:
    """Replace a schedule's spec (the body's ``name`` must be the path's); its next fire counts from now."""
    if spec.name != name:
        raise InvalidRequestError(f"the body's name {spec.name!r} is not the schedule's {name!r}")
    spec = _checked(host, spec)
    now = utc_now()
    return manage.view(await manage.change(host.store, spec, now=now), now=now, upcoming_count=5)


@router.delete("/{name}", responses=NOT_FOUND)
async def delete_schedule(name: str, host: HostDep) -> dict[str, Any]:
    """Delete a schedule; runs it started are kept."""
    await host.store.run(schedules.delete, name)
    return {"status": "deleted", "name": name}


@router.post("/{name}/run", status_code=202, responses=NOT_FOUND)
async def fire_now(name: str, host: HostDep) -> JSONResponse:
    """Fire a schedule now, outside its timing (``triggered_by: schedule``); 202 ``{run_id}`` or ``{sweep_id}``."""
    record = await host.store.run(schedules.get, name)
    spec = schedules.spec_of(record)
    try:
        started = await HostLauncher(host).launch(spec)
    except SvcError as exc:
        failed = {"outcome": "failed", "error": str(exc)}
        await host.store.run(schedules.record_outcome, record.id, failed, now=utc_now())
        raise
    await host.store.run(schedules.record_outcome, record.id, {"outcome": "fired", **started}, now=utc_now())
    return JSONResponse({"name": name, **started}, status_code=202)
