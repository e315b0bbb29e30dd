"""``svc submit|jobs|status|cancel|logs``: single jobs on one transport (``local`` unless told otherwise)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from svc_host.cli.options import check_job_id, json_option, transport_option, with_host
from svc_host.cli.output import import_tables_meanwhile, print_json, print_table

if TYPE_CHECKING:
    from svc_host.host import Host


def _job_rows(jobs: list[dict[str, Any]]) -> list[list[Any]]:
    """Table rows of jobs as ``agent.calls.job_dict`` gives them."""
    from svc_host.domain.times import clock

    return [
        [
            job["job_id"],
            job.get("name"),
            job["raw_state"] if job["raw_state"] != job["state"] else job["state"],
            job.get("partition"),
            job.get("nodes"),
            job.get("gpus"),
            clock(job.get("elapsed_seconds")),
        ]
        for job in jobs
    ]


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--script", "script_file", type=click.File("r"), help="A complete batch script instead of COMMAND.")
@click.option("--name", "-J", default="job", show_default=True, help="Job name.")
@click.option("--partition", "-p", help="Partition to run in.")
@click.option("--nodes", "-N", type=int, default=1, show_default=True)
@click.option(
    "--gpus-per-node",
    "-G",
    default="0",
    show_default=True,
    metavar="[TYPE:]N",
    help="GPUs per node, of one type if given: -G 2 or -G a100:2 (also --gpu-type).",
)
@click.option("--gpu-type", help="The type the GPUs must be, as the cluster names it (a100, a100_3g.20gb).")
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
    from svc_host.cli.job_session import JobSession

    env: dict[str, str] = {}
    for pair in env_pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.UsageError(f"--env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    if bool(command) == bool(script_file):
        raise click.UsageError("give either a COMMAND or --script FILE")
    kind, fields["gpus_per_node"] = gpu_count(fields["gpus_per_node"])
    if kind is not None:
        if fields["gpu_type"] not in (None, kind):
            raise click.UsageError(f"-G {kind}:... and --gpu-type {fields['gpu_type']} name different GPU types")
        fields["gpu_type"] = kind
    with JobSession(transport) as session:
        record = session.call(
            "submit",
            transport=transport,
            fields=fields,
            command=list(command) if command else None,
            script=script_file.read() if script_file else None,
            env=env,
            mount=mount,
            test_only=test_only,
        )
    if test_only:  # the fit answer, exit 1 when Slurm would not start the job (as sbatch --test-only)
        if as_json:
            print_json(record)
        else:
            click.echo(record["explanation"])
        sys.exit(0 if record["fits"] else 1)
    if as_json:
        print_json(record)
    else:
        click.echo(record["job_id"])


def gpu_count(value: str) -> tuple[str | None, int]:
    """``-G`` as given: ``"2"`` -> (None, 2), ``"a100:2"`` -> ("a100", 2); a usage error otherwise."""
    kind, _, count = value.rpartition(":")
    if not count.isdigit() or (kind == "" and ":" in value):
        raise click.UsageError(f"-G/--gpus-per-node expects N or TYPE:N (e.g. 2 or a100:2), got {value!r}")
    return kind or None, int(count)


@click.command()
@click.option("--user", "-u", help="Only this user's jobs.")
@transport_option
@json_option
def jobs(user: str | None, transport: str, as_json: bool) -> None:
    """List the jobs in the queue."""
    from svc_host.cli.job_session import JobSession

    if not as_json:
        import_tables_meanwhile()
    with JobSession(transport) as session:
        queue = session.call("queue", transport=transport, user=user)
    if as_json:
        print_json(queue)
    else:
        print_table(["id", "name", "status", "partition", "nodes", "gpus", "elapsed"], _job_rows(queue))


@click.command()
@click.argument("job_ids", nargs=-1, required=True)
@transport_option
@json_option
def status(job_ids: tuple[str, ...], transport: str, as_json: bool) -> None:
    """Show the status of one or more jobs (one scheduler query for all of them)."""
    from svc_host.cli.job_session import JobSession

    for job_id in job_ids:
        check_job_id(job_id)
    if not as_json:
        import_tables_meanwhile()
    with JobSession(transport) as session:  # a job that ended is answered from the store alone: no connection
        found = session.call("status", transport=transport, job_ids=list(job_ids))
    missing = [job_id for job_id in job_ids if job_id not in found]
    if as_json:
        print_json([found[job_id] for job_id in job_ids if job_id in found])
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
        check_job_id(job_id)

    async def work(host: Host) -> None:
        from svc_host.services import jobs as job_service

        for job_id in job_ids:
            await job_service.cancel(host, transport, job_id)

    with_host(work)
    click.echo(f"cancelled {', '.join(job_ids)}")


@click.command()
@click.argument("job_id")
@click.option("--stderr", "which", flag_value="stderr", help="Show stderr instead of stdout.")
@click.option("--stdout", "which", flag_value="stdout", default=True, help="Show stdout (default).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new output until the job ends.")
@transport_option
def logs(job_id: str, which: str, follow: bool, transport: str) -> None:
    """Print a job's log (from the paths the scheduler recorded for it)."""
    import time

    from svc_host.cli.job_session import JobSession

    check_job_id(job_id)
    offset = 0
    with JobSession(transport) as session:
        while True:
            step = session.call(
                "log_step", transport=transport, job_id=job_id, which=which, offset=offset, follow=follow
            )
            sys.stdout.write(step["content"])
            sys.stdout.flush()
            offset = step["next_offset"]
            if step["done"]:
                return
            if step["wait"]:
                time.sleep(1.0)


@click.command()
@click.option("--partition", "-p", help="Only this partition.")
@transport_option
@json_option
def resources(partition: str | None, transport: str, as_json: bool) -> None:
    """Show free GPUs and nodes per partition."""
    snapshots = with_host(lambda host: host.transport(transport).resources(partition))
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
    from svc_host.services import jobs as job_service
    from svc_host.store import jobs as job_repo

    async def work(host: Host) -> list[dict[str, Any]]:
        rows = await host.store.run(
            job_repo.history, limit=limit, state=state.upper() if state else None, source=source
        )
        return [job_service.history_view(row) for row in rows]

    rows = with_host(work)
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
