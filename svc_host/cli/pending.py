"""``svc why JOB...``: why jobs are pending, naming the limit that binds, and when Slurm expects them to start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from svc_host.cli.options import check_job_id, json_option, transport_option, with_host
from svc_host.cli.output import print_json

if TYPE_CHECKING:
    from svc_host.host import Host


@click.command()
@click.argument("job_ids", nargs=-1, required=True)
@transport_option
@json_option
def why(job_ids: tuple[str, ...], transport: str, as_json: bool) -> None:
    """Say why each job is pending and when it should start (one scheduler query for all of them)."""
    for job_id in job_ids:
        check_job_id(job_id)

    async def work(host: Host) -> list[dict[str, Any]]:
        from svc_host.services import pending

        return await pending.explain(host, transport, list(job_ids))

    answers = with_host(work)
    if as_json:
        print_json(answers)
        return
    for answer in answers:
        click.echo(f"{answer['job_id']}: {answer['explanation']}")
        estimate = answer["start_estimate"]
        if estimate is not None and estimate["at"] is not None:
            where = f" on {estimate['nodes']}" if estimate["nodes"] else ""
            click.echo(f"  expected start: {estimate['at']}{where}")
        elif answer["pending"] and not answer["needs_action"]:
            click.echo("  expected start: Slurm has no estimate yet")
