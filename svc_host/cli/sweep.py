"""``svc sweep list|show|cells|cancel|pause|resume``, and the sweep side of ``svc flow run FILE --sweep k=v1,v2``.

``svc flow run --sweep`` writes the sweep and every cell, then launches and watches the cells with a
progress bar per state until every cell has ended (exit 0 when the sweep completed, 1 otherwise). Matrix
values from the command line are strings, like ``--arg`` values. Ctrl-C stops watching and hands the sweep
to a running ``svc serve``/``svc mcp`` (which take over sweeps nobody drives); ``--detach`` does so at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.host import Host
    from svc_host.store.tables import SweepRunRecord
    from svc_host.sweeps.orchestrator import SweepOrchestrator
    from svc_host.workflows.prepare import RunRequest

T = TypeVar("T")
BARS = ("pending", "running", "completed", "failed", "cancelled")


def with_orchestrator(work: Callable[[Host, SweepOrchestrator], Awaitable[T]]) -> T:
    """Run ``work`` with a CLI host's orchestrator (and engine), closing both and the host afterwards."""
    from svc_host.host import Host

    async def run() -> T:
        host = Host.create("cli")
        try:
            return await work(host, await host.sweep_orchestrator())
        finally:
            await host.close()

    return asyncio.run(run())


def matrix_of(pairs: tuple[str, ...]) -> dict[str, list[str]]:
    """``("lr=0.1,0.01", "seed=1,2")`` -> ``{"lr": ["0.1", "0.01"], "seed": ["1", "2"]}``."""
    matrix: dict[str, list[str]] = {}
    for pair in pairs:
        axis, sep, values = pair.partition("=")
        if not sep or not axis or not values:
            raise click.UsageError(f"--sweep expects NAME=VALUE[,VALUE...], got {pair!r}")
        if axis in matrix:
            raise click.UsageError(f"--sweep {axis} is given twice; list all its values once: {axis}=v1,v2")
        matrix[axis] = values.split(",")
    return matrix


def run_sweep(request: RunRequest, raw: dict[str, Any], *, detach: bool, as_json: bool) -> None:
    """``svc flow run --sweep``: start the sweep, then watch it (or print its id with ``detach``)."""
    from svc_host.sweeps.cells import SweepRequest
    from svc_host.sweeps.matrix import parse_sweep
    from svc_host.sweeps.views import sweep_view

    spec = parse_sweep(raw)
    started: list[int] = []

    async def work(_: Host, orchestrator: SweepOrchestrator) -> SweepRunRecord:
        sweep = await orchestrator.submit(SweepRequest(run=request, spec=spec, source="cli"))
        if sweep.id is None:
            raise LookupError("the sweep row got no id")
        started.append(sweep.id)
        if detach:  # the first cells are submitted, the rest is left to a server
            await orchestrator.launched(sweep.id)
            return await orchestrator.get(sweep.id)
        if as_json:
            return await orchestrator.wait(sweep.id)
        return await _watch(orchestrator, sweep.id)

    try:
        sweep = with_orchestrator(work)
    except KeyboardInterrupt:
        if started:
            click.echo(f"stopped watching; sweep {started[0]} goes on (svc sweep cancel {started[0]})", err=True)
        sys.exit(130)
    if as_json:
        print_json(sweep_view(sweep))
    elif detach:
        click.echo(str(sweep.id))
    if not detach and sweep.status != "completed":
        reason = f": {sweep.error}" if sweep.error else ""
        click.echo(f"error: sweep {sweep.id} {sweep.status}{reason}", err=True)
        sys.exit(1)


