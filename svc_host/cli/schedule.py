"""``svc schedule add|list|show|remove|enable|disable``: scheduled workflow runs.

Schedules are stored in svc's store and fired by a running ``svc serve``; these commands only edit them.
Times are shown in this machine's zone (``--json`` gives UTC ISO times).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.store.database import Store

T = TypeVar("T")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(text: str) -> int:
    """``90``, ``90s``, ``15m``, ``2h``, ``1d`` -> seconds."""
    match = re.fullmatch(r"(\d+)([smhd]?)", text.strip())
    if not match:
        raise click.BadParameter(f"{text!r} is not a duration such as 90s, 15m, 2h or 1d", param_hint="--every")
    return int(match.group(1)) * _UNITS[match.group(2) or "s"]


def _with_store(work: Callable[[Store], Awaitable[T]]) -> T:
    from svc_host.settings.paths import SvcPaths
    from svc_host.store.database import Store

    async def run() -> T:
        store = Store(SvcPaths.from_env().database_url)
        try:
            return await work(store)
        finally:
            store.close()

    return asyncio.run(run())


def _default_cluster() -> str:
    """The server's default cluster now: what a schedule records when it names none (it fires there)."""
    import os

    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.profiles import ProfileStore, default_cluster

    current = ProfileStore(SvcPaths.from_env().profiles_file).host_config(env=os.environ).current_profile
    return default_cluster(os.environ, current)


def _local(iso: str | None) -> str:
    return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M %Z") if iso else ""


def format_every(seconds: int) -> str:
    """The inverse of ``parse_every``: 900 -> ``15m``, 86400 -> ``1d``, 90 -> ``90s``."""
    for unit in "dhm":
        if seconds % _UNITS[unit] == 0:
            return f"{seconds // _UNITS[unit]}{unit}"
    return f"{seconds}s"


def _when(row: dict[str, Any]) -> str:
    return f"cron {row['cron']} ({row['timezone']})" if row["cron"] else f"every {format_every(row['every'])}"


@click.group()
def schedule() -> None:
    """Run workflows (or sweeps of them) on a cron expression or a fixed interval, fired by `svc serve`."""


@schedule.command()
@click.argument("name")
@click.option("--workflow", "-w", required=True, help="A workflow name from `svc flow`/the workflows directory.")
@click.option("--cron", help="Five-field cron, e.g. '0 3 * * *' (in --tz).")
@click.option("--every", help="A fixed interval: 90s, 15m, 2h, 1d.")
@click.option("--tz", "timezone", default="UTC", show_default=True, help="IANA zone of the cron expression.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", help="Workflow argument (repeatable).")
@click.option("--transport", "-t", help="The cluster: SSH profile or local (default: the server's default now).")
@click.option("--mount", "-m", help="Mount whose remote directory the jobs run in.")
@click.option("--missed", type=click.Choice(["skip", "run_once"]), default="skip", show_default=True)
@click.option("--overlap", type=click.Choice(["skip", "allow"]), default="skip", show_default=True)
@click.option("--disabled", is_flag=True, help="Create it disabled.")
@json_option
def add(
    name: str,
    workflow: str,
    cron: str | None,
    every: str | None,
    timezone: str,
    args: tuple[str, ...],
    transport: str | None,
    mount: str | None,
    missed: str,
    overlap: str,
    disabled: bool,
    as_json: bool,
) -> None:
    """Add the schedule NAME."""
    from pydantic import ValidationError

    from svc_host.cli.flow import template_args
    from svc_host.domain.times import utc_now
    from svc_host.domain.validation_words import describe_validation
    from svc_host.errors import NotFoundError
    from svc_host.schedules import manage
    from svc_host.schedules.model import ScheduleSpec
    from svc_host.settings.paths import SvcPaths
    from svc_host.workflows.files import WorkflowDirectory, workflows_dir

    try:
        spec = ScheduleSpec(
            name=name,
            workflow=workflow,
            cron=cron,
            every=parse_every(every) if every else None,
            timezone=timezone,
            args=template_args(args),
            transport=transport or _default_cluster(),
            mount=mount,
            missed=missed,
            overlap=overlap,
            enabled=not disabled,
        )
    except ValidationError as exc:
        raise click.UsageError(describe_validation(exc.errors())) from None
    if WorkflowDirectory(workflows_dir(SvcPaths.from_env())).path(workflow) is None:
        raise NotFoundError(f"workflow {workflow!r} not found (svc flow list shows the known ones)")

    async def work(store: Store) -> dict[str, Any]:
        now = utc_now()
        return manage.view(await manage.add(store, spec, now=now), now=now, upcoming_count=3)

    row = _with_store(work)
    if as_json:
        print_json(row)
        return
    click.echo(f"schedule {name}: {_when(row)}; next: {', '.join(_local(t) for t in row['upcoming']) or 'disabled'}")


