"""``svc flow validate|run|runs|show|cancel``: workflows from the terminal, through the same engine as REST and MCP.

``svc flow run`` shows a live table of job states until the run ends (exit 0 when it completed, 1
otherwise). Ctrl-C stops watching, not the run; ``--detach`` returns at once with the run id. A run left
behind this way is driven on by a running ``svc serve`` or ``svc mcp`` (which take over runs nobody drives),
while the jobs already in Slurm go on regardless.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from svc_host.host import Host
    from svc_host.workflows.engine import WorkflowEngine
    from svc_host.workflows.store import Attempt, RunSnapshot

T = TypeVar("T")


def _with_engine(work: Callable[[Host, WorkflowEngine], Awaitable[T]]) -> T:
    """With the sweep orchestrator too: a sweep cell cancelled here updates its sweep at once."""
    from svc_host.cli.sweep import with_orchestrator

    return with_orchestrator(lambda host, orchestrator: work(host, orchestrator.engine))


@click.group()
def flow() -> None:
    """Workflows: validate a YAML file, run it, list and cancel runs."""


@flow.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def validate(file: Path, as_json: bool) -> None:
    """Check FILE: syntax, jobs, templates, dependencies, cycles. Every problem is listed with its line."""
    from svc_host.workflows.files import read_text
    from svc_host.workflows.load import check_workflow

    workflow, problems = check_workflow(read_text(file, shown=str(file)))
    if as_json:
        body: dict[str, Any] = {"valid": not problems and workflow is not None}
        if workflow is not None:
            body.update(name=workflow.name, jobs=[job.name for job in workflow.jobs])
        if problems:
            body["errors"] = problems
        print_json(body)
    elif workflow is not None and not problems:
        click.echo(f"valid: {workflow.name} ({len(workflow.jobs)} jobs: {', '.join(j.name for j in workflow.jobs)})")
    for problem in problems if not as_json else ():
        click.echo(f"{file}: {problem}", err=True)
    if problems:
        sys.exit(1)


def template_args(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--arg NAME=VALUE`` pairs (``svc flow run``, ``svc schedule add``) as a mapping; values stay strings."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--arg expects NAME=VALUE, got {pair!r}")
        found[key] = value
    return found


@flow.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--arg", "arg_pairs", multiple=True, metavar="NAME=VALUE", help="Template argument (repeatable; a string)."
)
@click.option("--from", "from_job", metavar="JOB", help="Start at this job of the run order.")
@click.option("--to", "to_job", metavar="JOB", help="Stop after this job of the run order.")
@click.option("--only", "single_job", metavar="JOB", help="Run only this job, ignoring its dependencies.")
@click.option("--dry-run", is_flag=True, help="Show what would be submitted; submit nothing.")
@click.option("--transport", "-t", default="local", show_default=True, help="SSH profile name or 'local'.")
@click.option("--mount", "-m", help="Mount of the profile: the root of work_dir and log_dir (needs --transport).")
@click.option("--detach", is_flag=True, help="Print the run (or sweep) id once submitted instead of watching.")
@click.option(
    "--sweep",
    "sweep_pairs",
    multiple=True,
    metavar="NAME=V1,V2",
    help="Run as a sweep: one cell per combination of values (repeatable, one axis each; values are strings).",
)
@click.option("--max-parallel", type=click.IntRange(min=1), help="Sweep: at most this many cells at once [4].")
@click.option("--fail-fast", is_flag=True, help="Sweep: launch no new cell once a cell failed.")
@click.option(
    "--max-failures",
    type=click.IntRange(min=0),
    metavar="N",
    help="Sweep: once more than N cells failed, launch no more and cancel the rest (not with --fail-fast).",
)
@json_option
def run(
    file: Path,
    arg_pairs: tuple[str, ...],
    from_job: str | None,
    to_job: str | None,
    single_job: str | None,
    dry_run: bool,
    transport: str,
    mount: str | None,
    detach: bool,
    sweep_pairs: tuple[str, ...],
    max_parallel: int | None,
    fail_fast: bool,
    max_failures: int | None,
    as_json: bool,
) -> None:
    """Run the workflow in FILE and watch its jobs until the run ends (with --sweep: its cells)."""
    from svc_host.workflows.prepare import RunRequest
    from svc_host.workflows.views import run_detail

    request = RunRequest(
        yaml_path=file.resolve(),
        args=template_args(arg_pairs) or None,
        from_job=from_job,
        to_job=to_job,
        single_job=single_job,
        transport=transport,
        mount=mount,
    )
    if sweep_pairs:
        from svc_host.cli.sweep import matrix_of, run_sweep

        if dry_run:
            raise click.UsageError("--dry-run previews a plain run; a sweep always executes (drop one of them)")
        raw: dict[str, Any] = {"matrix": matrix_of(sweep_pairs), "fail_fast": fail_fast}
        if max_parallel is not None:
            raw["max_parallel"] = max_parallel
        if max_failures is not None:
            raw["max_failures"] = max_failures
        run_sweep(request, raw, detach=detach, as_json=as_json)
        return
    if max_parallel is not None or fail_fast:
        raise click.UsageError("--max-parallel and --fail-fast need --sweep")
    if max_failures is not None:
        raise click.UsageError("--max-failures needs --sweep")
    started: list[str] = []
    attempts: list[Attempt] = []

    async def work(_: Host, engine: WorkflowEngine) -> RunSnapshot | None:
        prepared = await engine.prepare(request)
        if dry_run:
            rows = prepared.preview()
            if as_json:
                print_json({"dry_run": True, "workflow": prepared.workflow.name, "jobs_to_execute": rows})
            else:
                table = [[r["name"], ", ".join(r["depends_on"]), _command(r)] for r in rows]
                print_table(["job", "after", "command"], table, title=f"{prepared.workflow.name} (dry run)")
            return None
        run_id = await engine.create(prepared, triggered_by="cli")
        started.append(run_id)
        snap = await engine.launch(run_id)
        if as_json:
            snap = snap if detach else await engine.wait(run_id, float("inf"))
            attempts.extend(await engine.attempts(run_id))
            return snap
        if detach:
            return snap
        return await _watch(engine, run_id)

    try:
        snap = _with_engine(work)
    except KeyboardInterrupt:
        if started:
            click.echo(f"stopped watching; run {started[0]} goes on (svc flow cancel {started[0]})", err=True)
        sys.exit(130)
    if snap is None:
        return
    if as_json:
        print_json(run_detail(snap, attempts))
    elif detach:
        click.echo(snap.run.id)
    if not detach and snap.run.status != "completed":
        click.echo(
            f"error: run {snap.run.id} {snap.run.status}" + (f": {snap.run.error}" if snap.run.error else ""), err=True
        )
        sys.exit(1)


def _command(row: dict[str, Any]) -> str:
    command = row.get("command")
    if isinstance(command, list):
        return " ".join(command)
    return command if isinstance(command, str) else f"script {row.get('script_path')}"


def _table(snap: RunSnapshot) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    run = snap.run
    table = Table(title=f"{run.workflow_name}: {run.status}", title_justify="left")
    for column in ("job", "status", "job id", "attempt"):
        table.add_column(column)
    for job in snap.jobs:
        table.add_row(job.name, snap.job_status(job), job.job_id or "", str(job.attempt or ""))
    return Group(table, Text(f"run {run.id}", no_wrap=True))


async def _watch(engine: WorkflowEngine, run_id: str) -> RunSnapshot:
    """A live table on a terminal; elsewhere (a pipe, a log) only the final table."""
    from rich.console import Console
    from rich.live import Live

    console = Console()
    if not console.is_terminal:
        snap = await engine.wait(run_id, float("inf"))
        console.print(_table(snap))
        return snap
    with Live(console=console, auto_refresh=False) as live:

        async def show(snap: RunSnapshot) -> None:
            live.update(_table(snap), refresh=True)

        return await engine.wait(run_id, float("inf"), show)


@flow.command()
@click.option("--limit", "-n", type=click.IntRange(1, 500), default=20, show_default=True, help="Newest runs shown.")
@click.option("--status", help="Only runs in this status.")
@json_option
def runs(limit: int, status: str | None, as_json: bool) -> None:
    """List workflow runs, newest first."""
    from svc_host.workflows.views import run_view

    found = _with_engine(lambda _, engine: engine.runs(limit=limit, status=status))
    if as_json:
        print_json([run_view(snap) for snap in found])
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True, min_width=36)
    table.add_column("workflow")
    table.add_column("status", min_width=9)
    table.add_column("started UTC", min_width=11)
    table.add_column("done")
    for snap in found:
        statuses = [snap.job_status(job) for job in snap.jobs]
        done = sum(1 for value in statuses if value == "COMPLETED")
        started = snap.run.started_at.strftime("%m-%d %H:%M")
        table.add_row(snap.run.id, snap.run.workflow_name, snap.run.status, started, f"{done}/{len(statuses)}")
    console = Console()
    if not console.is_terminal:
        console.width = 160  # a pipe or a log file: no reason to squeeze the ids
    console.print(table)


@flow.command()
@click.argument("run_id")
@json_option
def show(run_id: str, as_json: bool) -> None:
    """Show one run, the current state of its jobs, and every attempt that was retried and why."""
    from rich.console import Console

    from svc_host.workflows.views import run_detail

    async def read(_: Host, engine: WorkflowEngine) -> tuple[RunSnapshot, list[Attempt]]:
        return await engine.get(run_id, refresh=True), await engine.attempts(run_id)

    snap, attempts = _with_engine(read)
    if as_json:
        print_json(run_detail(snap, attempts))
        return
    console = Console()
    if not console.is_terminal:
        console.width = 160  # a pipe or a log file: room for the reasons of the attempts
    console.print(_table(snap))
    if any(attempt.attempt > 1 or attempt.reason for attempt in attempts):
        console.print(_attempts_table(attempts))
    if snap.run.error:
        click.echo(f"error: {snap.run.error}")


def _attempts_table(attempts: list[Attempt]) -> Table:
    from rich.table import Table

    from svc_host.domain.times import clock
    from svc_host.workflows.views import attempt_view

    table = Table(title="attempts", title_justify="left")
    for column in ("job", "#", "job id", "state", "exit", "node", "memory", "time", "elapsed"):
        table.add_column(column, no_wrap=True)
    table.add_column("next", overflow="fold")
    for attempt in attempts:
        shown = attempt_view(attempt)
        asked, exit_code = shown["resources"], shown["exit_code"]
        table.add_row(
            attempt.job,
            str(attempt.attempt),
            shown["job_id"],
            shown["state"],
            "" if exit_code is None else str(exit_code),
            shown["node"] or "",
            asked["memory_per_node"] or "",
            asked["time_limit"] or "",
            clock(shown["elapsed_seconds"]),
            attempt.reason or "",
        )
    return table


@flow.command()
@click.argument("run_id")
def cancel(run_id: str) -> None:
    """Cancel a run and every job it submitted."""
    warnings = _with_engine(lambda _, engine: engine.cancel(run_id))
    click.echo(f"cancelled run {run_id}")
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
