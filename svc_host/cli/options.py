"""What many ``svc`` commands share: the ``--json`` and ``--transport`` options, a job id check, a CLI ``Host``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from svc_host.host import Host

T = TypeVar("T")

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table (for scripts).")

transport_option = click.option(
    "--transport", "-t", default="local", show_default=True, help="Transport (SSH profile name or 'local')."
)


def check_job_id(job_id: str) -> None:
    """A ``click.BadParameter`` unless ``job_id`` is a job id (``123``, or ``123_4`` for an array task) spelled as Slurm
    prints it: :func:`svc_host.slurm.arrays.checked_job_id`, the check every interface makes."""
    from svc_host.slurm.arrays import MisspelledJobId, checked_job_id

    try:
        checked_job_id(job_id)
    except MisspelledJobId as exc:
        raise click.BadParameter(str(exc)) from None
    except ValueError:
        raise click.BadParameter(f"{job_id!r} is not a job id (digits, or <id>_<index> for an array task)") from None


def with_host(work: Callable[[Host], Awaitable[T]]) -> T:
    """Run ``work`` with a CLI ``Host`` (the same store and transports the server uses), closed afterwards."""
    import asyncio

    from svc_host.host import Host

    async def _run() -> T:
        host = Host.create("cli")
        try:
            return await work(host)
        finally:
            await host.close()

    return asyncio.run(_run())