@schedule.command("list")
@json_option
def list_schedules(as_json: bool) -> None:
    """List schedules with their next fire and last outcome."""
    from svc_host.domain.times import utc_now
    from svc_host.schedules import manage
    from svc_host.schedules import store as schedules

    async def work(store: Store) -> list[dict[str, Any]]:
        now = utc_now()
        return [manage.view(record, now=now) for record in await store.run(schedules.all_schedules)]

    rows = _with_store(work)
    if as_json:
        print_json(rows)
        return
    print_table(
        ["name", "workflow", "when", "enabled", "next", "last", "outcome"],
        [
            [
                row["name"],
                row["workflow"] + (" (sweep)" if row["sweep"] else ""),
                _when(row),
                "yes" if row["enabled"] else "no",
                _local(row["next_fire_at"]),
                _local(row["last_fire_at"]),
                row["last_outcome"] or "",
            ]
            for row in rows
        ],
    )


@schedule.command()
@click.argument("name")
@click.option("--upcoming", default=5, show_default=True, type=click.IntRange(0, 100))
@json_option
def show(name: str, upcoming: int, as_json: bool) -> None:
    """Show the schedule NAME and its next fire times."""
    from svc_host.domain.times import utc_now
    from svc_host.schedules import manage
    from svc_host.schedules import store as schedules

    async def work(store: Store) -> dict[str, Any]:
        return manage.view(await store.run(schedules.get, name), now=utc_now(), upcoming_count=upcoming)

    row = _with_store(work)
    if as_json:
        print_json(row)
        return
    click.echo(
        f"{row['name']}: workflow {row['workflow']}, {_when(row)}, {'enabled' if row['enabled'] else 'disabled'}"
    )
    click.echo(f"  missed: {row['missed']}, overlap: {row['overlap']}, args: {row['args'] or '-'}")
    if row["last_fire_at"]:
        last = row["last_run_id"] or row["last_sweep_id"] or row["last_error"] or ""
        click.echo(f"  last: {_local(row['last_fire_at'])} {row['last_outcome']} {last}".rstrip())
    for moment in row["upcoming"]:
        click.echo(f"  next: {_local(moment)}")


@schedule.command()
@click.argument("name")
def remove(name: str) -> None:
    """Remove the schedule NAME (runs it started are kept)."""
    from svc_host.schedules import store as schedules

    async def work(store: Store) -> None:
        await store.run(schedules.delete, name)

    _with_store(work)
    click.echo(f"removed schedule {name}")


def _toggle(name: str, enabled: bool) -> None:
    from svc_host.domain.times import utc_now
    from svc_host.schedules import manage

    async def work(store: Store) -> Any:
        return await manage.set_enabled(store, name, enabled, now=utc_now())

    _with_store(work)
    click.echo(f"{'enabled' if enabled else 'disabled'} schedule {name}")


@schedule.command()
@click.argument("name")
def enable(name: str) -> None:
    """Enable the schedule NAME (its next fire counts from now; missed fires are not made up)."""
    _toggle(name, True)


@schedule.command()
@click.argument("name")
def disable(name: str) -> None:
    """Disable the schedule NAME."""
    _toggle(name, False)
