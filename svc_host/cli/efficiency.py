"""``svc eff JOB | --run RUN_ID | --sweep SWEEP_ID``: how well ended jobs used what they asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from svc_host.cli.options import check_job_id, json_option, transport_option, with_host
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.host import Host


def percent(part: dict[str, Any] | None) -> str:
    return f"{part['percent']:.1f}%" if part else "-"


def efficiency_cells(efficiency: dict[str, Any] | None) -> list[str]:
    """cpu, memory and time percentages of one job's efficiency, ``-`` where unknown."""
    if efficiency is None:
        return ["-", "-", "-"]
    return [percent(efficiency["cpu"]), percent(efficiency["memory"]), percent(efficiency["time"])]


def suggestions_text(efficiency: dict[str, Any] | None) -> str:
    return "; ".join(flag["message"] for flag in (efficiency or {}).get("suggestions", []))


def _job_lines(view: dict[str, Any]) -> list[str]:
    from svc_host.domain.efficiency import format_bytes, format_duration

    lines = [f"job {view['job_id']} ({view['name']}) {view['status']}"]
    efficiency = view["efficiency"]
    if efficiency is None:
        return [*lines, f"  not measured: {view['not_measured_reason']}"]
    cpu, memory, time, gpus = efficiency["cpu"], efficiency["memory"], efficiency["time"], efficiency["gpus"]
    if cpu:
        lines.append(
            f"  cpu     {percent(cpu):>6}  {cpu['allocated']} allocated, {cpu['used_average']} used on average"
        )
    if memory:
        given, peak = format_bytes(memory["allocated_bytes"]), format_bytes(memory["peak_bytes"])
        lines.append(f"  memory  {percent(memory):>6}  {given} allocated, peak {peak}")
    if time:
        limit, ran = format_duration(time["limit_seconds"]), format_duration(time["elapsed_seconds"])
        lines.append(f"  time    {percent(time):>6}  {limit} limit, ran {ran}")
    lines.append(f"  gpus    {gpus['allocated']} allocated" + (f" ({gpus['note']})" if gpus["note"] else ""))
    lines += [f"  suggest: {flag['message']}" for flag in efficiency["suggestions"]]
    return lines


def _summary_line(summary: dict[str, Any]) -> str:
    def shown(value: float | None) -> str:
        return f"{value:.1f}%" if value is not None else "-"

    return (
        f"{summary['jobs']} ended job(s), {summary['measured']} measured, {summary['flagged']} flagged: "
        f"cpu {shown(summary['cpu_percent'])}, memory {shown(summary['memory_percent'])}, "
        f"time {shown(summary['time_percent'])}, {summary['gpu_hours']} GPU hours"
    )


@click.command()
@click.argument("job_id", required=False)
@click.option("--run", "run_id", help="A workflow run id: each of its jobs and the run as a whole.")
@click.option("--sweep", "sweep_id", type=click.IntRange(1, 2**53 - 1), help="A sweep id: every job of its cells.")
@transport_option
@json_option
def eff(job_id: str | None, run_id: str | None, sweep_id: int | None, transport: str, as_json: bool) -> None:
    """CPU, memory and time efficiency of an ended job, workflow run or sweep, with suggestions."""
    if sum(value is not None for value in (job_id, run_id, sweep_id)) != 1:
        raise click.UsageError("give exactly one of JOB_ID, --run RUN_ID or --sweep SWEEP_ID")
    if job_id is not None:
        check_job_id(job_id)

    async def work(host: Host) -> dict[str, Any]:
        from svc_host.services import efficiency as efficiency_views

        if job_id is not None:
            return await efficiency_views.for_job(host, transport, job_id)
        if run_id is not None:
            return await efficiency_views.for_run(host, run_id)
        return await efficiency_views.for_sweep(host, sweep_id or 0)

    found = with_host(work)
    if as_json:
        print_json(found)
        return
    if job_id is not None:
        click.echo("\n".join(_job_lines(found)))
        return
    click.echo(_summary_line(found["summary"]))
    print_table(
        ["id", "job", "status", "cpu", "memory", "time", "suggestions"],
        [
            [
                row["job_id"],
                row["workflow_job"],
                row["status"],
                *efficiency_cells(row["efficiency"]),
                suggestions_text(row["efficiency"]),
            ]
            for row in found["jobs"]
        ],
    )