async def _watch(orchestrator: SweepOrchestrator, sweep_id: int) -> SweepRunRecord:
    """A bar per cell state on a terminal; elsewhere (a pipe, a log) only the final counts."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console()
    if not console.is_terminal:
        sweep = await orchestrator.wait(sweep_id)
        click.echo(_summary(sweep))
        return sweep
    columns = (TextColumn("{task.description:>9}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console) as progress:
        bars: dict[str, Any] = {}

        async def show(sweep: SweepRunRecord) -> None:
            for state in BARS:
                if state not in bars:
                    bars[state] = progress.add_task(state, total=sweep.cell_count)
                progress.update(bars[state], completed=getattr(sweep, f"cells_{state}"))

        sweep = await orchestrator.wait(sweep_id, show)
    click.echo(_summary(sweep))
    return sweep


def _summary(sweep: SweepRunRecord) -> str:
    counts = ", ".join(f"{getattr(sweep, f'cells_{state}')} {state}" for state in BARS[2:])
    return f"sweep {sweep.id} ({sweep.name}) {_status(sweep)}: {counts} of {sweep.cell_count} cells"


def _status(sweep: SweepRunRecord) -> str:
    """The status, with the pause and its held cells: ``running (paused, 2 held)``."""
    return f"{sweep.status} (paused, {sweep.cells_held} held)" if sweep.paused_at is not None else sweep.status


@click.group()
def sweep() -> None:
    """Sweeps: list them, show one and its cells, pause, resume or cancel one (start one with svc flow run
    --sweep)."""


@sweep.command("list")
@click.option("--limit", "-n", type=click.IntRange(1, 200), default=20, show_default=True, help="Newest sweeps shown.")
@json_option
def list_sweeps(limit: int, as_json: bool) -> None:
    """List sweeps, newest first."""
    from svc_host.sweeps.views import sweep_view

    found = with_orchestrator(lambda _, orchestrator: orchestrator.sweeps(limit))
    if as_json:
        print_json([sweep_view(item) for item in found])
        return
    rows = [
        [
            item.id,
            item.name,
            _status(item),
            f"{item.cells_completed}/{item.cell_count}",
            item.cells_failed,
            item.cells_cancelled,
            item.started_at.strftime("%m-%d %H:%M"),
        ]
        for item in found
    ]
    print_table(["id", "workflow", "status", "completed", "failed", "cancelled", "started UTC"], rows)


@sweep.command()
@click.argument("sweep_id", type=int)
@json_option
def show(sweep_id: int, as_json: bool) -> None:
    """Show a sweep: its matrix, settings and cell counts."""
    import json

    from svc_host.sweeps.views import sweep_view

    shown = sweep_view(with_orchestrator(lambda _, orchestrator: orchestrator.get(sweep_id)))
    if as_json:
        print_json(shown)
        return
    for key, value in shown.items():
        if value is not None:
            click.echo(f"{key}: {json.dumps(value) if isinstance(value, dict | list) else value}")


@sweep.command()
@click.argument("sweep_id", type=int)
@json_option
def cells(sweep_id: int, as_json: bool) -> None:
    """List the cells of a sweep (each a workflow run: svc flow show CELL_ID) by status, then start."""
    from svc_host.sweeps.views import cell_view

    found = [
        cell_view(cell, job_ids)
        for cell, job_ids in with_orchestrator(lambda _, orchestrator: orchestrator.cells_with_jobs(sweep_id))
    ]
    if as_json:
        print_json(found)
        return
    rows = [
        [cell["id"], cell["status"], " ".join(f"{k}={v}" for k, v in cell["args"].items()), cell["error"]]
        for cell in found
    ]
    print_table(["cell", "status", "args", "error"], rows, title=f"sweep {sweep_id}")


@sweep.command()
@click.argument("sweep_id", type=int)
@json_option
def cancel(sweep_id: int, as_json: bool) -> None:
    """Cancel a sweep: cells not started are cancelled, running cells' jobs are cancelled."""
    from svc_host.sweeps.views import sweep_view

    done = with_orchestrator(lambda _, orchestrator: orchestrator.cancel(sweep_id))
    if as_json:
        print_json(sweep_view(done))
        return
    click.echo(f"{_summary(done)} (cancel requested at {sweep_view(done)['cancel_requested_at']})")


@sweep.command()
@click.argument("sweep_id", type=int)
@json_option
def pause(sweep_id: int, as_json: bool) -> None:
    """Pause a sweep: launch no new cell and hold the queued jobs of launched cells (running jobs run on)."""
    from svc_host.sweeps.views import sweep_view

    done = with_orchestrator(lambda _, orchestrator: orchestrator.pause(sweep_id))
    if as_json:
        print_json(sweep_view(done))
        return
    click.echo(f"{_summary(done)} (svc sweep resume {sweep_id} to go on)")


@sweep.command()
@click.argument("sweep_id", type=int)
@json_option
def resume(sweep_id: int, as_json: bool) -> None:
    """Resume a paused sweep: release its held jobs and launch cells again (a running svc serve does)."""
    from svc_host.sweeps.views import sweep_view

    done = with_orchestrator(lambda _, orchestrator: orchestrator.resume(sweep_id))
    if as_json:
        print_json(sweep_view(done))
        return
    click.echo(_summary(done))
