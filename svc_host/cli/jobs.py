"""``svc submit|jobs|status|cancel|logs``: single jobs on one transport (``local`` unless told otherwise)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.output import json_option_help, print_json, print_table

if TYPE_CHECKING:
    from svc_host.context import Host
    from svc_host.domain.jobs import JobStatus

T = TypeVar("T")

transport_option = click.option(
    "--transport", "-t", default="local", show_default=True, help="Transport (SSH profile name or 'local')."
)
json_option = click.option("--json", "as_json", is_flag=True, help=json_option_help)


def _with_host(work: Callable[[Host], Awaitable[T]], *, store_and: str | None = None) -> T:
    """Run ``work`` with a CLI ``Host`` (the same store and transports the server uses).

    ``store_and=NAME``: ``work`` reads the store and always talks to transport NAME (submit, logs), so the
    store is opened (the ORM imported, migrations checked) in a worker thread while NAME connects: the SSH
    handshake's waits overlap the import. Commands that may not need the connection (status and cancel of a
    job that ended) or never read the store (jobs, resources) leave the other alone.
    """
    from svc_host.context import Host

    async def _run() -> T:
        host = Host.create("cli")
        try:
            if store_and is not None:
                target = host.transport(store_and)  # an unknown name fails here, before anything is opened
                await asyncio.gather(asyncio.to_thread(lambda: host.store), target.connect())
            return await work(host)
        finally:
            await host.close()

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
@click.option("--mount", "-m", help="A mount of the --transport profile: work and log dirs are relative to its root.")
@click.option("--renderer", help="The renderer that writes the script (default: the config's rendering.renderer).")
@click.option(
    "--test-only",
    is_flag=True,
    help="Submit nothing: say whether Slurm would start this job now, and where (exit 1 if it would not).",
)
@transport_option
@json_option
def submit(
    command: tuple[str, ...],
    script_file: Any,
    env_pairs: tuple[str, ...],
    mount: str | None,
    test_only: bool,
    transport: str,
    as_json: bool,
    **fields: Any,
) -> None:
    """Submit COMMAND (or --script FILE) as a batch job and print its id."""
    from pydantic import ValidationError

    from svc_host.domain.submission import Environment, JobDefinition, Resources

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
            renderer=fields["renderer"],
        )
    except ValidationError as exc:
        from svc_host.errors import describe_validation

        raise click.UsageError(describe_validation(exc.errors())) from None
    from svc_host import jobs as job_service

    async def work(host: Host) -> Any:
        if mount is not None:
            from svc_host.mounts import cluster_paths

            where = cluster_paths(
                host.transports.config.profiles,
                host.transports.spec(transport),
                mount,
                work_dir=definition.work_dir,
                log_dir=definition.log_dir,
            )
            translated = definition.model_copy(update={"work_dir": where.work_dir, "log_dir": where.job_log_dir})
        else:
            translated = definition
        if test_only:
            from svc_host import pending

            return await pending.test_fit(host, translated, transport=transport)
        return await job_service.submit(host, translated, transport=transport, source="cli")

    if test_only:
        answer = _with_host(work)
        if as_json:
            print_json(answer)
        else:
            click.echo(answer["explanation"])
        sys.exit(0 if answer["fits"] else 1)
    record = _with_host(work, store_and=transport)
    if as_json:
        print_json(
            {"job_id": record.job_id, "name": record.name, "stdout": record.stdout_path, "stderr": record.stderr_path}
        )
    else:
        click.echo(record.job_id)


@click.command()
@click.option("--user", "-u", help="Only this user's jobs.")
@transport_option
@json_option
def jobs(user: str | None, transport: str, as_json: bool) -> None:
    """List the jobs in the queue."""
    queue = _with_host(lambda host: host.transport(transport).queue(user=user))
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

    async def work(host: Host) -> dict[str, JobStatus]:
        from svc_host import jobs as job_service
        from svc_host.errors import NotFoundError

        found = {}
        for job_id in job_ids:
            try:
                found[job_id] = (await job_service.status(host, transport, job_id)).status
            except NotFoundError:
                continue
        return found

    found = _with_host(work)  # a job that ended is answered from the store alone: no connection
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

    async def work(host: Host) -> None:
        from svc_host import jobs as job_service

        for job_id in job_ids:
            await job_service.cancel(host, transport, job_id)

    _with_host(work)
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

    async def work(host: Host) -> None:
        from svc_host import jobs as job_service

        offset = 0
        while True:
            found = await job_service.logs(host, transport, job_id, stdout_offset=offset, stderr_offset=offset)
            chunk = found.stdout if which == "stdout" else found.stderr
            if chunk is None:
                raise click.ClickException(f"no {which} log is known for job {job_id}")
            sys.stdout.write(chunk.content)
            sys.stdout.flush()
            offset = chunk.next_offset
            if chunk.size is not None and offset < chunk.size:
                continue
            if not follow:
                return
            current = await job_service.status(host, transport, job_id)
            if current.status.state.is_terminal:
                rest = await host.transport(transport).read_log(chunk.path, offset=offset)
                sys.stdout.write(rest.content)
                return
            await asyncio.sleep(1.0)

    _with_host(work, store_and=transport)


def _check_job_id(job_id: str) -> None:
    import re

    if not re.fullmatch(r"\d+(_\d+)?", job_id):
        raise click.BadParameter(f"{job_id!r} is not a job id (digits, or <id>_<index> for an array task)")


@click.command()
@click.option("--partition", "-p", help="Only this partition.")
@transport_option
@json_option
def resources(partition: str | None, transport: str, as_json: bool) -> None:
    """Show free GPUs and nodes per partition."""
    snapshots = _with_host(lambda host: host.transport(transport).resources(partition))
    if as_json:
        print_json([snap.model_dump(mode="json") for snap in snapshots])
        return
    if partition and not snapshots:
        raise click.ClickException(f"partition {partition!r} not found")
    print_table(
        ["partition", "gpus free", "gpus total", "in use", "jobs running", "nodes", "idle", "down"],
        [
            [
                s.partition,
                s.gpus_available,
                s.total_gpus,
                f"{s.gpu_utilization:.0%}",
                s.jobs_running,
                s.nodes_total,
                s.nodes_idle,
                s.nodes_down,
            ]
            for s in snapshots
        ],
    )


@click.command()
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--status", "state", help="Only jobs in this status, e.g. FAILED.")
@click.option("--source", type=click.Choice(["web", "mcp", "cli", "workflow"]))
@click.option("--efficiency", "-e", is_flag=True, help="Add CPU, memory and time efficiency and suggestions.")
@json_option
def history(limit: int, state: str | None, source: str | None, efficiency: bool, as_json: bool) -> None:
    """Jobs svc submitted, newest first."""
    from svc_host import jobs as job_service
    from svc_host.store import jobs as job_repo

    async def work(host: Host) -> list[dict[str, Any]]:
        rows = await host.store.run(
            job_repo.history, limit=limit, state=state.upper() if state else None, source=source
        )
        return [job_service.history_view(row) for row in rows]

    rows = _with_host(work)
    if as_json:
        print_json(rows)
        return
    if efficiency:
        from svc_host.cli.efficiency import efficiency_cells, suggestions_text

        print_table(
            ["id", "name", "status", "cpu", "memory", "time", "suggestions"],
            [
                [
                    r["job_id"],
                    r["name"],
                    r["status"],
                    *efficiency_cells(r["efficiency"]),
                    suggestions_text(r["efficiency"]),
                ]
                for r in rows
            ],
        )
        return
    print_table(
        ["id", "name", "transport", "source", "status", "exit", "submitted"],
        [
            [r["job_id"], r["name"], r["transport"], r["source"], r["status"], r["exit_code"], r["submitted_at"][:19]]
            for r in rows
        ],
    )
