"""What many ``svc`` commands share: the ``--json`` and ``--transport`` options, a job id check, a CLI ``Host``."""

from __future__ import annotations

import re
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

_JOB_ID = re.compile(r"\d+(_\d+)?")


def check_job_id(job_id: str) -> None:
    """A ``click.BadParameter`` unless ``job_id`` is a job id (digits, or ``<id>_<index>`` for an array task)."""
    if not _JOB_ID.fullmatch(job_id):
        raise click.BadParameter(f"{job_id!r} is not a job id (digits, or <id>_<index> for an array task)")


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
