"""``svc submit|jobs|status|cancel|logs``: single jobs on one transport (``local`` unless told otherwise)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.output import json_option_help, print_json, print_table

if TYPE_CHECKING:
    from svc_host.domain.jobs import JobStatus
    from svc_host.transport import Transport

T = TypeVar("T")

transport_option = click.option(
    "--transport", "-t", default="local", show_default=True, help="Transport (SSH profile name or 'local')."
)
json_option = click.option("--json", "as_json", is_flag=True, help=json_option_help)


def _with_transport(name: str, work: Callable[[Transport], Awaitable[T]]) -> T:
    from svc_host.plugins import get_plugin_manager
    from svc_host.transport_registry import TransportRegistry

    async def _run() -> T:
        registry = TransportRegistry(get_plugin_manager())
        try:
            return await work(registry.get(name))
        finally:
            await registry.close()

    return asyncio.run(_run())


def _job_dict(job: JobStatus) -> dict[str, Any]:
    return job.model_dump(mode="json", exclude_none=True)


def _job_rows(jobs: list[JobStatus]) -> list[list[Any]]:
    from svc_host.formatting import clock

    return [
        [
            job.job_id,
            job.name,
            job.raw_state if job.raw_state != job.state else job.state,
            job.partition,
            job.nodes,
            job.gpus,
            clock(job.elapsed_seconds),
        ]
        for job in jobs
    ]


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--script", "script_file", type=click.File("r"), help="A complete batch script instead of COMMAND.")
@click.option("--name", "-J", default="job", show_default=True, help="Job name.")
@click.option("--partition", "-p", help="Partition to run in.")
@click.option("--nodes", "-N", type=int, default=1, show_default=True)
@click.option("--gpus-per-node", "-G", type=int, default=0, show_default=True)
@click.option("--ntasks-per-node", type=int, default=1, show_default=True)
@click.option("--cpus-per-task", "-c", type=int, default=1, show_default=True)
@click.option("--mem", "memory_per_node", help="Memory per node, e.g. 16G.")
@click.option("--time", "time_limit", help="Time limit, e.g. 4:00:00 or 1-00:00:00.")
@click.option("--nodelist", "-w", help="Comma-separated nodes.")
@click.option("--conda", help="Conda environment to activate.")
@click.option("--venv", help="Virtual environment to activate.")
@click.option("--container", help="Container image to run the command in.")
@click.option("--env", "env_pairs", multiple=True, metavar="KEY=VALUE", help="Environment variable (repeatable).")
@click.option("--log-dir", default="logs", show_default=True, help="Where Slurm writes the job's logs.")
@click.option("--work-dir", help="Working directory of the job.")
@transport_option
@json_option
def submit(
    command: tuple[str, ...], script_file: Any, env_pairs: tuple[str, ...], transport: str, as_json: bool, **fields: Any
) -> None:
    """Submit COMMAND (or --script FILE) as a batch job and print its id."""
    from pydantic import ValidationError

    from svc_host.domain.submission import Environment, JobDefinition, Resources
    from svc_host.plugins import get_plugin_manager

    env: dict[str, str] = {}
    for pair in env_pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.UsageError(f"--env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    if bool(command) == bool(script_file):
        raise click.UsageError("give either a COMMAND or --script FILE")
    resource_keys = set(Resources.model_fields)
    try:
        definition = JobDefinition(
            name=fields.pop("name"),
            command=list(command) if command else None,
            script=script_file.read() if script_file else None,
            resources=Resources(**{k: v for k, v in fields.items() if k in resource_keys}),
            environment=Environment(
                conda=fields["conda"], venv=fields["venv"], container=fields["container"], env_vars=env
            ),
            log_dir=fields["log_dir"],
            work_dir=fields["work_dir"],
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise click.UsageError(f"{where}: {first['msg']}" if where else first["msg"]) from None
    rendered = get_plugin_manager().renderer("default").render(definition)
    job_id = _with_transport(transport, lambda t: t.submit(rendered))
    stdout_path, stderr_path = rendered.log_paths_for(job_id)
    if as_json:
        print_json({"job_id": job_id, "name": definition.name, "stdout": stdout_path, "stderr": stderr_path})
    else:
        click.echo(job_id)


@click.command()
@click.option("--user", "-u", help="Only this user's jobs.")
@transport_option
@json_option
def jobs(user: str | None, transport: str, as_json: bool) -> None:
    """List the jobs in the queue."""
    queue = _with_transport(transport, lambda t: t.queue(user=user))
    if as_json:
        print_json([_job_dict(job) for job in queue])
    else:
        print_table(["id", "name", "status", "partition", "nodes", "gpus", "elapsed"], _job_rows(queue))


@click.command()
@click.argument("job_ids", nargs=-1, required=True)
@transport_option
@json_option
def status(job_ids: tuple[str, ...], transport: str, as_json: bool) -> None:
    """Show the status of one or more jobs (one scheduler query for all of them)."""
    for job_id in job_ids:
        _check_job_id(job_id)
    found = _with_transport(transport, lambda t: t.statuses(list(job_ids)))
    missing = [job_id for job_id in job_ids if job_id not in found]
    if as_json:
        print_json([_job_dict(found[job_id]) for job_id in job_ids if job_id in found])
    else:
        print_table(["id", "name", "status", "partition", "nodes", "gpus", "elapsed"], _job_rows(list(found.values())))
    if missing:
        click.echo(f"error: unknown job id(s): {', '.join(missing)}", err=True)
        sys.exit(1)


@click.command()
@click.argument("job_ids", nargs=-1, required=True)
@transport_option
def cancel(job_ids: tuple[str, ...], transport: str) -> None:
    """Cancel pending or running jobs."""
    for job_id in job_ids:
        _check_job_id(job_id)
    _with_transport(transport, lambda t: t.cancel(list(job_ids)))
    click.echo(f"cancelled {', '.join(job_ids)}")


@click.command()
@click.argument("job_id")
@click.option("--stderr", "which", flag_value="stderr", help="Show stderr instead of stdout.")
@click.option("--stdout", "which", flag_value="stdout", default=True, help="Show stdout (default).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new output until the job ends.")
@transport_option
def logs(job_id: str, which: str, follow: bool, transport: str) -> None:
    """Print a job's log (from the paths the scheduler recorded for it)."""
    _check_job_id(job_id)

    async def work(t: Transport) -> None:
        job = await t.describe(job_id)
        if job is None:
            raise click.ClickException(f"unknown job id {job_id}")
        path = job.stdout_path if which == "stdout" else job.stderr_path
        if not path:
            raise click.ClickException(f"the scheduler no longer knows where job {job_id} wrote its {which}")
        offset = 0
        while True:
            chunk = await t.read_log(path, offset=offset)
            sys.stdout.write(chunk.content)
            sys.stdout.flush()
            offset = chunk.next_offset
            if chunk.size is not None and offset < chunk.size:
                continue
            if not follow:
                return
            current = (await t.statuses([job_id])).get(job_id)
            if current is not None and current.state.is_terminal:
                final = await t.read_log(path, offset=offset)
                sys.stdout.write(final.content)
                return
            await asyncio.sleep(1.0)

    _with_transport(transport, work)


def _check_job_id(job_id: str) -> None:
    import re

    if not re.fullmatch(r"\d+(_\d+)?", job_id):
        raise click.BadParameter(f"{job_id!r} is not a job id (digits, or <id>_<index> for an array task)")
